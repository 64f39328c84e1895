//! The exchanges that hand a cache line from one core to another, in
//! `asm!` so the compiler can neither fold nor reorder them: the
//! compare-and-swap ping-pong (x86-64 `lock cmpxchg`; AArch64 `casal`
//! where the core has LSE atomics, `ldaxr`/`stlxr` otherwise), the atomic
//! increment of the fairness view (`lock xadd`; `ldaddal` or LL/SC), and
//! the line flush HIT needs to make a line clean and the holder's alone
//! (`clflush`; `dc civac`). The HIT and HITM reads are the pointer chase
//! (`kernels::perm::chase_kernel`).
//!
//! These are not streaming kernels (no bytes per pass), so they sit
//! outside the registry; `measure::c2c` drives them on two or more pinned
//! threads.

/// Take part in a ping-pong on `line`: this side (`side` 0 or 1) waits
/// until the line holds `start + side + 2k`, swaps in that value + 1, and
/// does so for k in `0..reps`. The two sides alternate, so the line moves
/// between their cores twice per k. Returns the value this side last
/// wrote.
///
/// # Safety
/// `line` must be valid, 8-byte aligned, and written only by the two
/// sides of this ping-pong while they run; the other side must run the
/// same `start` and `reps` (or this side never returns).
pub unsafe fn cas_pingpong(line: *mut u64, start: u64, side: u64, reps: u64) -> u64 {
    if reps == 0 {
        return start;
    }
    imp::cas_pingpong(line, start + side, reps)
}

/// Increment `line` atomically until it reaches `target`; returns how
/// many of this thread's increments found it below `target` (its share).
/// The one increment that found it at or above `target` is not counted.
///
/// # Safety
/// `line` must be valid and 8-byte aligned.
pub unsafe fn increment_until(line: *mut u64, target: u64) -> u64 {
    imp::increment_until(line, target)
}

/// Write `line` back to memory and drop it from every cache (the next
/// read of it by anyone misses); [`flush_fence`] orders the flushes
/// before later loads.
///
/// # Safety
/// `line` must be a valid address.
pub unsafe fn flush(line: *const u8) {
    imp::flush(line)
}

/// Wait until earlier flushes are done.
pub fn flush_fence() {
    imp::fence()
}

#[cfg(target_arch = "x86_64")]
mod imp {
    use core::arch::asm;

    pub const CAS: &str = "lock cmpxchg";
    pub const ADD: &str = "lock xadd";

    /// `expect` is this side's first awaited value; the side swaps in
    /// `expect + 1` then awaits `expect + 2`. A failed `cmpxchg` loads
    /// the line's value into rax; the loop puts the awaited one back and
    /// tries again (a spin on the locked instruction itself, as
    /// nviennot/core-to-core-latency's `compare_exchange` loop does).
    pub unsafe fn cas_pingpong(line: *mut u64, mut expect: u64, reps: u64) -> u64 {
        let mut new = expect + 1;
        // SAFETY: the caller's contract: `line` is valid and aligned.
        asm!(
            "2:",
            "mov rax, {e}",
            "lock cmpxchg qword ptr [{p}], {n}",
            "jne 2b",
            "add {e}, 2",
            "add {n}, 2",
            "dec {r}",
            "jnz 2b",
            p = in(reg) line,
            e = inout(reg) expect,
            n = inout(reg) new,
            r = inout(reg) reps => _,
            out("rax") _,
            options(nostack),
        );
        let _ = expect;
        new - 2
    }

    pub unsafe fn increment_until(line: *mut u64, target: u64) -> u64 {
        let mut count: u64 = 0;
        // SAFETY: the caller's contract.
        asm!(
            "2:",
            "mov rax, 1",
            "lock xadd qword ptr [{p}], rax",
            "cmp rax, {t}",
            "jae 3f",
            "inc {c}",
            "jmp 2b",
            "3:",
            p = in(reg) line,
            t = in(reg) target,
            c = inout(reg) count,
            out("rax") _,
            options(nostack),
        );
        count
    }

    pub unsafe fn flush(line: *const u8) {
        // SAFETY: clflush of a valid address (SSE2, in every x86-64).
        asm!("clflush [{p}]", p = in(reg) line, options(nostack, preserves_flags));
    }

    pub fn fence() {
        // SAFETY: a fence has no operands.
        unsafe { asm!("mfence", options(nostack, preserves_flags)) };
    }
}

#[cfg(target_arch = "aarch64")]
mod imp {
    use core::arch::asm;

    pub const CAS: &str = "casal|ldaxr/stlxr";
    pub const ADD: &str = "ldaddal|ldaxr/stlxr";

    /// Whether this core has the LSE atomics (`casal`, `ldaddal`):
    /// Armv8.1 and later; std asks the system (hwcaps on Linux).
    fn lse() -> bool {
        std::arch::is_aarch64_feature_detected!("lse")
    }

    pub unsafe fn cas_pingpong(line: *mut u64, expect: u64, reps: u64) -> u64 {
        if lse() {
            cas_lse(line, expect, reps)
        } else {
            cas_llsc(line, expect, reps)
        }
    }

    #[target_feature(enable = "lse")]
    unsafe fn cas_lse(line: *mut u64, mut expect: u64, reps: u64) -> u64 {
        let mut new = expect + 1;
        // SAFETY: the caller's contract; `casal` exists (checked).
        asm!(
            "2:",
            "mov {x}, {e}",
            "casal {x}, {n}, [{p}]",
            "cmp {x}, {e}",
            "b.ne 2b",
            "add {e}, {e}, #2",
            "add {n}, {n}, #2",
            "subs {r}, {r}, #1",
            "b.ne 2b",
            p = in(reg) line,
            e = inout(reg) expect,
            n = inout(reg) new,
            r = inout(reg) reps => _,
            x = out(reg) _,
            options(nostack),
        );
        let _ = expect;
        new - 2
    }

    unsafe fn cas_llsc(line: *mut u64, mut expect: u64, reps: u64) -> u64 {
        let mut new = expect + 1;
        // SAFETY: the caller's contract. A value other than the awaited
        // one drops the exclusive monitor (`clrex`) and tries again.
        asm!(
            "2:",
            "ldaxr {x}, [{p}]",
            "cmp {x}, {e}",
            "b.ne 3f",
            "stlxr {s:w}, {n}, [{p}]",
            "cbnz {s:w}, 2b",
            "add {e}, {e}, #2",
            "add {n}, {n}, #2",
            "subs {r}, {r}, #1",
            "b.ne 2b",
            "b 4f",
            "3:",
            "clrex",
            "b 2b",
            "4:",
            p = in(reg) line,
            e = inout(reg) expect,
            n = inout(reg) new,
            r = inout(reg) reps => _,
            x = out(reg) _,
            s = out(reg) _,
            options(nostack),
        );
        let _ = expect;
        new - 2
    }

    pub unsafe fn increment_until(line: *mut u64, target: u64) -> u64 {
        if lse() {
            add_lse(line, target)
        } else {
            add_llsc(line, target)
        }
    }

    #[target_feature(enable = "lse")]
    unsafe fn add_lse(line: *mut u64, target: u64) -> u64 {
        let mut count: u64 = 0;
        // SAFETY: the caller's contract; `ldaddal` exists (checked).
        asm!(
            "mov {one}, #1",
            "2:",
            "ldaddal {one}, {old}, [{p}]",
            "cmp {old}, {t}",
            "b.hs 3f",
            "add {c}, {c}, #1",
            "b 2b",
            "3:",
            p = in(reg) line,
            t = in(reg) target,
            c = inout(reg) count,
            one = out(reg) _,
            old = out(reg) _,
            options(nostack),
        );
        count
    }

    unsafe fn add_llsc(line: *mut u64, target: u64) -> u64 {
        let mut count: u64 = 0;
        // SAFETY: the caller's contract.
        asm!(
            "2:",
            "ldaxr {old}, [{p}]",
            "add {v}, {old}, #1",
            "stlxr {s:w}, {v}, [{p}]",
            "cbnz {s:w}, 2b",
            "cmp {old}, {t}",
            "b.hs 3f",
            "add {c}, {c}, #1",
            "b 2b",
            "3:",
            p = in(reg) line,
            t = in(reg) target,
            c = inout(reg) count,
            old = out(reg) _,
            v = out(reg) _,
            s = out(reg) _,
            options(nostack),
        );
        count
    }

    pub unsafe fn flush(line: *const u8) {
        // SAFETY: clean and invalidate by address to the point of
        // coherency, a valid address; Linux lets EL0 do it (SCTLR_EL1.UCI).
        asm!("dc civac, {p}", p = in(reg) line, options(nostack, preserves_flags));
    }

    pub fn fence() {
        // SAFETY: a barrier has no operands.
        unsafe { asm!("dsb ish", options(nostack, preserves_flags)) };
    }
}

/// The instruction [`cas_pingpong`] uses on this CPU (AArch64 picks by
/// LSE).
pub fn cas_used() -> &'static str {
    pick(imp::CAS)
}

/// The instruction [`increment_until`] uses on this CPU.
pub fn increment_used() -> &'static str {
    pick(imp::ADD)
}

/// `a|b`: `a` where the core has LSE atomics, `b` otherwise.
fn pick(choices: &'static str) -> &'static str {
    match choices.split_once('|') {
        #[cfg(target_arch = "aarch64")]
        Some((lse, llsc)) => {
            if std::arch::is_aarch64_feature_detected!("lse") {
                lse
            } else {
                llsc
            }
        }
        #[cfg(not(target_arch = "aarch64"))]
        Some((one, _)) => one,
        None => choices,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;

    #[repr(align(64))]
    struct Line(AtomicU64);

    #[test]
    fn two_sides_alternate_and_leave_the_count() {
        let line = Arc::new(Line(AtomicU64::new(100)));
        let reps = 10_000;
        let hs: Vec<_> = (0..2u64)
            .map(|side| {
                let l = line.clone();
                std::thread::spawn(move || {
                    // SAFETY: an aligned atomic both sides use, same start
                    // and reps.
                    unsafe { cas_pingpong(l.0.as_ptr(), 100, side, reps) }
                })
            })
            .collect();
        let last: Vec<u64> = hs.into_iter().map(|h| h.join().unwrap()).collect();
        assert_eq!(line.0.load(Ordering::SeqCst), 100 + 2 * reps);
        assert_eq!(last, vec![100 + 2 * reps - 1, 100 + 2 * reps]);
    }

    #[test]
    fn increments_stop_at_the_target_and_count_every_one_below_it() {
        let line = Arc::new(Line(AtomicU64::new(5)));
        let hs: Vec<_> = (0..3)
            .map(|_| {
                let l = line.clone();
                // SAFETY: an aligned atomic.
                std::thread::spawn(move || unsafe { increment_until(l.0.as_ptr(), 50_005) })
            })
            .collect();
        let counts: u64 = hs.into_iter().map(|h| h.join().unwrap()).sum();
        assert_eq!(counts, 50_000);
        // Each thread's last increment found the target and went past it.
        assert_eq!(line.0.load(Ordering::SeqCst), 50_005 + 3);
    }

    #[test]
    fn a_flushed_line_keeps_its_value() {
        let l = Line(AtomicU64::new(7));
        l.0.store(9, Ordering::SeqCst);
        // SAFETY: our own line.
        unsafe { flush(l.0.as_ptr() as *const u8) };
        flush_fence();
        assert_eq!(l.0.load(Ordering::SeqCst), 9);
        assert!(!cas_used().is_empty() && !increment_used().contains('|'));
    }
}
