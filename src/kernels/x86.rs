//! x86-64 kernels in `asm!`.
//!
//! Why asm and not Rust or intrinsics: only asm fixes the exact instruction
//! (`vmovdqa` vs `vmovntdq` vs `mov r64`), the unroll and the registers, and
//! an `asm!` block without `pure` can never be hoisted or deleted. Plain
//! Rust on the default target reaches 25–50 % of the L1 peak (SSE2 only);
//! the asm here reaches 96–99 % (research notes, Zen 3).
//!
//! Shape of every loop: an outer loop over `reps` passes, an inner loop over
//! the stream in blocks of `granule` bytes with fixed offsets, `add`/`sub`/
//! `jnz` as the only overhead. Reads add every word into 4 accumulators
//! (loads go through a `vpaddq ymm, ymm, [mem]` and friends, which costs no
//! extra load slot) so the checksum proves every byte was read. AVX blocks
//! end in `vzeroupper`; non-temporal kernels end in `sfence` so the timed
//! region includes the stores reaching memory ordering.

use super::{Isa, Kernel, KernelArgs, Op, Pattern};
use core::arch::asm;

/// Read kernel: `$init` zeroes accumulators, `$body` reads one block of
/// `$block` bytes at `{p}`, `$fini` folds the accumulators into `{r}`.
macro_rules! read_kernel {
    ($name:ident, $feat:literal, $block:literal,
     [$($init:literal),*], [$($body:literal),*], [$($fini:literal),*], [$($extra:tt)*]) => {
        #[target_feature(enable = $feat)]
        pub unsafe fn $name(a: &KernelArgs) -> u64 {
            if a.len == 0 || a.reps == 0 || a.len % $block != 0 {
                return 0;
            }
            let r: u64;
            asm!(
                $($init,)*
                "2:",
                "mov {p}, {src}",
                "mov {n}, {len}",
                "3:",
                $($body,)*
                concat!("add {p}, ", $block),
                concat!("sub {n}, ", $block),
                "jnz 3b",
                "dec {reps}",
                "jnz 2b",
                $($fini,)*
                src = in(reg) a.src,
                len = in(reg) a.len,
                reps = inout(reg) a.reps => _,
                p = out(reg) _,
                n = out(reg) _,
                r = lateout(reg) r,
                $($extra)*
                options(nostack, readonly),
            );
            r
        }
    };
}

/// Write kernel: `$init` puts the pattern in a register, `$body` stores one
/// block at `{p}`.
macro_rules! write_kernel {
    ($name:ident, $feat:literal, $block:literal,
     [$($init:literal),*], [$($body:literal),*], [$($fini:literal),*], [$($extra:tt)*]) => {
        #[target_feature(enable = $feat)]
        pub unsafe fn $name(a: &KernelArgs) -> u64 {
            if a.len == 0 || a.reps == 0 || a.len % $block != 0 {
                return 0;
            }
            asm!(
                $($init,)*
                "2:",
                "mov {p}, {dst}",
                "mov {n}, {len}",
                "3:",
                $($body,)*
                concat!("add {p}, ", $block),
                concat!("sub {n}, ", $block),
                "jnz 3b",
                "dec {reps}",
                "jnz 2b",
                $($fini,)*
                dst = in(reg) a.dst,
                len = in(reg) a.len,
                reps = inout(reg) a.reps => _,
                pat = in(reg) a.pattern,
                p = out(reg) _,
                n = out(reg) _,
                $($extra)*
                options(nostack),
            );
            0
        }
    };
}

/// Copy kernel: `$body` loads one block at `{s}` and stores it at `{d}`.
macro_rules! copy_kernel {
    ($name:ident, $feat:literal, $block:literal,
     [$($body:literal),*], [$($fini:literal),*], [$($extra:tt)*]) => {
        #[target_feature(enable = $feat)]
        pub unsafe fn $name(a: &KernelArgs) -> u64 {
            if a.len == 0 || a.reps == 0 || a.len % $block != 0 {
                return 0;
            }
            asm!(
                "2:",
                "mov {s}, {src}",
                "mov {d}, {dst}",
                "mov {n}, {len}",
                "3:",
                $($body,)*
                concat!("add {s}, ", $block),
                concat!("add {d}, ", $block),
                concat!("sub {n}, ", $block),
                "jnz 3b",
                "dec {reps}",
                "jnz 2b",
                $($fini,)*
                src = in(reg) a.src,
                dst = in(reg) a.dst,
                len = in(reg) a.len,
                reps = inout(reg) a.reps => _,
                s = out(reg) _,
                d = out(reg) _,
                n = out(reg) _,
                $($extra)*
                options(nostack),
            );
            0
        }
    };
}

// ---------------------------------------------------------------- 32-bit

read_kernel!(seq_read_32_scalar, "sse2", 64,
    ["xor {a0:e}, {a0:e}", "xor {a1:e}, {a1:e}", "xor {a2:e}, {a2:e}", "xor {a3:e}, {a3:e}"],
    ["add {a0:e}, [{p}]", "add {a1:e}, [{p} + 4]", "add {a2:e}, [{p} + 8]", "add {a3:e}, [{p} + 12]",
     "add {a0:e}, [{p} + 16]", "add {a1:e}, [{p} + 20]", "add {a2:e}, [{p} + 24]", "add {a3:e}, [{p} + 28]",
     "add {a0:e}, [{p} + 32]", "add {a1:e}, [{p} + 36]", "add {a2:e}, [{p} + 40]", "add {a3:e}, [{p} + 44]",
     "add {a0:e}, [{p} + 48]", "add {a1:e}, [{p} + 52]", "add {a2:e}, [{p} + 56]", "add {a3:e}, [{p} + 60]"],
    ["add {a0:e}, {a1:e}", "add {a2:e}, {a3:e}", "add {a0:e}, {a2:e}", "mov {r:e}, {a0:e}"],
    [a0 = out(reg) _, a1 = out(reg) _, a2 = out(reg) _, a3 = out(reg) _,]);

write_kernel!(seq_write_32_scalar, "sse2", 64, [],
    ["mov [{p}], {pat:e}", "mov [{p} + 4], {pat:e}", "mov [{p} + 8], {pat:e}", "mov [{p} + 12], {pat:e}",
     "mov [{p} + 16], {pat:e}", "mov [{p} + 20], {pat:e}", "mov [{p} + 24], {pat:e}", "mov [{p} + 28], {pat:e}",
     "mov [{p} + 32], {pat:e}", "mov [{p} + 36], {pat:e}", "mov [{p} + 40], {pat:e}", "mov [{p} + 44], {pat:e}",
     "mov [{p} + 48], {pat:e}", "mov [{p} + 52], {pat:e}", "mov [{p} + 56], {pat:e}", "mov [{p} + 60], {pat:e}"],
    [], []);

write_kernel!(seq_write_32_nt_scalar, "sse2", 64, [],
    ["movnti [{p}], {pat:e}", "movnti [{p} + 4], {pat:e}", "movnti [{p} + 8], {pat:e}", "movnti [{p} + 12], {pat:e}",
     "movnti [{p} + 16], {pat:e}", "movnti [{p} + 20], {pat:e}", "movnti [{p} + 24], {pat:e}", "movnti [{p} + 28], {pat:e}",
     "movnti [{p} + 32], {pat:e}", "movnti [{p} + 36], {pat:e}", "movnti [{p} + 40], {pat:e}", "movnti [{p} + 44], {pat:e}",
     "movnti [{p} + 48], {pat:e}", "movnti [{p} + 52], {pat:e}", "movnti [{p} + 56], {pat:e}", "movnti [{p} + 60], {pat:e}"],
    ["sfence"], []);

copy_kernel!(seq_copy_32_scalar, "sse2", 32,
    ["mov {t0:e}, [{s}]", "mov {t1:e}, [{s} + 4]", "mov {t2:e}, [{s} + 8]", "mov {t3:e}, [{s} + 12]",
     "mov [{d}], {t0:e}", "mov [{d} + 4], {t1:e}", "mov [{d} + 8], {t2:e}", "mov [{d} + 12], {t3:e}",
     "mov {t0:e}, [{s} + 16]", "mov {t1:e}, [{s} + 20]", "mov {t2:e}, [{s} + 24]", "mov {t3:e}, [{s} + 28]",
     "mov [{d} + 16], {t0:e}", "mov [{d} + 20], {t1:e}", "mov [{d} + 24], {t2:e}", "mov [{d} + 28], {t3:e}"],
    [], [t0 = out(reg) _, t1 = out(reg) _, t2 = out(reg) _, t3 = out(reg) _,]);

copy_kernel!(seq_copy_32_nt_scalar, "sse2", 32,
    ["mov {t0:e}, [{s}]", "mov {t1:e}, [{s} + 4]", "mov {t2:e}, [{s} + 8]", "mov {t3:e}, [{s} + 12]",
     "movnti [{d}], {t0:e}", "movnti [{d} + 4], {t1:e}", "movnti [{d} + 8], {t2:e}", "movnti [{d} + 12], {t3:e}",
     "mov {t0:e}, [{s} + 16]", "mov {t1:e}, [{s} + 20]", "mov {t2:e}, [{s} + 24]", "mov {t3:e}, [{s} + 28]",
     "movnti [{d} + 16], {t0:e}", "movnti [{d} + 20], {t1:e}", "movnti [{d} + 24], {t2:e}", "movnti [{d} + 28], {t3:e}"],
    ["sfence"], [t0 = out(reg) _, t1 = out(reg) _, t2 = out(reg) _, t3 = out(reg) _,]);

// ---------------------------------------------------------------- 64-bit

read_kernel!(seq_read_64_scalar, "sse2", 128,
    ["xor {a0:e}, {a0:e}", "xor {a1:e}, {a1:e}", "xor {a2:e}, {a2:e}", "xor {a3:e}, {a3:e}"],
    ["add {a0}, [{p}]", "add {a1}, [{p} + 8]", "add {a2}, [{p} + 16]", "add {a3}, [{p} + 24]",
     "add {a0}, [{p} + 32]", "add {a1}, [{p} + 40]", "add {a2}, [{p} + 48]", "add {a3}, [{p} + 56]",
     "add {a0}, [{p} + 64]", "add {a1}, [{p} + 72]", "add {a2}, [{p} + 80]", "add {a3}, [{p} + 88]",
     "add {a0}, [{p} + 96]", "add {a1}, [{p} + 104]", "add {a2}, [{p} + 112]", "add {a3}, [{p} + 120]"],
    ["add {a0}, {a1}", "add {a2}, {a3}", "add {a0}, {a2}", "mov {r}, {a0}"],
    [a0 = out(reg) _, a1 = out(reg) _, a2 = out(reg) _, a3 = out(reg) _,]);

write_kernel!(seq_write_64_scalar, "sse2", 128, [],
    ["mov [{p}], {pat}", "mov [{p} + 8], {pat}", "mov [{p} + 16], {pat}", "mov [{p} + 24], {pat}",
     "mov [{p} + 32], {pat}", "mov [{p} + 40], {pat}", "mov [{p} + 48], {pat}", "mov [{p} + 56], {pat}",
     "mov [{p} + 64], {pat}", "mov [{p} + 72], {pat}", "mov [{p} + 80], {pat}", "mov [{p} + 88], {pat}",
     "mov [{p} + 96], {pat}", "mov [{p} + 104], {pat}", "mov [{p} + 112], {pat}", "mov [{p} + 120], {pat}"],
    [], []);

write_kernel!(seq_write_64_nt_scalar, "sse2", 128, [],
    ["movnti [{p}], {pat}", "movnti [{p} + 8], {pat}", "movnti [{p} + 16], {pat}", "movnti [{p} + 24], {pat}",
     "movnti [{p} + 32], {pat}", "movnti [{p} + 40], {pat}", "movnti [{p} + 48], {pat}", "movnti [{p} + 56], {pat}",
     "movnti [{p} + 64], {pat}", "movnti [{p} + 72], {pat}", "movnti [{p} + 80], {pat}", "movnti [{p} + 88], {pat}",
     "movnti [{p} + 96], {pat}", "movnti [{p} + 104], {pat}", "movnti [{p} + 112], {pat}", "movnti [{p} + 120], {pat}"],
    ["sfence"], []);

copy_kernel!(seq_copy_64_scalar, "sse2", 64,
    ["mov {t0}, [{s}]", "mov {t1}, [{s} + 8]", "mov {t2}, [{s} + 16]", "mov {t3}, [{s} + 24]",
     "mov [{d}], {t0}", "mov [{d} + 8], {t1}", "mov [{d} + 16], {t2}", "mov [{d} + 24], {t3}",
     "mov {t0}, [{s} + 32]", "mov {t1}, [{s} + 40]", "mov {t2}, [{s} + 48]", "mov {t3}, [{s} + 56]",
     "mov [{d} + 32], {t0}", "mov [{d} + 40], {t1}", "mov [{d} + 48], {t2}", "mov [{d} + 56], {t3}"],
    [], [t0 = out(reg) _, t1 = out(reg) _, t2 = out(reg) _, t3 = out(reg) _,]);

copy_kernel!(seq_copy_64_nt_scalar, "sse2", 64,
    ["mov {t0}, [{s}]", "mov {t1}, [{s} + 8]", "mov {t2}, [{s} + 16]", "mov {t3}, [{s} + 24]",
     "movnti [{d}], {t0}", "movnti [{d} + 8], {t1}", "movnti [{d} + 16], {t2}", "movnti [{d} + 24], {t3}",
     "mov {t0}, [{s} + 32]", "mov {t1}, [{s} + 40]", "mov {t2}, [{s} + 48]", "mov {t3}, [{s} + 56]",
     "movnti [{d} + 32], {t0}", "movnti [{d} + 40], {t1}", "movnti [{d} + 48], {t2}", "movnti [{d} + 56], {t3}"],
    ["sfence"], [t0 = out(reg) _, t1 = out(reg) _, t2 = out(reg) _, t3 = out(reg) _,]);

// ---------------------------------------------------------------- 128-bit SSE2

read_kernel!(seq_read_128_sse2, "sse2", 128,
    ["pxor xmm0, xmm0", "pxor xmm1, xmm1", "pxor xmm2, xmm2", "pxor xmm3, xmm3"],
    ["paddq xmm0, [{p}]", "paddq xmm1, [{p} + 16]", "paddq xmm2, [{p} + 32]", "paddq xmm3, [{p} + 48]",
     "paddq xmm0, [{p} + 64]", "paddq xmm1, [{p} + 80]", "paddq xmm2, [{p} + 96]", "paddq xmm3, [{p} + 112]"],
    ["paddq xmm0, xmm1", "paddq xmm2, xmm3", "paddq xmm0, xmm2", "pshufd xmm1, xmm0, 0x4e",
     "paddq xmm0, xmm1", "movq {r}, xmm0"],
    [out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,]);

write_kernel!(seq_write_128_sse2, "sse2", 128,
    ["movq xmm0, {pat}", "punpcklqdq xmm0, xmm0"],
    ["movdqa [{p}], xmm0", "movdqa [{p} + 16], xmm0", "movdqa [{p} + 32], xmm0", "movdqa [{p} + 48], xmm0",
     "movdqa [{p} + 64], xmm0", "movdqa [{p} + 80], xmm0", "movdqa [{p} + 96], xmm0", "movdqa [{p} + 112], xmm0"],
    [], [out("xmm0") _,]);

write_kernel!(seq_write_128_nt_sse2, "sse2", 128,
    ["movq xmm0, {pat}", "punpcklqdq xmm0, xmm0"],
    ["movntdq [{p}], xmm0", "movntdq [{p} + 16], xmm0", "movntdq [{p} + 32], xmm0", "movntdq [{p} + 48], xmm0",
     "movntdq [{p} + 64], xmm0", "movntdq [{p} + 80], xmm0", "movntdq [{p} + 96], xmm0", "movntdq [{p} + 112], xmm0"],
    ["sfence"], [out("xmm0") _,]);

copy_kernel!(seq_copy_128_sse2, "sse2", 128,
    ["movdqa xmm0, [{s}]", "movdqa xmm1, [{s} + 16]", "movdqa xmm2, [{s} + 32]", "movdqa xmm3, [{s} + 48]",
     "movdqa xmm4, [{s} + 64]", "movdqa xmm5, [{s} + 80]", "movdqa xmm6, [{s} + 96]", "movdqa xmm7, [{s} + 112]",
     "movdqa [{d}], xmm0", "movdqa [{d} + 16], xmm1", "movdqa [{d} + 32], xmm2", "movdqa [{d} + 48], xmm3",
     "movdqa [{d} + 64], xmm4", "movdqa [{d} + 80], xmm5", "movdqa [{d} + 96], xmm6", "movdqa [{d} + 112], xmm7"],
    [], [out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
         out("xmm4") _, out("xmm5") _, out("xmm6") _, out("xmm7") _,]);

copy_kernel!(seq_copy_128_nt_sse2, "sse2", 128,
    ["movdqa xmm0, [{s}]", "movdqa xmm1, [{s} + 16]", "movdqa xmm2, [{s} + 32]", "movdqa xmm3, [{s} + 48]",
     "movdqa xmm4, [{s} + 64]", "movdqa xmm5, [{s} + 80]", "movdqa xmm6, [{s} + 96]", "movdqa xmm7, [{s} + 112]",
     "movntdq [{d}], xmm0", "movntdq [{d} + 16], xmm1", "movntdq [{d} + 32], xmm2", "movntdq [{d} + 48], xmm3",
     "movntdq [{d} + 64], xmm4", "movntdq [{d} + 80], xmm5", "movntdq [{d} + 96], xmm6", "movntdq [{d} + 112], xmm7"],
    ["sfence"], [out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
         out("xmm4") _, out("xmm5") _, out("xmm6") _, out("xmm7") _,]);

// ---------------------------------------------------------------- 256-bit AVX2

read_kernel!(seq_read_256_avx2, "avx2", 256,
    ["vpxor ymm0, ymm0, ymm0", "vpxor ymm1, ymm1, ymm1", "vpxor ymm2, ymm2, ymm2", "vpxor ymm3, ymm3, ymm3"],
    ["vpaddq ymm0, ymm0, [{p}]", "vpaddq ymm1, ymm1, [{p} + 32]", "vpaddq ymm2, ymm2, [{p} + 64]",
     "vpaddq ymm3, ymm3, [{p} + 96]", "vpaddq ymm0, ymm0, [{p} + 128]", "vpaddq ymm1, ymm1, [{p} + 160]",
     "vpaddq ymm2, ymm2, [{p} + 192]", "vpaddq ymm3, ymm3, [{p} + 224]"],
    ["vpaddq ymm0, ymm0, ymm1", "vpaddq ymm2, ymm2, ymm3", "vpaddq ymm0, ymm0, ymm2",
     "vextracti128 xmm1, ymm0, 1", "vpaddq xmm0, xmm0, xmm1", "vpshufd xmm1, xmm0, 0x4e",
     "vpaddq xmm0, xmm0, xmm1", "vmovq {r}, xmm0", "vzeroupper"],
    [out("ymm0") _, out("ymm1") _, out("ymm2") _, out("ymm3") _,]);

write_kernel!(seq_write_256_avx2, "avx2", 256,
    ["vmovq xmm0, {pat}", "vpbroadcastq ymm0, xmm0"],
    ["vmovdqa [{p}], ymm0", "vmovdqa [{p} + 32], ymm0", "vmovdqa [{p} + 64], ymm0", "vmovdqa [{p} + 96], ymm0",
     "vmovdqa [{p} + 128], ymm0", "vmovdqa [{p} + 160], ymm0", "vmovdqa [{p} + 192], ymm0", "vmovdqa [{p} + 224], ymm0"],
    ["vzeroupper"], [out("ymm0") _,]);

write_kernel!(seq_write_256_nt_avx2, "avx2", 256,
    ["vmovq xmm0, {pat}", "vpbroadcastq ymm0, xmm0"],
    ["vmovntdq [{p}], ymm0", "vmovntdq [{p} + 32], ymm0", "vmovntdq [{p} + 64], ymm0", "vmovntdq [{p} + 96], ymm0",
     "vmovntdq [{p} + 128], ymm0", "vmovntdq [{p} + 160], ymm0", "vmovntdq [{p} + 192], ymm0", "vmovntdq [{p} + 224], ymm0"],
    ["sfence", "vzeroupper"], [out("ymm0") _,]);

copy_kernel!(seq_copy_256_avx2, "avx2", 256,
    ["vmovdqa ymm0, [{s}]", "vmovdqa ymm1, [{s} + 32]", "vmovdqa ymm2, [{s} + 64]", "vmovdqa ymm3, [{s} + 96]",
     "vmovdqa ymm4, [{s} + 128]", "vmovdqa ymm5, [{s} + 160]", "vmovdqa ymm6, [{s} + 192]", "vmovdqa ymm7, [{s} + 224]",
     "vmovdqa [{d}], ymm0", "vmovdqa [{d} + 32], ymm1", "vmovdqa [{d} + 64], ymm2", "vmovdqa [{d} + 96], ymm3",
     "vmovdqa [{d} + 128], ymm4", "vmovdqa [{d} + 160], ymm5", "vmovdqa [{d} + 192], ymm6", "vmovdqa [{d} + 224], ymm7"],
    ["vzeroupper"], [out("ymm0") _, out("ymm1") _, out("ymm2") _, out("ymm3") _,
         out("ymm4") _, out("ymm5") _, out("ymm6") _, out("ymm7") _,]);

copy_kernel!(seq_copy_256_nt_avx2, "avx2", 256,
    ["vmovdqa ymm0, [{s}]", "vmovdqa ymm1, [{s} + 32]", "vmovdqa ymm2, [{s} + 64]", "vmovdqa ymm3, [{s} + 96]",
     "vmovdqa ymm4, [{s} + 128]", "vmovdqa ymm5, [{s} + 160]", "vmovdqa ymm6, [{s} + 192]", "vmovdqa ymm7, [{s} + 224]",
     "vmovntdq [{d}], ymm0", "vmovntdq [{d} + 32], ymm1", "vmovntdq [{d} + 64], ymm2", "vmovntdq [{d} + 96], ymm3",
     "vmovntdq [{d} + 128], ymm4", "vmovntdq [{d} + 160], ymm5", "vmovntdq [{d} + 192], ymm6", "vmovntdq [{d} + 224], ymm7"],
    ["sfence", "vzeroupper"], [out("ymm0") _, out("ymm1") _, out("ymm2") _, out("ymm3") _,
         out("ymm4") _, out("ymm5") _, out("ymm6") _, out("ymm7") _,]);

// ---------------------------------------------------------------- 512-bit AVX-512

read_kernel!(seq_read_512_avx512f, "avx512f", 512,
    ["vpxorq zmm0, zmm0, zmm0", "vpxorq zmm1, zmm1, zmm1", "vpxorq zmm2, zmm2, zmm2", "vpxorq zmm3, zmm3, zmm3"],
    ["vpaddq zmm0, zmm0, [{p}]", "vpaddq zmm1, zmm1, [{p} + 64]", "vpaddq zmm2, zmm2, [{p} + 128]",
     "vpaddq zmm3, zmm3, [{p} + 192]", "vpaddq zmm0, zmm0, [{p} + 256]", "vpaddq zmm1, zmm1, [{p} + 320]",
     "vpaddq zmm2, zmm2, [{p} + 384]", "vpaddq zmm3, zmm3, [{p} + 448]"],
    ["vpaddq zmm0, zmm0, zmm1", "vpaddq zmm2, zmm2, zmm3", "vpaddq zmm0, zmm0, zmm2",
     "vextracti64x4 ymm1, zmm0, 1", "vpaddq ymm0, ymm0, ymm1",
     "vextracti128 xmm1, ymm0, 1", "vpaddq xmm0, xmm0, xmm1", "vpshufd xmm1, xmm0, 0x4e",
     "vpaddq xmm0, xmm0, xmm1", "vmovq {r}, xmm0", "vzeroupper"],
    [out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _,]);

write_kernel!(seq_write_512_avx512f, "avx512f", 512,
    ["vpbroadcastq zmm0, {pat}"],
    ["vmovdqa64 [{p}], zmm0", "vmovdqa64 [{p} + 64], zmm0", "vmovdqa64 [{p} + 128], zmm0", "vmovdqa64 [{p} + 192], zmm0",
     "vmovdqa64 [{p} + 256], zmm0", "vmovdqa64 [{p} + 320], zmm0", "vmovdqa64 [{p} + 384], zmm0", "vmovdqa64 [{p} + 448], zmm0"],
    ["vzeroupper"], [out("zmm0") _,]);

write_kernel!(seq_write_512_nt_avx512f, "avx512f", 512,
    ["vpbroadcastq zmm0, {pat}"],
    ["vmovntdq [{p}], zmm0", "vmovntdq [{p} + 64], zmm0", "vmovntdq [{p} + 128], zmm0", "vmovntdq [{p} + 192], zmm0",
     "vmovntdq [{p} + 256], zmm0", "vmovntdq [{p} + 320], zmm0", "vmovntdq [{p} + 384], zmm0", "vmovntdq [{p} + 448], zmm0"],
    ["sfence", "vzeroupper"], [out("zmm0") _,]);

copy_kernel!(seq_copy_512_avx512f, "avx512f", 512,
    ["vmovdqa64 zmm0, [{s}]", "vmovdqa64 zmm1, [{s} + 64]", "vmovdqa64 zmm2, [{s} + 128]", "vmovdqa64 zmm3, [{s} + 192]",
     "vmovdqa64 zmm4, [{s} + 256]", "vmovdqa64 zmm5, [{s} + 320]", "vmovdqa64 zmm6, [{s} + 384]", "vmovdqa64 zmm7, [{s} + 448]",
     "vmovdqa64 [{d}], zmm0", "vmovdqa64 [{d} + 64], zmm1", "vmovdqa64 [{d} + 128], zmm2", "vmovdqa64 [{d} + 192], zmm3",
     "vmovdqa64 [{d} + 256], zmm4", "vmovdqa64 [{d} + 320], zmm5", "vmovdqa64 [{d} + 384], zmm6", "vmovdqa64 [{d} + 448], zmm7"],
    ["vzeroupper"], [out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _,
         out("zmm4") _, out("zmm5") _, out("zmm6") _, out("zmm7") _,]);

copy_kernel!(seq_copy_512_nt_avx512f, "avx512f", 512,
    ["vmovdqa64 zmm0, [{s}]", "vmovdqa64 zmm1, [{s} + 64]", "vmovdqa64 zmm2, [{s} + 128]", "vmovdqa64 zmm3, [{s} + 192]",
     "vmovdqa64 zmm4, [{s} + 256]", "vmovdqa64 zmm5, [{s} + 320]", "vmovdqa64 zmm6, [{s} + 384]", "vmovdqa64 zmm7, [{s} + 448]",
     "vmovntdq [{d}], zmm0", "vmovntdq [{d} + 64], zmm1", "vmovntdq [{d} + 128], zmm2", "vmovntdq [{d} + 192], zmm3",
     "vmovntdq [{d} + 256], zmm4", "vmovntdq [{d} + 320], zmm5", "vmovntdq [{d} + 384], zmm6", "vmovntdq [{d} + 448], zmm7"],
    ["sfence", "vzeroupper"], [out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _,
         out("zmm4") _, out("zmm5") _, out("zmm6") _, out("zmm7") _,]);

// ---------------------------------------------------------------- string instructions

/// `rep movsb`: the microcoded copy; with ERMS it picks its own strategy
/// and, above a size threshold, avoids the read-for-ownership.
pub unsafe fn rep_movsb(a: &KernelArgs) -> u64 {
    if a.len == 0 || a.reps == 0 {
        return 0;
    }
    // The ABI guarantees DF = 0 on entry to asm!, so the copy runs forward.
    asm!(
        "2:",
        "mov rsi, {src}",
        "mov rdi, {dst}",
        "mov rcx, {len}",
        "rep movsb",
        "dec {reps}",
        "jnz 2b",
        src = in(reg) a.src,
        dst = in(reg) a.dst,
        len = in(reg) a.len,
        reps = inout(reg) a.reps => _,
        out("rsi") _, out("rdi") _, out("rcx") _,
        options(nostack),
    );
    0
}

/// `rep stosb`: the microcoded fill, storing the pattern's low byte.
pub unsafe fn rep_stosb(a: &KernelArgs) -> u64 {
    if a.len == 0 || a.reps == 0 {
        return 0;
    }
    asm!(
        "2:",
        "mov rdi, {dst}",
        "mov rcx, {len}",
        "rep stosb",
        "dec {reps}",
        "jnz 2b",
        dst = in(reg) a.dst,
        len = in(reg) a.len,
        reps = inout(reg) a.reps => _,
        in("al") a.pattern as u8,
        out("rdi") _, out("rcx") _,
        options(nostack),
    );
    0
}

// ---------------------------------------------------------------- registry

const fn k(
    name: &'static str,
    op: Op,
    width_bits: u32,
    isa: Isa,
    nontemporal: bool,
    granule: usize,
    description: &'static str,
    func: super::KernelFn,
) -> Kernel {
    Kernel {
        name,
        op,
        width_bits,
        isa,
        nontemporal,
        pattern: Pattern::Seq,
        granule,
        align: if width_bits >= 64 { width_bits as usize / 8 } else { 4 },
        description,
        func,
    }
}

use Isa::{Avx2, Avx512f, Scalar, Sse2};
use Op::{Copy, Read, Write};

/// All x86 kernels followed by the libc ones.
pub static KERNELS_AND_LIBC: &[Kernel] = &[
    k("seq_read_32_scalar", Read, 32, Scalar, false, 64, "add r32, [mem] into 4 accumulators", seq_read_32_scalar),
    k("seq_read_64_scalar", Read, 64, Scalar, false, 128, "add r64, [mem] into 4 accumulators", seq_read_64_scalar),
    k("seq_read_128_sse2", Read, 128, Sse2, false, 128, "paddq xmm, [mem] into 4 accumulators", seq_read_128_sse2),
    k("seq_read_256_avx2", Read, 256, Avx2, false, 256, "vpaddq ymm, ymm, [mem] into 4 accumulators", seq_read_256_avx2),
    k("seq_read_512_avx512f", Read, 512, Avx512f, false, 512, "vpaddq zmm, zmm, [mem] into 4 accumulators", seq_read_512_avx512f),
    k("seq_write_32_scalar", Write, 32, Scalar, false, 64, "mov [mem], r32", seq_write_32_scalar),
    k("seq_write_64_scalar", Write, 64, Scalar, false, 128, "mov [mem], r64", seq_write_64_scalar),
    k("seq_write_128_sse2", Write, 128, Sse2, false, 128, "movdqa [mem], xmm", seq_write_128_sse2),
    k("seq_write_256_avx2", Write, 256, Avx2, false, 256, "vmovdqa [mem], ymm", seq_write_256_avx2),
    k("seq_write_512_avx512f", Write, 512, Avx512f, false, 512, "vmovdqa64 [mem], zmm", seq_write_512_avx512f),
    k("seq_write_32_nt_scalar", Write, 32, Scalar, true, 64, "movnti [mem], r32 + sfence (bypasses caches)", seq_write_32_nt_scalar),
    k("seq_write_64_nt_scalar", Write, 64, Scalar, true, 128, "movnti [mem], r64 + sfence (bypasses caches)", seq_write_64_nt_scalar),
    k("seq_write_128_nt_sse2", Write, 128, Sse2, true, 128, "movntdq [mem], xmm + sfence (bypasses caches)", seq_write_128_nt_sse2),
    k("seq_write_256_nt_avx2", Write, 256, Avx2, true, 256, "vmovntdq [mem], ymm + sfence (bypasses caches)", seq_write_256_nt_avx2),
    k("seq_write_512_nt_avx512f", Write, 512, Avx512f, true, 512, "vmovntdq [mem], zmm + sfence (bypasses caches)", seq_write_512_nt_avx512f),
    k("seq_copy_32_scalar", Copy, 32, Scalar, false, 32, "mov r32 load + store", seq_copy_32_scalar),
    k("seq_copy_64_scalar", Copy, 64, Scalar, false, 64, "mov r64 load + store", seq_copy_64_scalar),
    k("seq_copy_128_sse2", Copy, 128, Sse2, false, 128, "movdqa load + store", seq_copy_128_sse2),
    k("seq_copy_256_avx2", Copy, 256, Avx2, false, 256, "vmovdqa load + store", seq_copy_256_avx2),
    k("seq_copy_512_avx512f", Copy, 512, Avx512f, false, 512, "vmovdqa64 load + store", seq_copy_512_avx512f),
    k("seq_copy_32_nt_scalar", Copy, 32, Scalar, true, 32, "mov r32 load + movnti store + sfence", seq_copy_32_nt_scalar),
    k("seq_copy_64_nt_scalar", Copy, 64, Scalar, true, 64, "mov r64 load + movnti store + sfence", seq_copy_64_nt_scalar),
    k("seq_copy_128_nt_sse2", Copy, 128, Sse2, true, 128, "movdqa load + movntdq store + sfence", seq_copy_128_nt_sse2),
    k("seq_copy_256_nt_avx2", Copy, 256, Avx2, true, 256, "vmovdqa load + vmovntdq store + sfence", seq_copy_256_nt_avx2),
    k("seq_copy_512_nt_avx512f", Copy, 512, Avx512f, true, 512, "vmovdqa64 load + vmovntdq store + sfence", seq_copy_512_nt_avx512f),
    Kernel {
        name: "rep_movsb",
        op: Copy,
        width_bits: 8,
        isa: Scalar,
        nontemporal: false,
        pattern: Pattern::Seq,
        granule: 1,
        align: 1,
        description: "rep movsb (microcoded; ERMS/FSRM pick the strategy, may avoid RFO at large sizes)",
        func: rep_movsb,
    },
    Kernel {
        name: "rep_stosb",
        op: Write,
        width_bits: 8,
        isa: Scalar,
        nontemporal: false,
        pattern: Pattern::Seq,
        granule: 1,
        align: 1,
        description: "rep stosb (microcoded fill)",
        func: rep_stosb,
    },
    super::libc_k::MEMCPY,
    super::libc_k::MEMSET,
];
