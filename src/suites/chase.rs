//! A minimal pointer chase for the NUMA suite's latency matrix and the
//! loaded-latency probe: every cache line of the working set holds the
//! address of the next one in a single random cycle (Sattolo's shuffle),
//! and the loop is one dependent `mov rax, [rax]` after another, so each
//! load waits for the previous one and the time per load is the latency.
//!
//! Kept small and self-contained on purpose: the latency suite (issue 3)
//! owns the full-featured chase; this one exists so `bwscope numa` can
//! give MLC's latency matrix and loaded-latency curve on its own.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::measure::stats;
use crate::model::Stats;
use crate::util::rng::XorShift64;

/// Bytes per chase element: one cache line, so every load misses a new line.
pub const LINE: usize = 64;

/// Write a single random cycle through the first `len` bytes of `base`
/// (line granular). Returns the start address.
///
/// # Safety
/// `base..base+len` must be writable memory owned by the caller, 64-byte
/// aligned.
pub unsafe fn build(base: *mut u8, len: usize, seed: u64) -> *const u8 {
    let n = len / LINE;
    assert!(n >= 2, "a chase needs at least two lines");
    // Sattolo: a uniformly random permutation that is one single cycle, so
    // the walk visits every line before it repeats.
    let mut order: Vec<u32> = (0..n as u32).collect();
    let mut rng = XorShift64::new(seed);
    for i in (1..n).rev() {
        let j = (rng.next_u64() % i as u64) as usize;
        order.swap(i, j);
    }
    for (i, &o) in order.iter().enumerate() {
        let next = base.add(o as usize * LINE) as usize;
        (base.add(i * LINE) as *mut usize).write(next);
    }
    base
}

/// Follow the chain `loads` times from `start` (a multiple of 8, ≥ 8).
/// Returns where it stopped, so the work is observable.
///
/// # Safety
/// `start` must be the result of [`build`] over memory still mapped.
#[cfg(target_arch = "x86_64")]
pub unsafe fn walk(start: *const u8, loads: u64) -> *const u8 {
    let mut p = start;
    let n = (loads / 8).max(1);
    core::arch::asm!(
        "2:",
        "mov {p}, [{p}]",
        "mov {p}, [{p}]",
        "mov {p}, [{p}]",
        "mov {p}, [{p}]",
        "mov {p}, [{p}]",
        "mov {p}, [{p}]",
        "mov {p}, [{p}]",
        "mov {p}, [{p}]",
        "dec {n}",
        "jnz 2b",
        p = inout(reg) p,
        n = inout(reg) n => _,
        options(nostack, readonly),
    );
    p
}

#[cfg(not(target_arch = "x86_64"))]
pub unsafe fn walk(start: *const u8, loads: u64) -> *const u8 {
    let mut p = start;
    for _ in 0..(loads / 8).max(1) * 8 {
        p = std::ptr::read_volatile(p as *const *const u8);
    }
    p
}

/// Latency samples of one chase: ns per load.
#[derive(Debug, Clone)]
pub struct Latency {
    pub loads_per_sample: u64,
    /// Nanoseconds per load, one per sample.
    pub ns: Vec<f64>,
    pub stats: Stats,
}

/// Calibrate the number of loads to `min_sample`, then take `samples`
/// samples. `None` when stopped by `stop`.
pub fn measure(
    start: *const u8,
    samples: usize,
    min_sample: Duration,
    stop: &AtomicBool,
) -> Option<Latency> {
    let mut loads: u64 = 1 << 12;
    let mut p = start;
    // Calibration doubles as warm-up (TLB, page tables, caches).
    loop {
        if stop.load(Ordering::Relaxed) {
            return None;
        }
        let t = Instant::now();
        // SAFETY: p always points into the chain built by `build`.
        p = unsafe { walk(p, loads) };
        let secs = t.elapsed().as_secs_f64();
        if secs >= min_sample.as_secs_f64() || loads >= 1 << 36 {
            break;
        }
        let f = if secs > 0.0 {
            min_sample.as_secs_f64() / secs * 1.1
        } else {
            16.0
        };
        loads = ((loads as f64 * f.clamp(1.5, 1000.0)) as u64 / 8 + 1) * 8;
    }
    let mut ns = Vec::with_capacity(samples);
    for _ in 0..samples.max(1) {
        if stop.load(Ordering::Relaxed) {
            return None;
        }
        let t = Instant::now();
        // SAFETY: as above.
        p = unsafe { walk(p, loads) };
        ns.push(t.elapsed().as_secs_f64() * 1e9 / loads as f64);
    }
    std::hint::black_box(p);
    let stats = stats::summarize(&ns, false)?;
    Some(Latency {
        loads_per_sample: loads,
        ns,
        stats,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{Buffer, PageKind};

    #[test]
    fn the_chain_is_one_cycle_through_every_line() {
        let mut b = Buffer::new(64 << 10, PageKind::Regular, 1).unwrap();
        let base = b.as_mut_ptr();
        let n = b.len() / LINE;
        // SAFETY: the buffer's own memory.
        let start = unsafe { build(base, b.len(), 9) };
        let mut seen = vec![false; n];
        let mut p = start;
        for _ in 0..n {
            let i = (p as usize - base as usize) / LINE;
            assert!(!seen[i], "line {i} visited twice before the cycle closed");
            seen[i] = true;
            // SAFETY: p points into the chain.
            p = unsafe { walk_one(p) };
        }
        assert_eq!(p, start, "the walk must return to the start after n loads");
        assert!(seen.iter().all(|&s| s));
        // The asm walk agrees with the step-by-step walk.
        // SAFETY: as above.
        let a = unsafe { walk(start, 8 * 10) };
        let mut q = start;
        for _ in 0..80 {
            q = unsafe { walk_one(q) };
        }
        assert_eq!(a, q);
    }

    unsafe fn walk_one(p: *const u8) -> *const u8 {
        (p as *const *const u8).read()
    }

    #[test]
    fn latency_is_positive_and_sane() {
        let mut b = Buffer::new(1 << 20, PageKind::Regular, 1).unwrap();
        // SAFETY: the buffer's own memory.
        let start = unsafe { build(b.as_mut_ptr(), b.len(), 3) };
        let stop = AtomicBool::new(false);
        let l = measure(start, 3, Duration::from_millis(2), &stop).unwrap();
        assert_eq!(l.ns.len(), 3);
        // A dependent load takes at least a few cycles and far below 10 µs.
        assert!(
            l.stats.best > 0.2 && l.stats.best < 10_000.0,
            "{:?}",
            l.stats
        );
    }
}
