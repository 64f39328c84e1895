//! The core clock, measured: a timed chain of dependent adds.
//!
//! Why measured: in a VM `/proc/cpuinfo` shows the TSC rate (2.445 GHz
//! here) while the core runs at ~3.24 GHz, and there are no performance
//! counters. One `add` on a register that depends on the previous one
//! retires at one per core cycle on every x86 core since the P6, so
//! adds / second = cycles / second. Samples are short (~0.5 ms) and the best
//! is kept: a longer sample on a busy VM averages in preemption (50 ms
//! samples gave 2.41 GHz here, which is wrong).

use std::time::Instant;

/// Dependent adds per loop iteration; the loop counter runs on a separate
/// chain and costs no extra cycles.
const ADDS_PER_ITER: u64 = 64;

/// Run `iters` × 64 dependent adds.
#[inline(never)]
pub fn add_chain(iters: u64) -> u64 {
    let mut x: u64 = 0;
    #[cfg(target_arch = "x86_64")]
    // SAFETY: register-only arithmetic; iters ≥ 1 is ensured by the caller.
    unsafe {
        core::arch::asm!(
            "2:",
            ".rept 64",
            "add {x}, 1",
            ".endr",
            "dec {n}",
            "jnz 2b",
            x = inout(reg) x,
            n = inout(reg) iters.max(1) => _,
            options(nomem, nostack),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        for _ in 0..iters.max(1) * ADDS_PER_ITER {
            x = std::hint::black_box(x + 1);
        }
    }
    x
}

/// Clock estimate: the best of `samples` timings, in Hz.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct ClockEstimate {
    pub best_hz: f64,
    pub median_hz: f64,
    pub samples: usize,
}

/// Measure the core clock of the calling thread's cpu.
pub fn measure(samples: usize) -> ClockEstimate {
    let iters = 8_000u64; // 512k adds: ~0.16 ms at 3 GHz
    add_chain(iters * 4); // warm up the core's clock
    let mut hz: Vec<f64> = (0..samples.max(3))
        .map(|_| {
            let t = Instant::now();
            let x = add_chain(iters);
            let dt = t.elapsed().as_secs_f64();
            std::hint::black_box(x);
            (iters * ADDS_PER_ITER) as f64 / dt
        })
        .collect();
    hz.sort_by(|a, b| a.total_cmp(b));
    ClockEstimate {
        best_hz: *hz.last().unwrap(),
        median_hz: hz[hz.len() / 2],
        samples: hz.len(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn chain_counts_right() {
        assert_eq!(super::add_chain(3), 3 * 64);
    }

    #[test]
    fn clock_is_plausible() {
        let c = super::measure(50);
        // Any CPU this runs on is between 0.2 and 7 GHz.
        assert!(c.best_hz > 2e8 && c.best_hz < 7e9, "clock {}", c.best_hz);
        assert!(c.median_hz <= c.best_hz);
    }
}
