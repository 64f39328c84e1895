//! This process's limits and parent, other processes through `libproc`
//! (`proc_listallpids`, `proc_listchildpids`, `proc_pidinfo`): macOS has
//! no `/proc`.

use std::collections::HashMap;

use crate::os::process::LockRoom;

fn soft_limit(res: libc::c_int) -> Option<u64> {
    // SAFETY: plain data filled by getrlimit.
    let mut r: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: a valid rlimit to fill.
    (unsafe { libc::getrlimit(res, &mut r) } == 0 && r.rlim_cur != libc::RLIM_INFINITY)
        .then_some(r.rlim_cur)
}

/// `proc_pidinfo` of one flavor into a `T`; None when the process is
/// gone or not ours to read.
fn pidinfo<T>(pid: u32, flavor: libc::c_int) -> Option<T> {
    let mut v = std::mem::MaybeUninit::<T>::zeroed();
    let size = std::mem::size_of::<T>() as libc::c_int;
    // SAFETY: `v` holds `size` bytes; the call writes at most that.
    let n =
        unsafe { libc::proc_pidinfo(pid as libc::c_int, flavor, 0, v.as_mut_ptr().cast(), size) };
    // SAFETY: the call filled all of it (n == size); T is plain data.
    (n == size).then(|| unsafe { v.assume_init() })
}

/// Pids a libproc list call returns: `list(buffer, bytes)` gives the
/// count it wrote (or would write, for a null buffer).
fn pid_list(list: impl Fn(*mut libc::c_void, libc::c_int) -> libc::c_int) -> Vec<u32> {
    let n = list(std::ptr::null_mut(), 0);
    if n <= 0 {
        return Vec::new();
    }
    // Room for processes started between the two calls.
    let mut pids = vec![0 as libc::pid_t; n as usize + 64];
    let bytes = std::mem::size_of_val(pids.as_slice()) as libc::c_int;
    let got = list(pids.as_mut_ptr().cast(), bytes).max(0) as usize;
    pids.truncate(got.min(pids.len()));
    pids.into_iter()
        .filter(|&p| p > 0)
        .map(|p| p as u32)
        .collect()
}

pub fn parent_pid() -> u32 {
    // SAFETY: getppid has no preconditions.
    unsafe { libc::getppid() as u32 }
}

/// A process's start time (µs since the epoch, `pbi_start_tvsec/usec`),
/// if it runs: with its pid it names one process.
pub fn start_time(pid: u32) -> Option<u64> {
    let b: libc::proc_bsdinfo = pidinfo(pid, libc::PROC_PIDTBSDINFO)?;
    Some(b.pbi_start_tvsec * 1_000_000 + b.pbi_start_tvusec)
}

/// The processes this one started (the process team's workers).
pub fn children() -> Vec<u32> {
    // SAFETY: getpid has no preconditions.
    let me = unsafe { libc::getpid() };
    // SAFETY: `buf` is null (a count query) or holds `bytes` bytes.
    pid_list(|buf, bytes| unsafe { libc::proc_listchildpids(me, buf, bytes) })
}

/// CPU ns of every process but those in `skip`, by pid (processes of
/// other users are not readable without privilege and are left out, as
/// hidepid leaves them out on Linux); None when none can be listed.
pub fn others_cpu_ns(skip: &[u32]) -> Option<HashMap<u32, u64>> {
    // SAFETY: `buf` is null (a count query) or holds `bytes` bytes.
    let pids = pid_list(|buf, bytes| unsafe { libc::proc_listallpids(buf, bytes) });
    if pids.is_empty() {
        return None;
    }
    Some(
        pids.into_iter()
            .filter(|p| !skip.contains(p))
            .filter_map(|p| Some((p, super::time::process_cpu_ns(p)?)))
            .collect(),
    )
}

/// The address space this process may still map under `ulimit -v`
/// (RLIMIT_AS, against the task's virtual size); None without a limit.
/// (macOS does not enforce RLIMIT_DATA on mappings.)
pub fn address_space_left() -> Option<(u64, u64)> {
    let lim = soft_limit(libc::RLIMIT_AS)?;
    // SAFETY: getpid has no preconditions.
    let me = unsafe { libc::getpid() } as u32;
    let used = pidinfo::<libc::proc_taskinfo>(me, libc::PROC_PIDTASKINFO)
        .map_or(0, |t| t.pti_virtual_size);
    Some((lim.saturating_sub(used), lim))
}

/// RLIMIT_MEMLOCK; None when unlimited. macOS states no count of the
/// bytes a process has locked (Linux's `VmLck`), so `locked` is what this
/// process may have locked already: 0, bwscope unlocks by unmapping.
pub fn lock_room() -> Option<LockRoom> {
    Some(LockRoom {
        limit: soft_limit(libc::RLIMIT_MEMLOCK)?,
        locked: 0,
    })
}

/// Raise the soft `RLIMIT_STACK` to `want` (or to the hard limit, if
/// lower); the soft limit then in force and the hard one (None:
/// unlimited), or None when the soft limit is unlimited or unreadable.
/// (macOS sizes the main thread's stack from the limit at exec, so a raise
/// helps the threads and children started later.)
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
