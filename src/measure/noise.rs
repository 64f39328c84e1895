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
    others: Option<HashMap<u32, u64>>,
    /// How long reading `others` took.
    scan: Duration,
}

/// Take a snapshot; `None` where /proc/stat is unreadable.
pub fn snapshot() -> Option<Snapshot> {
    use crate::os::{process, system, time};
    let t0 = Instant::now();
    let mut own = process::children();
    let kids_ns: u64 = own.iter().filter_map(|&p| time::process_cpu_ns(p)).sum();
    own.push(std::process::id());
    let others = process::others_cpu_ns(&own);
    let own_ns = time::self_cpu_ns() + kids_ns;
    let (busy, steal) = system::cpu_ticks()?;
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
    let tck = crate::os::system::ticks_per_second();
    let cpus = crate::os::system::online_cpu_count();
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
        let cpus = crate::os::system::online_cpu_count();
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
        if !crate::os::team::FORKS {
            eprintln!("skipped: a worker here is this program started again, not the test");
            return;
        }
        fn sleeper(_: &crate::os::team::Region, _: usize) -> i32 {
            std::thread::sleep(std::time::Duration::from_millis(300));
            0
        }
        let region = crate::os::team::Region::new(4096).unwrap();
        // SAFETY: the worker only sleeps and exits; it touches no lock
        // another test thread may hold (nanosleep, then _exit).
        let child = unsafe { crate::os::team::start_worker(&region, 0, sleeper) }.unwrap();
        let pid = child.pid();
        let a = super::snapshot().unwrap();
        spin_for(std::time::Duration::from_millis(100));
        let b = super::snapshot().unwrap();
        assert!(crate::os::process::children().contains(&pid));
        child.reap();
        for s in [&a, &b] {
            let others = s.others.as_ref().expect("/proc lists processes");
            assert!(!others.contains_key(&pid), "our child counted as foreign");
            assert!(!others.contains_key(&std::process::id()));
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
