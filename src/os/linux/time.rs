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

/// The calling thread's CPU time (`os::time::ThreadRun`): always known
/// here, to the nanosecond (the scheduler adds the running slice at the
/// read).
pub fn thread_run() -> Option<crate::os::time::ThreadRun> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: out-pointer to a local.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Some(crate::os::time::ThreadRun { cpu_ns: ns(&ts) })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_thread_that_sleeps_gains_no_cpu_time() {
        let a = super::thread_run().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let b = super::thread_run().unwrap();
        // A sleep is voluntary and takes almost no cpu.
        assert!(b.cpu_ns - a.cpu_ns < 10_000_000, "{a:?} {b:?}");
        // Spinning for 20 ms of wall time takes cpu time, nearly all of
        // it on a quiet cpu (and never more than the wall time plus the
        // reads themselves).
        let a = super::thread_run().unwrap();
        let t = std::time::Instant::now();
        while t.elapsed() < std::time::Duration::from_millis(20) {
            std::hint::spin_loop();
        }
        let wall = t.elapsed().as_nanos() as u64;
        let b = super::thread_run().unwrap();
        assert!(b.cpu_ns - a.cpu_ns <= wall + 1_000_000, "{a:?} {b:?}");
        assert!(b.cpu_ns - a.cpu_ns > 0);
    }
}
