//! How long a plan will take, before it starts: the shared [`Estimate`]
//! and its rules, used for the notice a long plan prints, fleet's
//! `--dry-run` and the deadline rank 0 gives a node. Each suite's own
//! estimate (`Plan::estimate`) is beside its plan, built from these.
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
pub const CALIBRATION_SAMPLES: f64 = 2.0;

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
