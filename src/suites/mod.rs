//! What is measured. A suite turns resolved options into cases, measures
//! them with `measure`, and pushes one `Record` per case into the sink.
//! Shared here: cpu selection, memory checks, sample options, and turning
//! a measured case into a record with its warnings.

pub mod cache;
pub mod chase;
pub mod first_use;
pub mod latency;
pub mod memtype;
pub mod mix;
pub mod net;
pub mod numa;
pub mod pinned;
pub mod procs;
pub mod regs;
pub mod survey;
pub mod threads;
pub mod transfer;

use crate::cli::SampleArgs;
use crate::error::UserError;
use crate::kernels::Kernel;
use crate::measure::{self, stats, Measured, SampleOpts};
use crate::model::Host;
use crate::model::{limits, Warning};
use crate::model::{Placement, Record, Stats};
use std::time::Duration;

/// Cpus in the default placement order: one per physical core (its first
/// allowed sibling), highest core first so a single thread avoids cpu 0,
/// which takes most interrupts; then the remaining SMT siblings.
pub fn default_cpu_order(host: &Host) -> Vec<u32> {
    let allowed = &host.allowed_cpus;
    let mut primary = Vec::new();
    let mut secondary = Vec::new();
    let mut seen_cores = Vec::new();
    for c in host.cpus.iter().filter(|c| allowed.contains(&c.id)) {
        let key = (c.package, c.core);
        if seen_cores.contains(&key) {
            secondary.push(c.id);
        } else {
            seen_cores.push(key);
            primary.push(c.id);
        }
    }
    if primary.is_empty() {
        primary = allowed.clone();
    }
    primary.reverse();
    primary.extend(secondary);
    primary
}

/// The cpus a team runs on, from `--threads` and `--cpus`.
pub fn resolve_cpus(
    host: &Host,
    threads: Option<usize>,
    cpus: Option<&str>,
) -> Result<Vec<u32>, UserError> {
    if let Some(list) = cpus {
        let parsed = crate::util::cpulist::parse_cpu_list(list).ok_or_else(|| {
            UserError::flag(
                "--cpus",
                format!("'{}' is not a cpu list: write e.g. 0,2,4-7", list),
            )
        })?;
        if parsed.is_empty() {
            return Err(UserError::flag("--cpus", "the list is empty"));
        }
        if let Some(bad) = parsed.iter().find(|c| !host.allowed_cpus.contains(c)) {
            return Err(UserError::flag(
                "--cpus",
                format!(
                    "cpu {} is offline or not allowed for this process (allowed: {})",
                    bad,
                    crate::util::cpulist::format_cpu_list(&host.allowed_cpus)
                ),
            ));
        }
        if let Some(t) = threads {
            if t != parsed.len() {
                return Err(UserError::flag(
                    "--threads",
                    format!(
                        "{} threads but --cpus names {} cpus: give one or make them agree",
                        t,
                        parsed.len()
                    ),
                ));
            }
        }
        return Ok(parsed);
    }
    let n = threads.unwrap_or(1);
    if n == 0 {
        return Err(UserError::flag("--threads", "must be at least 1"));
    }
    let order = default_cpu_order(host);
    if n > order.len() {
        return Err(UserError::flag(
            "--threads",
            format!(
                "{} threads but this process may use only {} cpus ({}); use at most {}",
                n,
                order.len(),
                crate::util::cpulist::format_cpu_list(&host.allowed_cpus),
                order.len()
            ),
        ));
    }
    let mut v: Vec<u32> = order[..n].to_vec();
    v.sort_unstable();
    Ok(v)
}

/// Refuse before allocating when `need` bytes exceed MemAvailable (leaving
/// 10 % for the rest of the system), so the OOM killer never gets a say.
pub fn check_memory(need: u64, flag: &'static str) -> Result<(), UserError> {
    let avail = crate::platform::env::meminfo("MemAvailable");
    if let Some(a) = avail {
        if need > a / 10 * 9 {
            return Err(UserError::NotEnoughMemory {
                flag,
                need: crate::util::units::format_bytes(need),
                available: crate::util::units::format_bytes(a),
            });
        }
    }
    Ok(())
}

/// Sample options from flags, with a suite's defaults.
pub fn sample_opts(args: &SampleArgs, default: SampleOpts) -> Result<SampleOpts, UserError> {
    let samples = args.samples.unwrap_or(default.samples);
    if samples == 0 || samples > 100_000 {
        return Err(UserError::flag("--samples", "must be between 1 and 100000"));
    }
    let min_sample = match args.min_sample_ms {
        Some(ms) if !(ms > 0.0 && ms <= 60_000.0) => {
            return Err(UserError::flag(
                "--min-sample-ms",
                "must be above 0 and at most 60000",
            ))
        }
        Some(ms) => Duration::from_secs_f64(ms / 1000.0),
        None => default.min_sample,
    };
    Ok(SampleOpts {
        samples,
        min_sample,
    })
}

/// A bandwidth record from a measured case.
pub fn bandwidth_record(
    suite: &str,
    k: &Kernel,
    m: &Measured,
    host: &Host,
    cpus: &[u32],
) -> Record {
    let threads = cpus.len() as u32;
    let ws = (m.pass.stream_len * k.streams() as usize) as u64;
    let rates = measure::gbps(&m.samples);
    let payload_ratio = m.pass.payload as f64 / (m.pass.read + m.pass.written) as f64;
    let payload: Vec<f64> = rates.iter().map(|g| g * payload_ratio).collect();
    let per_thread_bytes = (m.pass.read + m.pass.written) * m.reps;
    let per_thread_gbps: Vec<f64> = if threads > 1 {
        m.per_thread_seconds
            .iter()
            .map(|secs| {
                secs.iter()
                    .map(|s| per_thread_bytes as f64 / s / 1e9)
                    .fold(0.0, f64::max)
            })
            .collect()
    } else {
        Vec::new()
    };
    let mut r = Record {
        suite: suite.into(),
        kernel: k.name.into(),
        op: k.op.name().into(),
        width_bits: (k.width_bits > 0).then_some(k.width_bits),
        nontemporal: Some(k.nontemporal),
        pattern: Some(k.pattern.name().into()),
        size_bytes: Some(ws),
        threads,
        cpus: cpus.to_vec(),
        regime: Some(host.regime(ws, threads)),
        bytes_read_per_pass: Some(m.pass.read),
        bytes_written_per_pass: Some(m.pass.written),
        payload_bytes_per_pass: Some(m.pass.payload),
        reps_per_sample: Some(m.reps),
        samples: m.samples.clone(),
        gbps: stats::summarize(&rates, true),
        payload_gbps: stats::summarize(&payload, true),
        per_thread_gbps,
        noise: m.noise,
        placement: (threads > 1).then(|| Placement {
            start_skew_seconds: Some(m.max_start_skew),
            ..Placement::default()
        }),
        ..Record::default()
    };
    if let Some(hz) = m.clock_hz {
        r.extra.insert("clock_hz".into(), serde_json::json!(hz));
    }
    let ceiling = kernel_ceiling(k, host, m.clock_hz.or(host.clock_hz));
    r.extra.insert(
        "ceiling_gbps".into(),
        serde_json::json!(ceiling.map(|c| c * threads as f64)),
    );
    r.warnings = derive_warnings(r.gbps.as_ref(), k, host, threads, &r);
    r
}

/// The typed warnings a bandwidth record deserves.
pub fn derive_warnings(
    g: Option<&Stats>,
    k: &Kernel,
    host: &Host,
    threads: u32,
    r: &Record,
) -> Vec<Warning> {
    let mut w = Vec::new();
    if let Some(s) = g {
        if s.cv > limits::CV {
            w.push(Warning::HighCv { cv: s.cv });
        }
        if s.median > 0.0 && s.best / s.median > limits::BEST_OVER_MEDIAN {
            w.push(Warning::BestMedianSpread {
                ratio: s.best / s.median,
            });
        }
        // The clock read next to this record's samples, else the run's.
        let hz = r.extra.get("clock_hz").and_then(|v| v.as_f64());
        if let Some(c) = kernel_ceiling(k, host, hz.or(host.clock_hz)) {
            let total = c * threads as f64;
            if s.best > total * limits::OVER_CEILING {
                w.push(Warning::AboveCeiling {
                    gbps: s.best,
                    ceiling_gbps: total,
                });
            }
        }
    }
    if let Some(n) = r.noise {
        if n.foreign_cpus > limits::FOREIGN_CPUS {
            w.push(Warning::ForeignLoad {
                cpus: n.foreign_cpus,
            });
        }
        if n.steal_cpus > limits::STEAL_CPUS {
            w.push(Warning::Steal { cpus: n.steal_cpus });
        }
    }
    w
}

/// The L1 ceiling that bounds a kernel on one core at `hz`, GB/s; None
/// when the core (or the clock) is unknown. `rep` string instructions and
/// libc pick their own access width (`rep stosd` stores whole lines from
/// microcode; glibc uses AVX-512 even when BWSCOPE_DISABLE_ISA hides it),
/// so they are bounded by the core's widest vector path, not by their
/// element width; unrolled string instructions are one access each.
fn kernel_ceiling(k: &Kernel, host: &Host, hz: Option<f64>) -> Option<f64> {
    let own_width = k.isa == crate::kernels::Isa::Libc || k.name.starts_with("rep_");
    let width = (k.width_bits > 0 && !own_width).then_some(k.width_bits);
    host.ceiling_at(k.op.name(), width, hz?)
}

/// Run-level warnings about the machine itself.
pub fn host_warnings(host: &Host) -> Vec<Warning> {
    let mut w = Vec::new();
    if let Some(h) = &host.cpu.hypervisor {
        w.push(Warning::VirtualMachine {
            hypervisor: h.clone(),
        });
    }
    if let Some(c) = &host.clock {
        w.extend(c.warnings());
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Features, Stats};
    use crate::platform::uarch;

    fn kernel(name: &str) -> &'static Kernel {
        crate::kernels::registry()
            .iter()
            .find(|k| k.name == name)
            .expect(name)
    }

    /// A Golden Cove host (3 × 32 B / 2 × 64 B loads, 64 B of stores per
    /// cycle) at 2 GHz, with `features` visible to the kernels.
    fn glc(features: Features, vendor: &str) -> Host {
        let raw = Features {
            amx_tile: true,
            ..features.clone()
        };
        Host {
            features,
            clock_hz: Some(2e9),
            uarch: Some(uarch::identify(&uarch::Facts {
                vendor,
                family: 6,
                model: 0x8F,
                features: &raw,
                caches: &[],
            })),
            ..Host::default()
        }
    }

    #[test]
    fn string_and_libc_kernels_are_bound_by_the_widest_path() {
        let avx2_only = Features {
            avx2: true,
            ..Features::default()
        };
        let h = glc(avx2_only, "GenuineIntel");
        // rep stosd stores whole lines from microcode: not 2 × 4 B/cycle
        // but the core's widest store path, 64 B/cycle = 128 GB/s.
        assert_eq!(
            kernel_ceiling(kernel("rep_stosd"), &h, h.clock_hz),
            Some(128.0)
        );
        assert_eq!(
            kernel_ceiling(kernel("libc_memset"), &h, h.clock_hz),
            Some(128.0)
        );
        // Copies: 64 B loaded + 64 B stored per cycle, whichever width
        // libc or microcode picks (avx512f is hidden here).
        assert_eq!(
            kernel_ceiling(kernel("rep_movsb"), &h, h.clock_hz),
            Some(256.0)
        );
        // Unrolled string instructions are one access each: 2 × 4 B.
        assert_eq!(kernel_ceiling(kernel("stosd"), &h, h.clock_hz), Some(16.0));
        // Vector kernels: their own width; 3 × 32 B loads.
        assert_eq!(
            kernel_ceiling(kernel("seq_read_256_avx2"), &h, Some(2e9)),
            Some(192.0)
        );
        // The record's clock, not the run's.
        assert_eq!(
            kernel_ceiling(kernel("seq_read_256_avx2"), &h, Some(3e9)),
            Some(288.0)
        );
        // An unknown core: no bound.
        let u = glc(Features::default(), "CentaurHauls");
        assert_eq!(
            kernel_ceiling(kernel("seq_read_256_avx2"), &u, Some(3e9)),
            None
        );
    }

    #[test]
    fn ceiling_check_uses_the_clock_measured_next_to_the_record() {
        let h = glc(Features::default(), "GenuineIntel");
        let k = kernel("seq_read_256_avx2");
        let g = Stats {
            best: 250.0,
            median: 250.0,
            min: 250.0,
            max: 250.0,
            mean: 250.0,
            cv: 0.0,
            n: 3,
        };
        let above = |r: &Record| {
            derive_warnings(Some(&g), k, &h, 1, r)
                .iter()
                .any(|w| matches!(w, Warning::AboveCeiling { .. }))
        };
        // 250 GB/s > 192 GB/s at the run's 2 GHz …
        assert!(above(&Record::default()));
        // … but within 288 GB/s at the 3 GHz read next to the samples.
        let mut r = Record::default();
        r.extra.insert("clock_hz".into(), serde_json::json!(3e9));
        assert!(!above(&r));
    }
}
