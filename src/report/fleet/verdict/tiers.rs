//! Memory tiers across the fleet (issue 32): each node's HBM, CXL and
//! device-memory tiers (`host.tiers`, what the system states) against the
//! fleet's majority. A node that lacks a kind more than half the nodes
//! have (a BIOS switched to HBM cache mode, a CXL expander not onlined), or
//! has under [`CAPACITY_SHARE`] of the median capacity of that kind (a
//! missing DIMM or HBM stack), is named. DRAM is not compared: its
//! capacity moves with firmware reservations and the node's type. A slow
//! tier is judged like every figure (the `tier_*` figures of
//! `numa --tiers`, [`crate::report::fleet::metrics`]).

use crate::model::fleet::{FleetRun, TierGap};
use crate::model::NodeKind;

/// The kinds compared across the fleet.
pub const KINDS: [NodeKind; 3] = [NodeKind::Hbm, NodeKind::Cxl, NodeKind::Device];

/// A node with less than this share of the fleet's median capacity of a
/// kind has less of it (a node's MemTotal moves by a few MiB with what the
/// firmware and kernel reserve; a missing stack or device is far more).
pub const CAPACITY_SHARE: f64 = 0.9;

/// One node's memory of `kind`: None where the node has none; the total
/// capacity, None where a node of that kind did not say it.
fn holding(tiers: &crate::model::MemoryTiers, kind: NodeKind) -> Option<Option<u64>> {
    let mine: Vec<_> = tiers.nodes.iter().filter(|n| n.kind == kind).collect();
    (!mine.is_empty()).then(|| mine.iter().map(|n| n.capacity_bytes).sum())
}

/// The GiB of `kind` on the node of `run` (0 where it has none); None
/// where its tiers are not known or a node of that kind did not say its
/// capacity.
pub fn gib(run: &crate::model::Run, kind: NodeKind) -> Option<f64> {
    match holding(run.host.tiers.as_ref()?, kind) {
        None => Some(0.0),
        Some(b) => b.map(|b| b as f64 / (1u64 << 30) as f64),
    }
}

/// The tier gaps of every node of `f`, in the order of `f.nodes` (empty
/// for a node whose tiers are not known).
pub fn gaps(f: &FleetRun) -> Vec<Vec<TierGap>> {
    let known: Vec<Option<&crate::model::MemoryTiers>> = f
        .nodes
        .iter()
        .map(|n| n.run.as_ref().and_then(|r| r.host.tiers.as_ref()))
        .collect();
    let nodes = known.iter().flatten().count() as u32;
    let mut out = vec![Vec::new(); f.nodes.len()];
    for kind in KINDS {
        let held: Vec<Option<Option<Option<u64>>>> =
            known.iter().map(|t| t.map(|t| holding(t, kind))).collect();
        let nodes_with = held.iter().filter(|h| matches!(h, Some(Some(_)))).count() as u32;
        if nodes_with * 2 <= nodes {
            continue; // not the majority's: nobody lacks it
        }
        let sizes: Vec<f64> = held
            .iter()
            .filter_map(|h| h.flatten().flatten().map(|b| b as f64))
            .collect();
        let fleet_bytes = crate::stats::median(&sizes).map(|m| m as u64);
        for (i, h) in held.iter().enumerate() {
            let Some(h) = h else { continue };
            let capacity_bytes = match h {
                None => Some(0),
                Some(c) => *c,
            };
            let short = match (h, capacity_bytes, fleet_bytes) {
                (None, _, _) => true,
                (Some(_), Some(c), Some(m)) => (c as f64) < CAPACITY_SHARE * m as f64,
                _ => false,
            };
            if short {
                out[i].push(TierGap {
                    kind,
                    capacity_bytes,
                    fleet_bytes,
                    nodes_with,
                    nodes,
                });
            }
        }
    }
    out
}
