//! The pointer chase: load-to-use latency.
//!
//! `mov p, [p]`: each load's address is the value of the previous load, so
//! no two loads overlap and the time per hop is the full load-to-use
//! latency of wherever the line lives. The chain is written into the
//! buffer before timing (`suites::latency`), as a random single cycle
//! through every line, which the prefetchers cannot predict; a strided
//! chain is also possible, and there the prefetchers may well help.

use super::{Isa, Kernel, KernelArgs, Op, Pattern};
use core::arch::asm;

/// Hops per loop iteration.
pub const HOPS_PER_REP: u64 = 16;

/// Follow the chain from `a.src` for `a.reps × 16` hops; returns where it
/// ended (the pointer after the last hop), which proves the hops happened
/// and lets tests check the chain's shape.
///
/// # Safety
/// `a.src` must point at the first node of a chain of 8-byte pointers in
/// which every pointer leads to another node of the chain.
pub unsafe fn chase_latency_64_scalar(a: &KernelArgs) -> u64 {
    if a.reps == 0 || a.src.is_null() {
        return a.src as u64;
    }
    let p: u64;
    asm!(
        "2:",
        "mov {p}, qword ptr [{p}]",
        "mov {p}, qword ptr [{p}]",
        "mov {p}, qword ptr [{p}]",
        "mov {p}, qword ptr [{p}]",
        "mov {p}, qword ptr [{p}]",
        "mov {p}, qword ptr [{p}]",
        "mov {p}, qword ptr [{p}]",
        "mov {p}, qword ptr [{p}]",
        "mov {p}, qword ptr [{p}]",
        "mov {p}, qword ptr [{p}]",
        "mov {p}, qword ptr [{p}]",
        "mov {p}, qword ptr [{p}]",
        "mov {p}, qword ptr [{p}]",
        "mov {p}, qword ptr [{p}]",
        "mov {p}, qword ptr [{p}]",
        "mov {p}, qword ptr [{p}]",
        "dec {reps}",
        "jnz 2b",
        p = inout(reg) a.src as u64 => p,
        reps = inout(reg) a.reps => _,
        options(nostack, readonly),
    );
    p
}

/// The chase kernel (used by `bwscope latency`, not by the cache sweep).
pub static KERNELS: &[Kernel] = &[Kernel {
    name: "chase_latency_64_scalar",
    op: Op::Latency,
    width_bits: 64,
    isa: Isa::Scalar,
    nontemporal: false,
    pattern: Pattern::Chase,
    granule: 64,
    align: 8,
    description: "mov r64, [r64] pointer chase, 16 dependent loads per iteration (bwscope latency)",
    func: chase_latency_64_scalar,
}];
