//! watch's usual figures: the one step rule (`judge::stepped`) over the
//! machine's series of the two cases a sample measures, seeded from the
//! history store when the watch starts, so a restart carries on where the
//! last one stopped.
//!
//! A point is clean by the history's own rule (`judge::noise::flags`, the store's `noisy` column:
//! the spell probes' `core_shared` and `memory_contended`, foreign load,
//! steal, descheduled samples, samples that disagree), so the store and
//! the watch judge the same points the same way. The series is bounded:
//! the newest [`Usual::window`] points of each case, whatever ran before.

use std::collections::VecDeque;

use crate::judge::{self, StepRule, Verdict};

/// The rule's parameters for watch samples: a step is three clean
/// samples in a row more than 10 % worse than the median of up to the
/// window's clean samples before them, which needs at least ten.
pub const HELD: usize = 3;
pub const THRESHOLD: f64 = 0.10;
pub const MIN_USUAL: usize = 10;

/// The rule for one figure of a watch sample.
pub fn rule(window: usize, higher_is_better: bool) -> StepRule {
    StepRule {
        held: HELD,
        threshold: THRESHOLD,
        min_usual: MIN_USUAL,
        window,
        higher_is_better,
    }
}

/// One figure's series, oldest first, at most `window` points.
#[derive(Debug, Clone)]
pub struct Series {
    points: VecDeque<judge::Point>,
    rule: StepRule,
}

/// What the rule says of a series after its newest point.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    /// The usual level (the verdict's, or the median of every clean point
    /// before the newest while too few to judge).
    pub usual: Option<f64>,
    /// Clean points before the newest one: what the usual level rests on.
    pub clean_before: usize,
    pub verdict: Verdict,
}

impl Series {
    pub fn new(rule: StepRule) -> Series {
        Series {
            points: VecDeque::new(),
            rule,
        }
    }

    /// Points the store held, oldest first (the newest `window` kept).
    pub fn seed(&mut self, points: impl IntoIterator<Item = judge::Point>) {
        for p in points {
            self.push(p);
        }
    }

    fn push(&mut self, p: judge::Point) {
        if self.points.len() == self.rule.window.max(1) {
            self.points.pop_front();
        }
        self.points.push_back(p);
    }

    /// Add the newest point and judge the series with it.
    pub fn add(&mut self, p: judge::Point) -> Judgement {
        let clean_before = self.clean();
        let before: Vec<f64> = self
            .points
            .iter()
            .filter(|p| p.clean && p.value.is_finite())
            .map(|p| p.value)
            .collect();
        self.push(p);
        let series: Vec<judge::Point> = self.points.iter().copied().collect();
        let verdict = judge::stepped(&series, &self.rule);
        let usual = verdict.usual().or_else(|| crate::stats::median(&before));
        Judgement {
            usual,
            clean_before,
            verdict,
        }
    }

    /// Clean points held.
    pub fn clean(&self) -> usize {
        self.points
            .iter()
            .filter(|p| p.clean && p.value.is_finite())
            .count()
    }

    pub fn rule(&self) -> &StepRule {
        &self.rule
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 50 samples of a quiet machine's noise raise nothing; a 15 % drop
    /// that holds is a step on its third clean sample; a spell's sample
    /// is kept out of the usual figures and starts nothing.
    #[test]
    fn a_held_drop_is_a_step_and_noise_or_spells_are_not() {
        let mut s = Series::new(rule(1000, true));
        let noise = [35.7, 35.2, 34.9, 35.1, 36.0, 33.9, 35.5, 34.4, 35.8, 35.0];
        for i in 0..50 {
            let j = s.add(judge::Point::clean(noise[i % noise.len()]));
            assert!(!j.verdict.stepped_down(), "sample {i}");
            assert_eq!(j.clean_before, i);
        }
        let j = s.add(judge::Point::noisy(10.0));
        assert!(!j.verdict.stepped_down());
        assert_eq!(s.clean(), 50);
        let states: Vec<bool> = (0..4)
            .map(|_| s.add(judge::Point::clean(30.0)).verdict.stepped_down())
            .collect();
        assert_eq!(states, [false, false, true, true]);
    }

    #[test]
    fn the_series_is_bounded_by_its_window() {
        let mut s = Series::new(rule(100, true));
        for i in 0..600 {
            s.add(judge::Point::clean(30.0 + (i % 7) as f64));
        }
        assert_eq!(s.clean(), 100);
    }

    /// A watch judges what `judge::stepped` judges: the same series and
    /// rule give the same verdict whether the points came from the store
    /// or from samples.
    #[test]
    fn seeded_or_sampled_the_verdict_is_the_rules() {
        let pts: Vec<judge::Point> = (0..40)
            .map(|i| {
                let v = if i < 30 { 20.0 + (i % 3) as f64 } else { 15.0 };
                if i % 7 == 3 {
                    judge::Point::noisy(v * 0.5)
                } else {
                    judge::Point::clean(v)
                }
            })
            .collect();
        let r = rule(1000, true);
        let mut seeded = Series::new(r);
        seeded.seed(pts[..39].iter().copied());
        let j = seeded.add(pts[39]);
        assert_eq!(j.verdict, judge::stepped(&pts, &r));
        assert!(j.verdict.stepped_down());
    }

    proptest::proptest! {
        /// Whichever way a watch gets its points (seeded from the store,
        /// then sampled), the verdict is `judge::stepped`'s on the same
        /// series and rule, as history --check and the fleet's past ask
        /// it; and a noisy point added last never starts a step.
        #[test]
        fn the_watch_asks_the_one_rule(
            values in proptest::collection::vec((10.0f64..50.0, proptest::bool::weighted(0.8)), 1..60),
            seeded in 0usize..60,
            noisy_last in 1.0f64..100.0,
        ) {
            let pts: Vec<judge::Point> = values
                .iter()
                .map(|&(v, clean)| judge::Point { value: v, clean })
                .collect();
            let r = rule(1000, true);
            let mut series = Series::new(r);
            let cut = seeded.min(pts.len() - 1);
            series.seed(pts[..cut].iter().copied());
            let mut last = None;
            for p in &pts[cut..] {
                last = Some(series.add(*p));
            }
            let j = last.unwrap();
            proptest::prop_assert_eq!(&j.verdict, &judge::stepped(&pts, &r));
            let before = j.verdict.stepped_down();
            let after = series.add(judge::Point::noisy(noisy_last)).verdict.stepped_down();
            proptest::prop_assert!(!after || before, "a noisy point started a step");
        }
    }
}
