//! Where each logical cpu sits, as the system states it: its core (the
//! SMT siblings), the cpus it shares an L2 and a last-level cache with,
//! its cluster, die, package and NUMA node, and its kind of core where
//! cores differ. The core-to-core planner (`plan::pairs`) groups cpu
//! pairs into classes by it, and the suite holds measured latencies
//! against it. Filled by `os::cpu::topology` (Linux: parsed from sysfs by
//! `os::parse::topology`, so recorded trees test it).

use serde::{Deserialize, Serialize};

/// One logical cpu's place.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuPlace {
    pub cpu: u32,
    pub package: u32,
    /// The die within the package (`die_id`), where the system states
    /// one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub die: Option<u32>,
    /// The cluster (`cluster_id`: cores sharing an L2 or a cluster
    /// interconnect), where the system states one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<u32>,
    /// The cpus of its core, itself included (its SMT siblings).
    pub core_cpus: Vec<u32>,
    /// The cpus sharing its L2 (empty: not stated).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub l2: Vec<u32>,
    /// The cpus sharing its last-level cache above L2 (L3, or a system
    /// cache; empty: not stated).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub l3: Vec<u32>,
    /// Its NUMA node, where the system has nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<u32>,
    /// Its kind of core where the system tells kinds apart (an AArch64
    /// MIDR, a capacity, Intel's `cpu_core`/`cpu_atom`); None where it
    /// states no kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}

/// Every online cpu's place and the distances between NUMA nodes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Topology {
    /// By cpu number.
    pub cpus: Vec<CpuPlace>,
    /// Each node's distances to every node, in the order of `nodes`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<u32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub distances: Vec<Vec<u32>>,
}

impl Topology {
    /// The place of `cpu`.
    pub fn place(&self, cpu: u32) -> Option<&CpuPlace> {
        self.cpus
            .binary_search_by_key(&cpu, |p| p.cpu)
            .ok()
            .map(|i| &self.cpus[i])
    }

    /// The distance the system states from node `a` to node `b`.
    pub fn distance(&self, a: u32, b: u32) -> Option<u32> {
        let i = self.nodes.iter().position(|&n| n == a)?;
        let j = self.nodes.iter().position(|&n| n == b)?;
        self.distances.get(i)?.get(j).copied()
    }

    /// Sorted by cpu, so [`Topology::place`] finds them.
    pub fn sorted(mut self) -> Topology {
        self.cpus.sort_by_key(|p| p.cpu);
        self
    }
}
