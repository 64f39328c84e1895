//! NUMA on macOS: there is none. A Mac has one memory pool (unified
//! memory on Apple silicon, one socket on Intel Macs) and no call that
//! places memory: node 0 is every page, binding to it is a no-op, and any
//! other node is refused with the reason (cells that need it are skipped).

use crate::os::numa::PageCensus;

fn no_node(what: &str) -> String {
    format!("{what} is not possible on macOS: a Mac has one memory node (node 0)")
}

/// # Safety
/// None needed here; `unsafe` for the shared signature.
pub unsafe fn bind_range(_addr: *mut u8, _len: usize, node: u32) -> Result<(), String> {
    if node == 0 {
        return Ok(());
    }
    Err(no_node(&format!("binding memory to node {node}")))
}

/// # Safety
/// None needed here; `unsafe` for the shared signature.
pub unsafe fn weighted_interleave_range(
    _addr: *mut u8,
    _len: usize,
    _nodes: &[u32],
) -> Result<(), String> {
    Err(no_node("weighted interleave"))
}

pub fn set_thread_policy(node: Option<u32>) -> Result<(), String> {
    match node {
        None | Some(0) => Ok(()),
        Some(n) => Err(no_node(&format!("steering a thread's memory to node {n}"))),
    }
}

pub fn prefer_thread(node: u32) -> Result<(), String> {
    set_thread_policy(Some(node))
}

/// Which of the pages of `addr..addr+len` are resident (`mincore`), in
/// the system's pages.
fn resident(addr: usize, len: usize) -> Result<Vec<bool>, String> {
    let page = super::page_size();
    let base = addr / page * page;
    let pages = (addr + len - base).div_ceil(page);
    let mut v = vec![0 as libc::c_char; pages];
    // SAFETY: `v` holds one byte per page of the page-aligned range.
    if unsafe { libc::mincore(base as *const libc::c_void, pages * page, v.as_mut_ptr()) } != 0 {
        return Err(format!(
            "mincore failed: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(v.iter().map(|b| b & 1 == 1).collect())
}

/// Every page on node 0, each flag counting `per` pages; pages not
/// resident are unknown.
fn tally(res: &[bool], per: u64) -> PageCensus {
    let on = res.iter().filter(|r| **r).count() as u64 * per;
    let pages = res.len() as u64 * per;
    PageCensus {
        pages,
        per_node: if on > 0 { vec![(0, on)] } else { Vec::new() },
        unknown: pages - on,
    }
}

pub fn census(addr: *const u8, len: usize) -> Result<PageCensus, String> {
    // In 4 KiB pages, as `PageCensus` counts them.
    let per = (super::page_size() / 4096).max(1) as u64;
    resident(addr as usize, len.max(1)).map(|r| tally(&r, per))
}

pub fn census_of(addrs: &[usize]) -> Result<PageCensus, String> {
    let mut all = Vec::with_capacity(addrs.len());
    for &a in addrs {
        all.extend(resident(a, 1)?);
    }
    // One page per address asked about.
    Ok(tally(&all, 1))
}

/// The one node's free memory.
pub fn node_free_bytes(node: u32) -> Option<u64> {
    (node == 0).then(super::system::memory_available).flatten()
}

/// macOS moves no pages between nodes: there is one.
pub fn pages_migrated() -> Option<u64> {
    None
}
