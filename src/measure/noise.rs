//! Interference seen while measuring: CPU time other processes used, and
//! time the hypervisor stole.
//!
//! `/proc/stat` counts in ticks of 10 ms (USER_HZ), so over a window of
//! ~10–100 ms it can only say 0, 0.9, 1.9 … CPUs. Instead, the foreign
//! figure comes from the nanosecond CPU clocks of every other process
//! (`clock_getcpuclockid(pid)`, which any process may read): the sum of
//! what each used between the two snapshots. What the scan cannot see —
//! processes that both started and ended inside the window — is caught by
//! the tick counts as a floor: busy ticks minus our own time, less their
//! rounding. Our own time (this process and the worker processes it
//! forked) comes from the same clocks, so it is never counted as foreign,
//! and the figure is capped at the CPUs we left free.
//!
//! The record says what the figure can resolve (`resolution_cpus`): the
//! clocks are read one process after another, so each can be off by the
//! time the two scans took; steal keeps the tick rounding.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::model::{Noise, NoiseMethod};

#[derive(Debug, Clone)]
pub struct Snapshot {
    at: Instant,
    /// `/proc/stat`: busy and steal ticks of all cpus.
    busy: u64,
    steal: u64,
    /// CPU ns of this process and the processes it forked.
    own_ns: u64,
    /// CPU ns of every other process by pid; `None` when /proc cannot be
    /// listed (hidepid, no /proc).
    others: Option<HashMap<i32, u64>>,
    /// How long reading `others` took.
    scan: Duration,
}

fn clk_tck() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

fn online_cpus() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    if n > 0 {
        n as f64
    } else {
        1.0
    }
}

/// CPU time of process `pid` in ns (all its threads, also ones that
/// ended), or `None` when it is gone.
fn process_cpu_ns(pid: i32) -> Option<u64> {
    let mut clk: libc::clockid_t = 0;
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: out-pointers to locals.
    unsafe {
        if libc::clock_getcpuclockid(pid, &mut clk) != 0 {
            return None;
        }
        if libc::clock_gettime(clk, &mut ts) != 0 {
            return None;
        }
    }
    Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

/// Our own CPU ns (every thread, exact).
fn self_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: out-pointer to a local.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The processes our threads forked (the process team's workers).
fn children() -> Vec<i32> {
    let mut out = Vec::new();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return out;
    };
    for t in tasks.flatten() {
        if let Ok(text) = std::fs::read_to_string(t.path().join("children")) {
            out.extend(
                text.split_whitespace()
                    .filter_map(|p| p.parse::<i32>().ok()),
            );
        }
    }
    out
}

/// `/proc/stat`'s aggregate line: busy (user nice system irq softirq) and
/// steal ticks.
fn proc_stat() -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let f: Vec<u64> = stat
        .lines()
        .next()?
        .split_whitespace()
        .skip(1)
        .filter_map(|v| v.parse().ok())
        .collect();
    if f.len() < 8 {
        return None;
    }
    Some((f[0] + f[1] + f[2] + f[5] + f[6], f[7]))
}

/// Take a snapshot; `None` where /proc/stat is unreadable.
pub fn snapshot() -> Option<Snapshot> {
    let t0 = Instant::now();
    let me = std::process::id() as i32;
    let kids = children();
    let others = std::fs::read_dir("/proc").ok().map(|dir| {
        let mut m = HashMap::new();
        for e in dir.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
                continue;
            };
            if pid == me || kids.contains(&pid) {
                continue;
            }
            if let Some(ns) = process_cpu_ns(pid) {
                m.insert(pid, ns);
            }
        }
        m
    });
    let own_ns = self_cpu_ns() + kids.iter().filter_map(|&p| process_cpu_ns(p)).sum::<u64>();
    let (busy, steal) = proc_stat()?;
    Some(Snapshot {
        at: Instant::now(),
        busy,
        steal,
        own_ns,
        others: others.filter(|m| !m.is_empty()),
        scan: t0.elapsed(),
    })
}

/// Noise between two snapshots.
pub fn between(a: &Snapshot, b: &Snapshot) -> Noise {
    let secs = b.at.duration_since(a.at).as_secs_f64().max(1e-9);
    let tck = clk_tck();
    let cpus = online_cpus();
    let own = b.own_ns.saturating_sub(a.own_ns) as f64 / 1e9;
    // Ticks: every busy field is rounded down to a tick at both ends.
    let tick_rounding = 6.0 / tck;
    let ticks = b.busy.saturating_sub(a.busy) as f64 / tck - own;
    let (foreign, resolution, method) = match (&a.others, &b.others) {
        (Some(before), Some(after)) => {
            let mut ns: u64 = 0;
            for (pid, &end) in after {
                // A pid new since `a` (or reused) used all its time inside.
                let start = before.get(pid).copied().filter(|&s| s <= end).unwrap_or(0);
                ns = ns.saturating_add(end - start);
            }
            let clocks = ns as f64 / 1e9;
            // Each clock is read at its own moment of each scan.
            let skew = (a.scan + b.scan).as_secs_f64() * cpus;
            (
                clocks.max(ticks - tick_rounding),
                skew / secs,
                NoiseMethod::ProcessClocks,
            )
        }
        _ => (ticks, tick_rounding / secs, NoiseMethod::ProcStat),
    };
    // Never more CPUs than exist besides the ones we kept busy.
    let free = (cpus - own / secs).max(0.0);
    Noise {
        foreign_cpus: (foreign / secs).clamp(0.0, free),
        steal_cpus: (b.steal.saturating_sub(a.steal) as f64 / tck / secs).clamp(0.0, cpus),
        window_seconds: secs,
        resolution_cpus: Some(resolution.min(cpus)),
        steal_resolution_cpus: Some((1.0 / tck / secs).min(cpus)),
        method: Some(method),
    }
}

/// Noise from `before` until now; `None` when either snapshot failed.
pub fn since(before: Option<Snapshot>) -> Option<Noise> {
    Some(between(&before?, &snapshot()?))
}

#[cfg(test)]
mod tests {
    fn spin_for(d: std::time::Duration) {
        let t = std::time::Instant::now();
        let mut x = 0u64;
        while t.elapsed() < d {
            x = std::hint::black_box(x.wrapping_add(1));
        }
    }

    #[test]
    fn snapshots_read_and_are_sane() {
        let a = super::snapshot().expect("/proc/stat readable");
        spin_for(std::time::Duration::from_millis(30));
        let b = super::snapshot().unwrap();
        let n = super::between(&a, &b);
        let cpus = super::online_cpus();
        assert!(n.foreign_cpus >= 0.0 && n.foreign_cpus <= cpus, "{n:?}");
        assert!(n.steal_cpus >= 0.0 && n.steal_cpus <= cpus, "{n:?}");
        assert!(n.window_seconds > 0.0);
        let r = n.resolution_cpus.unwrap();
        assert!(r >= 0.0 && r <= cpus, "{n:?}");
    }

    /// A forked child (a process-team worker) is our own work, never
    /// foreign load; the reading resolves far finer than a 10 ms tick.
    #[test]
    fn own_children_are_not_foreign_and_resolution_fits_the_window() {
        // SAFETY: the child only sleeps and exits; it touches no locks.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: plain libc calls in the child, then exit without
            // running the parent's destructors.
            unsafe {
                libc::usleep(300_000);
                libc::_exit(0)
            };
        }
        assert!(pid > 0);
        let a = super::snapshot().unwrap();
        spin_for(std::time::Duration::from_millis(100));
        let b = super::snapshot().unwrap();
        assert!(super::children().contains(&pid));
        let mut status = 0;
        // SAFETY: our own child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        for s in [&a, &b] {
            let others = s.others.as_ref().expect("/proc lists processes");
            assert!(!others.contains_key(&pid), "our child counted as foreign");
            assert!(!others.contains_key(&(std::process::id() as i32)));
        }
        let n = super::between(&a, &b);
        assert_eq!(n.method, Some(crate::model::NoiseMethod::ProcessClocks));
        // Tick counts could resolve only 6 ticks over 0.1 s = 0.6 CPU. (How
        // fast /proc scans is a timing: an emulator's says nothing.)
        if crate::platform::skip_timing_test("the noise resolution bound") {
            return;
        }
        assert!(
            n.resolution_cpus.unwrap() < 0.3,
            "{n:?} scans {:?} {:?}",
            a.scan,
            b.scan
        );
    }
}
