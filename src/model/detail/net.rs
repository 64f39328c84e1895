//! The `net` suite's records: one per test point and flow, the rate the
//! receiving end saw after the omit window.

use serde::{Deserialize, Serialize};

use super::{Nullable, SuiteDetail};

/// One end's own count of a test.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct PeerView {
    pub sent_bytes: u64,
    pub received_bytes: u64,
    /// Request/answer rounds (rr mode; null in stream mode).
    pub rounds: Option<u64>,
    /// From the test's start to its last flow's end, on that end's clock.
    pub seconds: f64,
}

/// A `net` record.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct NetDetail {
    /// `rr` (request/answer) or `stream`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// `send`, `recv` or `bidir`, seen from the leader.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<String>,
    /// This record's flow: `send`, `recv` or `both` (bidirectional rr);
    /// null on a point that failed before it had flows.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub flow: Nullable<String>,
    /// Parallel TCP connections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<u64>,
    /// rr: the request size; stream: the `write()` size, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk_bytes: Option<u64>,
    /// The transponder's `ip:port`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer: Option<String>,
    /// The measured time asked per point, seconds; null with `--bytes`.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub time_seconds: Nullable<f64>,
    /// `--bytes` per point, when given.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub bytes_asked: Nullable<u64>,
    /// The warm-up left out of the samples, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub omit_seconds: Option<f64>,
    /// Bytes the sending end(s) wrote for this flow, omit window included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender_bytes: Option<u64>,
    /// Bytes the receiving end(s) read for this flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receiver_bytes: Option<u64>,
    /// The receiver's rate after the omit window, GB/s (10^9 B/s).
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub receiver_gbps: Nullable<f64>,
    /// The same in Gbit/s (10^9 bit/s).
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub receiver_gbitps: Nullable<f64>,
    /// rr: median time of one round, send → answer, stream 0, µs.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub rtt_us: Nullable<f64>,
    /// The leader's own count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leader: Option<PeerView>,
    /// The transponder's report, on its clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transponder: Option<PeerView>,
}

impl SuiteDetail for NetDetail {}
