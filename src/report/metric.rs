//! The number a record is judged by, for charts, summaries and `compare`.
//!
//! Bandwidth records carry `gbps` (higher is better); a record without it
//! is judged by the figure its suite's detail names
//! ([`crate::model::SuiteDetail::metric`]: the latency of `latency` and
//! `numa` chase records, lower is better). Documented in `docs/schema.md`
//! ("What charts and compare read").

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

/// The figure of a record without bandwidth, if its suite names one.
pub fn latency(r: &Record) -> Option<Metric> {
    r.detail
        .metric()
        .map(|h| Metric::from_stats(&h.stats, h.higher_is_better, h.unit))
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
    use crate::model::detail::LatencyDetail;
    use crate::model::{Nullable, SuiteId};

    #[test]
    fn latency_from_the_suites_detail() {
        let mut r = Record::new(SuiteId::Latency);
        assert!(of(&r).is_none());
        r.detail = LatencyDetail {
            latency_ns: Nullable::Value(Stats {
                best: 90.0,
                median: 95.0,
                min: 90.0,
                max: 99.0,
                mean: 95.0,
                cv: 0.02,
                n: 5,
            }),
            ..LatencyDetail::default()
        }
        .into();
        let m = of(&r).unwrap();
        assert_eq!((m.best, m.median, m.max), (90.0, 95.0, 99.0));
        assert_eq!((m.higher_is_better, m.unit), (false, "ns"));
        r.status = Status::Skipped;
        assert!(of(&r).is_none());
    }
}
