//! Measured cache boundaries: the knee probe's curve and the knees found
//! in it (`host.knees`). CPUID describes the caches the silicon has; a
//! guest or a partitioned L3 may see much less (a Firecracker guest is told
//! the host socket's 480 MiB L3 and sees DRAM latency from 32 MiB on), so
//! bwscope also records where each level ends as this process experiences
//! it. Detection lives in `platform::knees`; this is the data.

use serde::{Deserialize, Serialize};

/// One knee probe: how it was measured, the curves, and the knees.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct KneeProbe {
    /// When the probe ran (RFC 3339 UTC).
    pub measured_at: String,
    /// How long it took, seconds.
    pub wall_seconds: f64,
    /// `this run`, or the file it was stored in and read back from.
    pub source: String,
    /// The cpu it ran on.
    pub cpu: u32,
    /// What was measured, in words.
    pub method: String,
    /// The random pointer chase: best ns per load at each working set.
    pub latency: Vec<CurvePoint>,
    /// Single-thread sequential read: best GB/s at each working set; it
    /// confirms (or not) the knees of the latency curve.
    pub bandwidth: Vec<CurvePoint>,
    /// Every level that ends in a knee, smallest first. Empty when the
    /// curve showed no clear knee.
    pub knees: Vec<Knee>,
    /// Where the sequential read curve leaves its last cache plateau for
    /// DRAM's; null when the curve shows no such drop (or in probes stored
    /// before it was looked for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth_knee: Option<BandwidthKnee>,
    /// Why a knee is missing or unused, in one line; null when every CPUID
    /// level got a knee.
    pub note: Option<String>,
}

/// A point of a probe curve.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct CurvePoint {
    pub size_bytes: u64,
    /// ns per load (latency) or GB/s (bandwidth).
    pub value: f64,
}

/// Where one level of the hierarchy ends.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Knee {
    /// The largest working set measured at this level's latency.
    pub end_bytes: u64,
    /// The level's latency: the median of its plateau, ns.
    pub latency_ns: f64,
    /// The latency beyond the knee (the next plateau, or the highest seen
    /// when the curve ends rising), ns.
    pub next_latency_ns: f64,
    /// Best read GB/s well past the knee over best read GB/s just before
    /// it; null without bandwidth points on both sides.
    pub bandwidth_ratio: Option<f64>,
    /// Whether the bandwidth curve drops at this knee too; null when it
    /// could not tell.
    pub confirmed: Option<bool>,
    /// The CPUID cache level this knee was matched to; null when none.
    pub level: Option<u8>,
}

/// The knee of the read-bandwidth curve: where the last cache level ends
/// as a sequential read sees it. The latency knee is where a random chase
/// starts missing; on a guest told a 480 MiB L3 the two were 20 MiB and
/// ~130 MiB apart, so each kind of record is labelled by its own curve.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BandwidthKnee {
    /// The largest working set read at the last cache plateau's rate.
    pub end_bytes: u64,
    /// That plateau's read rate, GB/s.
    pub plateau_gbps: f64,
    /// The DRAM plateau: the read rate at the largest sizes, GB/s.
    pub dram_gbps: f64,
    /// The smallest size read within 10 % of the DRAM plateau: never
    /// called a cache, whatever CPUID says.
    pub dram_from_bytes: u64,
    /// The CPUID level this knee ends (the last level); null when it lies
    /// at or below the level under it (that level's plateau was the last
    /// one the read curve showed).
    pub level: Option<u8>,
}
