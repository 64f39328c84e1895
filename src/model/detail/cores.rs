//! The `cores` suite's records: one per cpu pair and exchange (the
//! one-way latency of handing a cache line from one core to another), one
//! per class of pairs and exchange (its pairs together: the class's
//! figure), and the fairness view (N threads on one line).

use serde::{Deserialize, Serialize};

use super::latency::latency_headline;
use super::{case_parts, CasePart, Headline, Nullable, SuiteDetail};
use crate::model::Stats;

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

    fn metric(&self) -> Option<Headline> {
        match self.case_view {
            Some(CoresView::Fairness) => self.rate_mops.value().map(|stats| Headline {
                stats,
                unit: "Mops/s",
                higher_is_better: true,
            }),
            _ => latency_headline(&self.one_way_ns),
        }
    }
}
