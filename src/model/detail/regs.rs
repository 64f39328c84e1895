//! The `regs` suite's records: one per register-transfer kernel; bytes are
//! those arriving in the destination register or stack slot.

use serde::{Deserialize, Serialize};

use super::SuiteDetail;

/// A `regs` record.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RegsDetail {
    /// Destination bytes per instruction (`width_bits` / 8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_instruction: Option<u64>,
    /// Instructions in one loop iteration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions_per_iteration: Option<u64>,
    /// What the kernel returned: `4p + 6` for the pattern `p` moved, proof
    /// the moves happened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checksum: Option<u64>,
    /// Best GB/s × 1e9 / `host.clock_hz`; absent without a clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_cycle: Option<f64>,
    /// `bytes_per_cycle` / `bytes_per_instruction`; absent without a clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions_per_cycle: Option<f64>,
}

impl SuiteDetail for RegsDetail {}
