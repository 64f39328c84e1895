//! Cpus on macOS: the topology from `sysctl` (per performance level,
//! [`crate::os::parse::sysctl`]) and placement as a quality-of-service
//! hint, because macOS has no thread affinity.
//!
//! Why a hint: on Apple silicon `thread_policy_set(THREAD_AFFINITY_POLICY)`
//! returns KERN_NOT_SUPPORTED (concurrencykit/ck issue #186,
//! Elzair/core_affinity_rs issue #22), and on Intel Macs an affinity tag
//! only groups threads, never names a cpu. The one lever is a thread's QoS
//! class (`pthread_set_qos_class_self_np`, libpthread `pthread/qos.h`):
//! USER_INTERACTIVE prefers the performance cores, BACKGROUND keeps a
//! thread on the efficiency cores (clangd/clangd issue #1119). So
//! "pinning to cpu N" here asks for N's kind of core, the scheduler may
//! still move the thread within the kind (or, under load, across), and
//! every record says its placement was advisory ([`PLACEMENT_ADVISORY`]).
//!
//! Cpu numbers are bwscope's: macOS names no logical cpu of a level, so
//! the fastest level's cpus come first ([`MacHardware::cpus_of`]).

use std::path::Path;

use super::hw;
use crate::model::{Cache, Cpu, Node};
use crate::os::parse::sysctl::MacHardware;

/// Placement is a request the scheduler may ignore.
pub const PLACEMENT_ADVISORY: Option<&str> = Some(
    "macOS has no thread affinity: a thread is steered to a kind of core (performance or efficiency) by its quality-of-service class, and the scheduler may move it",
);

/// The QoS class that steers a thread to level `n` of `levels`: the
/// fastest level asks for USER_INTERACTIVE, the slowest (of several) for
/// BACKGROUND; a machine of one kind (Intel Macs) is left at DEFAULT.
fn qos_for(n: usize, levels: usize) -> libc::qos_class_t {
    match (n, levels) {
        (_, 0 | 1) => libc::qos_class_t::QOS_CLASS_DEFAULT,
        (0, _) => libc::qos_class_t::QOS_CLASS_USER_INTERACTIVE,
        (n, l) if n + 1 == l => libc::qos_class_t::QOS_CLASS_BACKGROUND,
        _ => libc::qos_class_t::QOS_CLASS_UTILITY,
    }
}

fn set_qos(class: libc::qos_class_t) -> Result<(), String> {
    // SAFETY: applies to the calling thread only; no pointers.
    let rc = unsafe { libc::pthread_set_qos_class_self_np(class, 0) };
    if rc != 0 {
        return Err(format!(
            "pthread_set_qos_class_self_np({class:?}) failed: {}",
            std::io::Error::from_raw_os_error(rc)
        ));
    }
    Ok(())
}

/// Steer the calling thread to `cpu`'s kind of core (advisory).
pub fn pin_current(cpu: u32) -> Result<(), String> {
    let h = hw();
    let n = h.level_of(cpu).ok_or_else(|| {
        format!(
            "cannot place on cpu {cpu}: this Mac has {} cpus",
            h.cpu_count()
        )
    })?;
    set_qos(qos_for(n, h.levels.len()))
}

/// Steer the calling thread to the fastest kind among `cpus` (advisory).
pub fn pin_current_to(cpus: &[u32]) -> Result<(), String> {
    let h = hw();
    let n = cpus
        .iter()
        .filter_map(|&c| h.level_of(c))
        .min()
        .ok_or_else(|| "none of these cpus exists here".to_string())?;
    set_qos(qos_for(n, h.levels.len()))
}

/// The calling thread's QoS class, to be put back later.
pub struct Affinity(libc::qos_class_t);

impl Affinity {
    pub fn current() -> Option<Affinity> {
        let mut class = libc::qos_class_t::QOS_CLASS_UNSPECIFIED;
        let mut rel = 0;
        // SAFETY: the calling thread and out-pointers to locals.
        (unsafe { libc::pthread_get_qos_class_np(libc::pthread_self(), &mut class, &mut rel) } == 0)
            .then_some(Affinity(class))
    }

    pub fn restore(&self) {
        let class = match self.0 {
            // A thread that never had a class runs as DEFAULT.
            libc::qos_class_t::QOS_CLASS_UNSPECIFIED => libc::qos_class_t::QOS_CLASS_DEFAULT,
            c => c,
        };
        let _ = set_qos(class);
    }
}

/// macOS has no call that says which cpu a thread runs on.
pub fn current_cpu() -> Option<u32> {
    None
}

/// Every cpu: macOS has no affinity mask to restrict a process.
pub fn allowed_cpus() -> Vec<u32> {
    online_cpus()
}

pub fn online_cpus() -> Vec<u32> {
    (0..hw().cpu_count()).collect()
}

/// One node: a Mac's memory is one pool.
pub fn nodes() -> Vec<Node> {
    vec![Node {
        id: 0,
        cpus: online_cpus(),
        memory_bytes: hw().memory_bytes,
        distances: vec![10],
    }]
}

fn cpu_of(h: &MacHardware, id: u32) -> Cpu {
    let siblings = h.siblings(id);
    Cpu {
        id,
        core: siblings.first().copied().unwrap_or(id),
        package: 0,
        node: 0,
        siblings,
    }
}

pub fn cpus(_nodes: &[Node]) -> Vec<Cpu> {
    let h = hw();
    online_cpus().into_iter().map(|id| cpu_of(h, id)).collect()
}

/// Every cpu's place from what the system states of its cores, caches,
/// nodes and kinds (no sysfs here: no die or cluster).
pub fn topology() -> crate::model::Topology {
    let nodes = nodes();
    crate::os::parse::topology::compose(&cpus(&nodes), &caches, &nodes, stated_core_kinds())
}

/// Caches of `cpu`'s performance level (`hw.perflevelN.*`; the plain
/// `hw.l1dcachesize` would be the efficiency cores').
pub fn caches(cpu: u32) -> Vec<Cache> {
    let h = hw();
    let line = h.line_bytes.unwrap_or(64);
    let source = match h.level_of(cpu) {
        Some(n) if h.levels.len() > 1 => format!("sysctl hw.perflevel{n}"),
        _ => "sysctl hw".to_string(),
    };
    h.caches(cpu)
        .into_iter()
        .map(|c| {
            Cache::new(
                c.level,
                c.kind,
                c.size_bytes,
                line,
                c.shared_cpus,
                source.clone(),
            )
        })
        .collect()
}

/// The kinds of core as the system states them, where it hides the
/// per-cpu MIDR (macOS traps `mrs MIDR_EL1` at EL0; its `sysctl` states
/// performance levels instead): (name, cpus) per level, fastest first.
pub fn stated_core_kinds() -> Option<Vec<(String, Vec<u32>)>> {
    let h = hw();
    h.arm64.then(|| {
        (0..h.levels.len())
            .map(|n| (h.levels[n].name.clone(), h.cpus_of(n).collect()))
            .collect()
    })
}

/// Linux's `AT_HWCAP` bits (the layout `platform::arm` decodes), set from
/// `sysctl hw.optional.AdvSIMD` (Apple, "Determining instruction set
/// characteristics"). No SVE on Apple cores; SME (`hw.optional.arm.
/// FEAT_SME`, M4) is left out: its kernels have not been checked here.
pub fn hwcaps() -> (u64, u64) {
    const HWCAP_ASIMD: u64 = 1 << 1;
    let asimd = super::sysctl_int("hw.optional.AdvSIMD") == Some(1);
    (if asimd { HWCAP_ASIMD } else { 0 }, 0)
}

/// No SVE on Apple cores.
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
