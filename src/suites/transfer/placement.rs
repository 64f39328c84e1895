//! Where the host side runs and where its pages land: cpu affinity,
//! NUMA memory policy, and a `move_pages` check after each case.

use super::*;

/// Set the calling thread's memory policy: bind (`--host-node`) or prefer
/// (device-local default) `node`. Failure is harmless (single-node
/// machines, kernels without NUMA) and reported as a note.
pub(super) fn set_mempolicy(node: u32, bind: bool) -> Result<(), String> {
    if bind {
        crate::os::numa::set_thread_policy(Some(node))
    } else {
        crate::os::numa::prefer_thread(node)
    }
}

/// Pin the calling thread to `cpus` (all of them: the driver may use
/// helper threads, and a single cpu would make them compete).
pub(super) fn pin_to(cpus: &[u32]) -> Result<(), String> {
    crate::os::cpu::pin_current_to(cpus)
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

/// Fraction of (up to 64 evenly spaced) pages of `[addr, addr + len)`
/// found on `node`, of those whose place is known: where the host buffer
/// actually landed.
pub(super) fn pages_on_node(addr: usize, len: usize, node: u32) -> Option<f64> {
    const PAGE: usize = 4096;
    let n_pages = len.div_ceil(PAGE).max(1);
    let count = n_pages.min(64);
    let step = n_pages / count;
    let base = addr & !(PAGE - 1);
    let sample: Vec<usize> = (0..count).map(|i| base + i * step * PAGE).collect();
    let c = crate::os::numa::census_of(&sample).ok()?;
    let known = c.pages - c.unknown;
    (known > 0).then(|| c.on_node(node) as f64 / known as f64)
}

/// Record where the host buffer's pages are, when a node was chosen.
pub(super) fn check_placement(r: &mut Record, addr: usize, len: usize) {
    if let Some(p) = r.placement.as_mut() {
        if let Some(n) = p.memory_node {
            p.verified_fraction = pages_on_node(addr, len, n);
        }
    }
}
