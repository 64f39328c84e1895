//! `clock_gettime`: `CLOCK_MONOTONIC` (one clock for the whole system) and
//! the per-process CPU clocks any process may read.

fn ns(ts: &libc::timespec) -> u64 {
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Now on `CLOCK_MONOTONIC`, ns.
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ns(&ts)
}

/// CPU time of process `pid` in ns (all its threads, also ones that
/// ended), or `None` when it is gone or not ours to read.
pub fn process_cpu_ns(pid: u32) -> Option<u64> {
    let mut clk: libc::clockid_t = 0;
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: out-pointers to locals.
    unsafe {
        if libc::clock_getcpuclockid(pid as libc::pid_t, &mut clk) != 0 {
            return None;
        }
        if libc::clock_gettime(clk, &mut ts) != 0 {
            return None;
        }
    }
    Some(ns(&ts))
}

/// This process's CPU ns (every thread, exact).
pub fn self_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: out-pointer to a local.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ns(&ts)
}
