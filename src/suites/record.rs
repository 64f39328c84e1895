//! Turning a measurement into a record: bandwidth from the kernel's
//! declared bytes, statistics, and the typed warnings it deserves.

use crate::kernels::{Form, Kernel, PassBytes};
use crate::measure::Measured;
use crate::model::detail::Bandwidth;
use crate::model::{
    limits, Curve, Detail, Host, Limit, LimitCase, Placement, Record, Regime, Stats, Warning,
};
use crate::stats;

/// A bandwidth record from a measured streaming kernel: `pass` is what one
/// pass of one worker reads and writes, `cpus` the workers; `into_detail` puts
/// the record's [`Bandwidth`] facts into its suite's detail.
pub fn bandwidth(
    k: &Kernel,
    m: &Measured,
    pass: PassBytes,
    host: &Host,
    cpus: &[u32],
    into_detail: impl FnOnce(Bandwidth) -> Detail,
) -> Record {
    let threads = cpus.len() as u32;
    let ws = (pass.stream_len * k.streams() as usize) as u64;
    let rates = m.rates(1e9);
    let payload_ratio = pass.payload as f64 / (pass.read + pass.written) as f64;
    let payload: Vec<f64> = rates.iter().map(|g| g * payload_ratio).collect();
    let ceiling = kernel_ceiling(k, host, m.clock_hz.or(host.clock_hz), cpus);
    let facts = Bandwidth {
        clock_hz: m.clock_hz,
        // A read timed as pure loads: its checksum variant proved, after
        // the samples, that every byte of the stream was read.
        verified: m.verified.then_some(true),
        ceiling_gbps: ceiling.map(|c| c * threads as f64).into(),
    };
    let mut r = Record {
        kernel: k.name.into(),
        op: k.op.clone(),
        width_bits: (k.width_bits > 0).then_some(k.width_bits),
        nontemporal: Some(k.nontemporal),
        pattern: Some(k.pattern.clone()),
        size_bytes: Some(ws),
        threads,
        cpus: cpus.to_vec(),
        regime: host.regime_of(ws, threads, Curve::Bandwidth),
        bytes_read_per_pass: Some(pass.read),
        bytes_written_per_pass: Some(pass.written),
        payload_bytes_per_pass: Some(pass.payload),
        reps_per_sample: Some(m.reps),
        samples: m.model_samples(),
        gbps: stats::summarize(&rates, true),
        payload_gbps: stats::summarize(&payload, true),
        per_thread_gbps: if threads > 1 {
            m.per_worker_best(|_| pass.read + pass.written, 1e9)
        } else {
            Vec::new()
        },
        noise: m.noise,
        placement: (threads > 1).then(|| Placement {
            start_skew_seconds: Some(m.max_skew()),
            ..Placement::default()
        }),
        ..Record::new(into_detail(facts))
    };
    label(&mut r, k, host);
    r.set_limit(limit(&r, k, host));
    // Extend: `label` may have warned already.
    r.warnings.extend(bandwidth_warnings(&r, k, host));
    sampled(&mut r, m);
    r
}

/// What a record of kernel `k` on `r.cpus` states about where it ran: the
/// kind of core (ARM; `mixed: …` plus a warning when its cpus differ in
/// kind), that the placement was only asked for where the system has no
/// affinity (macOS), and, for SVE kernels, the vector length they ran
/// with (also their `width_bits`).
pub fn label(r: &mut Record, k: &Kernel, host: &Host) {
    r.core_kind = host.core_kind_label(&r.cpus);
    if crate::os::cpu::PLACEMENT_ADVISORY.is_some() {
        r.warnings.push(Warning::Other {
            message: "placement advisory: the system steers threads to a kind of core but never pins them".into(),
            hint: "cpus and core_kind say what was asked for (see the run's warning)".into(),
        });
    }
    if let Some(kind) = r.core_kind.as_deref().filter(|k| k.starts_with("mixed")) {
        r.warnings.push(Warning::Other {
            message: format!("this record's threads ran on several kinds of core ({kind})"),
            hint: "its figure sums cores of unequal speed; pick one kind with `--cpus kind:ID`"
                .into(),
        });
    }
    if k.isa == crate::kernels::Isa::Sve {
        r.sve_vector_bits = crate::kernels::sve_vector_bits();
        r.width_bits = r.sve_vector_bits;
    }
}

/// What the sampler says of how `r`'s samples were taken, into `r`: the
/// samples retaken because a worker was descheduled, those kept although
/// it was (a warning: no clean sample came), and a stop request that cut
/// the sampling short (a warning).
pub fn sampled(r: &mut Record, m: &Measured) {
    super::spells::judge(r, m.baseline.as_ref());
    r.samples_retaken = m.retaken;
    r.samples_descheduled = m.descheduled;
    if let Some(samples) = m.descheduled.filter(|&k| k > 0) {
        r.warnings.push(Warning::Descheduled {
            samples,
            retaken: m.retaken.unwrap_or(0),
        });
    }
    if m.cut_short {
        r.warnings.push(Warning::Other {
            message: format!("interrupted after {} sample(s)", m.samples.len()),
            hint: "the run was stopped; its statistics rest on fewer samples than asked".into(),
        });
    }
}

/// The limit of a bandwidth record of kernel `k` (`Host::limit`): its
/// regime, the physical cores its cpus are on, the clock read next to its
/// samples (its [`Bandwidth::clock_hz`]), else the run's. A working set
/// within 2× of the level below still hits that level (a 64 KiB copy on a
/// 48 KiB L1 keeps three quarters of its lines there): it is bound by the
/// higher of the two levels' limits, unknown where either is.
///
/// The probe after the samples can read below the clock they ran at —
/// never above it (a chain cannot retire faster than the core runs): the
/// core's clock ramps back after an idle moment and lags the power
/// manager (on a 2-vCPU Zen 4 guest four records at 2 MiB read
/// 3.377 GHz, clean, beside the run's 3.694; one probe 2 ms after a
/// sleep read 3.236). A best above the limit at that clock but not at
/// the run's proves the kernel ran faster than the probe says, so the
/// record is judged at the run's clock; a lower clock that the kernel
/// does not contradict (an AVX-512 licence) still bounds it.
pub fn limit(r: &Record, k: &Kernel, host: &Host) -> Limit {
    let own = r.detail.bandwidth().and_then(|b| b.clock_hz);
    let at_own = limit_at(r, k, host, own.or(host.clock_hz));
    match (own, host.clock_hz, r.gbps, at_own.gbps) {
        (Some(o), Some(run), Some(g), Some(l)) if o < run && g.best > l => {
            limit_at(r, k, host, Some(run))
        }
        _ => at_own,
    }
}

/// [`limit`] at the clock `hz`.
fn limit_at(r: &Record, k: &Kernel, host: &Host, hz: Option<f64>) -> Limit {
    let cores = if r.cpus.is_empty() {
        r.threads.max(1)
    } else {
        host.cores_of(&r.cpus)
    };
    let unknown = Limit {
        gbps: None,
        bound_by: crate::model::BoundBy::Unknown,
    };
    // No regime: the caches are unknown (an emulator), so is the limit.
    let Some(regime) = r.regime.clone() else {
        return unknown;
    };
    // The row of the kind of core the record ran on (ARM big.LITTLE);
    // threads on several kinds have no one row.
    let Some(host) = host.for_cpus(&r.cpus) else {
        return unknown;
    };
    let host = &*host;
    let case = |regime: Regime| LimitCase {
        op: k.op.clone(),
        width_bits: kernel_width(k, host),
        regime,
        cores,
        hz,
        nontemporal: k.nontemporal,
    };
    let own = host.limit(&case(regime.clone()));
    let below = match regime {
        Regime::L2 => Some(1),
        Regime::L3 => Some(2),
        Regime::Dram => host.data_caches().map(|c| c.level).max(),
        _ => None,
    };
    // Past twice the level below, strictly: a 2 MiB copy on a 1 MiB L2
    // still read 5 % above the L3's 32 B/cycle.
    let edge = |l: u8| {
        host.cache_size(l, Curve::Bandwidth)
            .unwrap_or(0)
            .saturating_mul(2)
    };
    let near = |l: u8| r.size_bytes.is_some_and(|s| s <= edge(l));
    match below.filter(|&l| near(l)) {
        Some(b) => {
            let lower = host.limit(&case(Regime::cache(b)));
            match (own.gbps, lower.gbps) {
                (Some(o), Some(l)) if l > o => lower,
                (Some(_), Some(_)) => own,
                _ => unknown,
            }
        }
        None => own,
    }
}

/// Spread, limit and noise warnings of a bandwidth record: a best sample
/// more than 5 % above its limit (`Host::limit`) names both.
pub fn bandwidth_warnings(r: &Record, k: &Kernel, host: &Host) -> Vec<Warning> {
    let mut w = spread_warnings(r.gbps.as_ref(), true);
    let l = limit(r, k, host);
    if let (Some(s), Some(c)) = (r.gbps, l.gbps) {
        if s.best > c * limits::OVER_CEILING {
            w.push(Warning::AboveCeiling {
                gbps: s.best,
                ceiling_gbps: c,
                bound_by: Some(l.bound_by),
            });
        }
    }
    w.extend(noise_warnings(r));
    w
}

/// The L1 ceiling that bounds a kernel on one core at `hz`, GB/s; None
/// when the core (or the clock) is unknown. `rep` string instructions and
/// libc pick their own access width (`rep stosd` stores whole lines from
/// microcode; glibc uses AVX-512 even when BWSCOPE_DISABLE_ISA hides it),
/// so they are bounded by the core's widest vector path, not by their
/// element width, and so is `dc zva` (a block per instruction);
/// unrolled string instructions are one access each. SVE kernels are
/// bounded at the vector length; on a machine with several kinds of core
/// the row is that of `cpus`' kind (none when they mix kinds).
fn kernel_ceiling(k: &Kernel, host: &Host, hz: Option<f64>, cpus: &[u32]) -> Option<f64> {
    host.ceiling_on(k.op.as_str(), kernel_width(k, host), hz?, cpus)
}

/// The access width that bounds `k`: the vector length for SVE, None for
/// code that picks its own (`rep` strings, library calls, `dc zva`'s block).
fn kernel_width(k: &Kernel, host: &Host) -> Option<u32> {
    if k.isa == crate::kernels::Isa::Sve {
        return host.arm.as_ref()?.sve_vector_bits;
    }
    let own_width = matches!(k.form, Form::RepString | Form::Call | Form::Block);
    (k.width_bits > 0 && !own_width).then_some(k.width_bits)
}

/// The sample-spread warnings of a stats summary; `higher_is_better` for
/// rates, not for latencies.
pub fn spread_warnings(s: Option<&Stats>, higher_is_better: bool) -> Vec<Warning> {
    let mut w = Vec::new();
    if let Some(s) = s {
        if s.cv > limits::CV {
            w.push(Warning::HighCv { cv: s.cv });
        }
        let ratio = if higher_is_better {
            s.best / s.median
        } else {
            s.median / s.best
        };
        if s.median > 0.0 && s.best > 0.0 && ratio > limits::BEST_OVER_MEDIAN {
            w.push(Warning::BestMedianSpread { ratio });
        }
    }
    w
}

/// Noise warnings of a record.
pub fn noise_warnings(r: &Record) -> Vec<Warning> {
    r.noise.as_ref().map_or_else(Vec::new, Warning::from_noise)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Features;
    #[cfg(target_arch = "x86_64")]
    use crate::platform::uarch;

    fn kernel(name: &str) -> &'static Kernel {
        crate::kernels::registry()
            .iter()
            .find(|k| k.name == name)
            .expect(name)
    }

    /// A Golden Cove host (3 × 32 B / 2 × 64 B loads, 64 B of stores per
    /// cycle) at 2 GHz, with `features` visible to the kernels.
    #[cfg(target_arch = "x86_64")]
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
    #[cfg(target_arch = "x86_64")]
    fn string_and_libc_kernels_are_bound_by_the_widest_path() {
        let avx2_only = Features {
            avx2: true,
            ..Features::default()
        };
        let h = glc(avx2_only, "GenuineIntel");
        // rep stosd stores whole lines from microcode: not 2 × 4 B/cycle
        // but the core's widest store path, 64 B/cycle = 128 GB/s.
        assert_eq!(
            kernel_ceiling(kernel("rep_stosd"), &h, h.clock_hz, &[]),
            Some(128.0)
        );
        assert_eq!(
            kernel_ceiling(kernel("libc_memset"), &h, h.clock_hz, &[]),
            Some(128.0)
        );
        // Copies: 64 B loaded + 64 B stored per cycle, whichever width
        // libc or microcode picks (avx512f is hidden here).
        assert_eq!(
            kernel_ceiling(kernel("rep_movsb"), &h, h.clock_hz, &[]),
            Some(256.0)
        );
        // Unrolled string instructions are one access each: 2 × 4 B.
        assert_eq!(
            kernel_ceiling(kernel("stosd"), &h, h.clock_hz, &[]),
            Some(16.0)
        );
        // Vector kernels: their own width; 3 × 32 B loads.
        assert_eq!(
            kernel_ceiling(kernel("seq_read_256_avx2"), &h, Some(2e9), &[]),
            Some(192.0)
        );
        // The record's clock, not the run's.
        assert_eq!(
            kernel_ceiling(kernel("seq_read_256_avx2"), &h, Some(3e9), &[]),
            Some(288.0)
        );
        // An unknown core: no bound.
        let u = glc(Features::default(), "CentaurHauls");
        assert_eq!(
            kernel_ceiling(kernel("seq_read_256_avx2"), &u, Some(3e9), &[]),
            None
        );
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
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
            bandwidth_warnings(r, k, &h)
                .iter()
                .any(|w| matches!(w, Warning::AboveCeiling { .. }))
        };
        // 250 GB/s > 192 GB/s at the run's 2 GHz …
        let mut r = Record {
            gbps: Some(g),
            threads: 1,
            regime: Some("L1".into()),
            ..Record::new(crate::model::SuiteId::Cache)
        };
        assert!(above(&r));
        // … but within 288 GB/s at the 3 GHz read next to the samples.
        r.detail = crate::model::detail::CacheDetail {
            bandwidth: Bandwidth {
                clock_hz: Some(3e9),
                ..Bandwidth::default()
            },
            ..Default::default()
        }
        .into();
        assert!(!above(&r));
    }

    /// A Zen 4 core (64 B of loads, 32 B of stores per cycle) whose run
    /// clock read 3.694 GHz, and a 4 KiB copy record at `best` whose own
    /// probe read `clock`.
    #[cfg(target_arch = "x86_64")]
    fn zen4_copy(best: f64, clock: f64) -> (Host, Record) {
        let features = Features {
            avx512f: true,
            avx2: true,
            ..Features::default()
        };
        let h = Host {
            clock_hz: Some(3.694e9),
            uarch: Some(uarch::identify(&uarch::Facts {
                vendor: "AuthenticAMD",
                family: 0x19,
                model: 0x11,
                features: &features,
                caches: &[],
            })),
            features,
            ..Host::default()
        };
        let r = Record {
            gbps: Some(Stats::constant(best, 7)),
            threads: 1,
            size_bytes: Some(4096),
            regime: Some("L1".into()),
            ..Record::new(crate::model::detail::CacheDetail {
                bandwidth: Bandwidth {
                    clock_hz: Some(clock),
                    ..Bandwidth::default()
                },
                ..Default::default()
            })
        };
        (h, r)
    }

    /// Issue 29: a quiet survey flagged a 4 KiB AVX-512 copy at 236.4 GB/s
    /// (64 B/cycle × 3.694 GHz) above a limit of 216.1 GB/s, computed at
    /// the 3.377 GHz its own probe read after the samples.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn a_probe_that_under_read_the_clock_does_not_lower_the_limit() {
        let k = kernel("seq_copy_512_avx512f");
        let (h, r) = zen4_copy(236.4, 3.377e9);
        let l = limit(&r, k, &h);
        assert!((l.gbps.unwrap() - 64.0 * 3.694).abs() < 0.01, "{l:?}");
        assert!(!bandwidth_warnings(&r, k, &h)
            .iter()
            .any(|w| matches!(w, Warning::AboveCeiling { .. })));
        // A lower clock the kernel does not contradict still bounds it.
        let (h, r) = zen4_copy(200.0, 3.377e9);
        assert!((limit(&r, k, &h).gbps.unwrap() - 64.0 * 3.377).abs() < 0.01);
        // Above the limit at the run's clock too: still said.
        let (h, r) = zen4_copy(260.0, 3.377e9);
        let w = bandwidth_warnings(&r, k, &h);
        assert!(
            w.iter().any(|w| matches!(
                w,
                Warning::AboveCeiling { ceiling_gbps, .. } if (ceiling_gbps - 64.0 * 3.694).abs() < 0.01
            )),
            "{w:?}"
        );
    }

    /// An AArch64 host at 2 GHz with the given cpus' MIDRs and SVE length.
    #[cfg(target_arch = "aarch64")]
    fn arm_host(midrs: &[(u32, u32)], vl: Option<u32>) -> Host {
        let midrs: Vec<(u32, crate::model::Midr)> = midrs
            .iter()
            .map(|&(c, m)| (c, crate::model::Midr(m)))
            .collect();
        let arm = crate::model::ArmHost {
            sve_vector_bits: vl,
            core_kinds: crate::platform::arm::core_kinds(&midrs),
            ..Default::default()
        };
        Host {
            features: Features {
                asimd: true,
                sve: vl.is_some(),
                dc_zva: true,
                ..Features::default()
            },
            clock_hz: Some(2e9),
            uarch: arm.core_kinds.first().map(|k| k.uarch.clone()),
            arm: Some(arm),
            ..Host::default()
        }
    }

    #[test]
    #[cfg(target_arch = "aarch64")]
    fn arm_ceilings_follow_the_kind_and_the_vector_length() {
        // Neoverse V1, SVE 256 bit: two 256-bit loads per cycle = 64 B.
        let v1 = arm_host(&[(0, 0x411f_d401)], Some(256));
        let at = |k: &str, h: &Host, cpus: &[u32]| kernel_ceiling(kernel(k), h, Some(2e9), cpus);
        assert_eq!(at("seq_read_sve", &v1, &[0]), Some(128.0));
        // NEON: three 128-bit loads per cycle.
        assert_eq!(at("seq_read_128_neon", &v1, &[0]), Some(96.0));
        // dc zva picks no width: the widest store path, 32 B/cycle.
        assert_eq!(at("dc_zva", &v1, &[0]), Some(64.0));
        // big.LITTLE: Cortex-A55 on cpus 0-1, Cortex-A76 on 2-3.
        let (a55, a76) = (0x412f_d050, 0x414f_d0b1);
        let bl = arm_host(&[(0, a55), (1, a55), (2, a76), (3, a76)], None);
        // The A55 reads 8 B/cycle at any width; the A76 32 B/cycle.
        assert_eq!(at("seq_read_256_neon", &bl, &[1]), Some(16.0));
        assert_eq!(at("seq_read_256_neon", &bl, &[2, 3]), Some(64.0));
        // Threads on both kinds: no single row bounds them.
        assert_eq!(at("seq_read_256_neon", &bl, &[1, 2]), None);
        let mut r = Record {
            cpus: vec![1, 2],
            ..Record::new(crate::model::SuiteId::Cache)
        };
        label(&mut r, kernel("seq_read_256_neon"), &bl);
        assert_eq!(
            r.core_kind.as_deref(),
            Some("mixed: cortex-a55×1+cortex-a76×1")
        );
        assert!(r
            .warnings
            .iter()
            .any(|w| w.to_string().contains("several kinds")));
        // An SVE record states the vector length it ran with.
        let mut r = Record {
            cpus: vec![0],
            ..Record::new(crate::model::SuiteId::Cache)
        };
        label(&mut r, kernel("seq_read_sve"), &v1);
        assert_eq!(r.core_kind.as_deref(), Some("neoverse-v1"));
        assert_eq!(r.sve_vector_bits, crate::kernels::sve_vector_bits());
        assert_eq!(r.width_bits, r.sve_vector_bits);
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn a_figure_above_the_dram_peak_names_both() {
        let mut h = glc(Features::default(), "GenuineIntel");
        h.dram = Some(crate::model::Dram {
            peak_gbps: Some(20.0),
            ..crate::model::Dram::default()
        });
        let k = kernel("seq_read_256_avx2");
        let g = |best: f64| Stats::constant(best, 3);
        let mut r = Record {
            gbps: Some(g(25.0)),
            threads: 1,
            regime: Some("DRAM".into()),
            ..Record::new(crate::model::SuiteId::Cache)
        };
        let w = bandwidth_warnings(&r, k, &h);
        let above = w
            .iter()
            .find(|w| matches!(w, Warning::AboveCeiling { .. }))
            .expect("warned");
        assert_eq!(
            above.to_string(),
            "25.0 GB/s exceeds the DRAM peak of 20.0 GB/s (DRAM channels)"
        );
        // Within 5 %: noise, not a wrong limit.
        r.gbps = Some(g(20.9));
        assert!(bandwidth_warnings(&r, k, &h).is_empty());
        // The record carries its limit and share.
        r.set_limit(limit(&r, k, &h));
        assert_eq!(r.limit_gbps, Some(20.0));
        assert_eq!(r.bound_by, Some(crate::model::BoundBy::DramChannels));
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn a_set_within_twice_the_level_below_takes_the_higher_limit() {
        // Golden Cove at 2 GHz: 48 KiB L1, 2 MiB L2; L2→L1 64 B/cycle.
        let mut h = glc(Features::default(), "GenuineIntel");
        for (level, size) in [(1u8, 48u64 << 10), (2, 2 << 20)] {
            h.caches.push(crate::model::Cache::new(
                level,
                "data",
                size,
                64,
                vec![0],
                "test".into(),
            ));
        }
        let k = kernel("seq_read_256_avx2");
        let at = |size: u64| {
            let r = Record {
                size_bytes: Some(size),
                threads: 1,
                regime: Some(h.regime(size, 1, Curve::Bandwidth)),
                ..Record::new(crate::model::SuiteId::Cache)
            };
            let l = limit(&r, k, &h);
            (l.gbps, l.bound_by)
        };
        use crate::model::BoundBy::*;
        // 64 KiB still hits the 48 KiB L1: its load ports (3 × 32 B).
        assert_eq!(at(64 << 10), (Some(192.0), L1LoadPorts));
        // Past 96 KiB the fill (64 B/cycle) bounds it.
        assert_eq!(at(128 << 10), (Some(128.0), L2Fill));
        // Past the last level with no DRAM peak: nothing is known.
        assert_eq!(at(8 << 20), (None, Unknown));
    }

    #[test]
    fn spread_follows_direction() {
        let s = stats::summarize(&[1.0, 1.5, 1.5], false).unwrap();
        assert!(matches!(
            spread_warnings(Some(&s), false)[..],
            [Warning::HighCv { .. }, Warning::BestMedianSpread { .. }]
        ));
        let s = stats::summarize(&[2.0, 2.0, 2.0], true).unwrap();
        assert!(spread_warnings(Some(&s), true).is_empty());
    }
}
