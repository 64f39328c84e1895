//! NUMA on Windows: where pages are is in `QueryWorkingSetEx` (the node of
//! each resident page), and a node's free memory in
//! `GetNumaAvailableMemoryNodeEx`. Windows places memory at allocation
//! (`VirtualAllocExNuma`) or by first touch from the ideal node; it has no
//! call that binds an existing range or a thread's later faults, so those
//! say so and the suites record the cells they cannot place as skipped.

use crate::os::numa::PageCensus;

fn unsupported(what: &str) -> String {
    format!(
        "{what} is not possible on Windows (memory is placed when it is allocated or first touched); cells that need it are skipped"
    )
}

/// Memory on a machine with one node is on that node: nothing to do.
fn only_node(node: u32) -> bool {
    let nodes = &super::lpi().nodes;
    nodes.len() <= 1 && node == nodes.first().map_or(0, |n| n.0)
}

/// # Safety
/// None needed here; `unsafe` for the shared signature.
pub unsafe fn bind_range(_addr: *mut u8, _len: usize, node: u32) -> Result<(), String> {
    if only_node(node) {
        return Ok(());
    }
    Err(unsupported(&format!("binding memory to node {node}")))
}

/// # Safety
/// None needed here; `unsafe` for the shared signature.
pub unsafe fn weighted_interleave_range(
    _addr: *mut u8,
    _len: usize,
    _nodes: &[u32],
) -> Result<(), String> {
    Err(unsupported("weighted interleave"))
}

pub fn set_thread_policy(node: Option<u32>) -> Result<(), String> {
    match node {
        None => Ok(()),
        Some(n) if only_node(n) => Ok(()),
        Some(n) => Err(unsupported(&format!(
            "steering a thread's memory to node {n}"
        ))),
    }
}

pub fn prefer_thread(node: u32) -> Result<(), String> {
    if only_node(node) {
        return Ok(());
    }
    Err(unsupported(&format!(
        "preferring node {node} for a thread's memory"
    )))
}

fn tally(bits: &[usize]) -> PageCensus {
    let mut per_node = std::collections::BTreeMap::<u32, u64>::new();
    let mut unknown = 0;
    for b in bits {
        if b & 1 == 1 {
            *per_node.entry((*b >> 16 & 0x3f) as u32).or_default() += 1;
        } else {
            unknown += 1;
        }
    }
    PageCensus {
        pages: bits.len() as u64,
        per_node: per_node.into_iter().collect(),
        unknown,
    }
}

/// Count the 4 KiB pages of `addr..addr+len` per node; pages not resident
/// are unknown.
pub fn census(addr: *const u8, len: usize) -> Result<PageCensus, String> {
    let base = addr as usize / 4096 * 4096;
    let len = addr as usize + len - base;
    super::mem::working_set(base, len)
        .map(|b| tally(&b))
        .ok_or_else(|| format!("QueryWorkingSetEx failed: {}", super::last_error()))
}

pub fn census_of(addrs: &[usize]) -> Result<PageCensus, String> {
    let mut bits = Vec::with_capacity(addrs.len());
    for &a in addrs {
        let b = super::mem::working_set(a / 4096 * 4096, 4096)
            .ok_or_else(|| format!("QueryWorkingSetEx failed: {}", super::last_error()))?;
        bits.extend(b);
    }
    Ok(tally(&bits))
}

pub fn node_free_bytes(node: u32) -> Option<u64> {
    super::cpu::node_available(node)
}

/// Windows moves no pages between nodes by itself.
pub fn pages_migrated() -> Option<u64> {
    None
}
