//! The bounds of what a measurement can produce, shared by every reader of
//! figures from outside: run and fleet files (`report::plausible`, which
//! checks a whole run against them) and the history store (`history`,
//! which checks every figure it hands back). The bounds are far outside
//! anything real, so a genuine figure never trips them; a figure past one
//! was edited or corrupted, and is refused with its place named instead of
//! being shown as `inf`, a 309-digit number or a negative bandwidth.

/// Bandwidth, GB/s: 1 PB/s, about 50× the aggregate L1 bandwidth of the
/// largest server CPUs.
pub const MAX_GBPS: f64 = 1e6;
/// Latency, ns: 1000 s for one access.
pub const MAX_NS: f64 = 1e12;
/// Seconds of one sample, or of a noise window: a year.
pub const MAX_SECONDS: f64 = 3.2e7;
/// CPUs' worth of foreign or stolen time.
pub const MAX_CPUS: f64 = 1e5;
/// Any other float a suite's detail states, in magnitude.
pub const MAX_DETAIL: f64 = 1e15;

/// The bound of a figure in `unit` (`GB/s`, `ns`; any other unit, such
/// as a suite's own, gets [`MAX_DETAIL`]).
pub fn max_for_unit(unit: &str) -> f64 {
    match unit {
        "GB/s" => MAX_GBPS,
        "ns" => MAX_NS,
        _ => MAX_DETAIL,
    }
}

/// A value for a message: plain when short, scientific when huge or tiny.
pub fn shown(v: f64) -> String {
    if v.is_finite() && (v == 0.0 || (1e-3..1e9).contains(&v.abs())) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

/// `v` is finite and within 0 to `max`; `Err` names `what` (a record, a
/// row) and `field`, the value and the bound, with `source` the kind of
/// thing that was edited or corrupted (`the file`, `the store`).
pub fn within(
    what: &str,
    field: &str,
    v: f64,
    max: f64,
    unit: &str,
    source: &str,
) -> Result<(), String> {
    if v.is_finite() && (0.0..=max).contains(&v) {
        Ok(())
    } else {
        Err(format!(
            "{what}: {field} = {} is not a possible value (0 to {max:e} {unit}); {source} was edited or corrupted",
            shown(v)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_refuse_what_no_measurement_gives() {
        assert!(within("r", "best", 12.5, MAX_GBPS, "GB/s", "the file").is_ok());
        for v in [f64::INFINITY, f64::NEG_INFINITY, f64::NAN, -5.0, 1e308] {
            let e = within("r", "best", v, MAX_GBPS, "GB/s", "the store").unwrap_err();
            assert!(e.contains("the store was edited or corrupted"), "{e}");
        }
        assert_eq!(max_for_unit("ns"), MAX_NS);
        assert_eq!(max_for_unit("loads/cycle"), MAX_DETAIL);
        assert_eq!(shown(1e308), "1e308");
        assert_eq!(shown(-5.0), "-5");
    }
}
