//! The memory-tier table of `bwscope info` (and of a saved run's host):
//! one row per node with its kind and where that came from, capacity,
//! cpus, kernel tier and what ACPI HMAT claims for its nearest
//! initiators.

use std::fmt::Write as _;

use crate::model::{HmatClaim, MemoryTiers};
use crate::util::cpulist::format_cpu_list;
use crate::util::units::format_bytes;

fn pair(a: Option<u64>, b: Option<u64>, scale: f64) -> String {
    let one = |v: Option<u64>| v.map_or("-".into(), |v| format!("{}", v as f64 / scale));
    format!("{}/{}", one(a), one(b))
}

/// The claim shown in the table: cpu initiators' class, else any
/// initiator's.
fn shown(c: &[HmatClaim]) -> Option<&HmatClaim> {
    c.iter()
        .find(|c| c.access == 1)
        .or_else(|| c.iter().find(|c| c.access == 0))
}

/// The table, or nothing for a one-node machine that states nothing more.
pub fn table(t: &MemoryTiers) -> String {
    let mut s = String::new();
    let plain = t.nodes.len() <= 1
        && t.nodes
            .iter()
            .all(|n| n.hmat.is_empty() && n.cxl_regions.is_empty());
    if t.nodes.is_empty() || plain && t.tiers.len() <= 1 {
        // A one-node machine that states nothing more: its `info` stays
        // as it was (the kind is in `--json`).
        return s;
    }
    let _ = writeln!(
        s,
        "memory tiers (kind as the system states it; HMAT: what the firmware claims for the initiators named)"
    );
    let mut rows = vec![[
        "node",
        "kind",
        "capacity",
        "cpus",
        "tier",
        "HMAT rd/wr GB/s",
        "rd/wr ns",
        "initiators",
        "source",
    ]
    .map(String::from)
    .to_vec()];
    for n in &t.nodes {
        let c = shown(&n.hmat);
        rows.push(vec![
            n.node.to_string(),
            n.kind.name().into(),
            n.capacity_bytes.map_or("?".into(), format_bytes),
            if n.cpus.is_empty() {
                "none".into()
            } else {
                format_cpu_list(&n.cpus)
            },
            n.tier.map_or("-".into(), |t| t.to_string()),
            c.map_or("-".into(), |c| {
                pair(c.read_bandwidth_mbps, c.write_bandwidth_mbps, 1000.0)
            }),
            c.map_or("-".into(), |c| {
                pair(c.read_latency_ns, c.write_latency_ns, 1.0)
            }),
            c.map_or("-".into(), |c| format_cpu_list(&c.initiators)),
            n.kind_source.clone(),
        ]);
    }
    for line in crate::report::grid::grid(&rows).lines() {
        let _ = writeln!(s, "  {}", line.trim_end());
    }
    for n in &t.nodes {
        for c in &n.memory_side_caches {
            let _ = writeln!(
                s,
                "  node {}: memory-side cache L{} {} (line {})",
                n.node,
                c.level,
                c.size_bytes.map_or("?".into(), format_bytes),
                c.line_bytes.map_or("?".into(), |b| format!("{b} B"))
            );
        }
    }
    if let Some(w) = &t.interleave_weights {
        let list: Vec<String> = w.iter().map(|(n, w)| format!("node{n}={w}")).collect();
        let _ = writeln!(s, "  weighted interleave weights now: {}", list.join(" "));
    }
    for note in &t.notes {
        let _ = writeln!(s, "  note: {note}");
    }
    s
}
