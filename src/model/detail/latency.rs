//! The `latency` suite's records: one per size and view, ns per dependent
//! load of a pointer chase.

use serde::{Deserialize, Serialize};

use super::{case_parts, CasePart, RecordMetric, Nullable, SuiteDetail};
use crate::model::Stats;

/// Which chain a record walked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum View {
    /// Random single cycle over every line of the buffer.
    Random,
    /// Random within each window, windows in random order.
    Window,
    /// Address order every `stride` bytes.
    Stride,
}

impl View {
    pub fn name(self) -> &'static str {
        match self {
            View::Random => "random",
            View::Window => "window",
            View::Stride => "stride",
        }
    }

    pub fn parse(s: &str) -> Option<View> {
        [View::Random, View::Window, View::Stride]
            .into_iter()
            .find(|v| v.name() == s)
    }
}

/// The pages a chase buffer asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pages {
    /// 4 KiB pages (`MADV_NOHUGEPAGE`).
    #[serde(rename = "4k")]
    Small,
    /// Transparent huge pages (`MADV_HUGEPAGE`).
    #[default]
    Thp,
    /// 2 MiB pages from the reserved pool (`MAP_HUGETLB`).
    Hugetlb,
}

impl Pages {
    pub fn name(self) -> &'static str {
        match self {
            Pages::Small => "4k",
            Pages::Thp => "thp",
            Pages::Hugetlb => "hugetlb",
        }
    }
}

/// A `latency` record.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct LatencyDetail {
    /// The chain walked (compare key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_view: Option<View>,
    /// The pages asked for (compare key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_pages: Option<Pages>,
    /// The window of the `window` view, bytes (compare key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_window_bytes: Option<u64>,
    /// The stride of the `stride` view, bytes (compare key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_stride_bytes: Option<u64>,
    /// ns per load over the samples; `best` is the lowest.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub latency_ns: Nullable<Stats>,
    /// `latency_ns` × `clock_hz` / 1e9, sample by sample; null without a
    /// measured clock.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub cycles_per_load: Nullable<Stats>,
    /// The measured core clock the cycles use (`host.clock_hz`), Hz.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub clock_hz: Nullable<f64>,
    /// Dependent loads per sample (`reps_per_sample` × 16).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hops_per_sample: Option<u64>,
    /// Nodes in the cycle (one per line, or per stride).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chain_nodes: Option<u64>,
    /// Bytes per node: a line (64) or the stride.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_bytes: Option<u64>,
    /// The page size backing most of the buffer, bytes (2 MiB when THP
    /// covers half of it or more); null when smaps did not say.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub page_bytes: Nullable<u64>,
}

impl SuiteDetail for LatencyDetail {
    fn case(&self) -> Vec<CasePart> {
        case_parts([
            CasePart::of("view", self.case_view.as_ref()),
            CasePart::of("pages", self.case_pages.as_ref()),
            CasePart::of("window_bytes", self.case_window_bytes.as_ref()),
            CasePart::of("stride_bytes", self.case_stride_bytes.as_ref()),
        ])
    }

    fn metric(&self) -> Option<RecordMetric> {
        latency_headline(&self.latency_ns)
    }
}

/// A latency figure as a record's headline (ns, lower is better).
pub(super) fn latency_headline(ns: &Nullable<Stats>) -> Option<RecordMetric> {
    ns.value().map(|stats| RecordMetric {
        stats,
        unit: "ns",
        higher_is_better: false,
    })
}
