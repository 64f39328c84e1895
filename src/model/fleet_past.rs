//! A fleet judged against its own past (`Verdicts::past` and
//! `Verdicts::findings` in `fleet.json`): the fleet's medians now beside
//! the medians of the same fleet's recent runs in the history store, and
//! the findings that are about the whole fleet rather than one node (a
//! fleet-wide drop no outlier test can see, every node below its class
//! bound, a node that is the slowest run after run).
//!
//! What counts as "the same fleet" is `docs/fleet.md`'s: the same set of
//! hosts (their host names' hashes, as the store keeps them), the same
//! per-node suites and the same network schedule.

use serde::{Deserialize, Serialize};

/// One node's verdict figures in one fleet run, as the store keeps them
/// (the input of the judgement against the past).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeFigures {
    /// The node's host name hash ([`crate::history::case`]'s): stable
    /// across runs, whatever rank the node had.
    pub node: String,
    /// (metric, value), the metrics of `Check`.
    pub figures: Vec<(String, f64)>,
}

/// One earlier run of the same fleet.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PastFleetRun {
    pub started_at: String,
    pub nodes: Vec<NodeFigures>,
}

/// The fleet against its past: what was compared and how.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct PastVerdict {
    /// The fleet's identity in the store (a hash of its hosts' hashes,
    /// its suites and its schedule).
    pub fleet: String,
    /// Earlier runs of this fleet found (at most `window`).
    pub runs: u32,
    /// How many recent runs are asked for.
    pub window: u32,
    /// Fewest earlier runs with a metric for its median to be judged.
    pub min_runs: u32,
    /// A fleet median at least this many percent worse than the median
    /// of its earlier medians is a fleet-wide drop (`--past-pct`).
    pub pct_worse: f64,
    pub metrics: Vec<PastMetric>,
}

/// One metric: the fleet's median now and in its recent runs.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct PastMetric {
    pub metric: String,
    pub unit: String,
    pub higher_is_better: bool,
    /// Nodes with the figure now.
    pub nodes: u32,
    /// The fleet median now.
    pub median: f64,
    /// Earlier runs that had the metric.
    pub past_runs: u32,
    /// The median of those runs' fleet medians (null: none).
    pub past_median: Option<f64>,
    /// How much worse the median now is, percent (negative: better).
    pub pct_worse: Option<f64>,
    /// Judged: at least `min_runs` earlier runs had it.
    pub judged: bool,
    /// A fleet-wide drop (judged and at least `pct_worse` worse).
    pub drop: bool,
}

/// What a fleet-wide finding is about.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// The fleet's median is worse than its own recent runs' median.
    #[default]
    FleetDrop,
    /// Every node with the figure is worse than its class bound
    /// (`--reference`): the fleet, not a node.
    FleetBelowReference,
    /// One node was the slowest of the fleet on a figure in most of the
    /// recent runs, this one included.
    UsuallySlowest,
}

impl FindingKind {
    /// Its name in the JSON, `verdicts.txt` and OpenMetrics.
    pub fn name(self) -> &'static str {
        match self {
            FindingKind::FleetDrop => "fleet_drop",
            FindingKind::FleetBelowReference => "fleet_below_reference",
            FindingKind::UsuallySlowest => "usually_slowest",
        }
    }
}

/// A finding about the fleet as a whole.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Finding {
    pub kind: FindingKind,
    pub metric: String,
    /// The finding in one line.
    pub message: String,
    /// Nodes with the figure now.
    pub nodes: u32,
    /// `fleet_drop`: the median now and the earlier runs' median.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub past_median: Option<f64>,
    /// `fleet_drop`: percent worse than `past_median`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pct_worse: Option<f64>,
    /// Runs compared (`fleet_drop`: earlier runs; `usually_slowest`: the
    /// recent runs with this one).
    pub runs: u32,
    /// `usually_slowest`: the node's label and in how many of `runs` it
    /// was the slowest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slowest_in: Option<u32>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kinds_name_is_its_json() {
        for k in [
            FindingKind::FleetDrop,
            FindingKind::FleetBelowReference,
            FindingKind::UsuallySlowest,
        ] {
            assert_eq!(serde_json::to_value(k).unwrap(), k.name());
        }
    }
}
