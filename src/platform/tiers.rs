//! Every node's kind, from what the system states (`os::tiers`) and the
//! firmware's memory devices (SMBIOS type 17, `host.dram`), never from a
//! measured speed. The rules, in order, each naming its source:
//!
//! 1. a GPU driver says the node is its memory → `device`;
//! 2. a CXL region's DAX device targets the node → `cxl`;
//! 3. SMBIOS: every populated system-memory device is of one technology
//!    (DDR*/LPDDR* → `dram`, HBM* → `hbm`); a node with cpus is of it; a
//!    cpu-less node only when the devices hold at least all the nodes'
//!    memory together (else some memory is not in the table: CXL set up
//!    by firmware, an accelerator's);
//! 4. otherwise `unknown`, with why. Mixed technologies (Xeon Max in flat
//!    mode lists DDR5 and HBM) name no node: SMBIOS locators do not say
//!    which Linux node a device backs.

use crate::model::{Dram, MemoryTiers, Node, NodeKind, TierNode};
use crate::os::tiers::{NodeFacts, TierFacts};
use crate::util::units::format_bytes;

/// The tiers of this machine.
pub fn detect(nodes: &[Node], dram: Option<&Dram>) -> MemoryTiers {
    match crate::os::tiers::facts() {
        Ok(f) => build(nodes, f, dram),
        Err(why) => {
            let mut f = TierFacts::default();
            f.notes.push(why);
            build(nodes, f, dram)
        }
    }
}

/// The tiers from the system's facts; nodes it did not list (a system
/// without sysfs) come from `nodes`.
pub fn build(nodes: &[Node], mut f: TierFacts, dram: Option<&Dram>) -> MemoryTiers {
    if f.nodes.is_empty() {
        f.nodes = nodes
            .iter()
            .map(|n| NodeFacts {
                id: n.id,
                cpus: n.cpus.clone(),
                memory_bytes: n.memory_bytes,
                ..NodeFacts::default()
            })
            .collect();
    }
    let total: u64 = f.nodes.iter().filter_map(|n| n.memory_bytes).sum();
    let smbios = smbios_kind(dram);
    MemoryTiers {
        nodes: f
            .nodes
            .into_iter()
            .map(|n| {
                let (kind, kind_source) = kind_of(&n, &smbios, total);
                TierNode {
                    node: n.id,
                    kind,
                    kind_source,
                    capacity_bytes: n.memory_bytes,
                    cpus: n.cpus,
                    tier: n.tier,
                    hmat: n.hmat,
                    memory_side_caches: n.side_caches,
                    cxl_regions: n.cxl_regions,
                    dax_devices: n.dax_devices,
                }
            })
            .collect(),
        tiers: f.tiers,
        interleave_weights: f.interleave_weights,
        notes: f.notes,
    }
}

/// What SMBIOS says of the whole machine: one kind with its technology and
/// the devices' total, or why it names none.
enum Smbios {
    One {
        kind: NodeKind,
        technology: String,
        bytes: u64,
    },
    None(String),
}

fn technology(t: &str) -> Option<NodeKind> {
    let u = t.to_ascii_uppercase();
    if u.starts_with("HBM") {
        Some(NodeKind::Hbm)
    } else if u.contains("DDR") {
        Some(NodeKind::Dram)
    } else {
        None
    }
}

fn smbios_kind(dram: Option<&Dram>) -> Smbios {
    let Some(d) = dram else {
        return Smbios::None("no SMBIOS table was read".into());
    };
    let populated: Vec<_> = d.devices.iter().filter(|x| x.populated()).collect();
    if populated.is_empty() {
        return Smbios::None(format!(
            "SMBIOS lists no populated memory device ({})",
            d.note
        ));
    }
    let mut types: Vec<&str> = populated.iter().map(|x| x.memory_type.as_str()).collect();
    types.sort_unstable();
    types.dedup();
    let kinds: Vec<Option<NodeKind>> = types.iter().map(|t| technology(t)).collect();
    match (types.as_slice(), kinds.as_slice()) {
        ([t], [Some(k)]) => Smbios::One {
            kind: *k,
            technology: t.to_string(),
            bytes: populated.iter().filter_map(|x| x.size_bytes).sum(),
        },
        ([t], [None]) => Smbios::None(format!("SMBIOS type 17 names no memory technology ({t})")),
        _ => Smbios::None(format!(
            "SMBIOS lists {} and its locators do not say which node each backs",
            types.join(" and ")
        )),
    }
}

fn kind_of(n: &NodeFacts, smbios: &Smbios, total: u64) -> (NodeKind, String) {
    if let Some(dev) = &n.device {
        return (NodeKind::Device, format!("GPU driver: {dev} (numa_status)"));
    }
    if !n.cxl_regions.is_empty() {
        return (
            NodeKind::Cxl,
            format!(
                "CXL {} (cxl bus){}",
                n.cxl_regions.join(", "),
                match n.dax_devices.first() {
                    Some(d) => format!(" via {d}"),
                    None => String::new(),
                }
            ),
        );
    }
    if n.memory_bytes == Some(0) {
        return (NodeKind::Unknown, "the node has no memory".into());
    }
    match smbios {
        Smbios::None(why) => (NodeKind::Unknown, why.clone()),
        Smbios::One {
            kind,
            technology,
            bytes,
        } => {
            if !n.cpus.is_empty() {
                (
                    *kind,
                    format!("SMBIOS type 17: every populated device is {technology}"),
                )
            } else if *bytes >= total {
                (
                    *kind,
                    format!(
                        "SMBIOS type 17: every populated device is {technology} and they hold all {} the nodes have",
                        format_bytes(total)
                    ),
                )
            } else {
                (
                    NodeKind::Unknown,
                    format!(
                        "cpu-less; SMBIOS's {technology} devices hold {} of the nodes' {}: this node may be memory the table does not list",
                        format_bytes(*bytes),
                        format_bytes(total)
                    ),
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::DramDevice;
    use crate::os::parse::tiers::TierFacts;

    fn node(id: u32, cpus: &[u32], gib: u64) -> NodeFacts {
        NodeFacts {
            id,
            cpus: cpus.to_vec(),
            memory_bytes: Some(gib << 30),
            ..NodeFacts::default()
        }
    }

    fn dram(devices: &[(&str, u64)]) -> Dram {
        Dram {
            devices: devices
                .iter()
                .map(|(t, gib)| DramDevice {
                    memory_type: t.to_string(),
                    size_bytes: Some(gib << 30),
                    ..DramDevice::default()
                })
                .collect(),
            ..Dram::default()
        }
    }

    fn facts(nodes: Vec<NodeFacts>) -> TierFacts {
        TierFacts {
            nodes,
            ..TierFacts::default()
        }
    }

    #[test]
    fn kinds_follow_the_sources_never_the_speed() {
        let mut cxl = node(2, &[], 128);
        cxl.cxl_regions = vec!["region0".into()];
        cxl.dax_devices = vec!["dax0.0 (kmem)".into()];
        let mut gpu = node(3, &[], 96);
        gpu.device = Some("nvidia 0009:01:00.0, online".into());
        let f = facts(vec![node(0, &[0, 1], 64), node(1, &[], 64), cxl, gpu]);
        // The DDR5 DIMMs hold only node 0's and node 1's memory.
        let t = build(&[], f, Some(&dram(&[("DDR5", 64), ("DDR5", 64)])));
        let k: Vec<NodeKind> = t.nodes.iter().map(|n| n.kind).collect();
        use NodeKind::*;
        assert_eq!(k, vec![Dram, Unknown, Cxl, Device]);
        assert!(t.nodes[1]
            .kind_source
            .contains("may be memory the table does not list"));
        assert!(t.nodes[2].kind_source.contains("region0"));
        // With every byte in the table, the cpu-less node is DDR5 too.
        let f = facts(vec![node(0, &[0], 60), node(1, &[], 60)]);
        let t = build(&[], f, Some(&dram(&[("DDR5", 64), ("DDR5", 64)])));
        assert_eq!(t.nodes[1].kind, Dram);
    }

    #[test]
    fn mixed_or_vague_tables_name_nothing() {
        let f = || facts(vec![node(0, &[0], 32), node(4, &[], 16)]);
        let t = build(&[], f(), Some(&dram(&[("DDR5", 32), ("HBM2", 16)])));
        assert!(t.nodes.iter().all(|n| n.kind == NodeKind::Unknown));
        assert!(t.nodes[0].kind_source.contains("DDR5 and HBM2"));
        let t = build(&[], f(), Some(&dram(&[("Ram", 48)])));
        assert!(t.nodes[0].kind_source.contains("no memory technology"));
        let t = build(&[], f(), None);
        assert_eq!(t.nodes[1].kind, NodeKind::Unknown);
        // HBM-only (Xeon Max "HBM only" mode): every node is HBM.
        let t = build(&[], f(), Some(&dram(&[("HBM2", 64)])));
        assert!(t.nodes.iter().all(|n| n.kind == NodeKind::Hbm));
    }

    #[test]
    fn constructed_layouts_come_out_named() {
        use crate::os::parse::tiers::tests::{cxl_expander, grace_hopper, xeon_max_flat_snc4};
        let gh = build(
            &[],
            crate::os::parse::tiers::read(&grace_hopper()),
            Some(&dram(&[("LPDDR5", 480)])),
        );
        assert_eq!(gh.nodes[0].kind, NodeKind::Dram);
        assert_eq!(gh.nodes[1].kind, NodeKind::Device);
        assert_eq!(gh.nodes[5].kind_source, "the node has no memory");
        assert!(gh.several());
        let cxl = build(&[], crate::os::parse::tiers::read(&cxl_expander()), None);
        assert_eq!(cxl.nodes[2].kind, NodeKind::Cxl);
        assert!(cxl.several(), "two kernel tiers");
        let xm = build(
            &[],
            crate::os::parse::tiers::read(&xeon_max_flat_snc4()),
            Some(&dram(&[("DDR5", 128), ("HBM2", 64)])),
        );
        assert!(xm.nodes.iter().all(|n| n.kind == NodeKind::Unknown));
        assert_eq!(
            xm.nodes[4].claim_for(0).unwrap().read_bandwidth_mbps,
            Some(200_000)
        );
        assert!(xm.nodes[4].claim_for(1).is_none());
        assert!(
            xm.several(),
            "one kernel tier, no kind stated, but cpu-less memory"
        );
    }
}
