//! Cores, SMT siblings, NUMA nodes and caches from sysfs.

use std::fs;

use crate::model::{Cache, Cpu, Node};
use crate::util::cpulist::parse_cpu_list;
use std::path::Path;

fn read(p: impl AsRef<Path>) -> Option<String> {
    fs::read_to_string(p).ok().map(|s| s.trim().to_string())
}

/// The cpus this process may run on (`sched_getaffinity`).
pub fn allowed_cpus() -> Vec<u32> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity fills it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return online_cpus();
        }
        (0..libc::CPU_SETSIZE as u32)
            .filter(|&c| libc::CPU_ISSET(c as usize, &set))
            .collect()
    }
}

pub fn online_cpus() -> Vec<u32> {
    read("/sys/devices/system/cpu/online")
        .and_then(|s| parse_cpu_list(&s))
        .unwrap_or_else(|| vec![0])
}

pub fn nodes() -> Vec<Node> {
    let mut nodes = Vec::new();
    let base = Path::new("/sys/devices/system/node");
    let ids = read(base.join("online"))
        .and_then(|s| parse_cpu_list(&s))
        .unwrap_or_default();
    for id in ids {
        let d = base.join(format!("node{}", id));
        let cpus = read(d.join("cpulist"))
            .and_then(|s| parse_cpu_list(&s))
            .unwrap_or_default();
        let memory_bytes = read(d.join("meminfo")).and_then(|m| {
            m.lines()
                .find(|l| l.contains("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(3))
                .and_then(|v| v.parse::<u64>().ok())
                .map(|kb| kb * 1024)
        });
        let distances = read(d.join("distance"))
            .map(|s| {
                s.split_whitespace()
                    .filter_map(|v| v.parse().ok())
                    .collect()
            })
            .unwrap_or_default();
        nodes.push(Node {
            id,
            cpus,
            memory_bytes,
            distances,
        });
    }
    if nodes.is_empty() {
        // No NUMA support in the kernel: one node holding every cpu.
        nodes.push(Node {
            id: 0,
            cpus: online_cpus(),
            memory_bytes: None,
            distances: vec![10],
        });
    }
    nodes
}

pub fn cpus(nodes: &[Node]) -> Vec<Cpu> {
    online_cpus()
        .into_iter()
        .map(|id| {
            let t = format!("/sys/devices/system/cpu/cpu{}/topology", id);
            let core = read(format!("{}/core_id", t))
                .and_then(|s| s.parse().ok())
                .unwrap_or(id);
            let package = read(format!("{}/physical_package_id", t))
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            let siblings = read(format!("{}/thread_siblings_list", t))
                .and_then(|s| parse_cpu_list(&s))
                .unwrap_or_else(|| vec![id]);
            let node = nodes
                .iter()
                .find(|n| n.cpus.contains(&id))
                .map_or(0, |n| n.id);
            Cpu {
                id,
                core,
                package,
                node,
                siblings,
            }
        })
        .collect()
}

/// Caches as sysfs lists them for `cpu`.
pub fn sysfs_caches(cpu: u32) -> Vec<Cache> {
    let mut out = Vec::new();
    let base = format!("/sys/devices/system/cpu/cpu{}/cache", cpu);
    for i in 0..16 {
        let d = format!("{}/index{}", base, i);
        let Some(level) = read(format!("{}/level", d)).and_then(|s| s.parse().ok()) else {
            break;
        };
        let kind = read(format!("{}/type", d))
            .unwrap_or_default()
            .to_lowercase();
        let size_bytes = read(format!("{}/size", d))
            .and_then(|s| {
                crate::util::units::parse_size(&s.replace('K', "KiB").replace('M', "MiB")).ok()
            })
            .unwrap_or(0);
        let line_bytes = read(format!("{}/coherency_line_size", d))
            .and_then(|s| s.parse().ok())
            .unwrap_or(64);
        let shared_cpus = read(format!("{}/shared_cpu_list", d))
            .and_then(|s| parse_cpu_list(&s))
            .unwrap_or_default();
        out.push(Cache::new(
            level,
            &kind,
            size_bytes,
            line_bytes,
            shared_cpus,
            "sysfs".into(),
        ));
    }
    out
}

/// Merge CPUID's caches with sysfs's: sizes from CPUID (leaf 4/0x8000001D),
/// sharing from sysfs, and a note where they disagree.
pub fn merge_caches(cpuid: &[super::cpu::CpuidCache], sysfs: &[Cache]) -> Vec<Cache> {
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
                Some(s) if s.size_bytes == c.size_bytes => "cpuid+sysfs".to_string(),
                Some(s) => format!(
                    "cpuid (sysfs says {})",
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
