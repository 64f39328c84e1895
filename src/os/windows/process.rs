//! Processes from a Toolhelp snapshot (every process with its parent),
//! their CPU times and start times from `GetProcessTimes`.

use std::collections::HashMap;

use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, Process32FirstW, Process32NextW, PROCESSENTRY32W, TH32CS_SNAPPROCESS,
};
use windows_sys::Win32::System::Threading::{
    GetProcessTimes, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION,
};

use super::{filetime_ns, Handle, ZERO_FILETIME};
use crate::os::process::LockRoom;

/// (pid, parent pid) of every process, None when no snapshot can be taken.
fn processes() -> Option<Vec<(u32, u32)>> {
    // SAFETY: a snapshot handle, closed on drop.
    let snap = Handle::new(unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0) })?;
    // SAFETY: plain data, all-zero is a valid value.
    let mut e: PROCESSENTRY32W = unsafe { std::mem::zeroed() };
    e.dwSize = std::mem::size_of::<PROCESSENTRY32W>() as u32;
    let mut out = Vec::new();
    // SAFETY: a live snapshot and an entry with its size set.
    let mut more = unsafe { Process32FirstW(snap.0, &mut e) } != 0;
    while more {
        out.push((e.th32ProcessID, e.th32ParentProcessID));
        // SAFETY: as above.
        more = unsafe { Process32NextW(snap.0, &mut e) } != 0;
    }
    Some(out)
}

pub fn parent_pid() -> u32 {
    let me = std::process::id();
    processes()
        .and_then(|p| p.into_iter().find(|x| x.0 == me).map(|x| x.1))
        .unwrap_or(0)
}

/// A process's creation time (100 ns units since 1601), if it runs: with
/// its pid it names one process, where a pid alone may have been reused.
pub fn start_time(pid: u32) -> Option<u64> {
    // SAFETY: opening a process by id; closed on drop.
    let h = Handle::new(unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) })?;
    let (mut c, mut e, mut k, mut u) = (ZERO_FILETIME, ZERO_FILETIME, ZERO_FILETIME, ZERO_FILETIME);
    // SAFETY: a live handle and out-pointers to locals.
    (unsafe { GetProcessTimes(h.0, &mut c, &mut e, &mut k, &mut u) } != 0)
        .then(|| filetime_ns(&c) / 100)
}

/// The processes this one started.
pub fn children() -> Vec<u32> {
    let me = std::process::id();
    processes()
        .unwrap_or_default()
        .into_iter()
        .filter(|p| p.1 == me && p.0 != me)
        .map(|p| p.0)
        .collect()
}

/// CPU ns of every process but those in `skip` that this user may read.
pub fn others_cpu_ns(skip: &[u32]) -> Option<HashMap<u32, u64>> {
    Some(
        processes()?
            .into_iter()
            .filter(|p| !skip.contains(&p.0))
            .filter_map(|p| Some((p.0, super::time::process_cpu_ns(p.0)?)))
            .collect(),
    )
}

/// No address space limit a user sets on Windows.
pub fn address_space_left() -> Option<(u64, u64)> {
    None
}

/// `VirtualLock` is bounded by the working set's minimum, which a process
/// may raise itself: no fixed limit to report.
pub fn lock_room() -> Option<LockRoom> {
    None
}

/// The main thread's stack is set at link time (its reserve in the
/// executable's header): nothing to raise.
pub fn raise_stack_limit(_want: u64) -> Option<(u64, Option<u64>)> {
    None
}
