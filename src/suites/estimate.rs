//! How long a plan will take, before it starts: the one estimator, used
//! for the notice a long plan prints, fleet's `--dry-run` and the deadline
//! rank 0 gives a node.
//!
//! The rule, stated with every estimate: each case costs its timed samples
//! plus about two samples' worth of calibration, each sample at least
//! `--min-sample-ms` (a cache sweep's sample at least one pass at the knee
//! probe's read rate, its cases settling after `settle` samples; a network
//! point costs its `--time` plus `--omit`);
//! fresh buffers cost their page faults at [`FAULT_BPS`], a pointer chain
//! its building at [`CHASE_BUILD_S_PER_BYTE`]. It does not depend on this
//! machine's speed, only on the plan.

use std::time::Duration;

/// A plan longer than this says so on stderr before it starts.
pub const LONG: Duration = Duration::from_secs(600);

/// The estimate and how it was reached, in words.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    pub seconds: f64,
    pub rule: String,
}

/// Calibration, in sample lengths: the last calibration call already
/// lasts one sample; the growing ones before it add up to about another
/// (and a hinted start, the usual case in a sweep, needs only the one).
const CALIBRATION_SAMPLES: f64 = 2.0;

/// First touch of fresh pages, bytes per second: the slow end of what the
/// research notes measured (1 GB/s with 4 KiB pages; THP in a VM can be
/// slower).
pub const FAULT_BPS: f64 = 1e9;

/// A pointer chase of N bytes is built in about 0.15 ns per byte.
pub const CHASE_BUILD_S_PER_BYTE: f64 = 0.15e-9;

impl Estimate {
    /// Nothing to measure.
    pub fn nothing(why: &str) -> Estimate {
        Estimate {
            seconds: 0.0,
            rule: why.into(),
        }
    }

    /// `cases` cases of `samples` samples of at least `min_sample_ms`.
    pub fn sampled(cases: usize, samples: usize, min_sample_ms: f64) -> Estimate {
        let per_case = (samples as f64 + CALIBRATION_SAMPLES) * min_sample_ms / 1000.0;
        Estimate {
            seconds: cases as f64 * per_case,
            rule: format!(
                "{cases} cases × ({samples} samples + ~{CALIBRATION_SAMPLES} for calibration) × {min_sample_ms} ms"
            ),
        }
    }

    /// Plus `bytes` of fresh pages faulted in (`what` they are).
    pub fn faulting(mut self, bytes: f64, what: &str) -> Estimate {
        self.seconds += bytes / FAULT_BPS;
        self.rule
            .push_str(&format!(", {what} faulted in at {} GB/s", FAULT_BPS / 1e9));
        self
    }

    /// Plus building pointer chains over `bytes` in all.
    pub fn chasing(mut self, bytes: f64) -> Estimate {
        self.seconds += bytes * CHASE_BUILD_S_PER_BYTE;
        self.rule.push_str(&format!(
            ", chains built at {} ns per byte",
            CHASE_BUILD_S_PER_BYTE * 1e9
        ));
        self
    }

    /// The line to print when the plan is long, else `None`.
    pub fn notice(&self) -> Option<String> {
        (self.seconds > LONG.as_secs_f64()).then(|| {
            format!(
                "note: this plan is estimated to take at least {} ({}); Ctrl-C stops it and keeps every finished record",
                human(self.seconds),
                self.rule
            )
        })
    }
}

/// A sweep: every size × kernel a case, each sample lasting at least
/// `--min-sample-ms` or one pass over the working set at the read rate the
/// knee probe measured near that size, whichever is longer (a 1 GiB pass
/// at DRAM's 15 GB/s is 70 ms, seven times the minimum). Cases settle
/// after `settle` samples on a quiet machine; a noisy one takes all.
pub fn cache(p: &super::cache::CachePlan) -> Estimate {
    let kernels = p.kernels.len() + usize::from(p.first_use);
    let taken = p.settle.unwrap_or(p.samples).min(p.samples);
    let sample_s = |size: u64| {
        let pass = read_rate(&p.read_curve, size).map_or(0.0, |g| size as f64 / (g * 1e9));
        pass.max(p.min_sample_ms / 1000.0)
    };
    let per_kernel: f64 = p
        .sizes
        .iter()
        .map(|&s| (taken as f64 + CALIBRATION_SAMPLES) * sample_s(s))
        .sum();
    let seconds = per_kernel * kernels as f64;
    let passes = if p.read_curve.is_empty() {
        ""
    } else {
        " or one pass at the knee probe's read rate, whichever is longer"
    };
    let settle = match p.settle {
        Some(k) if k < p.samples => {
            format!("{k} samples (up to {} where they disagree)", p.samples)
        }
        _ => format!("{} samples", p.samples),
    };
    let top = p.sizes.iter().max().copied().unwrap_or(0) as f64;
    // Each thread's buffer is faulted in once and refilled at every size.
    Estimate {
        seconds,
        rule: format!(
            "{} sizes × {kernels} kernels × ({settle} + ~{CALIBRATION_SAMPLES} for calibration) × {} ms{passes}",
            p.sizes.len(),
            p.min_sample_ms
        ),
    }
    .faulting(2.0 * top * p.cpus.len() as f64, "buffers")
}

/// Read GB/s at `size` from a probe's read curve: log-log interpolation
/// between its points, its last point's rate beyond them; None without a
/// curve.
pub fn read_rate(curve: &[crate::model::CurvePoint], size: u64) -> Option<f64> {
    let pts: Vec<(f64, f64)> = curve
        .iter()
        .filter(|p| p.size_bytes > 0 && p.value > 0.0 && p.value.is_finite())
        .map(|p| ((p.size_bytes as f64).ln(), p.value.ln()))
        .collect();
    let x = (size.max(1) as f64).ln();
    let (first, last) = (pts.first()?, pts.last()?);
    if x <= first.0 {
        return Some(first.1.exp());
    }
    if x >= last.0 {
        return Some(last.1.exp());
    }
    let i = pts.windows(2).position(|w| x >= w[0].0 && x <= w[1].0)?;
    let (a, b) = (pts[i], pts[i + 1]);
    let t = if b.0 > a.0 {
        (x - a.0) / (b.0 - a.0)
    } else {
        0.0
    };
    Some((a.1 + t * (b.1 - a.1)).exp())
}

pub fn latency(p: &super::latency::LatencyPlan) -> Estimate {
    let top = p.sizes.iter().max().copied().unwrap_or(0) as f64;
    let chains: u64 = p.sizes.iter().sum::<u64>() * (p.views.len() * p.pages.len()) as u64;
    Estimate::sampled(
        p.sizes.len() * p.views.len() * p.pages.len(),
        p.samples,
        p.min_sample_ms,
    )
    .faulting(top * p.pages.len() as f64, "chase buffers")
    .chasing(chains as f64)
}

pub fn regs(p: &super::regs::RegsPlan) -> Estimate {
    Estimate::sampled(p.kernels.len(), p.samples, p.min_sample_ms)
}

pub fn threads(p: &super::threads::ThreadsPlan) -> Estimate {
    let top = p.sizes.iter().max().copied().unwrap_or(0) as f64;
    Estimate::sampled(
        p.kernels.len() * p.sizes.len() * p.counts.len(),
        p.samples,
        p.min_sample_ms,
    )
    .faulting(p.counts.len() as f64 * top, "buffers")
}

pub fn numa(p: &super::numa::NumaPlan) -> Estimate {
    use super::numa::Mode;
    let cells = p.cell_cpus.len() * p.memory_nodes.len();
    let threads = p.cell_cpus.iter().map(|(_, c)| c.len()).max().unwrap_or(1);
    let (cases, faulted) = match &p.mode {
        Mode::Matrix {
            mixes,
            roles,
            latency,
        } => {
            let sets = if roles.is_some() { 1 } else { mixes.len() };
            (
                cells * (sets + usize::from(*latency)),
                cells * (threads + usize::from(*latency)),
            )
        }
        // Two pairs (write, read), local/local and one per remote node.
        Mode::WritePair => (2 * p.memory_nodes.len(), 4 * p.memory_nodes.len()),
        Mode::Load { delays_ns, .. } => (delays_ns.len() + 1, 1 + threads),
    };
    Estimate::sampled(cases, p.samples, p.min_sample_ms)
        .faulting((faulted as u64 * p.size) as f64, "buffers")
}

pub fn memtype(p: &super::memtype::MemtypePlan) -> Estimate {
    // Untimed by a sampler: every pass copies (or reads) the buffer once,
    // the first one faulting it in; count them all at the fault rate (the
    // slowest kinds, uncached device memory, are slower still).
    let passes = (p.passes + p.read_passes + 2) as f64;
    Estimate {
        seconds: p.cases.len() as f64 * passes * p.size as f64 * 2.0 / FAULT_BPS,
        rule: format!(
            "{} kinds × ({} copy + {} read passes + 2) × 2 × {} B at {} GB/s",
            p.cases.len(),
            p.passes,
            p.read_passes,
            p.size,
            FAULT_BPS / 1e9
        ),
    }
}

pub fn transfer(p: &super::transfer::Plan) -> Estimate {
    Estimate::sampled(
        p.kinds.len() * p.directions.len() * p.sizes.len(),
        p.samples,
        p.min_sample_ms,
    )
}

pub fn net(p: &super::net::NetPlan) -> Estimate {
    let per_point = p.time_seconds.unwrap_or(0.0) + p.omit_seconds;
    Estimate {
        seconds: p.chunks.len() as f64 * per_point,
        rule: format!(
            "{} points × ({} s + {} s omitted){}",
            p.chunks.len(),
            p.time_seconds.unwrap_or(0.0),
            p.omit_seconds,
            if p.bytes.is_some() {
                ", --bytes points not counted"
            } else {
                ""
            }
        ),
    }
}

fn human(s: f64) -> String {
    if s >= 5400.0 {
        format!("{:.1} h", s / 3600.0)
    } else {
        format!("{:.0} min", s / 60.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_plans_say_so_with_their_rule() {
        // 29 kernels × 37 sizes × (7 + 2) × 10 ms = 96.6 s: no notice.
        let e = Estimate::sampled(29 * 37, 7, 10.0);
        assert!((e.seconds - 96.57).abs() < 0.01, "{e:?}");
        assert!(e.notice().is_none());
        // The 124,824 sizes would be hours; 10,000 sizes × 29
        // kernels is already 7.2 h.
        let e = Estimate::sampled(29 * 10_000, 7, 10.0);
        let n = e.notice().unwrap();
        assert!(n.contains("7.2 h") && n.contains("290000 cases"), "{n}");
    }

    #[test]
    fn set_up_adds_its_time_and_says_so() {
        let e = Estimate::sampled(1, 1, 1000.0)
            .faulting(2e9, "buffers")
            .chasing(1e9);
        assert!((e.seconds - (3.0 + 2.0 + 0.15)).abs() < 1e-9, "{e:?}");
        assert!(
            e.rule.contains("buffers faulted in at 1 GB/s"),
            "{}",
            e.rule
        );
        assert!(e.rule.contains("chains built at 0.15 ns per byte"));
    }
}
