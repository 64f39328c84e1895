//! NUMA placement by raw syscalls: bind memory to a node with `mbind`,
//! steer a thread's own faults with `set_mempolicy`, and check where pages
//! really are with `move_pages(…, nodes = NULL, …)`. No libnuma needed.

use std::time::Duration;

use crate::os::numa::PageCensus;

const MPOL_PREFERRED: libc::c_int = 1;
const MPOL_DEFAULT: libc::c_int = 0;
const MPOL_BIND: libc::c_int = 2;
const MPOL_MF_STRICT: libc::c_uint = 1;
const MPOL_MF_MOVE: libc::c_uint = 1 << 1;

/// Node masks cover this many nodes (the kernel's MAX_NUMNODES is at most
/// 1024 on x86-64).
const MASK_WORDS: usize = 16;
const MASK_BITS: usize = MASK_WORDS * 64;

fn mask(node: u32) -> Result<[libc::c_ulong; MASK_WORDS], String> {
    if node as usize >= MASK_BITS {
        return Err(format!(
            "node {} is beyond the {} nodes this tool can address",
            node, MASK_BITS
        ));
    }
    let mut m = [0 as libc::c_ulong; MASK_WORDS];
    m[node as usize / 64] |= 1 << (node % 64);
    Ok(m)
}

fn os_err(what: &str, node: u32) -> String {
    let e = std::io::Error::last_os_error();
    let hint = match e.raw_os_error() {
        Some(libc::EPERM) => " (not permitted: a cgroup cpuset or seccomp policy forbids it)",
        Some(libc::EINVAL) => " (the node has no memory or is not allowed for this process)",
        Some(libc::ENOSYS) => " (this kernel has no NUMA support)",
        Some(libc::EIO) => " (some pages could not be moved)",
        _ => "",
    };
    format!("{} to node {} failed: {}{}", what, node, e, hint)
}

/// Bind `len` bytes at `addr` to `node` with `MPOL_BIND`, moving any page
/// already faulted elsewhere (`MPOL_MF_MOVE | MPOL_MF_STRICT`).
///
/// # Safety
/// `addr..addr+len` must be a mapping owned by the caller, page aligned.
pub unsafe fn bind_range(addr: *mut u8, len: usize, node: u32) -> Result<(), String> {
    let m = mask(node)?;
    // maxnode counts bits; the kernel drops the last one (a historic
    // off-by-one that libnuma also compensates), hence + 1.
    let rc = libc::syscall(
        libc::SYS_mbind,
        addr as *mut libc::c_void,
        len as libc::c_ulong,
        MPOL_BIND,
        m.as_ptr(),
        (MASK_BITS + 1) as libc::c_ulong,
        MPOL_MF_MOVE | MPOL_MF_STRICT,
    );
    if rc != 0 {
        return Err(os_err("mbind(MPOL_BIND)", node));
    }
    Ok(())
}

/// `MPOL_WEIGHTED_INTERLEAVE` (Linux 6.9+): the kernel spreads pages
/// over the nodes by the weights in
/// `/sys/kernel/mm/mempolicy/weighted_interleave/`.
const MPOL_WEIGHTED_INTERLEAVE: libc::c_int = 6;

/// Spread `len` bytes at `addr` over `nodes` with the kernel's weighted
/// interleave and the weights in force (moving pages already faulted).
/// An error where the kernel has no weighted interleave.
///
/// # Safety
/// `addr..addr+len` must be a mapping owned by the caller, page aligned.
pub unsafe fn weighted_interleave_range(
    addr: *mut u8,
    len: usize,
    nodes: &[u32],
) -> Result<(), String> {
    let mut m = [0 as libc::c_ulong; MASK_WORDS];
    for &n in nodes {
        mask(n)?;
        m[n as usize / 64] |= 1 << (n % 64);
    }
    let rc = libc::syscall(
        libc::SYS_mbind,
        addr as *mut libc::c_void,
        len as libc::c_ulong,
        MPOL_WEIGHTED_INTERLEAVE,
        m.as_ptr(),
        (MASK_BITS + 1) as libc::c_ulong,
        MPOL_MF_MOVE | MPOL_MF_STRICT,
    );
    if rc != 0 {
        let e = std::io::Error::last_os_error();
        return Err(match e.raw_os_error() {
            Some(libc::EINVAL) => format!(
                "mbind(MPOL_WEIGHTED_INTERLEAVE) refused ({e}): this kernel has no weighted interleave (Linux 6.9+) or a node has no memory"
            ),
            _ => format!("mbind(MPOL_WEIGHTED_INTERLEAVE) failed: {e}"),
        });
    }
    Ok(())
}

/// Set the calling thread's policy: `Some(node)` = `MPOL_BIND` to that node
/// (new faults land there), `None` = back to the default (local).
pub fn set_thread_policy(node: Option<u32>) -> Result<(), String> {
    let rc = match node {
        Some(n) => {
            let m = mask(n)?;
            // SAFETY: the mask outlives the call; maxnode matches its size.
            unsafe {
                libc::syscall(
                    libc::SYS_set_mempolicy,
                    MPOL_BIND,
                    m.as_ptr(),
                    (MASK_BITS + 1) as libc::c_ulong,
                )
            }
        }
        // SAFETY: MPOL_DEFAULT takes no mask.
        None => unsafe {
            libc::syscall(
                libc::SYS_set_mempolicy,
                MPOL_DEFAULT,
                std::ptr::null::<libc::c_ulong>(),
                0 as libc::c_ulong,
            )
        },
    };
    if rc != 0 {
        return Err(os_err("set_mempolicy(MPOL_BIND)", node.unwrap_or(0)));
    }
    Ok(())
}

/// Prefer `node` for the calling thread's new faults (`MPOL_PREFERRED`:
/// another node when it is full, unlike a binding).
pub fn prefer_thread(node: u32) -> Result<(), String> {
    let m = mask(node)?;
    // SAFETY: the mask outlives the call; maxnode matches its size.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_set_mempolicy,
            MPOL_PREFERRED,
            m.as_ptr(),
            (MASK_BITS + 1) as libc::c_ulong,
        )
    };
    if rc != 0 {
        return Err(os_err("set_mempolicy(MPOL_PREFERRED)", node));
    }
    Ok(())
}

/// The unit `move_pages` is asked about.
const QUERY_PAGE: usize = 4096;

fn query(pages: &[*mut libc::c_void], status: &mut [libc::c_int]) -> Result<(), String> {
    // SAFETY: both slices have the same length; nodes = NULL makes this a
    // pure query that moves nothing.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_move_pages,
            0 as libc::c_int,
            pages.len() as libc::c_ulong,
            pages.as_ptr(),
            std::ptr::null::<libc::c_int>(),
            status.as_mut_ptr(),
            0 as libc::c_int,
        )
    };
    if rc < 0 {
        return Err(format!(
            "move_pages query failed: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

type Tally = std::collections::BTreeMap<u32, u64>;

/// Where each of `pages` is, added to `per_node`; returns the pages not
/// present or not queryable. Pages that report `-EBUSY` (transient, e.g.
/// a THP being split or migrated: ~7 of 4096 in the research runs) are
/// asked again up to 5 times, 10 ms apart.
fn tally(mut pages: Vec<*mut libc::c_void>, per_node: &mut Tally) -> Result<u64, String> {
    let mut unknown = 0u64;
    let mut status = vec![0 as libc::c_int; pages.len()];
    query(&pages, &mut status)?;
    for attempt in 0..=5 {
        let busy: Vec<usize> = (0..pages.len())
            .filter(|&i| status[i] == -libc::EBUSY)
            .collect();
        // Tally settled pages, keep the busy ones for another round.
        for &s in &status {
            if s >= 0 {
                *per_node.entry(s as u32).or_default() += 1;
            } else if s != -libc::EBUSY || attempt == 5 {
                unknown += 1;
            }
        }
        if busy.is_empty() || attempt == 5 {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
        pages = busy.iter().map(|&i| pages[i]).collect();
        status = vec![0; pages.len()];
        query(&pages, &mut status)?;
    }
    Ok(unknown)
}

/// Count the 4 KiB pages of `addr..addr+len` per node.
///
/// The range must be mapped by this process (any address is safe to ask
/// about: the kernel reports unmapped pages as -EFAULT).
pub fn census(addr: *const u8, len: usize) -> Result<PageCensus, String> {
    let base = addr as usize / QUERY_PAGE * QUERY_PAGE;
    let end = addr as usize + len;
    let total = (end - base).div_ceil(QUERY_PAGE);
    let mut per_node = Tally::new();
    let mut unknown = 0u64;
    const BATCH: usize = 1 << 16;
    let mut first = 0;
    while first < total {
        let n = BATCH.min(total - first);
        let pages: Vec<*mut libc::c_void> = (0..n)
            .map(|i| (base + (first + i) * QUERY_PAGE) as *mut libc::c_void)
            .collect();
        unknown += tally(pages, &mut per_node)?;
        first += n;
    }
    Ok(PageCensus {
        pages: total as u64,
        per_node: per_node.into_iter().collect(),
        unknown,
    })
}

/// [`census`] of the pages holding each of `addrs` (a sample of a range).
pub fn census_of(addrs: &[usize]) -> Result<PageCensus, String> {
    let mut per_node = Tally::new();
    let pages = addrs
        .iter()
        .map(|&a| (a / QUERY_PAGE * QUERY_PAGE) as *mut libc::c_void)
        .collect();
    let unknown = tally(pages, &mut per_node)?;
    Ok(PageCensus {
        pages: addrs.len() as u64,
        per_node: per_node.into_iter().collect(),
        unknown,
    })
}

/// Free memory of `node` (`Node N MemFree` in its sysfs meminfo), bytes.
/// A buffer bound with `MPOL_BIND` cannot spill to another node, so a
/// suite checks this before binding instead of meeting the OOM killer.
pub fn node_free_bytes(node: u32) -> Option<u64> {
    let text =
        std::fs::read_to_string(format!("/sys/devices/system/node/node{}/meminfo", node)).ok()?;
    crate::os::parse::node_meminfo(&text, "MemFree:")
}

/// `/proc/vmstat` `numa_pages_migrated`: pages the kernel moved by itself
/// (NUMA balancing); a change during a cell means placement drifted.
pub fn pages_migrated() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/vmstat").ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("numa_pages_migrated "))
        .and_then(|v| v.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    #[test]
    fn masks_stop_at_the_nodes_they_can_address() {
        assert!(super::mask(1023).is_ok());
        assert!(super::mask(5000).is_err());
    }
}
