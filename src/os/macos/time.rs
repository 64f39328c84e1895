//! Clocks: `CLOCK_UPTIME_RAW` (what Rust's `Instant` reads on macOS: one
//! clock for every process, not advancing while the machine sleeps), the
//! POSIX CPU-time clocks of this process and thread, and `libproc` for
//! other processes' CPU time.
//!
//! Resolution: the clock counts `mach_absolute_time` ticks, 24 MHz on
//! Apple silicon (`hw.tbfrequency: 24000000`, so one tick is 41.67 ns;
//! jemalloc #2653), 1 ns on Intel Macs. The sampler's samples last
//! milliseconds (`measure::sampler`), tens of thousands of ticks even at
//! 41.67 ns, so the tick is well under its tolerance; nothing shorter is
//! timed on this clock alone.

use std::sync::OnceLock;

fn ns(ts: &libc::timespec) -> u64 {
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn read(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid out-pointer; the clock ids are macOS's own.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ns(&ts)
}

/// Now on `CLOCK_UPTIME_RAW`, ns.
pub fn now_ns() -> u64 {
    read(libc::CLOCK_UPTIME_RAW)
}

/// Ticks of the time base per second (`hw.tbfrequency`): libproc states
/// CPU times in these ticks, not in ns. Why not `mach_timebase_info`:
/// under Rosetta it reads 1/1 while the kernel's tick counts stay native
/// (giampaolo/psutil PR #2728).
fn tb_frequency() -> u64 {
    static F: OnceLock<u64> = OnceLock::new();
    *F.get_or_init(|| {
        super::sysctl_int("hw.tbfrequency")
            .filter(|&f| f > 0)
            .unwrap_or(1_000_000_000)
    })
}

/// CPU time of process `pid` in ns (`proc_pidinfo(PROC_PIDTASKINFO)`:
/// user and system time of all its threads, ended ones included), or
/// `None` when it is gone or not ours to read.
pub fn process_cpu_ns(pid: u32) -> Option<u64> {
    // SAFETY: plain data, filled by proc_pidinfo.
    let mut info: libc::proc_taskinfo = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::proc_taskinfo>() as libc::c_int;
    // SAFETY: `info` is a local of the size passed.
    let n = unsafe {
        libc::proc_pidinfo(
            pid as libc::c_int,
            libc::PROC_PIDTASKINFO,
            0,
            (&mut info as *mut libc::proc_taskinfo).cast(),
            size,
        )
    };
    if n != size {
        return None;
    }
    let ticks = u128::from(info.pti_total_user) + u128::from(info.pti_total_system);
    Some((ticks * 1_000_000_000 / u128::from(tb_frequency())) as u64)
}

/// This process's CPU ns (every thread).
pub fn self_cpu_ns() -> u64 {
    read(libc::CLOCK_PROCESS_CPUTIME_ID)
}

/// The calling thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`, macOS 10.12
/// and later).
pub fn thread_run() -> Option<crate::os::time::ThreadRun> {
    Some(crate::os::time::ThreadRun {
        cpu_ns: read(libc::CLOCK_THREAD_CPUTIME_ID),
    })
}
