//! The `threads` suite's records: one per kernel, total size and thread
//! count; `size_bytes` is each thread's share.

use serde::{Deserialize, Serialize};

use super::{case_parts, Bandwidth, CasePart, Nullable, SuiteDetail};

/// A `threads` record.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ThreadsDetail {
    #[serde(flatten)]
    pub bandwidth: Bandwidth,
    /// The working set of all threads together (the `--sizes` value),
    /// bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_bytes: Option<u64>,
    /// How the cpus were chosen: `compact`, `scatter` or `cpus` (compare
    /// key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_placement: Option<String>,
    /// The threads shared one buffer (`--shared`; compare key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_shared: Option<bool>,
    /// Forked processes instead of threads (`--processes`; compare key);
    /// absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_processes: Option<bool>,
    /// The largest start skew over the median sample's duration (target
    /// below 0.01).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_skew_fraction: Option<f64>,
    /// Aggregate best / (threads × the 1-thread best); null without a
    /// 1-thread point.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub scaling_efficiency: Nullable<f64>,
    /// The cpu each worker reported (`sched_getcpu`), in worker order;
    /// null where a worker could not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_cpus: Option<Vec<Option<u32>>>,
}

impl SuiteDetail for ThreadsDetail {
    fn case(&self) -> Vec<CasePart> {
        case_parts([
            CasePart::of("placement", self.case_placement.as_ref()),
            CasePart::of("shared", self.case_shared.as_ref()),
            CasePart::of("processes", self.case_processes.as_ref()),
        ])
    }

    fn bandwidth(&self) -> Option<&Bandwidth> {
        Some(&self.bandwidth)
    }
}
