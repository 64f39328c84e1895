//! Turning a measurement into a record: bandwidth from the kernel's
//! declared bytes, statistics, and the typed warnings it deserves.

use crate::kernels::{Kernel, PassBytes};
use crate::measure::{stats, Measured};
use crate::model::{limits, Host, Placement, Record, Stats, Warning};

/// A bandwidth record from a measured streaming kernel: `pass` is what one
/// pass of one worker reads and writes, `cpus` the workers.
pub fn bandwidth(
    suite: &str,
    k: &Kernel,
    m: &Measured,
    pass: PassBytes,
    host: &Host,
    cpus: &[u32],
) -> Record {
    let threads = cpus.len() as u32;
    let ws = (pass.stream_len * k.streams() as usize) as u64;
    let rates = m.rates(1e9);
    let payload_ratio = pass.payload as f64 / (pass.read + pass.written) as f64;
    let payload: Vec<f64> = rates.iter().map(|g| g * payload_ratio).collect();
    let per_worker_bytes = (pass.read + pass.written) * m.reps;
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
        bytes_read_per_pass: Some(pass.read),
        bytes_written_per_pass: Some(pass.written),
        payload_bytes_per_pass: Some(pass.payload),
        reps_per_sample: Some(m.reps),
        samples: m.model_samples(),
        gbps: stats::summarize(&rates, true),
        payload_gbps: stats::summarize(&payload, true),
        per_thread_gbps: if threads > 1 {
            per_worker_best(m, |_| per_worker_bytes)
        } else {
            Vec::new()
        },
        noise: m.noise,
        placement: (threads > 1).then(|| Placement {
            start_skew_seconds: Some(m.max_skew()),
            ..Placement::default()
        }),
        ..Record::default()
    };
    r.warnings = bandwidth_warnings(&r, k, host);
    if m.cut_short {
        r.warnings.push(cut_short(m));
    }
    r
}

/// Each worker's best GB/s over its own intervals, given the bytes worker
/// `i` moves per sample.
pub fn per_worker_best(m: &Measured, bytes: impl Fn(usize) -> u64) -> Vec<f64> {
    m.per_worker_seconds()
        .iter()
        .enumerate()
        .map(|(i, secs)| {
            secs.iter()
                .map(|s| bytes(i) as f64 / s / 1e9)
                .fold(0.0, f64::max)
        })
        .collect()
}

/// The warning of a record whose sampling a stop request cut short.
pub fn cut_short(m: &Measured) -> Warning {
    Warning::Other {
        message: format!("interrupted after {} sample(s)", m.samples.len()),
        hint: "the run was stopped; its statistics rest on fewer samples than asked".into(),
    }
}

/// Spread, ceiling and noise warnings of a bandwidth record.
pub fn bandwidth_warnings(r: &Record, k: &Kernel, host: &Host) -> Vec<Warning> {
    let mut w = spread_warnings(r.gbps.as_ref(), true);
    if let (Some(s), Some(c)) = (r.gbps, kernel_ceiling(k, host)) {
        let total = c * r.threads.max(1) as f64;
        if s.best > total * limits::OVER_CEILING {
            w.push(Warning::AboveCeiling {
                gbps: s.best,
                ceiling_gbps: total,
            });
        }
    }
    w.extend(noise_warnings(r));
    w
}

/// The L1 ceiling that bounds a kernel on one core, GB/s. String and libc
/// kernels are bounded by the widest vector path the CPU has.
fn kernel_ceiling(k: &Kernel, host: &Host) -> Option<f64> {
    let width = if k.width_bits >= 32 {
        k.width_bits
    } else {
        host.ceilings.iter().map(|c| c.width_bits).max()?
    };
    host.ceiling(k.op.name(), width)
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
    let mut w = Vec::new();
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

#[cfg(test)]
mod tests {
    use super::*;

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
