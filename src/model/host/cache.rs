//! A cache level of the host: its CPUID/sysfs size and where it ends as
//! measured, and which of the two labels a record.

use serde::{Deserialize, Serialize};

use crate::model::limits;

/// A cache as listed in `host.caches`: merged from CPUID and sysfs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Cache {
    pub level: u8,
    #[serde(rename = "type")]
    pub kind: String,
    pub size_bytes: u64,
    pub line_bytes: u32,
    pub shared_cpus: Vec<u32>,
    /// Where the size came from: `cpuid+sysfs` (agree), `cpuid`, `sysfs`,
    /// or `cpuid (sysfs says N)` when they disagree.
    pub source: String,
    /// Where this level ends as this process measured it (a knee of the
    /// random-chase latency curve, `host.knees`); null when not measured
    /// or when the curve showed no clear knee for this level.
    #[serde(default)]
    pub effective_size_bytes: Option<u64>,
    /// Where `effective_size_bytes` came from (the knee probe of this run,
    /// or the stored file and when it was measured); null with it.
    #[serde(default)]
    pub effective_source: Option<String>,
    /// Where this level ends for a sequential read (the knee of the read
    /// bandwidth curve for the last level, else a latency knee that read
    /// bandwidth confirms); bandwidth records are labelled by it. Null
    /// when not measured, or when no knee of either curve may stand for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth_size_bytes: Option<u64>,
}

/// Which measured curve labels a record's regime: a sequential stream is
/// served by a level as long as the read curve stays on its plateau, a
/// random chase only as long as the latency curve does, and the two can end
/// far apart (TLB reach, adaptive replacement, a partitioned L3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Curve {
    Bandwidth,
    Latency,
}

impl Cache {
    /// A level as CPUID or sysfs describe it, with nothing measured yet.
    pub fn new(
        level: u8,
        kind: &str,
        size_bytes: u64,
        line_bytes: u32,
        shared_cpus: Vec<u32>,
        source: String,
    ) -> Cache {
        Cache {
            level,
            kind: kind.into(),
            size_bytes,
            line_bytes,
            shared_cpus,
            source,
            effective_size_bytes: None,
            effective_source: None,
            bandwidth_size_bytes: None,
        }
    }

    /// Whether the measured size is more than [`limits::CACHE_DISAGREE`]
    /// away from CPUID's, either way.
    pub fn disagrees(&self) -> bool {
        self.effective_size_bytes
            .is_some_and(|e| self.far_from_cpuid(e))
    }

    /// Whether `bytes` is more than [`limits::CACHE_DISAGREE`] away from
    /// CPUID's size, either way: far enough to move regime labels.
    pub fn far_from_cpuid(&self, bytes: u64) -> bool {
        let (a, b) = (bytes as f64, self.size_bytes as f64);
        a * limits::CACHE_DISAGREE < b || b * limits::CACHE_DISAGREE < a
    }

    /// The size regime labels and default sweeps use: the measured one
    /// when it [`disagrees`](Cache::disagrees) with CPUID (a VM told the
    /// host socket's L3), else CPUID's, so a measurement a quarter-octave
    /// off never moves a label on a machine that CPUID describes well.
    pub fn boundary_bytes(&self) -> u64 {
        self.boundary(Curve::Latency)
    }

    /// The measured end of this level by `curve`, if any.
    pub fn measured(&self, curve: Curve) -> Option<u64> {
        match curve {
            Curve::Latency => self.effective_size_bytes,
            Curve::Bandwidth => self.bandwidth_size_bytes,
        }
    }

    /// The size that labels records of `curve`: the measured one when it is
    /// more than [`limits::CACHE_DISAGREE`] from CPUID's, else CPUID's.
    pub fn boundary(&self, curve: Curve) -> u64 {
        match self.measured(curve) {
            Some(e) if self.far_from_cpuid(e) => e,
            _ => self.size_bytes,
        }
    }
}
