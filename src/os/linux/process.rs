//! `/proc/self`, `/proc/PID/stat`, `getrlimit`, per-process CPU clocks.

use std::collections::HashMap;

use crate::os::parse;
use crate::os::process::LockRoom;

fn soft_limit(res: libc::__rlimit_resource_t) -> Option<u64> {
    // SAFETY: plain data filled by getrlimit.
    let mut r: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: a valid rlimit to fill.
    (unsafe { libc::getrlimit(res, &mut r) } == 0 && r.rlim_cur != libc::RLIM_INFINITY)
        .then_some(r.rlim_cur)
}

fn status() -> Option<String> {
    std::fs::read_to_string("/proc/self/status").ok()
}

pub fn parent_pid() -> u32 {
    // SAFETY: getppid has no preconditions.
    unsafe { libc::getppid() as u32 }
}

/// A process's start time (ticks since boot), if it runs: with its pid it
/// names one process, where a pid alone may have been reused.
pub fn start_time(pid: u32) -> Option<u64> {
    parse::start_time(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// The processes this one's threads started (the process team's workers).
pub fn children() -> Vec<u32> {
    let mut out = Vec::new();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return out;
    };
    for t in tasks.flatten() {
        if let Ok(text) = std::fs::read_to_string(t.path().join("children")) {
            out.extend(
                text.split_whitespace()
                    .filter_map(|p| p.parse::<u32>().ok()),
            );
        }
    }
    out
}

/// CPU ns of every process but those in `skip`, by pid; None when the
/// processes cannot be listed (hidepid, no /proc).
pub fn others_cpu_ns(skip: &[u32]) -> Option<HashMap<u32, u64>> {
    let dir = std::fs::read_dir("/proc").ok()?;
    let mut m = HashMap::new();
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if skip.contains(&pid) {
            continue;
        }
        if let Some(ns) = super::time::process_cpu_ns(pid) {
            m.insert(pid, ns);
        }
    }
    Some(m)
}

/// The address space this process may still map when a limit is set
/// (`ulimit -v`, RLIMIT_AS, against VmSize; `ulimit -d`, RLIMIT_DATA,
/// against VmData, which private writable mappings count towards):
/// `(left, limit)` for the tighter one, None without a limit.
pub fn address_space_left() -> Option<(u64, u64)> {
    let status = status().unwrap_or_default();
    [
        (soft_limit(libc::RLIMIT_AS), "VmSize"),
        (soft_limit(libc::RLIMIT_DATA), "VmData"),
    ]
    .into_iter()
    .filter_map(|(lim, used)| {
        let lim = lim?;
        Some((
            lim.saturating_sub(parse::kb_line(&status, used).unwrap_or(0)),
            lim,
        ))
    })
    .min()
}

/// Capability number of CAP_IPC_LOCK (linux/capability.h).
const CAP_IPC_LOCK: u32 = 14;

/// RLIMIT_MEMLOCK and `VmLck`; None when unlimited or with CAP_IPC_LOCK
/// (then RLIMIT_MEMLOCK does not apply to mlock).
pub fn lock_room() -> Option<LockRoom> {
    let status = status().unwrap_or_default();
    let capable = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .is_some_and(|caps| caps & (1 << CAP_IPC_LOCK) != 0);
    if capable {
        return None;
    }
    Some(LockRoom {
        limit: soft_limit(libc::RLIMIT_MEMLOCK)?,
        locked: parse::kb_line(&status, "VmLck").unwrap_or(0),
    })
}

/// Raise the soft `RLIMIT_STACK` to `want` (or to the hard limit, if
/// lower); the soft limit then in force and the hard one (None:
/// unlimited), or None when the soft limit is unlimited or unreadable.
pub fn raise_stack_limit(want: u64) -> Option<(u64, Option<u64>)> {
    // SAFETY: plain data, filled by getrlimit.
    let mut r: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: a valid rlimit to fill.
    if unsafe { libc::getrlimit(libc::RLIMIT_STACK, &mut r) } != 0
        || r.rlim_cur == libc::RLIM_INFINITY
    {
        return None;
    }
    let hard = (r.rlim_max != libc::RLIM_INFINITY).then_some(r.rlim_max);
    let target = hard.map_or(want, |h| h.min(want));
    if r.rlim_cur < target {
        let raised = libc::rlimit {
            rlim_cur: target,
            rlim_max: r.rlim_max,
        };
        // SAFETY: plain data; raising the soft limit up to the hard one
        // needs no privilege.
        if unsafe { libc::setrlimit(libc::RLIMIT_STACK, &raised) } == 0 {
            r.rlim_cur = target;
        }
    }
    Some((r.rlim_cur, hard))
}
