//! Cpus: which ones this process may use, pinning a thread to them, where
//! a thread runs now, and how the system groups them (cores, packages,
//! NUMA nodes) with the caches each one sees.

pub use super::imp::cpu::{
    allowed_cpus, caches, cpu_dir, cpuinfo, cpus, current_cpu, hwcaps, nodes, online_cpus,
    pin_current, pin_current_to, stated_core_kinds, sve_vl_bytes, topology, Affinity, CPUINFO,
    PLACEMENT_ADVISORY,
};

/// Run `f` on the calling thread pinned to `cpu`, then give the thread
/// its previous affinity back. Single-thread measurements (the pointer
/// chase, register loops) run this way: no helper thread, no channel.
pub fn on_cpu<R>(cpu: u32, f: impl FnOnce() -> R) -> Result<R, String> {
    let saved = Affinity::current();
    pin_current(cpu)?;
    let r = f();
    if let Some(a) = saved {
        a.restore();
    }
    Ok(r)
}
