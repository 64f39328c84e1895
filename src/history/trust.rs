//! What the store hands back is data from outside, as a run file is:
//! anyone who can write the file (or a damaged disk) decides what is in
//! it. So every string leaves the store cleaned as run files' strings are
//! (`util::text::foreign_name`: no control, bidirectional or zero-width
//! character, one line, at most 255 characters), every figure passes the
//! run files' plausibility bounds (`model::plausible`), and every start
//! time must be a time. A value that fails fails the read, naming the
//! store, the row and the field: a command answers from the whole store
//! or not at all.

use super::failure::Failure;
use crate::model::StoreProblem;
use crate::util::date::Timestamp;

/// A string from the store, as it may be shown or written.
pub fn text(s: &str) -> String {
    crate::util::text::foreign_name(s)
}

/// [`text`] for an optional string.
pub fn text_opt(s: Option<String>) -> Option<String> {
    s.map(|s| text(&s))
}

/// A figure in `unit` from the store, within the run files' bounds.
/// NaN is how a reader passes NULL here (SQLite stores no NaN: it keeps
/// one as NULL), and is named so.
pub fn figure(what: &str, field: &str, v: f64, unit: &str) -> Result<f64, Failure> {
    if v.is_nan() {
        return Err(Failure::new(
            StoreProblem::Corrupt,
            format!("{what}: {field} is NULL, where a measured figure has a value; the store was edited or corrupted"),
        ));
    }
    let max = crate::model::plausible::max_for_unit(unit);
    crate::model::plausible::within(what, field, v, max, unit, "the store")
        .map(|()| v)
        .map_err(|e| Failure::new(StoreProblem::Corrupt, e))
}

/// The unit a fleet figure is stated in, from its metric's name
/// (`dram_read_gbps`, `latency_ns`; others are unitless).
pub fn metric_unit(metric: &str) -> &'static str {
    if metric.ends_with("_gbps") {
        "GB/s"
    } else if metric.ends_with("_ns") {
        "ns"
    } else {
        ""
    }
}

/// A start time from the store, as an instant.
pub fn instant(what: &str, field: &str, s: &str) -> Result<Timestamp, Failure> {
    s.parse::<Timestamp>().map_err(|_| {
        Failure::new(
            StoreProblem::Corrupt,
            format!(
                "{what}: {field} = {:?} is not a time; the store was edited or corrupted",
                text(s)
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_text_and_figures_do_not_leave_the_store() {
        let t = text(&format!(
            "CPU\u{1b}]0;x\u{7}\r\n\u{202e}\u{2066}\u{2028}{}",
            "y".repeat(1 << 20)
        ));
        assert!(!t.chars().any(crate::util::text::is_hostile) && !t.contains('\n'));
        assert_eq!(t.chars().count(), crate::util::text::NAME_MAX_CHARS);
        for v in [f64::INFINITY, f64::NEG_INFINITY, -5.0, 1e308, f64::NAN] {
            let e = figure("run 3, case k", "best", v, "GB/s").unwrap_err();
            assert_eq!(e.cause, StoreProblem::Corrupt);
            assert!(e.reason.contains("run 3, case k: best"), "{}", e.reason);
        }
        assert_eq!(figure("r", "best", 35.5, "GB/s").unwrap(), 35.5);
        assert!(figure("r", "best", 2e6, "GB/s").is_err());
        assert!(figure("r", "best", 2e6, "ns").is_ok());
        assert!(instant("run 1", "started_at", "2026-11-28T14:00:00Z").is_ok());
        assert!(instant("run 1", "started_at", "9999-99-99").is_err());
        assert_eq!(metric_unit("dram_read_gbps"), "GB/s");
    }
}
