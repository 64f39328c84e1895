//! Memory tiers: what each NUMA node *is* (DRAM, HBM, CXL, device
//! memory), as the system states it, and what the firmware claims it
//! does (ACPI HMAT as the kernel exports it). Every label carries where it
//! came from; a kind no source states is `unknown`, never guessed from a
//! measured speed. `host.tiers`; absent in runs from before it.

use serde::{Deserialize, Serialize};

/// What a node's memory is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    /// DDR/LPDDR memory of the processor's own controllers.
    Dram,
    /// High-bandwidth memory (Xeon Max, an APU's package memory).
    Hbm,
    /// A CXL Type-3 memory expander.
    Cxl,
    /// An accelerator's memory onlined as a node (Grace Hopper's GPU HBM).
    Device,
    /// No source states it.
    #[default]
    Unknown,
}

impl NodeKind {
    pub fn name(self) -> &'static str {
        match self {
            NodeKind::Dram => "dram",
            NodeKind::Hbm => "hbm",
            NodeKind::Cxl => "cxl",
            NodeKind::Device => "device",
            NodeKind::Unknown => "unknown",
        }
    }
}

/// `host.tiers`: every node's kind, tier and firmware claims.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct MemoryTiers {
    /// One per online node, ascending.
    pub nodes: Vec<TierNode>,
    /// Distinct kernel memory tiers (`memory_tier*` ids), fastest first;
    /// empty where the kernel exports none.
    pub tiers: Vec<u32>,
    /// The weighted-interleave weights the kernel holds now (`node`,
    /// `weight`), read only; null where the kernel has no weighted
    /// interleave (before Linux 6.9, other systems).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interleave_weights: Option<Vec<(u32, u32)>>,
    /// What could not be read, one line each (no HMAT, no CXL bus, not on
    /// this system).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// One node's tier facts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct TierNode {
    pub node: u32,
    pub kind: NodeKind,
    /// Where the kind comes from ("CXL region0 (cxl bus)", "SMBIOS type 17:
    /// every device DDR5 and they hold all memory"), or why it is unknown.
    pub kind_source: String,
    /// MemTotal of the node, bytes; null where unreadable.
    pub capacity_bytes: Option<u64>,
    pub cpus: Vec<u32>,
    /// The kernel's memory tier (`memory_tierN`: lower is faster); null
    /// where the kernel exports no tiers.
    pub tier: Option<u32>,
    /// HMAT claims, as exported: `access0` (any initiator) and `access1`
    /// (cpu initiators only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hmat: Vec<HmatClaim>,
    /// HMAT memory-side caches in front of this node.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memory_side_caches: Vec<SideCache>,
    /// CXL regions whose memory is on this node.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cxl_regions: Vec<String>,
    /// DAX devices that target this node (`dax0.0`, with their driver:
    /// `kmem` onlines them as system memory).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dax_devices: Vec<String>,
}

/// One access class of a node's HMAT performance, as the kernel exports it
/// (`nodeN/accessK/initiators/`): the best any initiator in `initiators`
/// gets. A value the firmware left out or gave as 0 is null.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct HmatClaim {
    /// 0: any initiator; 1: cpu initiators only.
    pub access: u8,
    /// The initiator nodes the figures are for.
    pub initiators: Vec<u32>,
    /// MB/s as the kernel states it (ACPI HMAT's unit).
    pub read_bandwidth_mbps: Option<u64>,
    pub write_bandwidth_mbps: Option<u64>,
    /// ns.
    pub read_latency_ns: Option<u64>,
    pub write_latency_ns: Option<u64>,
}

/// A memory-side cache level (`nodeN/memory_side_cache/indexK`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct SideCache {
    pub level: u32,
    pub size_bytes: Option<u64>,
    pub line_bytes: Option<u64>,
}

impl MemoryTiers {
    pub fn node(&self, id: u32) -> Option<&TierNode> {
        self.nodes.iter().find(|n| n.node == id)
    }

    /// True when the machine has more than one kind of memory, more than
    /// one kernel tier, or memory on a node without cpus (by construction
    /// another tier than the cpus' own): what makes the survey measure
    /// tiers.
    pub fn several(&self) -> bool {
        let memory: Vec<&TierNode> = self
            .nodes
            .iter()
            .filter(|n| n.capacity_bytes.is_some_and(|b| b > 0))
            .collect();
        let kinds = |k: NodeKind| memory.iter().any(|n| n.kind == k);
        let distinct = [
            NodeKind::Dram,
            NodeKind::Hbm,
            NodeKind::Cxl,
            NodeKind::Device,
        ]
        .into_iter()
        .filter(|k| kinds(*k))
        .count();
        self.tiers.len() > 1 || distinct > 1 || memory.iter().any(|n| n.cpus.is_empty())
    }
}

impl TierNode {
    /// The claim that applies to an initiator on `cpu_node`: cpu
    /// initiators' class first, then any initiator's.
    pub fn claim_for(&self, cpu_node: u32) -> Option<&HmatClaim> {
        let of = |a: u8| {
            self.hmat
                .iter()
                .find(|c| c.access == a && c.initiators.contains(&cpu_node))
        };
        of(1).or_else(|| of(0))
    }
}
