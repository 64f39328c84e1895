//! Processor groups and affinity (`SetThreadGroupAffinity`, so machines
//! with more than 64 logical cpus pin correctly), and the topology from
//! `GetLogicalProcessorInformationEx(RelationAll)`.

use std::path::Path;

use windows_sys::Win32::System::Kernel::PROCESSOR_NUMBER;
use windows_sys::Win32::System::SystemInformation::GROUP_AFFINITY;
use windows_sys::Win32::System::Threading::{
    GetCurrentProcess, GetCurrentProcessorNumberEx, GetCurrentThread, GetNumaAvailableMemoryNodeEx,
    GetProcessAffinityMask, GetThreadGroupAffinity, SetThreadGroupAffinity,
};

use super::lpi;
use crate::model::{Cache, Cpu, Node};

fn affinity_of(group: u16, mask: usize) -> GROUP_AFFINITY {
    GROUP_AFFINITY {
        Mask: mask,
        Group: group,
        Reserved: [0; 3],
    }
}

fn set_group_affinity(a: &GROUP_AFFINITY) -> std::io::Result<()> {
    // SAFETY: the calling thread's pseudo-handle and a valid affinity.
    if unsafe { SetThreadGroupAffinity(GetCurrentThread(), a, std::ptr::null_mut()) } == 0 {
        return Err(super::last_error());
    }
    Ok(())
}

/// Pinning is exact here: a pinned thread runs on its cpus only.
pub const PLACEMENT_ADVISORY: Option<&str> = None;

/// The system hides no per-cpu identity: kinds come from the MIDRs.
pub fn stated_core_kinds() -> Option<Vec<(String, Vec<u32>)>> {
    None
}

/// Pin the calling thread to `cpu`.
pub fn pin_current(cpu: u32) -> Result<(), String> {
    let (g, bit) = lpi().group_of(cpu).ok_or_else(|| {
        format!(
            "cannot pin to cpu {cpu}: this machine has {} cpus",
            lpi().cpu_count()
        )
    })?;
    set_group_affinity(&affinity_of(g, 1usize << bit))
        .map_err(|e| format!("cannot pin to cpu {}: {}", cpu, e))
}

/// Pin the calling thread to the set `cpus`, which must lie in one
/// processor group (a thread runs in one group at a time).
pub fn pin_current_to(cpus: &[u32]) -> Result<(), String> {
    let mut group = None;
    let mut mask = 0usize;
    for &c in cpus {
        let (g, bit) = lpi()
            .group_of(c)
            .ok_or_else(|| format!("cpu {c} does not exist here"))?;
        if *group.get_or_insert(g) != g {
            return Err(format!(
                "cpus {} lie in more than one processor group; a thread runs in one group: give cpus of one group",
                crate::util::cpulist::format_cpu_list(cpus)
            ));
        }
        mask |= 1usize << bit;
    }
    set_group_affinity(&affinity_of(group.unwrap_or(0), mask)).map_err(|e| e.to_string())
}

/// The calling thread's group affinity, to be put back later.
pub struct Affinity(GROUP_AFFINITY);

impl Affinity {
    pub fn current() -> Option<Affinity> {
        let mut a = affinity_of(0, 0);
        // SAFETY: the calling thread's pseudo-handle and an out-pointer.
        (unsafe { GetThreadGroupAffinity(GetCurrentThread(), &mut a) } != 0).then_some(Affinity(a))
    }

    pub fn restore(&self) {
        let _ = set_group_affinity(&self.0);
    }
}

/// The cpu the calling thread runs on now.
pub fn current_cpu() -> Option<u32> {
    let mut pn = PROCESSOR_NUMBER {
        Group: 0,
        Number: 0,
        Reserved: 0,
    };
    // SAFETY: an out-pointer to a local.
    unsafe { GetCurrentProcessorNumberEx(&mut pn) };
    lpi().cpu_of(pn.Group, pn.Number as u32)
}

/// The cpus this process may run on: its affinity mask on a one-group
/// machine, every cpu of every group otherwise (a process spans groups
/// from Windows 11 on).
pub fn allowed_cpus() -> Vec<u32> {
    if lpi().group_sizes.len() == 1 {
        let (mut p, mut s) = (0usize, 0usize);
        // SAFETY: out-pointers to locals.
        if unsafe { GetProcessAffinityMask(GetCurrentProcess(), &mut p, &mut s) } != 0 && p != 0 {
            return (0..usize::BITS)
                .filter(|b| p >> b & 1 == 1)
                .filter_map(|b| lpi().cpu_of(0, b))
                .collect();
        }
    }
    online_cpus()
}

pub fn online_cpus() -> Vec<u32> {
    (0..lpi().cpu_count().max(1)).collect()
}

/// Free bytes of node `id` (the system states no per-node total).
pub(crate) fn node_available(id: u32) -> Option<u64> {
    let mut b = 0u64;
    // SAFETY: an out-pointer to a local.
    (unsafe { GetNumaAvailableMemoryNodeEx(u16::try_from(id).ok()?, &mut b) } != 0).then_some(b)
}

pub fn nodes() -> Vec<Node> {
    let l = lpi();
    if l.nodes.is_empty() {
        return vec![Node {
            id: 0,
            cpus: online_cpus(),
            memory_bytes: super::system::memory_total(),
            distances: vec![10],
        }];
    }
    let one = l.nodes.len() == 1;
    l.nodes
        .iter()
        .map(|(id, cpus)| Node {
            id: *id,
            cpus: cpus.clone(),
            // One node holds all memory; with several the system states
            // no per-node total.
            memory_bytes: if one {
                super::system::memory_total()
            } else {
                None
            },
            // Windows gives no SLIT distances through this API.
            distances: if one { vec![10] } else { Vec::new() },
        })
        .collect()
}

pub fn cpus(nodes: &[Node]) -> Vec<Cpu> {
    let l = lpi();
    online_cpus()
        .into_iter()
        .map(|id| {
            let core = l.cores.iter().position(|c| c.contains(&id));
            Cpu {
                id,
                core: core.map_or(id, |c| c as u32),
                package: l
                    .packages
                    .iter()
                    .position(|p| p.contains(&id))
                    .map_or(0, |p| p as u32),
                node: nodes
                    .iter()
                    .find(|n| n.cpus.contains(&id))
                    .map_or(0, |n| n.id),
                siblings: core.map_or_else(|| vec![id], |c| l.cores[c].clone()),
            }
        })
        .collect()
}

/// Every cpu's place from what the system states of its cores, caches,
/// nodes and kinds (no sysfs here: no die or cluster).
pub fn topology() -> crate::model::Topology {
    let nodes = nodes();
    crate::os::parse::topology::compose(&cpus(&nodes), &caches, &nodes, stated_core_kinds())
}

/// Caches as the system lists them for `cpu`.
pub fn caches(cpu: u32) -> Vec<Cache> {
    let mut out: Vec<Cache> = lpi()
        .caches
        .iter()
        .filter(|c| c.cpus.contains(&cpu) && c.kind != "trace")
        .map(|c| {
            Cache::new(
                c.level,
                c.kind,
                c.size_bytes,
                c.line_bytes,
                c.cpus.clone(),
                "GetLogicalProcessorInformationEx".into(),
            )
        })
        .collect();
    out.sort_by_key(|c| (c.level, c.kind != "data"));
    out
}

/// No auxiliary vector: x86-64 features come from CPUID.
pub fn hwcaps() -> (u64, u64) {
    (0, 0)
}

pub fn sve_vl_bytes() -> Option<u32> {
    None
}

/// No text description of the cpus.
pub const CPUINFO: &str = "(none)";

pub fn cpuinfo() -> Option<String> {
    None
}

/// No folder of per-cpu files.
pub fn cpu_dir() -> &'static Path {
    Path::new("")
}

#[cfg(test)]
mod tests {
    use std::mem::offset_of;
    use windows_sys::Win32::System::SystemInformation::{
        CACHE_RELATIONSHIP, GROUP_RELATIONSHIP, NUMA_NODE_RELATIONSHIP, PROCESSOR_GROUP_INFO,
        PROCESSOR_RELATIONSHIP, SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX,
    };

    use crate::os::parse::winlpi::offset as o;

    /// The byte offsets the pure parser reads are the SDK's.
    #[test]
    fn the_parser_reads_the_sdk_layout() {
        let u = offset_of!(SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX, Anonymous);
        assert_eq!(u, 8);
        assert_eq!(
            u + offset_of!(PROCESSOR_RELATIONSHIP, GroupCount),
            o::PROCESSOR_GROUP_COUNT
        );
        assert_eq!(
            u + offset_of!(PROCESSOR_RELATIONSHIP, GroupMask),
            o::PROCESSOR_GROUP_MASK
        );
        assert_eq!(
            u + offset_of!(NUMA_NODE_RELATIONSHIP, NodeNumber),
            o::NODE_NUMBER
        );
        assert_eq!(
            u + offset_of!(NUMA_NODE_RELATIONSHIP, GroupCount),
            o::NODE_GROUP_COUNT
        );
        assert_eq!(
            u + offset_of!(NUMA_NODE_RELATIONSHIP, Anonymous),
            o::NODE_GROUP_MASK
        );
        assert_eq!(u + offset_of!(CACHE_RELATIONSHIP, Level), o::CACHE_LEVEL);
        assert_eq!(u + offset_of!(CACHE_RELATIONSHIP, LineSize), o::CACHE_LINE);
        assert_eq!(u + offset_of!(CACHE_RELATIONSHIP, CacheSize), o::CACHE_SIZE);
        assert_eq!(u + offset_of!(CACHE_RELATIONSHIP, Type), o::CACHE_TYPE);
        assert_eq!(
            u + offset_of!(CACHE_RELATIONSHIP, GroupCount),
            o::CACHE_GROUP_COUNT
        );
        assert_eq!(
            u + offset_of!(CACHE_RELATIONSHIP, Anonymous),
            o::CACHE_GROUP_MASK
        );
        assert_eq!(
            u + offset_of!(GROUP_RELATIONSHIP, ActiveGroupCount),
            o::GROUP_ACTIVE_COUNT
        );
        assert_eq!(u + offset_of!(GROUP_RELATIONSHIP, GroupInfo), o::GROUP_INFO);
        assert_eq!(
            std::mem::size_of::<PROCESSOR_GROUP_INFO>(),
            o::GROUP_INFO_SIZE
        );
        assert_eq!(
            offset_of!(PROCESSOR_GROUP_INFO, ActiveProcessorCount),
            o::GROUP_INFO_ACTIVE
        );
        assert_eq!(
            offset_of!(PROCESSOR_GROUP_INFO, ActiveProcessorMask),
            o::GROUP_INFO_MASK
        );
    }

    #[test]
    fn this_machine_has_cpus_caches_and_a_node() {
        let l = super::lpi();
        assert!(l.cpu_count() >= 1, "{l:?}");
        assert!(!l.cores.is_empty(), "{l:?}");
        let c = super::current_cpu().unwrap();
        assert!(c < l.cpu_count());
        super::pin_current(0).unwrap();
        assert!(
            super::caches(0).iter().any(|c| c.level == 1),
            "{:?}",
            super::caches(0)
        );
        assert!(!super::nodes().is_empty());
    }
}
