//! What is measured. A suite turns resolved options into cases, measures
//! them with `measure`, and pushes one `Record` per case into the sink.
//! Shared here: cpu selection, memory checks, sample options, and turning
//! a measured case into a record with its warnings.

pub mod cache;
pub mod chase;
pub mod first_use;
pub mod knees;
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
        if let Some(c) = kernel_ceiling(k, host) {
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

/// The L1 ceiling that bounds a kernel on one core, GB/s. String and libc
/// kernels are bounded by the widest vector path the CPU has.
pub fn kernel_ceiling(k: &Kernel, host: &Host) -> Option<f64> {
    let width = if k.width_bits >= 32 {
        k.width_bits
    } else {
        host.ceilings.iter().map(|c| c.width_bits).max()?
    };
    host.ceiling(k.op.name(), width)
}

/// Run-level warnings about the machine itself.
pub fn host_warnings(host: &Host) -> Vec<Warning> {
    let mut w = Vec::new();
    if let Some(h) = &host.cpu.hypervisor {
        w.push(Warning::VirtualMachine {
            hypervisor: h.clone(),
        });
    }
    w.extend(host.cache_warnings());
    w
}
