//! Where a run's headline figures sit in this machine's history: what the
//! history store (`history` layer) answered before the run was written,
//! carried on the run so every view reads it as model data (the report
//! never opens the store).

use serde::{Deserialize, Serialize};

/// How many earlier figures a standing carries for its trend.
pub const RECENT: usize = 30;

/// The run's place in its machine's history (`Run::history`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct HistoryContext {
    /// Earlier runs of this machine in the store (any command).
    pub earlier_runs: u32,
    /// One per headline figure of the run.
    pub standings: Vec<Standing>,
}

impl HistoryContext {
    /// The standing of headline figure `name` (`DRAM read`), if any.
    pub fn standing(&self, name: &str) -> Option<&Standing> {
        self.standings.iter().find(|s| s.name == name)
    }
}

/// One headline figure among this machine's earlier runs of the same case.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Standing {
    /// The headline's name, as the summary writes it (`L1 read`, `DRAM
    /// read all cores`, `DRAM latency`).
    pub name: String,
    /// The case in the store (`headline/DRAM read`).
    pub case: String,
    /// This run's figure.
    pub value: f64,
    /// `GB/s` or `ns`.
    pub unit: String,
    /// Earlier figures of the case counted (noisy ones left out).
    pub earlier: u32,
    /// Earlier figures left out because they were taken while the machine
    /// was noisy or contended.
    pub left_out_noisy: u32,
    /// This figure was taken in noise and every earlier one was too: it
    /// is ranked among them (`earlier` counts them), said so. (Read as
    /// false from runs written before it.)
    #[serde(default)]
    pub among_noisy: bool,
    /// The earlier figures counted, oldest first, the last
    /// [`RECENT`] of them: the trend the report draws.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recent: Vec<f64>,
    /// 1 = better than every earlier figure; null with none earlier.
    pub rank: Option<u32>,
    /// Share of the earlier figures this one beats (ties count half), 0 to
    /// 100; null with none earlier.
    pub percentile: Option<f64>,
    /// The shipped reference row that matches this machine, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<Expected>,
}

/// A published figure this case is expected to reach, with where it comes
/// from: never a number bwscope made up.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Expected {
    /// The floor: the figure should be at least this.
    pub floor: f64,
    /// `GB/s`, or `% of limit` (of the record's physical limit).
    pub unit: String,
    /// What the source measures and how it matched this machine.
    pub what: String,
    /// The publication (repository and file, or bwscope's own document).
    pub source: String,
    pub licence: String,
    /// When the source was read (YYYY-MM-DD).
    pub date: String,
}
