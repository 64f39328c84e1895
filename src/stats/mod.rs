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

/// The `q` quantile (0 to 1) of the finite values, linear between order
/// statistics (Hyndman & Fan's type 7, R's and NumPy's default); None
/// when there are none. The one quantile of the crate: the history's
/// percentiles and the spell probes' baselines both read it.
pub fn quantile(values: &[f64], q: f64) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() || !(0.0..=1.0).contains(&q) {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let x = q * (v.len() - 1) as f64;
    let (i, t) = (x.floor() as usize, x.fract());
    let hi = v[(i + 1).min(v.len() - 1)];
    // Between two order statistics as a weighted sum, so two huge values
    // never overflow to infinity on the way.
    Some(v[i] * (1.0 - t) + hi * t)
}

/// The rank of `value` among `earlier` (1: better than all of them) and
/// the share of them it beats, ties counting half (the "mid-rank"
/// percentile, so a figure equal to every earlier one is p50). None with
/// no earlier figure: a percentile of nothing is not 0 or 100.
pub fn rank(value: f64, earlier: &[f64], higher_is_better: bool) -> (Option<u32>, Option<f64>) {
    if earlier.is_empty() {
        return (None, None);
    }
    let better = |a: f64, b: f64| if higher_is_better { a > b } else { a < b };
    let above = earlier.iter().filter(|&&e| better(e, value)).count();
    let below = earlier.iter().filter(|&&e| better(value, e)).count();
    let ties = earlier.len() - above - below;
    let p = (below as f64 + ties as f64 / 2.0) / earlier.len() as f64 * 100.0;
    (Some(above as u32 + 1), Some(p))
}

/// The middle of sorted, non-empty `v` (the mean of the two middle values
/// when their count is even).
fn middle(v: &[f64]) -> f64 {
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
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
    let mean = v.iter().sum::<f64>() / n as f64;
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

    #[test]
    fn quantiles_interpolate_and_never_overflow() {
        assert_eq!(quantile(&[], 0.5), None);
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0], 0.5), Some(2.5));
        assert_eq!(quantile(&[4.0, 1.0, 3.0, 2.0], 0.0), Some(1.0));
        assert_eq!(quantile(&[4.0, 1.0, 3.0, 2.0], 1.0), Some(4.0));
        assert!((quantile(&[10.0, 20.0], 0.1).unwrap() - 11.0).abs() < 1e-9);
        assert_eq!(quantile(&[1e308, 1e308], 0.5), Some(1e308));
        assert_eq!(quantile(&[1.0], 1.5), None);
    }

    #[test]
    fn rank_and_percentile_count_the_earlier_figures_beaten() {
        assert_eq!(rank(5.0, &[], true), (None, None));
        // 3rd: two earlier runs were faster, three slower.
        assert_eq!(
            rank(16.1, &[17.0, 18.0, 15.0, 14.0, 12.0], true),
            (Some(3), Some(60.0))
        );
        // Latency: lower is better.
        assert_eq!(rank(80.0, &[90.0, 100.0], false), (Some(1), Some(100.0)));
        assert_eq!(rank(7.0, &[7.0, 7.0], true), (Some(1), Some(50.0)));
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
