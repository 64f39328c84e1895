//! The memory system as the firmware describes it (SMBIOS type 16 and 17
//! structures), and the theoretical peak it allows: populated channels ×
//! configured MT/s × data width. Read by `platform::smbios`, counted by
//! `platform::dram`; stated by the user with `--dram-peak` where the table
//! is missing (most VMs) or unreadable (no root).

use serde::{Deserialize, Serialize};

/// `host.dram`: the memory devices, and the peak they allow.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Dram {
    /// Where the figures come from, e.g. "SMBIOS 3.3
    /// (/sys/firmware/dmi/tables)" or "stated with --dram-peak".
    pub source: String,
    /// Every memory device of the system memory arrays, empty slots too.
    pub devices: Vec<DramDevice>,
    /// Populated channels, counted from the devices' locators; null when
    /// the locators do not say.
    pub channels: Option<u32>,
    /// The theoretical peak, GB/s: Σ over populated channels of configured
    /// MT/s × data width; null when anything it needs is unknown, never a
    /// guess.
    pub peak_gbps: Option<f64>,
    /// How the peak was reached, or why it is unknown, in one line.
    pub note: String,
    /// Doubts that leave the peak standing (mixed DIMM speeds).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// One SMBIOS memory device (type 17): a DIMM slot, or soldered memory.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct DramDevice {
    /// The socket or board position, e.g. "CPU0_DIMM_A1".
    pub locator: String,
    /// The bank, e.g. "P0_Node0_Channel0_Dimm0".
    pub bank_locator: String,
    /// Null for an empty slot (and for a size the table calls unknown).
    pub size_bytes: Option<u64>,
    /// `DDR5`, `LPDDR5`, ... as the table names it.
    pub memory_type: String,
    /// `DIMM`, `SODIMM`, `Row of chips` (soldered), ...
    pub form_factor: String,
    pub data_width_bits: Option<u32>,
    pub total_width_bits: Option<u32>,
    /// The most the device is rated for, MT/s.
    pub speed_mts: Option<u32>,
    /// What the memory controller runs it at, MT/s: what the peak uses.
    pub configured_mts: Option<u32>,
    /// The channel the locators place it on, e.g. "socket 0 channel A";
    /// null when they do not say.
    pub channel: Option<String>,
    pub manufacturer: Option<String>,
    pub part_number: Option<String>,
}

impl Dram {
    /// This memory system with its peak replaced by one the user stated
    /// (`--dram-peak`, a fleet's reference class): the devices stay, the
    /// source and note say where the figure came from.
    pub fn with_stated(mut self, gbps: f64) -> Dram {
        self.note = match self.peak_gbps {
            Some(smbios) => format!(
                "stated with --dram-peak; SMBIOS's devices give {smbios:.1} GB/s ({})",
                self.note
            ),
            None => "stated with --dram-peak".into(),
        };
        self.source = "--dram-peak".into();
        self.peak_gbps = Some(gbps);
        self
    }
}

impl DramDevice {
    /// Whether the slot holds memory.
    pub fn populated(&self) -> bool {
        self.size_bytes.is_some_and(|s| s > 0)
    }
}
