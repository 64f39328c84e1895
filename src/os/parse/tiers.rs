//! What a Linux system states about its memory tiers, read from a file
//! tree: the real one (`os::linux::tiers`, rooted at `/`) or a captured or
//! constructed one in a test. Paths are relative to the root:
//!
//! - `sys/devices/system/node/online`, `nodeN/{cpulist,meminfo}`: which
//!   nodes there are, their cpus and memory;
//! - `sys/devices/virtual/memory_tiering/memory_tierN/nodelist`: the
//!   kernel's memory tiers (Linux 6.1+; lower N is faster);
//! - `sys/devices/system/node/nodeN/accessK/initiators/`: ACPI HMAT as the
//!   kernel exports it (Linux 5.2+, `Documentation/admin-guide/mm/numaperf.rst`):
//!   `read_bandwidth`, `write_bandwidth` (MB/s), `read_latency`,
//!   `write_latency` (ns), and one `nodeM` link per initiator;
//!   `memory_side_cache/indexK/{size,line_size}`;
//! - `sys/bus/cxl/devices/regionN` and `sys/bus/dax/devices/daxX.Y`
//!   (`target_node`, the `driver` link, and the device's own link, which
//!   names the CXL region a DAX device was carved from);
//! - `sys/kernel/mm/mempolicy/weighted_interleave/nodeN` (Linux 6.9+);
//! - `proc/driver/nvidia/gpus/*/numa_status` (`Node: N`): a GPU's memory
//!   onlined as node N (Grace Hopper with NVIDIA's driver).
//!
//! Nothing here decides a node's kind from a speed: the facts are
//! gathered as stated; `platform::tiers` names the kinds.

use crate::model::{HmatClaim, SideCache};
use crate::util::cpulist::parse_cpu_list;

/// A read-only file tree.
pub trait Tree {
    /// A file's text; None when absent or unreadable.
    fn read(&self, path: &str) -> Option<String>;
    /// The names in a folder (sorted); empty when absent.
    fn list(&self, path: &str) -> Vec<String>;
    /// Where a symbolic link points (its text); None when not a link.
    fn link(&self, path: &str) -> Option<String>;
}

const NODE: &str = "sys/devices/system/node";

/// One node as the tree states it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NodeFacts {
    pub id: u32,
    pub cpus: Vec<u32>,
    pub memory_bytes: Option<u64>,
    pub tier: Option<u32>,
    pub hmat: Vec<HmatClaim>,
    pub side_caches: Vec<SideCache>,
    pub cxl_regions: Vec<String>,
    /// `dax0.0 (kmem)`.
    pub dax_devices: Vec<String>,
    /// A GPU driver says its memory is this node (`nvidia 0009:01:00.0`).
    pub device: Option<String>,
}

/// Everything the tree states about tiers.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TierFacts {
    pub nodes: Vec<NodeFacts>,
    /// Distinct tier ids, ascending.
    pub tiers: Vec<u32>,
    pub interleave_weights: Option<Vec<(u32, u32)>>,
    /// What was absent, one line each.
    pub notes: Vec<String>,
}

fn number(t: &dyn Tree, path: &str) -> Option<u64> {
    t.read(path)?.trim().parse().ok()
}

/// `nodeN` → N.
fn node_id(name: &str) -> Option<u32> {
    name.strip_prefix("node")?.parse().ok()
}

/// Read the tiers a tree states.
pub fn read(t: &dyn Tree) -> TierFacts {
    let mut f = TierFacts::default();
    let ids = t
        .read(&format!("{NODE}/online"))
        .and_then(|s| parse_cpu_list(&s))
        .unwrap_or_default();
    for id in ids {
        f.nodes.push(node(t, id));
    }
    tiers(t, &mut f);
    if f.nodes.iter().all(|n| n.hmat.is_empty()) {
        f.notes.push(
            "no HMAT performance is exported (no ACPI HMAT table, or a kernel without CONFIG_ACPI_HMAT)"
                .into(),
        );
    }
    cxl_and_dax(t, &mut f);
    devices(t, &mut f);
    f.interleave_weights = weights(t);
    f
}

fn node(t: &dyn Tree, id: u32) -> NodeFacts {
    let d = format!("{NODE}/node{id}");
    NodeFacts {
        id,
        cpus: t
            .read(&format!("{d}/cpulist"))
            .and_then(|s| parse_cpu_list(&s))
            .unwrap_or_default(),
        memory_bytes: t
            .read(&format!("{d}/meminfo"))
            .and_then(|m| super::node_meminfo(&m, "MemTotal:")),
        hmat: (0..=1u8).filter_map(|a| claim(t, &d, a)).collect(),
        side_caches: side_caches(t, &d),
        ..NodeFacts::default()
    }
}

/// `accessK/initiators/`: the figures, 0 or absent = not stated.
fn claim(t: &dyn Tree, node_dir: &str, access: u8) -> Option<HmatClaim> {
    let d = format!("{node_dir}/access{access}/initiators");
    let names = t.list(&d);
    if names.is_empty() {
        return None;
    }
    let value = |f: &str| number(t, &format!("{d}/{f}")).filter(|&v| v > 0);
    let c = HmatClaim {
        access,
        initiators: names.iter().filter_map(|n| node_id(n)).collect(),
        read_bandwidth_mbps: value("read_bandwidth"),
        write_bandwidth_mbps: value("write_bandwidth"),
        read_latency_ns: value("read_latency"),
        write_latency_ns: value("write_latency"),
    };
    // A class whose every figure is missing or zero claims nothing.
    let stated = [
        c.read_bandwidth_mbps,
        c.write_bandwidth_mbps,
        c.read_latency_ns,
        c.write_latency_ns,
    ]
    .iter()
    .any(Option::is_some);
    stated.then_some(c)
}

fn side_caches(t: &dyn Tree, node_dir: &str) -> Vec<SideCache> {
    let d = format!("{node_dir}/memory_side_cache");
    t.list(&d)
        .iter()
        .filter_map(|n| {
            let level = n.strip_prefix("index")?.parse().ok()?;
            Some(SideCache {
                level,
                size_bytes: number(t, &format!("{d}/{n}/size")),
                line_bytes: number(t, &format!("{d}/{n}/line_size")),
            })
        })
        .collect()
}

fn tiers(t: &dyn Tree, f: &mut TierFacts) {
    const TIERS: &str = "sys/devices/virtual/memory_tiering";
    let mut any = false;
    for name in t.list(TIERS) {
        let Some(id) = name
            .strip_prefix("memory_tier")
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Some(nodes) = t
            .read(&format!("{TIERS}/{name}/nodelist"))
            .and_then(|s| parse_cpu_list(&s))
        else {
            continue;
        };
        any = true;
        f.tiers.push(id);
        for n in f.nodes.iter_mut().filter(|n| nodes.contains(&n.id)) {
            n.tier = Some(id);
        }
    }
    f.tiers.sort_unstable();
    f.tiers.dedup();
    if !any {
        f.notes
            .push("the kernel exports no memory tiers (memory_tiering: Linux 6.1+)".into());
    }
}

fn cxl_and_dax(t: &dyn Tree, f: &mut TierFacts) {
    let regions: Vec<String> = t
        .list("sys/bus/cxl/devices")
        .into_iter()
        .filter(|n| n.starts_with("region"))
        .collect();
    for dax in t.list("sys/bus/dax/devices") {
        let d = format!("sys/bus/dax/devices/{dax}");
        let Some(node) = t
            .read(&format!("{d}/target_node"))
            .and_then(|s| s.trim().parse::<i64>().ok())
            .and_then(|n| u32::try_from(n).ok())
        else {
            continue;
        };
        let driver = t
            .link(&format!("{d}/driver"))
            .and_then(|l| l.rsplit('/').next().map(String::from))
            .unwrap_or_else(|| "no driver".into());
        let own = t.link(&d).unwrap_or_default();
        let region = regions
            .iter()
            .find(|r| own.split('/').any(|part| part == r.as_str()));
        let Some(n) = f.nodes.iter_mut().find(|n| n.id == node) else {
            continue;
        };
        n.dax_devices.push(format!("{dax} ({driver})"));
        if let Some(r) = region {
            if !n.cxl_regions.contains(r) {
                n.cxl_regions.push(r.clone());
            }
        }
    }
}

fn devices(t: &dyn Tree, f: &mut TierFacts) {
    const GPUS: &str = "proc/driver/nvidia/gpus";
    for bdf in t.list(GPUS) {
        let Some(text) = t.read(&format!("{GPUS}/{bdf}/numa_status")) else {
            continue;
        };
        let field = |k: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(k))
                .map(|v| v.trim().to_string())
        };
        let Some(node) = field("Node:").and_then(|v| v.parse::<u32>().ok()) else {
            continue;
        };
        if let Some(n) = f.nodes.iter_mut().find(|n| n.id == node) {
            n.device = Some(format!(
                "nvidia {bdf}{}",
                field("Status:").map_or(String::new(), |s| format!(", {s}"))
            ));
        }
    }
}

fn weights(t: &dyn Tree) -> Option<Vec<(u32, u32)>> {
    const W: &str = "sys/kernel/mm/mempolicy/weighted_interleave";
    let names = t.list(W);
    if names.is_empty() {
        return None;
    }
    Some(
        names
            .iter()
            .filter_map(|n| Some((node_id(n)?, number(t, &format!("{W}/{n}"))? as u32)))
            .collect(),
    )
}

#[cfg(test)]
#[path = "tiers_tests.rs"]
pub(crate) mod tests;
