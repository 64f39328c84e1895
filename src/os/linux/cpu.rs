//! `sched_setaffinity`/`sched_getaffinity`/`sched_getcpu`, and the
//! topology in `/sys/devices/system/{cpu,node}`.

use std::path::Path;

use crate::model::{Cache, Cpu, Node};
use crate::util::cpulist::parse_cpu_list;

// sysfs and /proc attributes: a page at most, read bounded and never
// waiting (`os::input`), whatever sits at the path.
fn read(p: impl AsRef<Path>) -> Option<String> {
    crate::os::input::read_small_text(p.as_ref()).map(|s| s.trim().to_string())
}

fn set_affinity(set: &libc::cpu_set_t) -> std::io::Result<()> {
    // SAFETY: a fully initialised cpu_set_t of the size passed.
    if unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

fn set_of(cpus: &[u32]) -> libc::cpu_set_t {
    // SAFETY: cpu_set_t is plain data; CPU_SET stays inside it for cpus
    // below CPU_SETSIZE, which the callers' cpu lists are.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as u32) {
            libc::CPU_SET(c as usize, &mut set);
        }
        set
    }
}

/// Pinning is exact here: a pinned thread runs on its cpus only.
pub const PLACEMENT_ADVISORY: Option<&str> = None;

/// The system hides no per-cpu identity: kinds come from the MIDRs.
pub fn stated_core_kinds() -> Option<Vec<(String, Vec<u32>)>> {
    None
}

/// Pin the calling thread to `cpu`.
pub fn pin_current(cpu: u32) -> Result<(), String> {
    set_affinity(&set_of(&[cpu])).map_err(|e| format!("cannot pin to cpu {}: {}", cpu, e))
}

/// Pin the calling thread to the set `cpus` (a driver's helper threads
/// may then share them).
pub fn pin_current_to(cpus: &[u32]) -> Result<(), String> {
    set_affinity(&set_of(cpus)).map_err(|e| e.to_string())
}

/// The calling thread's affinity, to be put back later.
pub struct Affinity(libc::cpu_set_t);

impl Affinity {
    pub fn current() -> Option<Affinity> {
        // SAFETY: cpu_set_t is plain data; sched_getaffinity fills it.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            (libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0)
                .then_some(Affinity(set))
        }
    }

    pub fn restore(&self) {
        let _ = set_affinity(&self.0);
    }
}

/// The cpu the calling thread runs on now.
pub fn current_cpu() -> Option<u32> {
    // SAFETY: no preconditions.
    let c = unsafe { libc::sched_getcpu() };
    (c >= 0).then_some(c as u32)
}

/// The cpus this process may run on (`sched_getaffinity`).
pub fn allowed_cpus() -> Vec<u32> {
    match Affinity::current() {
        // SAFETY: CPU_ISSET reads inside the set for c < CPU_SETSIZE.
        Some(a) => (0..libc::CPU_SETSIZE as u32)
            .filter(|&c| unsafe { libc::CPU_ISSET(c as usize, &a.0) })
            .collect(),
        None => online_cpus(),
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
        let memory_bytes =
            read(d.join("meminfo")).and_then(|m| crate::os::parse::node_meminfo(&m, "MemTotal:"));
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

/// Every online cpu's place (core, caches shared, cluster, die, package,
/// node, kind) and the node distances, from sysfs.
pub fn topology() -> crate::model::Topology {
    crate::os::parse::topology::from_sysfs(&|p: &str| read(format!("/sys/devices/{p}")))
}

/// Caches as the system lists them for `cpu` (sysfs; source `sysfs`).
pub fn caches(cpu: u32) -> Vec<Cache> {
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

/// The auxiliary vector's `AT_HWCAP` and `AT_HWCAP2`: the CPU features the
/// kernel reports (on AArch64 the only way to learn them at EL0).
pub fn hwcaps() -> (u64, u64) {
    // SAFETY: getauxval has no preconditions.
    unsafe {
        (
            libc::getauxval(libc::AT_HWCAP) as u64,
            libc::getauxval(libc::AT_HWCAP2) as u64,
        )
    }
}

/// The SVE vector length in bytes from `prctl(PR_SVE_GET_VL)` (its low 16
/// bits; the kernel's `sve.rst`), None where the kernel refuses (no SVE,
/// another architecture).
pub fn sve_vl_bytes() -> Option<u32> {
    const PR_SVE_GET_VL: libc::c_int = 51;
    // SAFETY: a query with no pointer arguments.
    let r = unsafe { libc::prctl(PR_SVE_GET_VL, 0, 0, 0, 0) };
    (r > 0).then_some((r & 0xffff) as u32)
}

/// Where the kernel describes its cpus in text (a source label too).
pub const CPUINFO: &str = "/proc/cpuinfo";

/// The text of [`CPUINFO`].
pub fn cpuinfo() -> Option<String> {
    std::fs::read_to_string(CPUINFO).ok()
}

/// The folder of per-cpu facts (`cpuN/regs/identification/midr_el1`, …).
pub fn cpu_dir() -> &'static Path {
    Path::new("/sys/devices/system/cpu")
}
