//! Random-order bandwidth kernels: every cache line of the working set
//! once per pass, in the order of a line permutation built before timing
//! (`KernelArgs::index`, see `kernels::perm`).
//!
//! Each iteration takes two line indices from the permutation, turns them
//! into byte offsets (`shl 6`) and reads, writes or copies both whole lines
//! with the kernel's width (16 × 32-bit … 1 × 512-bit accesses per line).
//! The only overhead next to the sequential kernels is one 4-byte index
//! load per line, which comes from a stream the prefetchers follow. Reads
//! add every word into accumulators, so the checksum equals the
//! sequential kernel's: that proves every line was read exactly once.

// Every kernel here has the one contract of `KernelFn` (documented there
// under Safety), so the per-function section would only repeat it.
#![allow(clippy::missing_safety_doc)]

use super::{Isa, Kernel, KernelArgs, Op, Pattern};
use core::arch::asm;

/// Panics unless `a` describes a valid random pass: the kernels trust the
/// indices, so a harness bug must stop here rather than read out of bounds
/// or report a pass that did not happen.
fn check(a: &KernelArgs) {
    assert!(
        !a.index.is_null()
            && a.index_len > 0
            && a.index_len % 2 == 0
            && a.index_len * 64 == a.len
            && a.reps > 0,
        "random kernel called without a matching line index (len {}, index_len {})",
        a.len,
        a.index_len
    );
}

#[target_feature(enable = "sse2")]
pub unsafe fn rand_read_32_scalar(a: &KernelArgs) -> u64 {
    check(a);
    let end = a.index.add(a.index_len);
    let r: u64;
    asm!(
        "xor {a0:e}, {a0:e}",
        "xor {a1:e}, {a1:e}",
        "xor {a2:e}, {a2:e}",
        "xor {a3:e}, {a3:e}",
        "2:",
        "mov {i}, {idx}",
        "3:",
        "mov {q0:e}, dword ptr [{i}]",
        "mov {q1:e}, dword ptr [{i} + 4]",
        "shl {q0}, 6",
        "shl {q1}, 6",
        "add {a0:e}, dword ptr [{src} + {q0}]",
        "add {a1:e}, dword ptr [{src} + {q0} + 4]",
        "add {a2:e}, dword ptr [{src} + {q0} + 8]",
        "add {a3:e}, dword ptr [{src} + {q0} + 12]",
        "add {a0:e}, dword ptr [{src} + {q0} + 16]",
        "add {a1:e}, dword ptr [{src} + {q0} + 20]",
        "add {a2:e}, dword ptr [{src} + {q0} + 24]",
        "add {a3:e}, dword ptr [{src} + {q0} + 28]",
        "add {a0:e}, dword ptr [{src} + {q0} + 32]",
        "add {a1:e}, dword ptr [{src} + {q0} + 36]",
        "add {a2:e}, dword ptr [{src} + {q0} + 40]",
        "add {a3:e}, dword ptr [{src} + {q0} + 44]",
        "add {a0:e}, dword ptr [{src} + {q0} + 48]",
        "add {a1:e}, dword ptr [{src} + {q0} + 52]",
        "add {a2:e}, dword ptr [{src} + {q0} + 56]",
        "add {a3:e}, dword ptr [{src} + {q0} + 60]",
        "add {a0:e}, dword ptr [{src} + {q1}]",
        "add {a1:e}, dword ptr [{src} + {q1} + 4]",
        "add {a2:e}, dword ptr [{src} + {q1} + 8]",
        "add {a3:e}, dword ptr [{src} + {q1} + 12]",
        "add {a0:e}, dword ptr [{src} + {q1} + 16]",
        "add {a1:e}, dword ptr [{src} + {q1} + 20]",
        "add {a2:e}, dword ptr [{src} + {q1} + 24]",
        "add {a3:e}, dword ptr [{src} + {q1} + 28]",
        "add {a0:e}, dword ptr [{src} + {q1} + 32]",
        "add {a1:e}, dword ptr [{src} + {q1} + 36]",
        "add {a2:e}, dword ptr [{src} + {q1} + 40]",
        "add {a3:e}, dword ptr [{src} + {q1} + 44]",
        "add {a0:e}, dword ptr [{src} + {q1} + 48]",
        "add {a1:e}, dword ptr [{src} + {q1} + 52]",
        "add {a2:e}, dword ptr [{src} + {q1} + 56]",
        "add {a3:e}, dword ptr [{src} + {q1} + 60]",
        "add {i}, 8",
        "cmp {i}, {end}",
        "jne 3b",
        "dec {reps}",
        "jnz 2b",
        "add {a0:e}, {a1:e}",
        "add {a2:e}, {a3:e}",
        "add {a0:e}, {a2:e}",
        idx = in(reg) a.index,
        end = in(reg) end,
        reps = inout(reg) a.reps => _,
        i = out(reg) _,
        q0 = out(reg) _,
        q1 = out(reg) _,
        src = in(reg) a.src,
        a0 = out(reg) r,
        a1 = out(reg) _,
        a2 = out(reg) _,
        a3 = out(reg) _,
        options(nostack, readonly),
    );
    r
}

#[target_feature(enable = "sse2")]
pub unsafe fn rand_write_32_scalar(a: &KernelArgs) -> u64 {
    check(a);
    let end = a.index.add(a.index_len);
    asm!(
        "2:",
        "mov {i}, {idx}",
        "3:",
        "mov {q0:e}, dword ptr [{i}]",
        "mov {q1:e}, dword ptr [{i} + 4]",
        "shl {q0}, 6",
        "shl {q1}, 6",
        "mov dword ptr [{dst} + {q0}], {pat:e}",
        "mov dword ptr [{dst} + {q0} + 4], {pat:e}",
        "mov dword ptr [{dst} + {q0} + 8], {pat:e}",
        "mov dword ptr [{dst} + {q0} + 12], {pat:e}",
        "mov dword ptr [{dst} + {q0} + 16], {pat:e}",
        "mov dword ptr [{dst} + {q0} + 20], {pat:e}",
        "mov dword ptr [{dst} + {q0} + 24], {pat:e}",
        "mov dword ptr [{dst} + {q0} + 28], {pat:e}",
        "mov dword ptr [{dst} + {q0} + 32], {pat:e}",
        "mov dword ptr [{dst} + {q0} + 36], {pat:e}",
        "mov dword ptr [{dst} + {q0} + 40], {pat:e}",
        "mov dword ptr [{dst} + {q0} + 44], {pat:e}",
        "mov dword ptr [{dst} + {q0} + 48], {pat:e}",
        "mov dword ptr [{dst} + {q0} + 52], {pat:e}",
        "mov dword ptr [{dst} + {q0} + 56], {pat:e}",
        "mov dword ptr [{dst} + {q0} + 60], {pat:e}",
        "mov dword ptr [{dst} + {q1}], {pat:e}",
        "mov dword ptr [{dst} + {q1} + 4], {pat:e}",
        "mov dword ptr [{dst} + {q1} + 8], {pat:e}",
        "mov dword ptr [{dst} + {q1} + 12], {pat:e}",
        "mov dword ptr [{dst} + {q1} + 16], {pat:e}",
        "mov dword ptr [{dst} + {q1} + 20], {pat:e}",
        "mov dword ptr [{dst} + {q1} + 24], {pat:e}",
        "mov dword ptr [{dst} + {q1} + 28], {pat:e}",
        "mov dword ptr [{dst} + {q1} + 32], {pat:e}",
        "mov dword ptr [{dst} + {q1} + 36], {pat:e}",
        "mov dword ptr [{dst} + {q1} + 40], {pat:e}",
        "mov dword ptr [{dst} + {q1} + 44], {pat:e}",
        "mov dword ptr [{dst} + {q1} + 48], {pat:e}",
        "mov dword ptr [{dst} + {q1} + 52], {pat:e}",
        "mov dword ptr [{dst} + {q1} + 56], {pat:e}",
        "mov dword ptr [{dst} + {q1} + 60], {pat:e}",
        "add {i}, 8",
        "cmp {i}, {end}",
        "jne 3b",
        "dec {reps}",
        "jnz 2b",
        idx = in(reg) a.index,
        end = in(reg) end,
        reps = inout(reg) a.reps => _,
        i = out(reg) _,
        q0 = out(reg) _,
        q1 = out(reg) _,
        dst = in(reg) a.dst,
        pat = in(reg) a.pattern,
        options(nostack),
    );
    0
}

#[target_feature(enable = "sse2")]
pub unsafe fn rand_copy_32_scalar(a: &KernelArgs) -> u64 {
    check(a);
    let end = a.index.add(a.index_len);
    asm!(
        "2:",
        "mov {i}, {idx}",
        "3:",
        "mov {q0:e}, dword ptr [{i}]",
        "mov {q1:e}, dword ptr [{i} + 4]",
        "shl {q0}, 6",
        "shl {q1}, 6",
        "mov {t0:e}, dword ptr [{src} + {q0}]",
        "mov {t1:e}, dword ptr [{src} + {q0} + 4]",
        "mov {t2:e}, dword ptr [{src} + {q0} + 8]",
        "mov {t3:e}, dword ptr [{src} + {q0} + 12]",
        "mov dword ptr [{dst} + {q0}], {t0:e}",
        "mov dword ptr [{dst} + {q0} + 4], {t1:e}",
        "mov dword ptr [{dst} + {q0} + 8], {t2:e}",
        "mov dword ptr [{dst} + {q0} + 12], {t3:e}",
        "mov {t0:e}, dword ptr [{src} + {q0} + 16]",
        "mov {t1:e}, dword ptr [{src} + {q0} + 20]",
        "mov {t2:e}, dword ptr [{src} + {q0} + 24]",
        "mov {t3:e}, dword ptr [{src} + {q0} + 28]",
        "mov dword ptr [{dst} + {q0} + 16], {t0:e}",
        "mov dword ptr [{dst} + {q0} + 20], {t1:e}",
        "mov dword ptr [{dst} + {q0} + 24], {t2:e}",
        "mov dword ptr [{dst} + {q0} + 28], {t3:e}",
        "mov {t0:e}, dword ptr [{src} + {q0} + 32]",
        "mov {t1:e}, dword ptr [{src} + {q0} + 36]",
        "mov {t2:e}, dword ptr [{src} + {q0} + 40]",
        "mov {t3:e}, dword ptr [{src} + {q0} + 44]",
        "mov dword ptr [{dst} + {q0} + 32], {t0:e}",
        "mov dword ptr [{dst} + {q0} + 36], {t1:e}",
        "mov dword ptr [{dst} + {q0} + 40], {t2:e}",
        "mov dword ptr [{dst} + {q0} + 44], {t3:e}",
        "mov {t0:e}, dword ptr [{src} + {q0} + 48]",
        "mov {t1:e}, dword ptr [{src} + {q0} + 52]",
        "mov {t2:e}, dword ptr [{src} + {q0} + 56]",
        "mov {t3:e}, dword ptr [{src} + {q0} + 60]",
        "mov dword ptr [{dst} + {q0} + 48], {t0:e}",
        "mov dword ptr [{dst} + {q0} + 52], {t1:e}",
        "mov dword ptr [{dst} + {q0} + 56], {t2:e}",
        "mov dword ptr [{dst} + {q0} + 60], {t3:e}",
        "mov {t0:e}, dword ptr [{src} + {q1}]",
        "mov {t1:e}, dword ptr [{src} + {q1} + 4]",
        "mov {t2:e}, dword ptr [{src} + {q1} + 8]",
        "mov {t3:e}, dword ptr [{src} + {q1} + 12]",
        "mov dword ptr [{dst} + {q1}], {t0:e}",
        "mov dword ptr [{dst} + {q1} + 4], {t1:e}",
        "mov dword ptr [{dst} + {q1} + 8], {t2:e}",
        "mov dword ptr [{dst} + {q1} + 12], {t3:e}",
        "mov {t0:e}, dword ptr [{src} + {q1} + 16]",
        "mov {t1:e}, dword ptr [{src} + {q1} + 20]",
        "mov {t2:e}, dword ptr [{src} + {q1} + 24]",
        "mov {t3:e}, dword ptr [{src} + {q1} + 28]",
        "mov dword ptr [{dst} + {q1} + 16], {t0:e}",
        "mov dword ptr [{dst} + {q1} + 20], {t1:e}",
        "mov dword ptr [{dst} + {q1} + 24], {t2:e}",
        "mov dword ptr [{dst} + {q1} + 28], {t3:e}",
        "mov {t0:e}, dword ptr [{src} + {q1} + 32]",
        "mov {t1:e}, dword ptr [{src} + {q1} + 36]",
        "mov {t2:e}, dword ptr [{src} + {q1} + 40]",
        "mov {t3:e}, dword ptr [{src} + {q1} + 44]",
        "mov dword ptr [{dst} + {q1} + 32], {t0:e}",
        "mov dword ptr [{dst} + {q1} + 36], {t1:e}",
        "mov dword ptr [{dst} + {q1} + 40], {t2:e}",
        "mov dword ptr [{dst} + {q1} + 44], {t3:e}",
        "mov {t0:e}, dword ptr [{src} + {q1} + 48]",
        "mov {t1:e}, dword ptr [{src} + {q1} + 52]",
        "mov {t2:e}, dword ptr [{src} + {q1} + 56]",
        "mov {t3:e}, dword ptr [{src} + {q1} + 60]",
        "mov dword ptr [{dst} + {q1} + 48], {t0:e}",
        "mov dword ptr [{dst} + {q1} + 52], {t1:e}",
        "mov dword ptr [{dst} + {q1} + 56], {t2:e}",
        "mov dword ptr [{dst} + {q1} + 60], {t3:e}",
        "add {i}, 8",
        "cmp {i}, {end}",
        "jne 3b",
        "dec {reps}",
        "jnz 2b",
        idx = in(reg) a.index,
        end = in(reg) end,
        reps = inout(reg) a.reps => _,
        i = out(reg) _,
        q0 = out(reg) _,
        q1 = out(reg) _,
        src = in(reg) a.src,
        dst = in(reg) a.dst,
        t0 = out(reg) _,
        t1 = out(reg) _,
        t2 = out(reg) _,
        t3 = out(reg) _,
        options(nostack),
    );
    0
}

#[target_feature(enable = "sse2")]
pub unsafe fn rand_read_64_scalar(a: &KernelArgs) -> u64 {
    check(a);
    let end = a.index.add(a.index_len);
    let r: u64;
    asm!(
        "xor {a0:e}, {a0:e}",
        "xor {a1:e}, {a1:e}",
        "xor {a2:e}, {a2:e}",
        "xor {a3:e}, {a3:e}",
        "2:",
        "mov {i}, {idx}",
        "3:",
        "mov {q0:e}, dword ptr [{i}]",
        "mov {q1:e}, dword ptr [{i} + 4]",
        "shl {q0}, 6",
        "shl {q1}, 6",
        "add {a0}, qword ptr [{src} + {q0}]",
        "add {a1}, qword ptr [{src} + {q0} + 8]",
        "add {a2}, qword ptr [{src} + {q0} + 16]",
        "add {a3}, qword ptr [{src} + {q0} + 24]",
        "add {a0}, qword ptr [{src} + {q0} + 32]",
        "add {a1}, qword ptr [{src} + {q0} + 40]",
        "add {a2}, qword ptr [{src} + {q0} + 48]",
        "add {a3}, qword ptr [{src} + {q0} + 56]",
        "add {a0}, qword ptr [{src} + {q1}]",
        "add {a1}, qword ptr [{src} + {q1} + 8]",
        "add {a2}, qword ptr [{src} + {q1} + 16]",
        "add {a3}, qword ptr [{src} + {q1} + 24]",
        "add {a0}, qword ptr [{src} + {q1} + 32]",
        "add {a1}, qword ptr [{src} + {q1} + 40]",
        "add {a2}, qword ptr [{src} + {q1} + 48]",
        "add {a3}, qword ptr [{src} + {q1} + 56]",
        "add {i}, 8",
        "cmp {i}, {end}",
        "jne 3b",
        "dec {reps}",
        "jnz 2b",
        "add {a0}, {a1}",
        "add {a2}, {a3}",
        "add {a0}, {a2}",
        idx = in(reg) a.index,
        end = in(reg) end,
        reps = inout(reg) a.reps => _,
        i = out(reg) _,
        q0 = out(reg) _,
        q1 = out(reg) _,
        src = in(reg) a.src,
        a0 = out(reg) r,
        a1 = out(reg) _,
        a2 = out(reg) _,
        a3 = out(reg) _,
        options(nostack, readonly),
    );
    r
}

#[target_feature(enable = "sse2")]
pub unsafe fn rand_write_64_scalar(a: &KernelArgs) -> u64 {
    check(a);
    let end = a.index.add(a.index_len);
    asm!(
        "2:",
        "mov {i}, {idx}",
        "3:",
        "mov {q0:e}, dword ptr [{i}]",
        "mov {q1:e}, dword ptr [{i} + 4]",
        "shl {q0}, 6",
        "shl {q1}, 6",
        "mov qword ptr [{dst} + {q0}], {pat}",
        "mov qword ptr [{dst} + {q0} + 8], {pat}",
        "mov qword ptr [{dst} + {q0} + 16], {pat}",
        "mov qword ptr [{dst} + {q0} + 24], {pat}",
        "mov qword ptr [{dst} + {q0} + 32], {pat}",
        "mov qword ptr [{dst} + {q0} + 40], {pat}",
        "mov qword ptr [{dst} + {q0} + 48], {pat}",
        "mov qword ptr [{dst} + {q0} + 56], {pat}",
        "mov qword ptr [{dst} + {q1}], {pat}",
        "mov qword ptr [{dst} + {q1} + 8], {pat}",
        "mov qword ptr [{dst} + {q1} + 16], {pat}",
        "mov qword ptr [{dst} + {q1} + 24], {pat}",
        "mov qword ptr [{dst} + {q1} + 32], {pat}",
        "mov qword ptr [{dst} + {q1} + 40], {pat}",
        "mov qword ptr [{dst} + {q1} + 48], {pat}",
        "mov qword ptr [{dst} + {q1} + 56], {pat}",
        "add {i}, 8",
        "cmp {i}, {end}",
        "jne 3b",
        "dec {reps}",
        "jnz 2b",
        idx = in(reg) a.index,
        end = in(reg) end,
        reps = inout(reg) a.reps => _,
        i = out(reg) _,
        q0 = out(reg) _,
        q1 = out(reg) _,
        dst = in(reg) a.dst,
        pat = in(reg) a.pattern,
        options(nostack),
    );
    0
}

#[target_feature(enable = "sse2")]
pub unsafe fn rand_copy_64_scalar(a: &KernelArgs) -> u64 {
    check(a);
    let end = a.index.add(a.index_len);
    asm!(
        "2:",
        "mov {i}, {idx}",
        "3:",
        "mov {q0:e}, dword ptr [{i}]",
        "mov {q1:e}, dword ptr [{i} + 4]",
        "shl {q0}, 6",
        "shl {q1}, 6",
        "mov {t0}, qword ptr [{src} + {q0}]",
        "mov {t1}, qword ptr [{src} + {q0} + 8]",
        "mov {t2}, qword ptr [{src} + {q0} + 16]",
        "mov {t3}, qword ptr [{src} + {q0} + 24]",
        "mov qword ptr [{dst} + {q0}], {t0}",
        "mov qword ptr [{dst} + {q0} + 8], {t1}",
        "mov qword ptr [{dst} + {q0} + 16], {t2}",
        "mov qword ptr [{dst} + {q0} + 24], {t3}",
        "mov {t0}, qword ptr [{src} + {q0} + 32]",
        "mov {t1}, qword ptr [{src} + {q0} + 40]",
        "mov {t2}, qword ptr [{src} + {q0} + 48]",
        "mov {t3}, qword ptr [{src} + {q0} + 56]",
        "mov qword ptr [{dst} + {q0} + 32], {t0}",
        "mov qword ptr [{dst} + {q0} + 40], {t1}",
        "mov qword ptr [{dst} + {q0} + 48], {t2}",
        "mov qword ptr [{dst} + {q0} + 56], {t3}",
        "mov {t0}, qword ptr [{src} + {q1}]",
        "mov {t1}, qword ptr [{src} + {q1} + 8]",
        "mov {t2}, qword ptr [{src} + {q1} + 16]",
        "mov {t3}, qword ptr [{src} + {q1} + 24]",
        "mov qword ptr [{dst} + {q1}], {t0}",
        "mov qword ptr [{dst} + {q1} + 8], {t1}",
        "mov qword ptr [{dst} + {q1} + 16], {t2}",
        "mov qword ptr [{dst} + {q1} + 24], {t3}",
        "mov {t0}, qword ptr [{src} + {q1} + 32]",
        "mov {t1}, qword ptr [{src} + {q1} + 40]",
        "mov {t2}, qword ptr [{src} + {q1} + 48]",
        "mov {t3}, qword ptr [{src} + {q1} + 56]",
        "mov qword ptr [{dst} + {q1} + 32], {t0}",
        "mov qword ptr [{dst} + {q1} + 40], {t1}",
        "mov qword ptr [{dst} + {q1} + 48], {t2}",
        "mov qword ptr [{dst} + {q1} + 56], {t3}",
        "add {i}, 8",
        "cmp {i}, {end}",
        "jne 3b",
        "dec {reps}",
        "jnz 2b",
        idx = in(reg) a.index,
        end = in(reg) end,
        reps = inout(reg) a.reps => _,
        i = out(reg) _,
        q0 = out(reg) _,
        q1 = out(reg) _,
        src = in(reg) a.src,
        dst = in(reg) a.dst,
        t0 = out(reg) _,
        t1 = out(reg) _,
        t2 = out(reg) _,
        t3 = out(reg) _,
        options(nostack),
    );
    0
}

#[target_feature(enable = "sse2")]
pub unsafe fn rand_read_128_sse2(a: &KernelArgs) -> u64 {
    check(a);
    let end = a.index.add(a.index_len);
    let r: u64;
    asm!(
        "pxor xmm0, xmm0",
        "pxor xmm1, xmm1",
        "pxor xmm2, xmm2",
        "pxor xmm3, xmm3",
        "2:",
        "mov {i}, {idx}",
        "3:",
        "mov {q0:e}, dword ptr [{i}]",
        "mov {q1:e}, dword ptr [{i} + 4]",
        "shl {q0}, 6",
        "shl {q1}, 6",
        "paddq xmm0, xmmword ptr [{src} + {q0}]",
        "paddq xmm1, xmmword ptr [{src} + {q0} + 16]",
        "paddq xmm2, xmmword ptr [{src} + {q0} + 32]",
        "paddq xmm3, xmmword ptr [{src} + {q0} + 48]",
        "paddq xmm0, xmmword ptr [{src} + {q1}]",
        "paddq xmm1, xmmword ptr [{src} + {q1} + 16]",
        "paddq xmm2, xmmword ptr [{src} + {q1} + 32]",
        "paddq xmm3, xmmword ptr [{src} + {q1} + 48]",
        "add {i}, 8",
        "cmp {i}, {end}",
        "jne 3b",
        "dec {reps}",
        "jnz 2b",
        "paddq xmm0, xmm1",
        "paddq xmm2, xmm3",
        "paddq xmm0, xmm2",
        "pshufd xmm1, xmm0, 0x4e",
        "paddq xmm0, xmm1",
        "movq {r}, xmm0",
        idx = in(reg) a.index,
        end = in(reg) end,
        reps = inout(reg) a.reps => _,
        i = out(reg) _,
        q0 = out(reg) _,
        q1 = out(reg) _,
        src = in(reg) a.src,
        r = lateout(reg) r,
        out("xmm0") _,
        out("xmm1") _,
        out("xmm2") _,
        out("xmm3") _,
        options(nostack, readonly),
    );
    r
}

#[target_feature(enable = "sse2")]
pub unsafe fn rand_write_128_sse2(a: &KernelArgs) -> u64 {
    check(a);
    let end = a.index.add(a.index_len);
    asm!(
        "movq xmm0, {pat}",
        "punpcklqdq xmm0, xmm0",
        "2:",
        "mov {i}, {idx}",
        "3:",
        "mov {q0:e}, dword ptr [{i}]",
        "mov {q1:e}, dword ptr [{i} + 4]",
        "shl {q0}, 6",
        "shl {q1}, 6",
        "movdqa xmmword ptr [{dst} + {q0}], xmm0",
        "movdqa xmmword ptr [{dst} + {q0} + 16], xmm0",
        "movdqa xmmword ptr [{dst} + {q0} + 32], xmm0",
        "movdqa xmmword ptr [{dst} + {q0} + 48], xmm0",
        "movdqa xmmword ptr [{dst} + {q1}], xmm0",
        "movdqa xmmword ptr [{dst} + {q1} + 16], xmm0",
        "movdqa xmmword ptr [{dst} + {q1} + 32], xmm0",
        "movdqa xmmword ptr [{dst} + {q1} + 48], xmm0",
        "add {i}, 8",
        "cmp {i}, {end}",
        "jne 3b",
        "dec {reps}",
        "jnz 2b",
        idx = in(reg) a.index,
        end = in(reg) end,
        reps = inout(reg) a.reps => _,
        i = out(reg) _,
        q0 = out(reg) _,
        q1 = out(reg) _,
        dst = in(reg) a.dst,
        pat = in(reg) a.pattern,
        out("xmm0") _,
        options(nostack),
    );
    0
}

#[target_feature(enable = "sse2")]
pub unsafe fn rand_copy_128_sse2(a: &KernelArgs) -> u64 {
    check(a);
    let end = a.index.add(a.index_len);
    asm!(
        "2:",
        "mov {i}, {idx}",
        "3:",
        "mov {q0:e}, dword ptr [{i}]",
        "mov {q1:e}, dword ptr [{i} + 4]",
        "shl {q0}, 6",
        "shl {q1}, 6",
        "movdqa xmm0, xmmword ptr [{src} + {q0}]",
        "movdqa xmm1, xmmword ptr [{src} + {q0} + 16]",
        "movdqa xmm2, xmmword ptr [{src} + {q0} + 32]",
        "movdqa xmm3, xmmword ptr [{src} + {q0} + 48]",
        "movdqa xmmword ptr [{dst} + {q0}], xmm0",
        "movdqa xmmword ptr [{dst} + {q0} + 16], xmm1",
        "movdqa xmmword ptr [{dst} + {q0} + 32], xmm2",
        "movdqa xmmword ptr [{dst} + {q0} + 48], xmm3",
        "movdqa xmm4, xmmword ptr [{src} + {q1}]",
        "movdqa xmm5, xmmword ptr [{src} + {q1} + 16]",
        "movdqa xmm6, xmmword ptr [{src} + {q1} + 32]",
        "movdqa xmm7, xmmword ptr [{src} + {q1} + 48]",
        "movdqa xmmword ptr [{dst} + {q1}], xmm4",
        "movdqa xmmword ptr [{dst} + {q1} + 16], xmm5",
        "movdqa xmmword ptr [{dst} + {q1} + 32], xmm6",
        "movdqa xmmword ptr [{dst} + {q1} + 48], xmm7",
        "add {i}, 8",
        "cmp {i}, {end}",
        "jne 3b",
        "dec {reps}",
        "jnz 2b",
        idx = in(reg) a.index,
        end = in(reg) end,
        reps = inout(reg) a.reps => _,
        i = out(reg) _,
        q0 = out(reg) _,
        q1 = out(reg) _,
        src = in(reg) a.src,
        dst = in(reg) a.dst,
        out("xmm0") _,
        out("xmm1") _,
        out("xmm2") _,
        out("xmm3") _,
        out("xmm4") _,
        out("xmm5") _,
        out("xmm6") _,
        out("xmm7") _,
        options(nostack),
    );
    0
}

#[target_feature(enable = "avx2")]
pub unsafe fn rand_read_256_avx2(a: &KernelArgs) -> u64 {
    check(a);
    let end = a.index.add(a.index_len);
    let r: u64;
    asm!(
        "vpxor ymm0, ymm0, ymm0",
        "vpxor ymm1, ymm1, ymm1",
        "vpxor ymm2, ymm2, ymm2",
        "vpxor ymm3, ymm3, ymm3",
        "2:",
        "mov {i}, {idx}",
        "3:",
        "mov {q0:e}, dword ptr [{i}]",
        "mov {q1:e}, dword ptr [{i} + 4]",
        "shl {q0}, 6",
        "shl {q1}, 6",
        "vpaddq ymm0, ymm0, ymmword ptr [{src} + {q0}]",
        "vpaddq ymm1, ymm1, ymmword ptr [{src} + {q0} + 32]",
        "vpaddq ymm2, ymm2, ymmword ptr [{src} + {q1}]",
        "vpaddq ymm3, ymm3, ymmword ptr [{src} + {q1} + 32]",
        "add {i}, 8",
        "cmp {i}, {end}",
        "jne 3b",
        "dec {reps}",
        "jnz 2b",
        "vpaddq ymm0, ymm0, ymm1",
        "vpaddq ymm2, ymm2, ymm3",
        "vpaddq ymm0, ymm0, ymm2",
        "vextracti128 xmm1, ymm0, 1",
        "vpaddq xmm0, xmm0, xmm1",
        "vpshufd xmm1, xmm0, 0x4e",
        "vpaddq xmm0, xmm0, xmm1",
        "vmovq {r}, xmm0",
        "vzeroupper",
        idx = in(reg) a.index,
        end = in(reg) end,
        reps = inout(reg) a.reps => _,
        i = out(reg) _,
        q0 = out(reg) _,
        q1 = out(reg) _,
        src = in(reg) a.src,
        r = lateout(reg) r,
        out("ymm0") _,
        out("ymm1") _,
        out("ymm2") _,
        out("ymm3") _,
        options(nostack, readonly),
    );
    r
}

#[target_feature(enable = "avx2")]
pub unsafe fn rand_write_256_avx2(a: &KernelArgs) -> u64 {
    check(a);
    let end = a.index.add(a.index_len);
    asm!(
        "vmovq xmm0, {pat}",
        "vpbroadcastq ymm0, xmm0",
        "2:",
        "mov {i}, {idx}",
        "3:",
        "mov {q0:e}, dword ptr [{i}]",
        "mov {q1:e}, dword ptr [{i} + 4]",
        "shl {q0}, 6",
        "shl {q1}, 6",
        "vmovdqa ymmword ptr [{dst} + {q0}], ymm0",
        "vmovdqa ymmword ptr [{dst} + {q0} + 32], ymm0",
        "vmovdqa ymmword ptr [{dst} + {q1}], ymm0",
        "vmovdqa ymmword ptr [{dst} + {q1} + 32], ymm0",
        "add {i}, 8",
        "cmp {i}, {end}",
        "jne 3b",
        "dec {reps}",
        "jnz 2b",
        "vzeroupper",
        idx = in(reg) a.index,
        end = in(reg) end,
        reps = inout(reg) a.reps => _,
        i = out(reg) _,
        q0 = out(reg) _,
        q1 = out(reg) _,
        dst = in(reg) a.dst,
        pat = in(reg) a.pattern,
        out("ymm0") _,
        options(nostack),
    );
    0
}

#[target_feature(enable = "avx2")]
pub unsafe fn rand_copy_256_avx2(a: &KernelArgs) -> u64 {
    check(a);
    let end = a.index.add(a.index_len);
    asm!(
        "2:",
        "mov {i}, {idx}",
        "3:",
        "mov {q0:e}, dword ptr [{i}]",
        "mov {q1:e}, dword ptr [{i} + 4]",
        "shl {q0}, 6",
        "shl {q1}, 6",
        "vmovdqa ymm0, ymmword ptr [{src} + {q0}]",
        "vmovdqa ymm1, ymmword ptr [{src} + {q0} + 32]",
        "vmovdqa ymmword ptr [{dst} + {q0}], ymm0",
        "vmovdqa ymmword ptr [{dst} + {q0} + 32], ymm1",
        "vmovdqa ymm2, ymmword ptr [{src} + {q1}]",
        "vmovdqa ymm3, ymmword ptr [{src} + {q1} + 32]",
        "vmovdqa ymmword ptr [{dst} + {q1}], ymm2",
        "vmovdqa ymmword ptr [{dst} + {q1} + 32], ymm3",
        "add {i}, 8",
        "cmp {i}, {end}",
        "jne 3b",
        "dec {reps}",
        "jnz 2b",
        "vzeroupper",
        idx = in(reg) a.index,
        end = in(reg) end,
        reps = inout(reg) a.reps => _,
        i = out(reg) _,
        q0 = out(reg) _,
        q1 = out(reg) _,
        src = in(reg) a.src,
        dst = in(reg) a.dst,
        out("ymm0") _,
        out("ymm1") _,
        out("ymm2") _,
        out("ymm3") _,
        options(nostack),
    );
    0
}

#[target_feature(enable = "avx512f")]
pub unsafe fn rand_read_512_avx512f(a: &KernelArgs) -> u64 {
    check(a);
    let end = a.index.add(a.index_len);
    let r: u64;
    asm!(
        "vpxorq zmm0, zmm0, zmm0",
        "vpxorq zmm1, zmm1, zmm1",
        "2:",
        "mov {i}, {idx}",
        "3:",
        "mov {q0:e}, dword ptr [{i}]",
        "mov {q1:e}, dword ptr [{i} + 4]",
        "shl {q0}, 6",
        "shl {q1}, 6",
        "vpaddq zmm0, zmm0, zmmword ptr [{src} + {q0}]",
        "vpaddq zmm1, zmm1, zmmword ptr [{src} + {q1}]",
        "add {i}, 8",
        "cmp {i}, {end}",
        "jne 3b",
        "dec {reps}",
        "jnz 2b",
        "vpaddq zmm0, zmm0, zmm1",
        "vextracti64x4 ymm1, zmm0, 1",
        "vpaddq ymm0, ymm0, ymm1",
        "vextracti128 xmm1, ymm0, 1",
        "vpaddq xmm0, xmm0, xmm1",
        "vpshufd xmm1, xmm0, 0x4e",
        "vpaddq xmm0, xmm0, xmm1",
        "vmovq {r}, xmm0",
        "vzeroupper",
        idx = in(reg) a.index,
        end = in(reg) end,
        reps = inout(reg) a.reps => _,
        i = out(reg) _,
        q0 = out(reg) _,
        q1 = out(reg) _,
        src = in(reg) a.src,
        r = lateout(reg) r,
        out("zmm0") _,
        out("zmm1") _,
        options(nostack, readonly),
    );
    r
}

#[target_feature(enable = "avx512f")]
pub unsafe fn rand_write_512_avx512f(a: &KernelArgs) -> u64 {
    check(a);
    let end = a.index.add(a.index_len);
    asm!(
        "vpbroadcastq zmm0, {pat}",
        "2:",
        "mov {i}, {idx}",
        "3:",
        "mov {q0:e}, dword ptr [{i}]",
        "mov {q1:e}, dword ptr [{i} + 4]",
        "shl {q0}, 6",
        "shl {q1}, 6",
        "vmovdqa64 zmmword ptr [{dst} + {q0}], zmm0",
        "vmovdqa64 zmmword ptr [{dst} + {q1}], zmm0",
        "add {i}, 8",
        "cmp {i}, {end}",
        "jne 3b",
        "dec {reps}",
        "jnz 2b",
        "vzeroupper",
        idx = in(reg) a.index,
        end = in(reg) end,
        reps = inout(reg) a.reps => _,
        i = out(reg) _,
        q0 = out(reg) _,
        q1 = out(reg) _,
        dst = in(reg) a.dst,
        pat = in(reg) a.pattern,
        out("zmm0") _,
        options(nostack),
    );
    0
}

#[target_feature(enable = "avx512f")]
pub unsafe fn rand_copy_512_avx512f(a: &KernelArgs) -> u64 {
    check(a);
    let end = a.index.add(a.index_len);
    asm!(
        "2:",
        "mov {i}, {idx}",
        "3:",
        "mov {q0:e}, dword ptr [{i}]",
        "mov {q1:e}, dword ptr [{i} + 4]",
        "shl {q0}, 6",
        "shl {q1}, 6",
        "vmovdqa64 zmm0, zmmword ptr [{src} + {q0}]",
        "vmovdqa64 zmmword ptr [{dst} + {q0}], zmm0",
        "vmovdqa64 zmm1, zmmword ptr [{src} + {q1}]",
        "vmovdqa64 zmmword ptr [{dst} + {q1}], zmm1",
        "add {i}, 8",
        "cmp {i}, {end}",
        "jne 3b",
        "dec {reps}",
        "jnz 2b",
        "vzeroupper",
        idx = in(reg) a.index,
        end = in(reg) end,
        reps = inout(reg) a.reps => _,
        i = out(reg) _,
        q0 = out(reg) _,
        q1 = out(reg) _,
        src = in(reg) a.src,
        dst = in(reg) a.dst,
        out("zmm0") _,
        out("zmm1") _,
        options(nostack),
    );
    0
}

const fn k(
    name: &'static str,
    op: Op,
    width_bits: u32,
    isa: Isa,
    description: &'static str,
    func: super::KernelFn,
) -> Kernel {
    Kernel {
        name,
        op,
        width_bits,
        isa,
        nontemporal: false,
        pattern: Pattern::Random,
        // Two lines per iteration.
        granule: 128,
        align: 64,
        description,
        func,
    }
}

use Isa::{Avx2, Avx512f, Scalar, Sse2};
use Op::{Copy, Read, Write};

/// Random-order kernels, reads then writes then copies.
pub static KERNELS: &[Kernel] = &[
    k(
        "rand_read_32_scalar",
        Read,
        32,
        Scalar,
        "add r32, [line] ×16 per line, lines in permuted order",
        rand_read_32_scalar,
    ),
    k(
        "rand_read_64_scalar",
        Read,
        64,
        Scalar,
        "add r64, [line] ×8 per line, lines in permuted order",
        rand_read_64_scalar,
    ),
    k(
        "rand_read_128_sse2",
        Read,
        128,
        Sse2,
        "paddq xmm, [line] ×4 per line, lines in permuted order",
        rand_read_128_sse2,
    ),
    k(
        "rand_read_256_avx2",
        Read,
        256,
        Avx2,
        "vpaddq ymm, ymm, [line] ×2 per line, lines in permuted order",
        rand_read_256_avx2,
    ),
    k(
        "rand_read_512_avx512f",
        Read,
        512,
        Avx512f,
        "vpaddq zmm, zmm, [line] per line, lines in permuted order",
        rand_read_512_avx512f,
    ),
    k(
        "rand_write_32_scalar",
        Write,
        32,
        Scalar,
        "mov [line], r32 ×16 per line, lines in permuted order",
        rand_write_32_scalar,
    ),
    k(
        "rand_write_64_scalar",
        Write,
        64,
        Scalar,
        "mov [line], r64 ×8 per line, lines in permuted order",
        rand_write_64_scalar,
    ),
    k(
        "rand_write_128_sse2",
        Write,
        128,
        Sse2,
        "movdqa [line], xmm ×4 per line, lines in permuted order",
        rand_write_128_sse2,
    ),
    k(
        "rand_write_256_avx2",
        Write,
        256,
        Avx2,
        "vmovdqa [line], ymm ×2 per line, lines in permuted order",
        rand_write_256_avx2,
    ),
    k(
        "rand_write_512_avx512f",
        Write,
        512,
        Avx512f,
        "vmovdqa64 [line], zmm per line, lines in permuted order",
        rand_write_512_avx512f,
    ),
    k(
        "rand_copy_32_scalar",
        Copy,
        32,
        Scalar,
        "mov r32 load + store ×16 per line, same permuted line in both streams",
        rand_copy_32_scalar,
    ),
    k(
        "rand_copy_64_scalar",
        Copy,
        64,
        Scalar,
        "mov r64 load + store ×8 per line, same permuted line in both streams",
        rand_copy_64_scalar,
    ),
    k(
        "rand_copy_128_sse2",
        Copy,
        128,
        Sse2,
        "movdqa load + store ×4 per line, same permuted line in both streams",
        rand_copy_128_sse2,
    ),
    k(
        "rand_copy_256_avx2",
        Copy,
        256,
        Avx2,
        "vmovdqa load + store ×2 per line, same permuted line in both streams",
        rand_copy_256_avx2,
    ),
    k(
        "rand_copy_512_avx512f",
        Copy,
        512,
        Avx512f,
        "vmovdqa64 load + store per line, same permuted line in both streams",
        rand_copy_512_avx512f,
    ),
];
