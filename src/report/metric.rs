//! The number a record is judged by, for charts, summaries and `compare`.
//!
//! Bandwidth records carry `gbps` (higher is better). Latency records carry
//! their figure in `extra.latency_ns`, either as a number or as a stats
//! object shaped like [`Stats`] (lower is better); any other numeric extra
//! key ending in `_ns` is accepted as a fallback so a suite that names it
//! differently still charts. Documented in `docs/schema.md` ("What charts
//! and compare read").

use crate::model::{Record, Stats, Status};

/// A record's headline figure with its spread.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Metric {
    pub best: f64,
    pub median: f64,
    /// Sample range; equal to best/median when only one number is known.
    pub min: f64,
    pub max: f64,
    pub higher_is_better: bool,
    pub unit: &'static str,
}

impl Metric {
    fn from_stats(s: &Stats, higher_is_better: bool, unit: &'static str) -> Metric {
        Metric {
            best: s.best,
            median: s.median,
            min: s.min,
            max: s.max,
            higher_is_better,
            unit,
        }
    }

    /// The figure asked for: `best` or `median`.
    pub fn pick(&self, stat: StatKind) -> f64 {
        match stat {
            StatKind::Best => self.best,
            StatKind::Median => self.median,
        }
    }
}

/// Which summary statistic a chart or comparison uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StatKind {
    /// Best sample (max GB/s, min ns): the estimate of what the path can do
    Best,
    /// Median sample: what a typical run sees
    Median,
}

/// The latency figure of a record, if it has one.
pub fn latency(r: &Record) -> Option<Metric> {
    let pick = |v: &serde_json::Value| -> Option<Metric> {
        if let Some(x) = v.as_f64() {
            return Some(Metric {
                best: x,
                median: x,
                min: x,
                max: x,
                higher_is_better: false,
                unit: "ns",
            });
        }
        let s: Stats = serde_json::from_value(v.clone()).ok()?;
        Some(Metric::from_stats(&s, false, "ns"))
    };
    if let Some(m) = r.extra.get("latency_ns").and_then(pick) {
        return Some(m);
    }
    r.extra
        .iter()
        .filter(|(k, _)| k.ends_with("_ns") && !k.starts_with("case_"))
        .find_map(|(_, v)| pick(v))
}

/// The figure of an `ok` record: bandwidth if it has one, else latency.
pub fn of(r: &Record) -> Option<Metric> {
    if r.status != Status::Ok {
        return None;
    }
    match &r.gbps {
        Some(s) => Some(Metric::from_stats(s, true, "GB/s")),
        None => latency(r),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_from_number_or_stats() {
        let mut r = Record {
            suite: "latency".into(),
            ..Record::default()
        };
        assert!(of(&r).is_none());
        r.extra.insert("latency_ns".into(), serde_json::json!(95.5));
        let m = of(&r).unwrap();
        assert_eq!((m.best, m.higher_is_better, m.unit), (95.5, false, "ns"));
        r.extra.insert(
            "latency_ns".into(),
            serde_json::json!({"best": 90.0, "median": 95.0, "min": 90.0, "max": 99.0, "mean": 95.0, "cv": 0.02, "n": 5}),
        );
        let m = of(&r).unwrap();
        assert_eq!((m.best, m.median, m.max), (90.0, 95.0, 99.0));
        r.extra.clear();
        r.extra
            .insert("load_to_use_ns".into(), serde_json::json!(4.0));
        assert_eq!(of(&r).unwrap().best, 4.0);
        r.status = Status::Skipped;
        assert!(of(&r).is_none());
    }
}
