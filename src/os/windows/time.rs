//! `QueryPerformanceCounter` (one clock for every process on the machine)
//! and `GetProcessTimes`.

use std::sync::OnceLock;

use windows_sys::Win32::System::Performance::{QueryPerformanceCounter, QueryPerformanceFrequency};
use windows_sys::Win32::System::Threading::{
    GetCurrentProcess, GetProcessTimes, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION,
};

use super::{filetime_ns, Handle, ZERO_FILETIME};

fn frequency() -> u64 {
    static F: OnceLock<u64> = OnceLock::new();
    *F.get_or_init(|| {
        let mut f = 0i64;
        // SAFETY: an out-pointer to a local.
        unsafe { QueryPerformanceFrequency(&mut f) };
        f.max(1) as u64
    })
}

/// Now on the performance counter, ns.
pub fn now_ns() -> u64 {
    let mut t = 0i64;
    // SAFETY: an out-pointer to a local.
    unsafe { QueryPerformanceCounter(&mut t) };
    let (t, f) = (t as u64 as u128, frequency() as u128);
    (t * 1_000_000_000 / f) as u64
}

fn cpu_ns(process: windows_sys::Win32::Foundation::HANDLE) -> Option<u64> {
    let (mut c, mut e, mut k, mut u) = (ZERO_FILETIME, ZERO_FILETIME, ZERO_FILETIME, ZERO_FILETIME);
    // SAFETY: out-pointers to locals; `process` is a live handle.
    (unsafe { GetProcessTimes(process, &mut c, &mut e, &mut k, &mut u) } != 0)
        .then(|| filetime_ns(&k) + filetime_ns(&u))
}

/// CPU time of process `pid` in ns, or `None` when it is gone or not ours
/// to read.
pub fn process_cpu_ns(pid: u32) -> Option<u64> {
    // SAFETY: opening a process by id; the handle is closed on drop.
    let h = Handle::new(unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) })?;
    cpu_ns(h.0)
}

/// This process's CPU ns (every thread; at the counters' 100 ns grain).
pub fn self_cpu_ns() -> u64 {
    // SAFETY: the pseudo-handle of this process.
    cpu_ns(unsafe { GetCurrentProcess() }).unwrap_or(0)
}

/// What the calling thread has had of its cpu: unknown here. Windows
/// counts a thread's CPU time in clock ticks (15.6 ms by default), longer
/// than a sample, and its cycle counter has no clock to turn it into
/// time; a sample is never taken again on a guess.
pub fn thread_run() -> Option<crate::os::time::ThreadRun> {
    None
}
