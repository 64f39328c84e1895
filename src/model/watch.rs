//! What `bwscope watch` says after each sample: the sample's figures,
//! this machine's usual figures, and the state (`docs/watch.md`).

use serde::{Deserialize, Serialize};

/// The state of a watch sample, worst first when several apply.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum WatchState {
    /// The sample's figures are the machine's usual ones.
    Ok,
    /// The core-share probe found the core shared (another tenant on the
    /// host core's SMT sibling, usually): the sample is this moment's.
    CoreShared,
    /// The memory probe found the memory loaded from outside.
    MemoryContended,
    /// No spell, but the history's noise rule marks the sample (another
    /// load, steal, descheduled or disagreeing samples): kept, and left
    /// out of the usual figures as the store leaves it out.
    Noisy,
    /// The figures stepped down against this machine's usual ones and
    /// stayed there, with no spell to explain it.
    Stepped,
}

impl WatchState {
    pub const ALL: [WatchState; 5] = [
        WatchState::Ok,
        WatchState::CoreShared,
        WatchState::MemoryContended,
        WatchState::Noisy,
        WatchState::Stepped,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            WatchState::Ok => "ok",
            WatchState::CoreShared => "core_shared",
            WatchState::MemoryContended => "memory_contended",
            WatchState::Noisy => "noisy",
            WatchState::Stepped => "stepped",
        }
    }

    /// Whether a sample in this state belongs in the machine's baseline:
    /// a spell's sample is kept but is this moment's, not the machine's.
    pub fn is_clean(self) -> bool {
        matches!(self, WatchState::Ok | WatchState::Stepped)
    }
}

/// One watch sample.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct WatchSample {
    /// UTC, RFC 3339.
    pub at: String,
    /// Seconds since the Unix epoch.
    pub unix_seconds: f64,
    /// The one-core DRAM read, GB/s (best of its samples); null when it
    /// did not run.
    pub dram_read_gbps: Option<f64>,
    /// Idle load-to-use latency at a DRAM-sized set, ns (best).
    pub latency_ns: Option<f64>,
    /// The median share of its core the core-share probe found.
    pub core_share: Option<f64>,
    /// The median memory-probe reading, ns, and the run's quiet reading
    /// it is judged against.
    pub chase_ns: Option<f64>,
    pub chase_baseline_ns: Option<f64>,
    pub state: WatchState,
    /// What the state rests on, one line.
    pub evidence: String,
}

/// What the OpenMetrics file says after a sample.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct WatchStatus {
    pub host: String,
    pub kernel: String,
    pub size_bytes: u64,
    /// Samples taken by this watch so far.
    pub samples: u64,
    pub last: WatchSample,
    /// This machine's usual figures: the median of its clean samples
    /// (the history's and this watch's, `judge::stepped`'s usual level).
    pub usual_dram_read_gbps: Option<f64>,
    pub usual_latency_ns: Option<f64>,
    /// How many clean samples the usual figures rest on.
    pub usual_from: u64,
}
