//! Where the host side runs and where its pages land: cpu affinity,
//! NUMA memory policy, and a `move_pages` check after each case.

use super::*;

/// Set the calling thread's memory policy: bind (`--host-node`) or prefer
/// (device-local default) `node`. Failure is harmless (single-node
/// machines, kernels without NUMA) and reported as a note.
pub(super) fn set_mempolicy(node: u32, bind: bool) -> Result<(), String> {
    const MPOL_PREFERRED: i64 = 1;
    const MPOL_BIND: i64 = 2;
    if node >= 1024 {
        return Err("node id out of range".into());
    }
    let mut mask = [0u64; 16];
    mask[(node / 64) as usize] |= 1 << (node % 64);
    // SAFETY: set_mempolicy reads `maxnode` bits from the mask.
    let r = unsafe {
        libc::syscall(
            libc::SYS_set_mempolicy,
            if bind { MPOL_BIND } else { MPOL_PREFERRED },
            mask.as_ptr(),
            (mask.len() * 64) as u64,
        )
    };
    if r != 0 {
        return Err(std::io::Error::last_os_error().to_string());
    }
    Ok(())
}

/// Pin the calling thread to `cpus` (all of them: the driver may use
/// helper threads, and a single cpu would make them compete).
pub(super) fn pin_to(cpus: &[u32]) -> Result<(), String> {
    // SAFETY: cpu_set_t is plain data.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            libc::CPU_SET(c as usize, &mut set);
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error().to_string());
        }
    }
    Ok(())
}

/// Where the host thread runs and its memory lives.
pub(super) struct HostPlacement {
    pub(super) cpus: Vec<u32>,
    pub(super) node: Option<u32>,
    /// `--host-node`, `device-local` or `unknown`.
    pub(super) source: String,
    pub(super) notes: Vec<String>,
}

/// Resolve where the host thread runs: `--host-node`, else the device's
/// local cpus from sysfs, else anywhere.
pub(super) fn placement(
    host: &Host,
    host_node: Option<u32>,
    pci: Option<&pci::PciContext>,
) -> Result<HostPlacement, UserError> {
    let mut notes = Vec::new();
    let allowed = &host.allowed_cpus;
    if let Some(n) = host_node {
        let node = host.nodes.iter().find(|x| x.id == n).ok_or_else(|| {
            UserError::flag(
                "--host-node",
                format!(
                    "no NUMA node {} here (nodes: {})",
                    n,
                    host.nodes
                        .iter()
                        .map(|x| x.id.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
        })?;
        let cpus: Vec<u32> = node
            .cpus
            .iter()
            .copied()
            .filter(|c| allowed.contains(c))
            .collect();
        if cpus.is_empty() {
            return Err(UserError::flag(
                "--host-node",
                format!(
                    "node {} has no cpu this process may use (allowed: {})",
                    n,
                    crate::util::cpulist::format_cpu_list(allowed)
                ),
            ));
        }
        if let Err(e) = set_mempolicy(n, true) {
            notes.push(format!("could not bind host memory to node {}: {}", n, e));
        }
        return Ok(HostPlacement {
            cpus,
            node: Some(n),
            source: "--host-node".into(),
            notes,
        });
    }
    if let Some(p) = pci {
        let cpus: Vec<u32> = p
            .local_cpus
            .iter()
            .copied()
            .filter(|c| allowed.contains(c))
            .collect();
        if !cpus.is_empty() {
            if let Some(n) = p.numa_node {
                if let Err(e) = set_mempolicy(n, false) {
                    notes.push(format!(
                        "could not prefer node {} for host memory: {}",
                        n, e
                    ));
                }
            }
            return Ok(HostPlacement {
                cpus,
                node: p.numa_node,
                source: "device-local".into(),
                notes,
            });
        }
    }
    notes.push("device locality unknown (no PCI sysfs entry): host thread not restricted".into());
    Ok(HostPlacement {
        cpus: allowed.clone(),
        node: None,
        source: "unknown".into(),
        notes,
    })
}

/// Fraction of (up to 64 evenly spaced) pages of `[addr, addr + len)` that
/// `move_pages` finds on `node`: where the host buffer actually landed.
pub(super) fn pages_on_node(addr: usize, len: usize, node: u32) -> Option<f64> {
    const PAGE: usize = 4096;
    let n_pages = len.div_ceil(PAGE).max(1);
    let count = n_pages.min(64);
    let step = n_pages / count;
    let base = addr & !(PAGE - 1);
    let pages: Vec<*mut libc::c_void> = (0..count)
        .map(|i| (base + i * step * PAGE) as *mut libc::c_void)
        .collect();
    let mut status = vec![-1i32; count];
    // SAFETY: with a null `nodes` array move_pages only reports each page's
    // node into `status`; both arrays hold `count` entries.
    let r = unsafe {
        libc::syscall(
            libc::SYS_move_pages,
            0,
            count as libc::c_ulong,
            pages.as_ptr(),
            std::ptr::null::<i32>(),
            status.as_mut_ptr(),
            0,
        )
    };
    let valid: Vec<i32> = status.into_iter().filter(|s| *s >= 0).collect();
    if r != 0 || valid.is_empty() {
        return None;
    }
    Some(valid.iter().filter(|&&s| s as u32 == node).count() as f64 / valid.len() as f64)
}

/// Record where the host buffer's pages are, when a node was chosen.
pub(super) fn check_placement(r: &mut Record, addr: usize, len: usize) {
    if let Some(p) = r.placement.as_mut() {
        if let Some(n) = p.memory_node {
            p.verified_fraction = pages_on_node(addr, len, n);
        }
    }
}
