//! Change points of a case's series: the runs where its level steps.
//!
//! PELT (Killick, Fearnhead & Eckley, "Optimal detection of changepoints
//! with a linear computational cost", JASA 107(500), 2012,
//! doi:10.1080/01621459.2012.737745) with the Gaussian change-in-mean
//! cost: the segmentation that minimises Σ segments' squared deviations
//! from their means + β per change, found exactly by dynamic programming,
//! with the pruning that makes it linear in practice.
//!
//! - σ² is estimated robustly from the series itself (the MAD of the
//!   differences of neighbours, ÷ √2: a step moves one difference, not
//!   the estimate), with a floor of 0.1 % of the level so a noiseless
//!   series still has a scale.
//! - β = 4 σ² ln n: twice the BIC penalty, so that runs of a quiet
//!   machine's noise flag nothing (the tests hold 200 series of it to
//!   that), at the cost of missing steps under about 3 σ.
//! - A step smaller than [`MIN_STEP`] of the level is not reported: below
//!   that no one acts on it.
//! - Noise-aware: figures taken in noise (`Flags::noisy`) are left out
//!   before the search, so they can neither start a step nor hide one.

/// The smallest step reported, as a fraction of the level before it.
pub const MIN_STEP: f64 = 0.02;

/// The indices where a new level starts (each ≥ `min_len` and ≤ n −
/// `min_len`), ascending.
pub fn change_points(x: &[f64], min_len: usize) -> Vec<usize> {
    let n = x.len();
    let min_len = min_len.max(1);
    if n < 2 * min_len || x.iter().any(|v| !v.is_finite()) {
        return Vec::new();
    }
    let beta = 4.0 * sigma2(x) * (n as f64).ln();
    // Prefix sums: a segment's cost in O(1).
    let mut s = vec![0.0; n + 1];
    let mut s2 = vec![0.0; n + 1];
    for (i, v) in x.iter().enumerate() {
        s[i + 1] = s[i] + v;
        s2[i + 1] = s2[i] + v * v;
    }
    let cost = |a: usize, b: usize| {
        let len = (b - a) as f64;
        let sum = s[b] - s[a];
        (s2[b] - s2[a] - sum * sum / len).max(0.0)
    };
    // f[t]: the best cost of x[..t]; last[t]: where its last segment starts.
    let mut f = vec![f64::INFINITY; n + 1];
    let mut last = vec![0usize; n + 1];
    f[0] = -beta;
    let mut candidates: Vec<usize> = vec![0];
    for t in min_len..=n {
        let mut best = (f64::INFINITY, 0);
        for &tau in candidates.iter().filter(|&&tau| t - tau >= min_len) {
            let c = f[tau] + cost(tau, t) + beta;
            if c < best.0 {
                best = (c, tau);
            }
        }
        f[t] = best.0;
        last[t] = best.1;
        // PELT's pruning: a start that cannot be best now never will be.
        candidates.retain(|&tau| t - tau < min_len || f[tau] + cost(tau, t) <= f[t]);
        if t + 1 >= 2 * min_len {
            candidates.push(t + 1 - min_len);
        }
    }
    let mut cps = Vec::new();
    let mut t = n;
    while last[t] > 0 {
        cps.push(last[t]);
        t = last[t];
    }
    cps.reverse();
    drop_small(x, cps)
}

/// Merge away steps smaller than [`MIN_STEP`] of the level before them.
fn drop_small(x: &[f64], mut cps: Vec<usize>) -> Vec<usize> {
    let mean = |a: usize, b: usize| x[a..b].iter().sum::<f64>() / (b - a) as f64;
    loop {
        let bounds: Vec<usize> = std::iter::once(0)
            .chain(cps.iter().copied())
            .chain(std::iter::once(x.len()))
            .collect();
        let small = (1..bounds.len() - 1).find(|&i| {
            let before = mean(bounds[i - 1], bounds[i]);
            let after = mean(bounds[i], bounds[i + 1]);
            (after - before).abs() < MIN_STEP * before.abs()
        });
        match small {
            Some(i) => {
                cps.remove(i - 1);
            }
            None => return cps,
        }
    }
}

/// The noise's variance, from the neighbours' differences (see the module
/// comment).
fn sigma2(x: &[f64]) -> f64 {
    let med = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        let m = v.len() / 2;
        if v.len() % 2 == 0 {
            (v[m - 1] + v[m]) / 2.0
        } else {
            v[m]
        }
    };
    let mut d: Vec<f64> = x.windows(2).map(|w| (w[1] - w[0]).abs()).collect();
    let sigma = med(&mut d) * 1.4826 / std::f64::consts::SQRT_2;
    let level = med(&mut x.to_vec()).abs();
    let floor = 1e-3 * level.max(f64::MIN_POSITIVE);
    sigma.max(floor).powi(2)
}

/// Change points of a series whose points may be noisy: the search runs
/// over the clean points; returned are indices into `points`.
pub fn clean_change_points(points: &[(f64, bool)], min_len: usize) -> Vec<usize> {
    let clean: Vec<usize> = (0..points.len()).filter(|&i| !points[i].1).collect();
    let values: Vec<f64> = clean.iter().map(|&i| points[i].0).collect();
    change_points(&values, min_len)
        .into_iter()
        .map(|c| clean[c])
        .collect()
}

/// The last step of a series, judged for `--check`.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// Index (into the points) of the first run at the new level.
    pub at: usize,
    pub before: f64,
    pub after: f64,
    /// Clean runs at the new level.
    pub runs_after: usize,
    /// How much worse the new level is, as a fraction of the old (negative:
    /// better).
    pub worse_by: f64,
}

/// The last step of `points` (value, noisy), if any.
pub fn last_step(points: &[(f64, bool)], min_len: usize, higher_is_better: bool) -> Option<Step> {
    let cps = clean_change_points(points, min_len);
    let at = *cps.last()?;
    let from = cps.iter().rev().nth(1).copied().unwrap_or(0);
    let mean = |a: usize, b: usize| {
        let v: Vec<f64> = points[a..b].iter().filter(|p| !p.1).map(|p| p.0).collect();
        (v.iter().sum::<f64>() / v.len() as f64, v.len())
    };
    let (before, _) = mean(from, at);
    let (after, runs_after) = mean(at, points.len());
    let change = (after - before) / before;
    Some(Step {
        at,
        before,
        after,
        runs_after,
        worse_by: if higher_is_better { -change } else { change },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A reproducible noise source: xorshift, and a sum of uniforms for
    /// something close to Gaussian.
    fn noise(seed: u64, n: usize, cv: f64) -> Vec<f64> {
        let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut u = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
        (0..n)
            .map(|_| {
                let g = (0..12).map(|_| u()).sum::<f64>() - 6.0;
                1.0 + cv * g
            })
            .collect()
    }

    #[test]
    fn a_five_percent_step_at_run_30_of_50_is_found_there() {
        for seed in 0..50 {
            let mut x: Vec<f64> = noise(seed, 50, 0.01).iter().map(|v| v * 20.0).collect();
            for v in &mut x[30..] {
                *v *= 0.95;
            }
            let cps = change_points(&x, 3);
            assert_eq!(cps.len(), 1, "seed {seed}: {cps:?}");
            assert!(cps[0].abs_diff(30) <= 2, "seed {seed}: {cps:?}");
            let pts: Vec<(f64, bool)> = x.iter().map(|&v| (v, false)).collect();
            let s = last_step(&pts, 3, true).unwrap();
            assert!((s.worse_by - 0.05).abs() < 0.02, "{s:?}");
        }
    }

    #[test]
    fn a_quiet_machines_noise_flags_nothing() {
        for seed in 0..200 {
            let x: Vec<f64> = noise(seed, 50, 0.01).iter().map(|v| v * 16.1).collect();
            assert_eq!(change_points(&x, 3), Vec::<usize>::new(), "seed {seed}");
        }
    }

    #[test]
    fn noisy_figures_neither_start_a_step_nor_hide_one() {
        let mut pts: Vec<(f64, bool)> = noise(7, 40, 0.01).iter().map(|&v| (v, false)).collect();
        // Five contended runs at 60 % in the middle: no step.
        for p in &mut pts[20..25] {
            *p = (p.0 * 0.6, true);
        }
        assert!(clean_change_points(&pts, 3).is_empty());
        // A real step after them is found, at a clean run.
        for p in &mut pts[25..] {
            p.0 *= 0.8;
        }
        let cps = clean_change_points(&pts, 3);
        assert_eq!(cps.len(), 1, "{cps:?}");
        assert!(!pts[cps[0]].1 && cps[0].abs_diff(25) <= 2, "{cps:?}");
    }

    proptest! {
        #[test]
        fn change_points_are_ordered_in_range_and_apart(
            x in proptest::collection::vec(0.1f64..100.0, 0..80),
            min_len in 1usize..5,
        ) {
            let cps = change_points(&x, min_len);
            let mut prev = 0;
            for &c in &cps {
                prop_assert!(c >= prev + min_len && c + min_len <= x.len());
                prev = c;
            }
        }

        #[test]
        fn scaling_the_series_moves_no_change_point(
            x in proptest::collection::vec(1.0f64..2.0, 6..60),
            k in 0.01f64..1000.0,
        ) {
            let y: Vec<f64> = x.iter().map(|v| v * k).collect();
            prop_assert_eq!(change_points(&x, 3), change_points(&y, 3));
        }

        #[test]
        fn a_clear_step_is_found_where_it_is(
            n in 20usize..80, at_frac in 0.25f64..0.75, seed in 0u64..1000,
            drop in 0.05f64..0.5,
        ) {
            let at = ((n as f64) * at_frac) as usize;
            let mut x = noise(seed, n, 0.002);
            for v in &mut x[at..] { *v *= 1.0 - drop; }
            let cps = change_points(&x, 3);
            prop_assert_eq!(cps.len(), 1);
            prop_assert!(cps[0].abs_diff(at) <= 2);
        }

        #[test]
        fn a_flat_series_has_none(v in 0.001f64..1e6, n in 0usize..100) {
            prop_assert!(change_points(&vec![v; n], 3).is_empty());
        }
    }
}
