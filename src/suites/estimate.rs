//! How long a plan will take, before it starts, so a long one can say so.
//!
//! The rule, stated with every estimate: each case costs its timed samples
//! plus about two samples' worth of calibration, each sample at least
//! `--min-sample-ms` (a network point costs its `--time` plus `--omit`).
//! Filling buffers and faulting pages in are left out, so this is a lower
//! bound, and it does not depend on this machine's speed.

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
/// lasts one sample; the growing ones before it add up to about another.
const CALIBRATION_SAMPLES: f64 = 2.0;

/// `cases` cases of `samples` samples of at least `min_sample_ms`.
pub fn sampled(cases: usize, samples: usize, min_sample_ms: f64) -> Estimate {
    let per_case = (samples as f64 + CALIBRATION_SAMPLES) * min_sample_ms / 1000.0;
    Estimate {
        seconds: cases as f64 * per_case,
        rule: format!(
            "{cases} cases × ({samples} samples + ~{CALIBRATION_SAMPLES} for calibration) × {min_sample_ms} ms, buffer set-up not counted"
        ),
    }
}

pub fn cache(p: &super::cache::CachePlan) -> Estimate {
    let per_size = p.kernels.len() + usize::from(p.first_use);
    sampled(p.sizes.len() * per_size, p.samples, p.min_sample_ms)
}

pub fn latency(p: &super::latency::LatencyPlan) -> Estimate {
    sampled(
        p.sizes.len() * p.views.len() * p.pages.len(),
        p.samples,
        p.min_sample_ms,
    )
}

pub fn regs(p: &super::regs::RegsPlan) -> Estimate {
    sampled(p.kernels.len(), p.samples, p.min_sample_ms)
}

pub fn threads(p: &super::threads::ThreadsPlan) -> Estimate {
    sampled(
        p.kernels.len() * p.sizes.len() * p.counts.len(),
        p.samples,
        p.min_sample_ms,
    )
}

pub fn transfer(p: &super::transfer::Plan) -> Estimate {
    sampled(
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

impl Estimate {
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
        let e = sampled(29 * 37, 7, 10.0);
        assert!((e.seconds - 96.57).abs() < 0.01, "{e:?}");
        assert!(e.notice().is_none());
        // The 124,824 sizes would be hours; 10,000 sizes × 29
        // kernels is already 7.2 h.
        let e = sampled(29 * 10_000, 7, 10.0);
        let n = e.notice().unwrap();
        assert!(n.contains("7.2 h") && n.contains("290000 cases"), "{n}");
    }
}
