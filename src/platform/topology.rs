//! Cores, SMT siblings, NUMA nodes and caches: what the system lists
//! (`os::cpu`), and CPUID's caches merged with it.

use serde::{Deserialize, Serialize};

use crate::model::Cache;

pub use crate::os::cpu::{allowed_cpus, cpus, nodes, online_cpus};

/// Caches as the system lists them for `cpu`.
pub fn sysfs_caches(cpu: u32) -> Vec<Cache> {
    crate::os::cpu::caches(cpu)
}

/// One cache as reported by CPUID (deterministic cache parameters: leaf 4
/// on Intel, 0x8000_001D on AMD). AMD's legacy leaf 0x8000_0006 is not
/// used: in KVM guests it reports a 256 MiB L3 for a 32 MiB one.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CpuidCache {
    pub level: u8,
    pub kind: String,
    pub size_bytes: u64,
    pub line_bytes: u32,
    pub ways: u32,
    /// Maximum logical processors sharing it, per CPUID.
    pub max_sharing: u32,
}

/// Merge CPUID's caches with sysfs's: sizes from CPUID (leaf 4/0x8000001D),
/// sharing from sysfs, and a note where they disagree.
pub fn merge_caches(cpuid: &[CpuidCache], sysfs: &[Cache]) -> Vec<Cache> {
    if cpuid.is_empty() {
        return sysfs.to_vec();
    }
    cpuid
        .iter()
        .map(|c| {
            let s = sysfs
                .iter()
                .find(|s| s.level == c.level && s.kind == c.kind);
            let source = match s {
                Some(s) if s.size_bytes == c.size_bytes => format!("cpuid+{}", s.source),
                Some(s) => format!(
                    "cpuid ({} says {})",
                    s.source,
                    crate::util::units::format_bytes(s.size_bytes)
                ),
                None => "cpuid".to_string(),
            };
            Cache::new(
                c.level,
                &c.kind,
                c.size_bytes,
                c.line_bytes,
                s.map(|s| s.shared_cpus.clone()).unwrap_or_default(),
                source,
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_machine_has_cpus_and_a_node() {
        assert!(!allowed_cpus().is_empty());
        let n = nodes();
        assert!(!n.is_empty());
        let c = cpus(&n);
        assert!(!c.is_empty());
    }
}
