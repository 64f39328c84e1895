//! Interference seen while measuring, from `/proc/stat` and `/proc/self/stat`.
//!
//! Foreign load = busy time of all cpus minus this process's own CPU time,
//! in CPUs' worth over the window. Jiffies are 10 ms, so this is read per
//! record (a window of ~100 ms or more), not per 10 ms sample, where it
//! would be mostly rounding.

use std::time::Instant;

use crate::model::Noise;

#[derive(Debug, Clone, Copy)]
pub struct Snapshot {
    at: Instant,
    busy: u64,
    steal: u64,
    own: u64,
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

/// Take a snapshot; `None` where /proc is unreadable.
pub fn snapshot() -> Option<Snapshot> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let cpu = stat.lines().next()?;
    let f: Vec<u64> = cpu
        .split_whitespace()
        .skip(1)
        .filter_map(|v| v.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal ...
    if f.len() < 8 {
        return None;
    }
    let busy = f[0] + f[1] + f[2] + f[5] + f[6];
    let steal = f[7];
    let own_text = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command: utime and stime are 14 and 15
    // (1-based) overall, i.e. 12 and 13 after the ')' split.
    let after = own_text.rsplit_once(')')?.1;
    let g: Vec<&str> = after.split_whitespace().collect();
    let own = g.get(11)?.parse::<u64>().ok()? + g.get(12)?.parse::<u64>().ok()?;
    Some(Snapshot {
        at: Instant::now(),
        busy,
        steal,
        own,
    })
}

/// Noise between two snapshots.
pub fn between(a: &Snapshot, b: &Snapshot) -> Noise {
    let secs = b.at.duration_since(a.at).as_secs_f64().max(1e-9);
    let tck = clk_tck();
    let foreign = b
        .busy
        .saturating_sub(a.busy)
        .saturating_sub(b.own.saturating_sub(a.own));
    Noise {
        foreign_cpus: foreign as f64 / tck / secs,
        steal_cpus: b.steal.saturating_sub(a.steal) as f64 / tck / secs,
        window_seconds: secs,
    }
}

/// Noise from `before` until now; `None` when either snapshot failed.
pub fn since(before: Option<Snapshot>) -> Option<Noise> {
    Some(between(&before?, &snapshot()?))
}

#[cfg(test)]
mod tests {
    #[test]
    fn snapshots_read_and_are_sane() {
        let a = super::snapshot().expect("/proc/stat readable");
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = std::hint::black_box(x.wrapping_add(i));
        }
        let b = super::snapshot().unwrap();
        let n = super::between(&a, &b);
        assert!(n.foreign_cpus >= 0.0 && n.foreign_cpus < 1024.0);
        assert!(n.window_seconds > 0.0);
    }
}
