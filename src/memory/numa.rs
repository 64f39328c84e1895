//! NUMA placement by raw syscalls: bind memory to a node with `mbind`,
//! steer a thread's own faults with `set_mempolicy`, and check where pages
//! really are with `move_pages(…, nodes = NULL, …)`. No libnuma needed.
//!
//! Why `MPOL_BIND` and not first touch or `move_pages` migration: with
//! automatic NUMA balancing on (the kernel enables it by itself on
//! multi-node machines), pages placed by first touch or migrated with
//! `move_pages` drift back towards the cpu that uses them within seconds;
//! a VMA bound with `MPOL_BIND` stays put (research: QEMU 4-node guest,
//! `numaprobe drift`). This is what `numactl --membind` and MLC do.

use std::time::Duration;

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

/// Where the pages of a range are, from `move_pages(0, …, NULL, status)`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PageCensus {
    /// Pages asked about (one per 4 KiB).
    pub pages: u64,
    /// Pages per node, ascending by node.
    pub per_node: Vec<(u32, u64)>,
    /// Pages not present or not queryable after retries (-ENOENT, -EFAULT,
    /// still -EBUSY).
    pub unknown: u64,
}

impl PageCensus {
    pub fn on_node(&self, node: u32) -> u64 {
        self.per_node
            .iter()
            .find(|(n, _)| *n == node)
            .map_or(0, |p| p.1)
    }

    /// Fraction of all pages on `node`, 0..1.
    pub fn fraction_on(&self, node: u32) -> f64 {
        if self.pages == 0 {
            return 0.0;
        }
        self.on_node(node) as f64 / self.pages as f64
    }
}

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

/// Count the 4 KiB pages of `addr..addr+len` per node. Pages that report
/// `-EBUSY` (transient, e.g. a THP being split or migrated: ~7 of 4096 in
/// the research runs) are asked again up to 5 times, 10 ms apart.
///
/// The range must be mapped by this process (any address is safe to ask
/// about: the kernel reports unmapped pages as -EFAULT).
pub fn census(addr: *const u8, len: usize) -> Result<PageCensus, String> {
    let base = addr as usize / QUERY_PAGE * QUERY_PAGE;
    let end = addr as usize + len;
    let total = (end - base).div_ceil(QUERY_PAGE);
    let mut per_node: std::collections::BTreeMap<u32, u64> = Default::default();
    let mut unknown = 0u64;
    const BATCH: usize = 1 << 16;
    let mut first = 0;
    while first < total {
        let n = BATCH.min(total - first);
        let mut pages: Vec<*mut libc::c_void> = (0..n)
            .map(|i| (base + (first + i) * QUERY_PAGE) as *mut libc::c_void)
            .collect();
        let mut status = vec![0 as libc::c_int; n];
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
        first += n;
    }
    Ok(PageCensus {
        pages: total as u64,
        per_node: per_node.into_iter().collect(),
        unknown,
    })
}

/// Free memory of `node` (`Node N MemFree` in its sysfs meminfo), bytes.
/// A buffer bound with `MPOL_BIND` cannot spill to another node, so a
/// suite checks this before binding instead of meeting the OOM killer.
fn node_free_bytes(node: u32) -> Option<u64> {
    let text =
        std::fs::read_to_string(format!("/sys/devices/system/node/node{}/meminfo", node)).ok()?;
    text.lines()
        .find(|l| l.contains("MemFree:"))
        .and_then(|l| l.split_whitespace().nth(3))
        .and_then(|v| v.parse::<u64>().ok())
        .map(|kb| kb * 1024)
}

/// Refuse a binding of `need` bytes to `node` that would leave it less than
/// 10 % of its free memory; the reason names the sizes.
pub fn check_node_room(node: u32, need: u64) -> Result<(), String> {
    match node_free_bytes(node) {
        Some(free) if need > free / 10 * 9 => Err(format!(
            "node {} has {} free but the cell needs {}: use a smaller --size or fewer --threads",
            node,
            crate::util::units::format_bytes(free),
            crate::util::units::format_bytes(need)
        )),
        _ => Ok(()),
    }
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
    use super::*;
    use crate::memory::{Buffer, PageKind};

    #[test]
    fn census_sees_every_page_on_some_node() {
        if crate::platform::skip_emulated("census_sees_every_page_on_some_node", "move_pages") {
            return;
        }
        let b = Buffer::new(8 << 20, PageKind::Regular, 3).unwrap();
        let c = census(b.as_ptr(), b.len()).unwrap();
        assert_eq!(c.pages, (8 << 20) / 4096);
        let placed: u64 = c.per_node.iter().map(|p| p.1).sum();
        assert_eq!(placed + c.unknown, c.pages);
        assert!(placed as f64 >= 0.99 * c.pages as f64, "{:?}", c);
    }

    #[test]
    fn bind_to_the_first_node_places_every_page() {
        if crate::platform::skip_emulated("bind_to_the_first_node_places_every_page", "mbind") {
            return;
        }
        let node = crate::platform::topology::nodes()[0].id;
        let mut b = Buffer::new(4 << 20, PageKind::Thp, 3).unwrap();
        // SAFETY: the buffer's own page-aligned range.
        unsafe { bind_range(b.as_mut_ptr(), b.len(), node) }.unwrap();
        let c = census(b.as_ptr(), b.len()).unwrap();
        assert_eq!(c.fraction_on(node), 1.0, "{:?}", c);
    }

    #[test]
    fn binding_to_a_missing_node_is_refused() {
        let mut b = Buffer::new(1 << 20, PageKind::Regular, 3).unwrap();
        // SAFETY: as above.
        let e = unsafe { bind_range(b.as_mut_ptr(), b.len(), 1000) }.unwrap_err();
        assert!(e.contains("node 1000"), "{e}");
        assert!(mask(5000).is_err());
    }

    #[test]
    fn node_room_is_checked() {
        let node = crate::platform::topology::nodes()[0].id;
        if node_free_bytes(node).is_none() {
            return; // no per-node meminfo (no NUMA in this kernel)
        }
        assert!(check_node_room(node, 1 << 20).is_ok());
        let e = check_node_room(node, 1 << 50).unwrap_err();
        assert!(e.contains("--size"), "{e}");
    }

    #[test]
    fn thread_policy_round_trips() {
        if crate::platform::skip_emulated("thread_policy_round_trips", "set_mempolicy") {
            return;
        }
        let node = crate::platform::topology::nodes()[0].id;
        std::thread::spawn(move || {
            set_thread_policy(Some(node)).unwrap();
            let b = Buffer::new(2 << 20, PageKind::Regular, 1).unwrap();
            set_thread_policy(None).unwrap();
            assert_eq!(census(b.as_ptr(), b.len()).unwrap().fraction_on(node), 1.0);
        })
        .join()
        .unwrap();
    }
}
