//! The `cores` suite's records: one per cpu pair and exchange (the
//! one-way latency of handing a cache line from one core to another), one
//! per class of pairs and exchange (its pairs together: the class's
//! figure), and the fairness view (N threads on one line).

use serde::{Deserialize, Serialize};

use super::latency::latency_headline;
use super::{case_parts, metric_part, CasePart, Judged, Nullable, RecordMetric, SuiteDetail};
use crate::model::headline::Quantity;
use crate::model::{Record, Stats};

/// How the line changes hands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Exchange {
    /// Compare-and-swap ping-pong on one line: each side swaps the value
    /// the other left; one-way = round trip / 2 (as
    /// nviennot/core-to-core-latency and multichase `pingpong` report).
    Cas,
    /// A clean line (read, not written, by the holder) read by the other
    /// core: Intel MLC's "HIT".
    Hit,
    /// A modified line (written by the holder) read by the other core:
    /// Intel MLC's "HITM".
    Hitm,
}

impl Exchange {
    pub const ALL: [Exchange; 3] = [Exchange::Cas, Exchange::Hit, Exchange::Hitm];

    pub fn name(self) -> &'static str {
        match self {
            Exchange::Cas => "cas",
            Exchange::Hit => "hit",
            Exchange::Hitm => "hitm",
        }
    }

    pub fn parse(s: &str) -> Option<Exchange> {
        Exchange::ALL.into_iter().find(|e| e.name() == s)
    }

    /// The record's kernel name (`c2c_cas`, `c2c_hit`, `c2c_hitm`).
    pub fn kernel(self) -> &'static str {
        match self {
            Exchange::Cas => "c2c_cas",
            Exchange::Hit => "c2c_hit",
            Exchange::Hitm => "c2c_hitm",
        }
    }
}

/// What a `cores` record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CoresView {
    /// One pair, one exchange.
    Pair,
    /// A class's measured pairs together.
    Class,
    /// N threads incrementing one line.
    Fairness,
}

/// A `cores` record.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CoresDetail {
    /// `pair`, `class` or `fairness` (compare key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_view: Option<CoresView>,
    /// The exchange (compare key; absent on fairness records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_exchange: Option<Exchange>,
    /// The pair, holder first (compare key of pair records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_pair: Option<[u32; 2]>,
    /// The class's name (`smt`, `l3`, `socket d32`, …; compare key of
    /// class records, stated on pair records too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_class: Option<String>,
    /// What the class shares, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class_what: Option<String>,
    /// Why a pair was measured: `class` (it stands for its class),
    /// `check` (a random pair checking its cpus), `matrix` (`--all-pairs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// One-way transfer latency, ns per transfer over the samples (pair
    /// records); over the class's pairs' medians (class records: `best`
    /// the lowest pair's, `median` the median pair's). `best` is the
    /// lowest.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub one_way_ns: Nullable<Stats>,
    /// `one_way_ns` in core cycles at `clock_hz`; null without a clock.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub cycles: Nullable<Stats>,
    /// The measured core clock the cycles use, Hz.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub clock_hz: Nullable<f64>,
    /// One-way transfers per sample (CAS: 2 × round trips; HIT/HITM: the
    /// reader's dependent loads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfers_per_sample: Option<u64>,
    /// HIT/HITM: lines per round (the holder prepares them, then the
    /// reader chases them once, in a random order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines: Option<u64>,
    /// HIT/HITM: the clock's own cost taken off each round's time, ns
    /// (two reads back to back, the least of many).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_overhead_ns: Option<f64>,
    /// Each repeat's median, ns, in order; they agreed within
    /// `repeat_tolerance` (or the figure was refused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats_ns: Option<Vec<f64>>,
    /// How far two repeats' medians may be apart, as a fraction of the
    /// lower: the larger of 10 % and 3 × the samples' own spread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat_tolerance: Option<f64>,
    /// Repeat sets taken again after a self-check failed (a figure below
    /// the floor, or repeats apart).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retaken: Option<u32>,
    /// The floor a figure must clear, ns: 3 core cycles (no transfer or
    /// load-to-use is shorter), or 0.5 ns without a clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor_ns: Option<f64>,
    /// The instruction that exchanged the line: `lock cmpxchg`, `casal`
    /// (AArch64 LSE), `ldaxr/stlxr` (LL/SC), `mov` (loads), `lock xadd`,
    /// `ldaddal`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instruction: Option<String>,
    /// Class records: the pairs measured in it, and how many of them
    /// answered like the class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairs: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairs_alike: Option<u32>,
    /// Class records: the measured latency group the class falls in
    /// (groups of pairs within 30 % of each other, fastest `1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_group: Option<u32>,
    /// Fairness: atomic increments per second of all threads together,
    /// millions, over the samples.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub rate_mops: Nullable<Stats>,
    /// Fairness: each thread's part of the increments (over every sample),
    /// in `cpus` order; 1/N each where the line is shared fairly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shares: Option<Vec<f64>>,
    /// Fairness: the least share over the largest (1 = fair).
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub fairness: Nullable<f64>,
}

impl SuiteDetail for CoresDetail {
    fn case(&self) -> Vec<CasePart> {
        case_parts([
            CasePart::of("view", self.case_view.as_ref()),
            CasePart::of("exchange", self.case_exchange.as_ref()),
            CasePart::of("pair", self.case_pair.as_ref()),
            CasePart::of(
                "class",
                // A pair's class says what it is, not which case it is.
                self.case_class
                    .as_ref()
                    .filter(|_| self.case_view == Some(CoresView::Class)),
            ),
        ])
    }

    fn metric(&self) -> Option<RecordMetric> {
        match self.case_view {
            Some(CoresView::Fairness) => self.rate_mops.value().map(|stats| RecordMetric {
                stats,
                unit: "Mops/s",
                higher_is_better: true,
            }),
            _ => latency_headline(&self.one_way_ns),
        }
    }

    /// One figure per class and exchange (`cores_l3_cas_ns`): the
    /// class's fastest pair's median one-way latency, family
    /// `core_to_core` with the class and the exchange as labels.
    fn judged<'a>(records: &[&'a Record]) -> Vec<Judged<'a>> {
        let mut out: Vec<Judged<'a>> = Vec::new();
        for &record in records {
            let Some(d) = record.detail.get::<CoresDetail>() else {
                continue;
            };
            let (Some(CoresView::Class), Some(e), Some(class), Some(ns)) = (
                d.case_view,
                d.case_exchange,
                d.case_class.as_ref(),
                d.one_way_ns.value(),
            ) else {
                continue;
            };
            let metric = format!("cores_{}_{}_ns", metric_part(class), e.name());
            if out.iter().any(|j| j.metric == metric) {
                continue;
            }
            out.push(Judged {
                metric,
                quantity: Quantity::Latency,
                higher_is_better: false,
                family: "core_to_core".into(),
                labels: vec![("class", class.clone()), ("exchange", e.name().into())],
                value: ns.best,
                what: format!(
                    "one-way cache-line transfer between cpus of class {class} ({}), {}: its fastest pair's median",
                    d.class_what.as_deref().unwrap_or("as stated"),
                    e.name().to_uppercase()
                ),
                record,
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{OfSuite, SuiteId};

    /// Each class and exchange is one figure of the `core_to_core`
    /// family, its fastest pair's median; pair records are none.
    #[test]
    fn each_class_is_a_headline_figure() {
        let class = |name: &str, e: Exchange, best: f64| Record {
            ..Record::new(CoresDetail {
                case_view: Some(CoresView::Class),
                case_exchange: Some(e),
                case_class: Some(name.into()),
                one_way_ns: Nullable::Value(Stats::constant(best, 3)),
                ..CoresDetail::default()
            })
        };
        let pair = Record::new(CoresDetail {
            case_view: Some(CoresView::Pair),
            case_exchange: Some(Exchange::Cas),
            case_class: Some("l3".into()),
            one_way_ns: Nullable::Value(Stats::constant(60.0, 3)),
            ..CoresDetail::default()
        });
        let recs = [
            class("smt", Exchange::Cas, 7.5),
            class("socket d32", Exchange::Hitm, 140.0),
            pair,
        ];
        let refs: Vec<&Record> = recs.iter().collect();
        let j = CoresDetail::judged(&refs);
        let got: Vec<(&str, f64)> = j.iter().map(|j| (j.metric.as_str(), j.value)).collect();
        assert_eq!(
            got,
            [("cores_smt_cas_ns", 7.5), ("cores_socket_d32_hitm_ns", 140.0)]
        );
        assert!(j.iter().all(|j| j.family == "core_to_core" && !j.higher_is_better));
        assert_eq!(j[1].labels[0], ("class", "socket d32".to_string()));
        assert_eq!(<CoresDetail as OfSuite>::SUITE, SuiteId::Cores);
    }
}
