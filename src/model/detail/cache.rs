//! The `cache` suite's records: bandwidth sweeps, and first-use cost with
//! `--first-use`. The bandwidth facts ([`Bandwidth`]) also sit on the
//! bandwidth records of `threads` and `numa`.

use serde::{Deserialize, Serialize};

use super::{case_parts, CasePart, Nullable, SuiteDetail};
use crate::model::Stats;

/// What a streaming kernel's bandwidth record was checked against.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Bandwidth {
    /// The core clock read right after the samples on the cpus that ran
    /// them (the highest of them), Hz; absent where not probed (forked
    /// workers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_hz: Option<f64>,
    /// A read timed as pure loads whose checksum variant proved, after the
    /// samples, that every byte of the stream was read (absent for kernels
    /// whose timed loop is its own proof: writes, copies).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified: Option<bool>,
    /// The L1 bound it was checked against, GB/s, all threads together:
    /// the core's bytes per cycle for the kernel's op and width × the
    /// clock; null when the core is unknown.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub ceiling_gbps: Nullable<f64>,
}

/// The first-use records of `cache --first-use` (`op` `first-use`): three
/// fresh mappings, each timed as map + first pass, then a second pass.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct FirstUse {
    /// Always true: marks the record as a first-use case (compare key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_first_use: Option<bool>,
    /// mmap time of each mapping, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub map_seconds: Option<Vec<f64>>,
    /// First write pass over each fresh mapping (page faults included),
    /// seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_pass_seconds: Option<Vec<f64>>,
    /// The pass after it, on the same mapping, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub second_pass_seconds: Option<Vec<f64>>,
    /// Median of (map + first pass) per MiB, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_use_ms_per_mib: Option<f64>,
    /// GB/s of the second passes.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub steady_gbps: Nullable<Stats>,
}

/// A `cache` record: a bandwidth record, or a first-use record.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CacheDetail {
    #[serde(flatten)]
    pub bandwidth: Bandwidth,
    #[serde(flatten)]
    pub first_use: FirstUse,
}

/// A bandwidth record's detail.
impl From<Bandwidth> for CacheDetail {
    fn from(bandwidth: Bandwidth) -> CacheDetail {
        CacheDetail {
            bandwidth,
            ..CacheDetail::default()
        }
    }
}

impl SuiteDetail for CacheDetail {
    fn case(&self) -> Vec<CasePart> {
        case_parts([CasePart::of(
            "first_use",
            self.first_use.case_first_use.as_ref(),
        )])
    }

    fn bandwidth(&self) -> Option<&Bandwidth> {
        Some(&self.bandwidth)
    }
}
