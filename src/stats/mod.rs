//! Statistics, once for the whole crate: the summary of a sample set
//! (best, median, min, max, mean, CV), the median, and the robust
//! statistics fleet verdicts use ([`robust`]). A leaf: it reads the
//! model's [`Stats`] and nothing else, so `measure`, `platform` and
//! `report` all use the same figures.
//!
//! Summary statistics of samples:
//! The headline is **best and median together**. On a shared machine the
//! best of many short samples estimates what the hardware can do (noise only
//! ever slows a sample down), the median what a user typically gets; their
//! ratio says how noisy the run was. CV = population stddev / mean.

pub mod levels;
pub mod robust;
pub mod spells;

use crate::model::Stats;

/// Median of the finite values; None when there are none.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(middle(&v))
}

/// The middle of sorted, non-empty `v` (the mean of the two middle values
/// when their count is even). Each is halved before they are added: the
/// sum of two finite values near `f64::MAX` is infinite, their mean is not
/// (halving is exact, so ordinary values get the same answer as `(a + b)
/// / 2`).
fn middle(v: &[f64]) -> f64 {
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        v[n / 2 - 1] / 2.0 + v[n / 2] / 2.0
    }
}

/// The mean of finite `v`: their sum over their count, or, where that sum
/// overflows, the sum of each over the count (finite whenever they are).
fn mean(v: &[f64]) -> f64 {
    let n = v.len() as f64;
    let sum: f64 = v.iter().sum();
    if sum.is_finite() {
        sum / n
    } else {
        v.iter().map(|x| x / n).sum()
    }
}

/// Statistics of `values`, where larger is better (`higher_is_better`) for
/// rates and smaller for latencies; `best` follows that direction.
pub fn summarize(values: &[f64], higher_is_better: bool) -> Option<Stats> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    let median = middle(&v);
    let mean = mean(&v);
    let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
    let cv = if mean != 0.0 {
        var.sqrt() / mean.abs()
    } else {
        0.0
    };
    let (min, max) = (v[0], v[n - 1]);
    Some(Stats {
        best: if higher_is_better { max } else { min },
        median,
        min,
        max,
        mean,
        cv,
        n,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odd_and_even_medians() {
        let s = summarize(&[3.0, 1.0, 2.0], true).unwrap();
        assert_eq!(
            (s.best, s.median, s.min, s.max, s.n),
            (3.0, 2.0, 1.0, 3.0, 3)
        );
        let s = summarize(&[4.0, 1.0, 2.0, 3.0], true).unwrap();
        assert_eq!(s.median, 2.5);
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[f64::NAN, 1.0]), Some(1.0));
    }

    /// Two values near the largest float: their median and mean are
    /// theirs, not infinity (a store's or file's 1e308 once made a fleet's
    /// past median `inf`).
    #[test]
    fn huge_values_do_not_overflow() {
        assert_eq!(median(&[1e308, 1e308]), Some(1e308));
        assert_eq!(median(&[f64::MAX, f64::MAX]), Some(f64::MAX));
        let s = summarize(&[1e308, 1e308], true).unwrap();
        assert_eq!((s.median, s.mean), (1e308, 1e308));
        assert!(s.median.is_finite() && s.mean.is_finite());
    }

    #[test]
    fn best_follows_direction() {
        assert_eq!(summarize(&[5.0, 7.0], false).unwrap().best, 5.0);
        assert_eq!(summarize(&[5.0, 7.0], true).unwrap().best, 7.0);
    }

    #[test]
    fn cv_of_constant_is_zero_and_known_value() {
        assert_eq!(summarize(&[2.0; 5], true).unwrap().cv, 0.0);
        // values 1 and 3: mean 2, population stddev 1 → CV 0.5
        let s = summarize(&[1.0, 3.0], true).unwrap();
        assert!((s.cv - 0.5).abs() < 1e-12);
    }

    #[test]
    fn empty_and_nan() {
        assert!(summarize(&[], true).is_none());
        assert!(summarize(&[f64::NAN], true).is_none());
        assert_eq!(summarize(&[f64::NAN, 1.0], true).unwrap().n, 1);
    }
}
