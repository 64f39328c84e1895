//! The `transfer` suite's records: host ↔ accelerator copies, one per host
//! kind, direction and size, and the CPU's read and write probe of each
//! host kind.

use serde::{Deserialize, Serialize};

use super::{Nullable, SuiteDetail};
use crate::model::Stats;

/// The clock behind a transfer record's headline figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Timer {
    /// `Instant` around the enqueue loop and the final synchronisation
    /// (pageable and blocking copies, map/unmap, the CPU probes).
    HostClock,
    /// CUDA events / OpenCL profiling timestamps around the copies
    /// (asynchronous copies).
    DeviceEvents,
}

impl Timer {
    pub fn name(self) -> &'static str {
        match self {
            Timer::HostClock => "host-clock",
            Timer::DeviceEvents => "device-events",
        }
    }
}

/// A `transfer` record.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TransferDetail {
    /// `cuda` or `opencl` (`auto` on the record of a run that found no
    /// device).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
    /// The device's name as the driver reports it; null without a device.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub device: Nullable<String>,
    /// `--device`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_index: Option<u64>,
    /// `dddd:bb:dd.f`, lower case; null where the driver does not say.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub pci_bus_id: Nullable<String>,
    /// The host memory kind (`pageable`, `pinned`, …); null for `d2d`.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub host_kind: Nullable<String>,
    /// `h2d`, `d2h`, `d2d`, `bidir`, `map`, the `-sm` copies, `cpu-read`,
    /// `cpu-write`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<String>,
    /// `copy-engine` (the API's copy call) or `sm` (bwscope's copy kernel).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// Every sample's copies were queued behind the spin kernel that holds
    /// the stream until all are queued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_blocker: Option<bool>,
    /// The pattern written, copied, read back and compared; null with
    /// `--no-verify` and for the CPU probes.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub verified: Nullable<bool>,
    /// The clock of the headline figure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timer: Option<Timer>,
    /// `payload`, `both directions` or `read+write`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_counted: Option<String>,
    /// The samples timed by the host clock, GB/s.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub host_gbps: Nullable<Stats>,
    /// The samples timed by device events, GB/s.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub event_gbps: Nullable<Stats>,
    /// `bidir`: host → device on its own stream, GB/s.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub h2d_gbps: Nullable<Stats>,
    /// `bidir`: device → host on its own stream, GB/s.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub d2h_gbps: Nullable<Stats>,
    /// The PCIe link's theoretical rate, one direction, GB/s.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub link_theoretical_gbps: Nullable<f64>,
    /// `map` (and CUDA `mapped`): the map/unmap moved no data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zero_copy: Option<bool>,
    /// `map`: one unmap + map pair, seconds (`min` is best).
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub map_unmap_seconds: Nullable<Stats>,
    /// `map`: the best real copy the zero-copy test compared with, GB/s.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub reference_copy_gbps: Nullable<f64>,
    /// `map`, on zero-copy: why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// CPU probes: the asm kernel used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_kernel: Option<String>,
    /// CPU probes: best read / best write GB/s on that kind of memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_read_over_write: Option<f64>,
    /// CPU probes: `cpu_read_over_write` < 0.25, the CPU sees
    /// write-combined or uncached memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behaves_wc: Option<bool>,
    /// Driver errors: the API call that failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_call: Option<String>,
    /// Driver errors: the driver's error name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_name: Option<String>,
}

impl SuiteDetail for TransferDetail {}
