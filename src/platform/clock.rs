//! The core clock, measured: two timed chains of dependent
//! register-register instructions.
//!
//! Why measured: in a VM `/proc/cpuinfo` shows the TSC rate while the core
//! runs at its own clock, and there are no performance counters.
//!
//! Why these chains: a dependent `add r64, r64` retires at one per cycle
//! on every x86 core since the P6, so adds per second = cycles per
//! second. An *immediate* add does not: Golden Cove and later Intel cores
//! fold small-constant adds at rename, and a dependent `add reg, 1` chain
//! read 17–21 GHz on a Granite Rapids guest. So the increment sits in a
//! register, the loop counter is decremented by a register, and no
//! immediate appears in the timed loop (a test reads the asm text). The
//! `imul r64, r64` chain (3 cycles each on Intel Sandy Bridge and later
//! and on AMD Zen) cross-checks it: more than 3 % apart is a warning and
//! the lower is used (`model::ClockProbe`).
//!
//! Samples are short and the best is kept: a longer sample on a busy VM
//! averages in preemption (50 ms samples read 2.41 GHz on a 3.24 GHz Zen 3
//! guest). A sample in which the thread was descheduled (off its cpu for
//! more than 1 % of it: another task, or steal) timed a share of the cpu and is
//! taken again; the quick probe that found no clean sample says it has no
//! clock, so an interrupted probe never lowers a record's limit (it read
//! 3.377 GHz beside a 3.694 GHz run on a quiet Zen 4 guest, and a 4 KiB
//! copy at exactly 64 B/cycle × 3.694 GHz was flagged above its limit).
//! Sources: Chips and Cheese `CoreClockChecker` (20 × `add %r8,
//! %rbx` with r8 = 1, counter `sub %r9, %rdi`), Agner Fog's instruction
//! tables (imul), and the others `docs/uarch.md` lists.

use std::time::Instant;

use crate::model::{limits, ClockProbe};
use crate::os::time::thread_run;

/// Chain instructions per loop iteration (≥ 20 so the loop's own
/// instructions, on a separate dependency chain, stay hidden).
pub const CHAIN_LEN: u64 = 64;

/// Cycles per `imul r64, r64` in a dependent chain (Intel Sandy Bridge and
/// later, AMD Zen 1–5; Agner Fog's tables).
pub const IMUL_LATENCY: f64 = 3.0;

/// Cycles per step of the cross-check chain: `imul r64, r64` on x86-64;
/// on AArch64 `eor x, x, x`, a single-cycle ALU operation on every Arm,
/// Apple and Fujitsu core in the table (their optimization guides list
/// latency 1 for logical register-register ops), and one no core is known
/// to fuse or eliminate, unlike immediate adds on recent x86.
#[cfg(not(target_arch = "aarch64"))]
pub const SECOND_LATENCY: f64 = IMUL_LATENCY;
#[cfg(target_arch = "aarch64")]
pub const SECOND_LATENCY: f64 = 1.0;

/// The cross-check chain, as `host.clock.second_chain` names it (absent on
/// x86-64, where it is the documented imul chain).
pub fn second_chain_name() -> Option<crate::model::CrossCheck> {
    cfg!(target_arch = "aarch64").then_some(crate::model::CrossCheck::Eor)
}

// The timed loops as assembled: `{x}` carries the chain, `{inc}` (1) and
// `{mul}` (odd) are registers, `{n}` counts iterations down by `{one}`.
#[cfg(not(target_arch = "aarch64"))]
macro_rules! add_chain_asm {
    () => {
        "2:\n.rept 64\nadd {x}, {inc}\n.endr\nsub {n}, {one}\njnz 2b"
    };
}
#[cfg(not(target_arch = "aarch64"))]
macro_rules! second_chain_asm {
    () => {
        "2:\n.rept 64\nimul {x}, {mul}\n.endr\nsub {n}, {one}\njnz 2b"
    };
}
// AArch64: the same loops with three-operand instructions and a flag-
// setting register subtract (`subs`) feeding `b.ne`. The Chips and Cheese
// clock checker for Arm (`BoostClockChecker_arm.s`) times the same
// `add x, x, x` chain.
#[cfg(target_arch = "aarch64")]
macro_rules! add_chain_asm {
    () => {
        "2:\n.rept 64\nadd {x}, {x}, {inc}\n.endr\nsubs {n}, {n}, {one}\nb.ne 2b"
    };
}
#[cfg(target_arch = "aarch64")]
macro_rules! second_chain_asm {
    () => {
        "2:\n.rept 64\neor {x}, {x}, {mul}\n.endr\nsubs {n}, {n}, {one}\nb.ne 2b"
    };
}

/// The add chain's loop, exactly as `asm!` receives it.
pub const ADD_CHAIN_ASM: &str = add_chain_asm!();
/// The cross-check chain's loop (imul on x86-64, eor on AArch64), exactly
/// as `asm!` receives it.
pub const IMUL_CHAIN_ASM: &str = second_chain_asm!();

/// The odd multiplier of the imul chain (odd, so the value never collapses
/// to zero and no core can shortcut a multiply by 0 or 1); the eor chain's
/// operand on AArch64.
const MUL: u64 = 0x9E37_79B9_7F4A_7C15;

/// Run `iters` × 64 dependent `add x, inc` with `inc` = 1 in a register;
/// returns x (= 64 × iters).
#[inline(never)]
pub fn add_chain(iters: u64) -> u64 {
    let mut x: u64 = 0;
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    // SAFETY: register-only arithmetic; the counter starts at ≥ 1.
    unsafe {
        core::arch::asm!(
            add_chain_asm!(),
            x = inout(reg) x,
            inc = in(reg) 1u64,
            one = in(reg) 1u64,
            n = inout(reg) iters.max(1) => _,
            options(nomem, nostack),
        );
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        for _ in 0..iters.max(1) * CHAIN_LEN {
            x = std::hint::black_box(x + 1);
        }
    }
    x
}

/// Run `iters` × 64 dependent steps of the cross-check chain: `imul x,
/// mul` on x86-64 (returns MUL^(64 × iters) mod 2^64), `eor x, x, mul` on
/// AArch64 (an even count of steps: returns 1).
#[inline(never)]
pub fn imul_chain(iters: u64) -> u64 {
    let mut x: u64 = 1;
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    // SAFETY: register-only arithmetic; the counter starts at ≥ 1.
    unsafe {
        core::arch::asm!(
            second_chain_asm!(),
            x = inout(reg) x,
            mul = in(reg) MUL,
            one = in(reg) 1u64,
            n = inout(reg) iters.max(1) => _,
            options(nomem, nostack),
        );
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        for _ in 0..iters.max(1) * CHAIN_LEN {
            x = std::hint::black_box(x.wrapping_mul(MUL));
        }
    }
    x
}

/// A probe takes a descheduled sample again up to this many times the
/// samples it asked for.
const RETAKES: usize = 3;

/// One timed call of a chain: cycles per second, and whether the thread
/// was descheduled in it (then the rate is a time share, not the clock).
fn time_chain(chain: fn(u64) -> u64, iters: u64, cycles_per_op: f64) -> (f64, bool) {
    let before = thread_run();
    let t = Instant::now();
    std::hint::black_box(chain(iters));
    let dt = t.elapsed();
    let ran = thread_run().zip(before).map(|(after, b)| after.since(b));
    let hz = (iters * CHAIN_LEN) as f64 * cycles_per_op / dt.as_secs_f64().max(1e-9);
    (
        hz,
        ran.is_some_and(|r| r.descheduled(dt.as_nanos() as u64, limits::DESCHEDULED)),
    )
}

/// One chain's readings: the best clean one, the best of all.
#[derive(Default)]
struct Best {
    clean: usize,
    best_clean: f64,
    best_any: f64,
    retaken: usize,
}

impl Best {
    fn time(&mut self, chain: fn(u64) -> u64, iters: u64, cycles_per_op: f64) {
        let (hz, descheduled) = time_chain(chain, iters, cycles_per_op);
        self.best_any = self.best_any.max(hz);
        if descheduled {
            self.retaken += 1;
        } else {
            self.clean += 1;
            self.best_clean = self.best_clean.max(hz);
        }
    }
}

/// `samples` alternating pairs of clean samples, each chain sized to
/// ~`cycles` core cycles, descheduled ones taken again up to
/// [`RETAKES`] × `samples` times; the best clean sample of each chain.
/// A chain with no clean sample: `interrupted` says whether the best
/// descheduled one stands (the run's probe) or the probe has no clock.
fn probe(samples: usize, cycles: u64, interrupted: Interrupted) -> ClockProbe {
    let add_iters = (cycles / CHAIN_LEN).max(1);
    let imul_iters = (cycles / (CHAIN_LEN * SECOND_LATENCY as u64)).max(1);
    let samples = samples.max(1);
    let (mut add, mut imul) = (Best::default(), Best::default());
    for _ in 0..samples * (1 + RETAKES) {
        if add.clean >= samples && imul.clean >= samples {
            break;
        }
        if add.clean < samples {
            add.time(add_chain, add_iters, 1.0);
        }
        if imul.clean < samples {
            imul.time(imul_chain, imul_iters, SECOND_LATENCY);
        }
    }
    let clean = add.clean > 0 && imul.clean > 0;
    let pick = |b: &Best| if clean { b.best_clean } else { b.best_any };
    let mut p = ClockProbe::from_chains(pick(&add), pick(&imul), samples);
    p.second_chain = second_chain_name();
    p.retaken = Some(add.retaken + imul.retaken);
    if !clean && interrupted == Interrupted::NoClock {
        p.hz = None;
    }
    p
}

/// What a probe that found no clean sample says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Interrupted {
    /// The best descheduled readings stand (the run needs a clock; they
    /// can only be low).
    KeepBest,
    /// No clock: the record falls back to the run's.
    NoClock,
}

/// The run-level probe (`host.clock`): 400 pairs of ~0.15 ms samples after
/// a warm-up, ~0.15 s in all.
pub fn measure() -> ClockProbe {
    add_chain(8_000 * 4); // lets the core leave a low-power state
    probe(400, 500_000, Interrupted::KeepBest)
}

/// The cheap probe (~1.5 ms at 3 GHz) taken right after a case's samples,
/// so the clock a record is judged by is the one its kernel ran at (turbo
/// and AVX-512 frequency licences move it): 8 pairs of ~0.1 ms clean
/// samples. With no clean sample of either chain its `hz` is None, and
/// the record is judged by the run's clock: an interrupted probe never
/// lowers a record's limit.
pub fn quick() -> ClockProbe {
    probe(8, 300_000, Interrupted::NoClock)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chains_count_right() {
        assert_eq!(add_chain(3), 3 * 64);
        if cfg!(target_arch = "aarch64") {
            assert_eq!(imul_chain(2), 1);
        } else {
            assert_eq!(imul_chain(2), MUL.wrapping_pow(128));
        }
    }

    /// The timed loops use no immediate operand anywhere (Golden Cove and
    /// later fold `add reg, imm` at rename), at least 20 chain
    /// instructions per iteration, and register-register chain steps.
    #[test]
    fn probe_instructions_have_no_immediates() {
        let (second, branch, counter, arity) = if cfg!(target_arch = "aarch64") {
            ("eor", "b.ne", "subs {n}, {n}, {one}", 3)
        } else {
            ("imul", "jnz", "sub {n}, {one}", 2)
        };
        for (text, op) in [(ADD_CHAIN_ASM, "add"), (IMUL_CHAIN_ASM, second)] {
            let mut chain = 0;
            for line in text.lines().map(str::trim) {
                if line.starts_with('.') || line.ends_with(':') {
                    continue; // directives and the label
                }
                let (mnemonic, operands) = line.split_once(' ').unwrap_or((line, ""));
                if mnemonic == branch {
                    assert_eq!(operands, "2b", "{line}");
                    continue;
                }
                let ops: Vec<&str> = operands.split(',').map(str::trim).collect();
                assert_eq!(ops.len(), arity, "{line}");
                for o in &ops {
                    assert!(
                        o.starts_with('{') && o.ends_with('}'),
                        "operand {o:?} of {line:?} is not a register placeholder"
                    );
                }
                if mnemonic == op {
                    assert_eq!(ops[0], "{x}", "{line}: the chain must feed itself");
                    if arity == 3 {
                        assert_eq!(ops[1], "{x}", "{line}: the chain must feed itself");
                    }
                    chain += 1;
                } else {
                    assert_eq!(line, counter, "unexpected instruction");
                }
            }
            let rept: u64 = text
                .lines()
                .find_map(|l| l.trim().strip_prefix(".rept "))
                .and_then(|n| n.trim().parse().ok())
                .expect(".rept count");
            assert_eq!(chain, 1, "one chain instruction, repeated");
            assert_eq!(rept, CHAIN_LEN);
            assert!(rept >= 20);
        }
    }

    /// Both chains agree within 3 % on this machine, and the clock is one
    /// an x86 core can run at. A busy machine can starve one chain's
    /// samples, so a disagreement is retried before it counts. On a hybrid
    /// part the thread may run on an E-core, whose imul latency is not
    /// the P-core's 3 cycles: there only the clock's plausibility counts.
    #[test]
    fn chains_agree_and_clock_is_plausible() {
        if crate::platform::skip_timing_test("chains_agree_and_clock_is_plausible") {
            return;
        }
        let hybrid = super::super::cpu::detect_raw().hybrid;
        let mut last = None;
        for _ in 0..5 {
            let p = measure();
            if hybrid || p.disagreement() <= crate::model::limits::CLOCK_DISAGREE {
                let hz = p.hz.expect("a plausible clock");
                assert!((2e8..=6.5e9).contains(&hz), "clock {hz}");
                return;
            }
            last = Some(p);
        }
        panic!("add and imul chains disagree by more than 3 %: {last:?}");
    }

    #[test]
    fn quick_probe_is_plausible() {
        if crate::platform::skip_timing_test("quick_probe_is_plausible") {
            return;
        }
        let p = quick();
        assert!(p.hz.is_some(), "{p:?}");
        assert_eq!(p.samples, 8);
    }
}
