//! Robust statistics of a set of figures (one per node): the median, the
//! median absolute deviation of their logarithms, and how far one figure
//! lies from the median in those units (a robust z-score) and in percent.
//! Fleet verdicts judge nodes and links with them.

use super::median;

/// 1.4826 · MAD estimates the standard deviation of normal data.
const MAD_SCALE: f64 = 1.4826;
/// 1.2533 · mean absolute deviation does the same (√(π/2)).
const MEAN_AD_SCALE: f64 = 1.2533;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Robust {
    /// Median of the figures themselves.
    pub median: f64,
    /// Median absolute deviation of their natural logarithms.
    pub log_mad: f64,
    /// The spread a robust z is measured in, in ln units.
    pub log_scale: f64,
}

/// ln of a figure; a figure of zero or less (nothing moved) sits far
/// below any real one instead of at minus infinity.
fn ln(x: f64) -> f64 {
    x.max(1e-12).ln()
}

/// Median, MAD and scale. The deviations are taken on the logarithm:
/// bandwidths and latencies are ratios to zero, their noise is
/// proportional to them, and a node at half the median is as far from it
/// as one at twice; on the linear scale a node at 2 % of the median in a
/// fleet that varies by ±30 % would not look far at all.
pub fn robust(values: &[f64]) -> Option<Robust> {
    let logs: Vec<f64> = values
        .iter()
        .filter(|x| x.is_finite())
        .map(|&x| ln(x))
        .collect();
    let med = median(values)?;
    let mid = median(&logs)?;
    let dev: Vec<f64> = logs.iter().map(|x| (x - mid).abs()).collect();
    let mad = median(&dev)?;
    let scale = if mad > 0.0 {
        MAD_SCALE * mad
    } else {
        MEAN_AD_SCALE * dev.iter().sum::<f64>() / dev.len() as f64
    };
    Some(Robust {
        median: med,
        log_mad: mad,
        log_scale: scale,
    })
}

/// Robust z of `x`, positive when worse than the median.
pub fn z_worse(x: f64, r: &Robust, higher_is_better: bool) -> f64 {
    let (a, m) = (ln(x), ln(r.median));
    let d = if higher_is_better { m - a } else { a - m };
    if r.log_scale > 0.0 {
        d / r.log_scale
    } else {
        0.0 // every value equals the median
    }
}

/// Percent worse than the median (negative: better).
pub fn pct_worse(x: f64, median: f64, higher_is_better: bool) -> f64 {
    if median == 0.0 {
        return 0.0;
    }
    let d = if higher_is_better {
        median - x
    } else {
        x - median
    };
    d / median.abs() * 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn robust_statistics() {
        let v = [10.0, 10.5, 9.5, 10.2, 5.0];
        let r = robust(&v).unwrap();
        assert_eq!(r.median, 10.0);
        // ln deviations: 0, .0488, .0513, .0198, .6931 -> MAD .0488
        assert!((r.log_mad - 1.05f64.ln()).abs() < 1e-12, "{r:?}");
        assert!((r.log_scale - 1.4826 * 1.05f64.ln()).abs() < 1e-12);
        let z = z_worse(5.0, &r, true);
        assert!(z > 9.0, "{z}");
        assert!(z_worse(12.0, &r, true) < 0.0);
        // Latency: higher is worse.
        assert!(z_worse(12.0, &r, false) > 0.0);
        // Half and twice the median are equally far.
        assert!((z_worse(5.0, &r, true) - z_worse(20.0, &r, false)).abs() < 1e-12);
        assert!((pct_worse(5.0, 10.0, true) - 50.0).abs() < 1e-12);
        assert!((pct_worse(11.0, 10.0, false) - 10.0).abs() < 1e-12);
    }

    #[test]
    fn a_collapsed_node_stands_out_of_a_noisy_fleet() {
        // Healthy nodes vary by ±30 % (a shared machine); one is at 2 %.
        let v = [0.40, 0.76, 0.51, 0.75, 0.010];
        let r = robust(&v).unwrap();
        assert!(z_worse(0.010, &r, true) > 3.5);
        for x in &v[..4] {
            assert!(z_worse(*x, &r, true) < 3.5, "{x}");
        }
        // Nothing moved at all: far, finite.
        assert!(z_worse(0.0, &r, true).is_finite() && z_worse(0.0, &r, true) > 10.0);
    }

    #[test]
    fn mad_of_zero_is_handled() {
        // More than half identical: MAD 0, mean absolute deviation takes over.
        let r = robust(&[10.0, 10.0, 10.0, 10.0, 6.0]).unwrap();
        assert_eq!(r.log_mad, 0.0);
        let mean_ad = (10f64 / 6.0).ln() / 5.0;
        assert!((r.log_scale - 1.2533 * mean_ad).abs() < 1e-9, "{r:?}");
        assert!(z_worse(6.0, &r, true).is_finite());
        assert!(z_worse(6.0, &r, true) > 3.5);
        assert_eq!(z_worse(10.0, &r, true), 0.0);
        // All identical: nobody is an outlier, nothing divides by zero.
        let r = robust(&[7.0; 4]).unwrap();
        assert_eq!((r.log_mad, r.log_scale), (0.0, 0.0));
        assert_eq!(z_worse(7.0, &r, true), 0.0);
    }
}
