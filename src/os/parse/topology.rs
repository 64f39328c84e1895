//! The cpu topology Linux states in sysfs, parsed from whatever reads the
//! files (the live `/sys`, or a recorded tree in the tests): per cpu
//! `topology/` (package, die, cluster, core siblings), `cache/index*/`
//! (the cpus sharing each level), the NUMA nodes' cpu lists and
//! distances, and its kind of core where kinds differ (the AArch64 MIDR,
//! else `cpu_capacity`, else Intel's `cpu_core`/`cpu_atom` PMU lists).
//!
//! Paths are relative to `/sys/devices/` (`system/cpu/online`); the
//! kernel's own description of each file is
//! `Documentation/ABI/stable/sysfs-devices-system-cpu` and
//! `Documentation/admin-guide/cputopology.rst`.

use crate::model::{Cache, Cpu, CpuPlace, Node, Topology};
use crate::util::cpulist::parse_cpu_list;

/// The most cpus or nodes probed for where no `online` list says.
const PROBE_LIMIT: u32 = 8192;

/// Parse the tree `read` answers (a path relative to `/sys/devices/` →
/// the file's text). Cpus are those `system/cpu/online` lists (or, with
/// no list, `cpu0`, `cpu1`, … while their `topology/` exists).
pub fn from_sysfs(read: &dyn Fn(&str) -> Option<String>) -> Topology {
    let text = |p: &str| read(p).map(|s| s.trim().to_string());
    let num = |p: &str| text(p).and_then(|s| s.parse::<i64>().ok());
    let list = |p: &str| text(p).and_then(|s| parse_cpu_list(&s));
    let online = list("system/cpu/online").unwrap_or_else(|| {
        (0..PROBE_LIMIT)
            .take_while(|c| {
                text(&format!("system/cpu/cpu{c}/topology/physical_package_id")).is_some()
            })
            .collect()
    });
    let (node_ids, node_cpus, distances) = nodes(&text, &list);
    let mut cpus: Vec<CpuPlace> = online
        .iter()
        .map(|&c| {
            let t = format!("system/cpu/cpu{c}/topology");
            // -1 where the firmware states none (ARM without a package);
            // x86 writes an unknown cluster as 65535 (`BAD_APICID`,
            // arch/x86/include/asm/apicdef.h): no id either.
            let id = |f: &str| {
                num(&format!("{t}/{f}"))
                    .and_then(|v| u32::try_from(v).ok())
                    .filter(|&v| v < 0xffff)
            };
            let core_cpus = list(&format!("{t}/core_cpus_list"))
                .or_else(|| list(&format!("{t}/thread_siblings_list")))
                .unwrap_or_else(|| vec![c]);
            let (l2, l3) = shared_caches(&text, &list, c);
            CpuPlace {
                cpu: c,
                package: id("physical_package_id").unwrap_or(0),
                die: id("die_id"),
                cluster: id("cluster_id"),
                core_cpus,
                l2,
                l3,
                node: node_ids
                    .iter()
                    .zip(&node_cpus)
                    .find(|(_, cs)| cs.contains(&c))
                    .map(|(&n, _)| n),
                kind: None,
            }
        })
        .collect();
    let kinds = kinds(&text, &list, &online);
    for (p, k) in cpus.iter_mut().zip(kinds) {
        p.kind = k;
    }
    Topology {
        cpus,
        nodes: node_ids,
        distances,
    }
    .sorted()
}

type Text<'a> = dyn Fn(&str) -> Option<String> + 'a;
type List<'a> = dyn Fn(&str) -> Option<Vec<u32>> + 'a;

/// The node ids, each node's cpus and distances.
fn nodes(text: &Text, list: &List) -> (Vec<u32>, Vec<Vec<u32>>, Vec<Vec<u32>>) {
    let ids = list("system/node/online")
        .or_else(|| list("system/node/possible"))
        .unwrap_or_else(|| {
            (0..PROBE_LIMIT.min(1024))
                .take_while(|n| text(&format!("system/node/node{n}/cpulist")).is_some())
                .collect()
        });
    let cpus = ids
        .iter()
        .map(|n| list(&format!("system/node/node{n}/cpulist")).unwrap_or_default())
        .collect();
    let distances = ids
        .iter()
        .map(|n| {
            text(&format!("system/node/node{n}/distance"))
                .map(|s| {
                    s.split_whitespace()
                        .filter_map(|v| v.parse().ok())
                        .collect()
                })
                .unwrap_or_default()
        })
        .collect();
    (ids, cpus, distances)
}

/// The cpus sharing `cpu`'s L2 and its last level above L2 (data or
/// unified caches only).
fn shared_caches(text: &Text, list: &List, cpu: u32) -> (Vec<u32>, Vec<u32>) {
    let mut l2 = Vec::new();
    let mut llc: Option<(u32, Vec<u32>)> = None;
    for i in 0..16 {
        let d = format!("system/cpu/cpu{cpu}/cache/index{i}");
        // Every index is looked at: a slice may leave the L1s out.
        let Some(level) = text(&format!("{d}/level")).and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let kind = text(&format!("{d}/type")).unwrap_or_default();
        if kind.eq_ignore_ascii_case("instruction") {
            continue;
        }
        let shared = list(&format!("{d}/shared_cpu_list")).unwrap_or_default();
        if level == 2 {
            l2 = shared;
        } else if level > 2 && llc.as_ref().is_none_or(|(l, _)| level > *l) {
            llc = Some((level, shared));
        }
    }
    (l2, llc.map(|(_, s)| s).unwrap_or_default())
}

/// Each cpu's kind, where the system tells kinds apart: the MIDR's
/// implementer and part (AArch64), else the capacity where a few values
/// split the cpus (a big.LITTLE board without MIDRs in sysfs), else
/// Intel's hybrid PMU lists. None for every cpu where all are alike.
fn kinds(text: &Text, list: &List, cpus: &[u32]) -> Vec<Option<String>> {
    let distinct = |v: &[Option<String>]| {
        let mut d: Vec<&String> = v.iter().flatten().collect();
        d.sort();
        d.dedup();
        d.len()
    };
    let midr: Vec<Option<String>> = cpus
        .iter()
        .map(|c| {
            let s = text(&format!("system/cpu/cpu{c}/regs/identification/midr_el1"))?;
            let v = u64::from_str_radix(s.trim_start_matches("0x"), 16).ok()?;
            // As `host.arm.core_kinds[].id` spells a kind without a row.
            Some(format!(
                "{:#04x}-{:#05x}",
                (v >> 24) & 0xff,
                (v >> 4) & 0xfff
            ))
        })
        .collect();
    if distinct(&midr) > 1 && midr.iter().all(Option::is_some) {
        return midr;
    }
    if distinct(&midr) == 1 {
        return vec![None; cpus.len()];
    }
    let capacity: Vec<Option<String>> = cpus
        .iter()
        .map(|c| text(&format!("system/cpu/cpu{c}/cpu_capacity")).map(|v| format!("capacity-{v}")))
        .collect();
    // Capacities also tell the same kind of core apart by a few percent
    // of clock (GB10's X925s read 997-1024); only a few values are kinds.
    let n = distinct(&capacity);
    if (2..=3).contains(&n) && capacity.iter().all(Option::is_some) {
        return capacity;
    }
    let hybrid = |pmu: &str| list(&format!("{pmu}/cpus")).unwrap_or_default();
    let (big, small) = (hybrid("cpu_core"), hybrid("cpu_atom"));
    if !big.is_empty() && !small.is_empty() {
        return cpus
            .iter()
            .map(|c| {
                if big.contains(c) {
                    Some("core".to_string())
                } else if small.contains(c) {
                    Some("atom".to_string())
                } else {
                    None
                }
            })
            .collect();
    }
    vec![None; cpus.len()]
}

/// The topology of a system without sysfs, from what its own calls state
/// (Windows' `GetLogicalProcessorInformationEx`, macOS's `sysctl`): its
/// cpus with their cores and packages, each cpu's caches, its nodes and
/// the kinds of core it names. No die or cluster: neither system states
/// them through these calls.
pub fn compose(
    cpus: &[Cpu],
    caches: &dyn Fn(u32) -> Vec<Cache>,
    nodes: &[Node],
    kinds: Option<Vec<(String, Vec<u32>)>>,
) -> Topology {
    let kinds = kinds.filter(|k| k.len() > 1).unwrap_or_default();
    let places = cpus
        .iter()
        .map(|c| {
            let own = caches(c.id);
            let shared = |level: u8| {
                own.iter()
                    .filter(|k| k.level == level && k.kind != "instruction")
                    .map(|k| k.shared_cpus.clone())
                    .next()
                    .unwrap_or_default()
            };
            let top = own.iter().map(|k| k.level).filter(|&l| l > 2).max();
            CpuPlace {
                cpu: c.id,
                package: c.package,
                die: None,
                cluster: None,
                core_cpus: c.siblings.clone(),
                l2: shared(2),
                l3: top.map(shared).unwrap_or_default(),
                node: (!nodes.is_empty()).then_some(c.node),
                kind: kinds
                    .iter()
                    .find(|(_, cs)| cs.contains(&c.id))
                    .map(|(k, _)| k.clone()),
            }
        })
        .collect();
    let complete = nodes.iter().all(|n| n.distances.len() == nodes.len());
    Topology {
        cpus: places,
        nodes: nodes.iter().map(|n| n.id).collect(),
        distances: if complete {
            nodes.iter().map(|n| n.distances.clone()).collect()
        } else {
            Vec::new()
        },
    }
    .sorted()
}

/// A recorded tree in the text form the fixtures keep: one `path:value`
/// line per file (`grep -r . ` run in `/sys/devices`), read into a
/// lookup.
pub fn recorded(text: &str) -> std::collections::HashMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(p, v)| (p.trim_start_matches("./").to_string(), v.to_string()))
        .collect()
}

#[cfg(test)]
#[path = "topology_tests.rs"]
pub(crate) mod tests;
