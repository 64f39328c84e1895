//! Register and stack transfers: bytes moved between registers, between
//! registers and the stack, and between general-purpose and vector
//! registers, with no working set in memory (suite `regs`).
//!
//! Every kernel repeats a block of 16 or 32 independent instructions
//! `reps` times (`regs!` in `shapes.rs`); what is measured is throughput
//! (instructions per second × bytes per instruction), not latency. Bytes
//! per instruction are the bytes arriving in the destination (a register
//! or a stack slot): 8 for a 64-bit `mov`/`push`/`pop`/`movq`/`pinsrq`/
//! `pextrq`, the register width for vector moves and broadcasts (a
//! `vpbroadcastq ymm` writes 32 bytes from 8). The descriptor's
//! `width_bits` is that destination width and its block the bytes of one
//! iteration (instructions × width / 8).
//!
//! Each kernel moves the values `p, p+1, p+2, p+3` (`p` = `KernelArgs::
//! pattern`) and returns the sum of the four destinations after the last
//! iteration, `4p + 6`: tests check it, so a move that did not happen shows.
//!
//! Note: `mov r64, r64` and vector register moves are usually eliminated
//! at rename on current cores (no execution port), so they measure the
//! front end and renamer, as Z. Smith's `bandwidth` register tests did.
//!
//! Stack kernels are `asm!` without `nostack`: they `push` or move `rsp`
//! themselves and always restore it; they never touch memory above the
//! `rsp` they started with, and never read below the current `rsp` (the
//! Windows x64 ABI has no red zone: anything may overwrite that space). The
//! push kernel releases the previous pass's 128 bytes at the start of the
//! next (`add rsp, 128`, then 16 pushes), so its last four slots are still
//! reserved when it reads them back.

/// `{r}` = `{d0} + {d1} + {d2} + {d3}`.
macro_rules! sum_d {
    () => {
        "mov {r}, {d0}\nadd {r}, {d1}\nadd {r}, {d2}\nadd {r}, {d3}"
    };
}

/// `{r}` = lane 0 of `xmm0 + xmm1 + xmm2 + xmm3`.
macro_rules! sum_xmm {
    () => {
        "paddq xmm0, xmm1\npaddq xmm2, xmm3\npaddq xmm0, xmm2\nmovq {r}, xmm0"
    };
}

/// `{s0}..{s3}` into xmm8..xmm11 (VEX encoded with `v`).
macro_rules! s_to_xmm8 {
    ($v:literal) => {
        concat!(
            $v,
            "movq xmm8, {s0}\n",
            $v,
            "movq xmm9, {s1}\n",
            $v,
            "movq xmm10, {s2}\n",
            $v,
            "movq xmm11, {s3}"
        )
    };
}

/// `$n` × 32 bytes of stack from `[rsp]` up, filled with `{s0}..{s3}`.
macro_rules! fill_stack {
    ($n:tt) => {
        rept!(
            $n,
            "mov qword ptr [rsp + 32*\\j], {s0}",
            "mov qword ptr [rsp + 32*\\j + 8], {s1}",
            "mov qword ptr [rsp + 32*\\j + 16], {s2}",
            "mov qword ptr [rsp + 32*\\j + 24], {s3}"
        )
    };
}

kernels! {
    reg_mov_64_scalar: Copy 64 Scalar, Register cached, block 256, align 1,
        "mov r64, r64 (4 independent pairs; usually eliminated at rename)",
        regs!(gpr, "",
            rept!(8, "mov {d0}, {s0}", "mov {d1}, {s1}", "mov {d2}, {s2}", "mov {d3}, {s3}"),
            sum_d!());
    reg_movdqa_128_sse2: Copy 128 Sse2, Register cached, block 512, align 1,
        "movdqa xmm, xmm",
        regs!(vec, s_to_xmm8!(""),
            rept!(8, "movdqa xmm0, xmm8", "movdqa xmm1, xmm9", "movdqa xmm2, xmm10",
                "movdqa xmm3, xmm11"),
            sum_xmm!());
    reg_vmovdqa_256_avx2: Copy 256 Avx2, Register cached, block 1024, align 1,
        "vmovdqa ymm, ymm",
        regs!(vec, s_to_xmm8!("v"),
            rept!(8, "vmovdqa ymm0, ymm8", "vmovdqa ymm1, ymm9", "vmovdqa ymm2, ymm10",
                "vmovdqa ymm3, ymm11"),
            "vpaddq ymm0, ymm0, ymm1\nvpaddq ymm2, ymm2, ymm3\nvpaddq ymm0, ymm0, ymm2\nvmovq {r}, xmm0\nvzeroupper");
    reg_vmovdqa64_512_avx512f: Copy 512 Avx512f, Register cached, block 2048, align 1,
        "vmovdqa64 zmm, zmm",
        regs!(vec, s_to_xmm8!("v"),
            rept!(8, "vmovdqa64 zmm0, zmm8", "vmovdqa64 zmm1, zmm9", "vmovdqa64 zmm2, zmm10",
                "vmovdqa64 zmm3, zmm11"),
            "vpaddq zmm0, zmm0, zmm1\nvpaddq zmm2, zmm2, zmm3\nvpaddq zmm0, zmm0, zmm2\nvmovq {r}, xmm0\nvzeroupper");
    reg_push_64_scalar: Write 64 Scalar, Register cached, block 128, align 1,
        "push r64 ×16, then add rsp, 128",
        regs!(vec stack, "sub rsp, 128",
            concat!("add rsp, 128\n", rept!(4, "push {s0}", "push {s1}", "push {s2}", "push {s3}")),
            "mov {r}, qword ptr [rsp]\nadd {r}, qword ptr [rsp + 8]\nadd {r}, qword ptr [rsp + 16]\nadd {r}, qword ptr [rsp + 24]\nadd rsp, 128");
    reg_pop_64_scalar: Read 64 Scalar, Register cached, block 128, align 1,
        "sub rsp, 128, then pop r64 ×16",
        regs!(gpr stack, concat!("sub rsp, 128\n", fill_stack!(4), "\nadd rsp, 128"),
            concat!("sub rsp, 128\n", rept!(4, "pop {d0}", "pop {d1}", "pop {d2}", "pop {d3}")),
            sum_d!());
    reg_stack_store_64_scalar: Write 64 Scalar, Register cached, block 256, align 1,
        "mov [rsp + k], r64 (256 bytes of stack)",
        regs!(vec stack, "sub rsp, 256", fill_stack!(8),
            "mov {r}, qword ptr [rsp]\nadd {r}, qword ptr [rsp + 8]\nadd {r}, qword ptr [rsp + 16]\nadd {r}, qword ptr [rsp + 24]\nadd rsp, 256");
    reg_stack_load_64_scalar: Read 64 Scalar, Register cached, block 256, align 1,
        "mov r64, [rsp + k] (256 bytes of stack)",
        regs!(gpr stack, concat!("sub rsp, 256\n", fill_stack!(8)),
            rept!(8, "mov {d0}, qword ptr [rsp + 32*\\j]", "mov {d1}, qword ptr [rsp + 32*\\j + 8]",
                "mov {d2}, qword ptr [rsp + 32*\\j + 16]", "mov {d3}, qword ptr [rsp + 32*\\j + 24]"),
            concat!(sum_d!(), "\nadd rsp, 256"));
    reg_movq_to_xmm_64_sse2: Copy 64 Sse2, Register cached, block 256, align 1,
        "movq xmm, r64 (GPR to vector)",
        regs!(vec, "",
            rept!(8, "movq xmm0, {s0}", "movq xmm1, {s1}", "movq xmm2, {s2}", "movq xmm3, {s3}"),
            sum_xmm!());
    reg_movq_from_xmm_64_sse2: Copy 64 Sse2, Register cached, block 256, align 1,
        "movq r64, xmm (vector to GPR)",
        regs!(gpr, s_to_xmm8!(""),
            rept!(8, "movq {d0}, xmm8", "movq {d1}, xmm9", "movq {d2}, xmm10", "movq {d3}, xmm11"),
            sum_d!());
    reg_vmovq_to_xmm_64_avx2: Copy 64 Avx2, Register cached, block 256, align 1,
        "vmovq xmm, r64 (VEX; GPR to vector)",
        regs!(vec, "",
            rept!(8, "vmovq xmm0, {s0}", "vmovq xmm1, {s1}", "vmovq xmm2, {s2}", "vmovq xmm3, {s3}"),
            "vpaddq xmm0, xmm0, xmm1\nvpaddq xmm2, xmm2, xmm3\nvpaddq xmm0, xmm0, xmm2\nvmovq {r}, xmm0\nvzeroupper");
    reg_vmovq_from_xmm_64_avx2: Copy 64 Avx2, Register cached, block 256, align 1,
        "vmovq r64, xmm (VEX; vector to GPR)",
        regs!(gpr, s_to_xmm8!("v"),
            rept!(8, "vmovq {d0}, xmm8", "vmovq {d1}, xmm9", "vmovq {d2}, xmm10", "vmovq {d3}, xmm11"),
            concat!(sum_d!(), "\nvzeroupper"));
    reg_pinsrq_64_sse41: Copy 64 Sse41, Register cached, block 256, align 1,
        "pinsrq xmm, r64, 1 (GPR into lane 1; 8 destination registers)",
        regs!(vec, each!(8, "pxor xmm\\i, xmm\\i"),
            rept!(4, "pinsrq xmm0, {s0}, 1", "pinsrq xmm1, {s1}, 1", "pinsrq xmm2, {s2}, 1",
                "pinsrq xmm3, {s3}, 1", "pinsrq xmm4, {s0}, 1", "pinsrq xmm5, {s1}, 1",
                "pinsrq xmm6, {s2}, 1", "pinsrq xmm7, {s3}, 1"),
            "paddq xmm0, xmm1\npaddq xmm2, xmm3\npaddq xmm0, xmm2\npextrq {r}, xmm0, 1");
    reg_pextrq_64_sse41: Copy 64 Sse41, Register cached, block 256, align 1,
        "pextrq r64, xmm, 1 (lane 1 to GPR)",
        regs!(gpr, concat!(s_to_xmm8!(""), "\npshufd xmm8, xmm8, 0x44\npshufd xmm9, xmm9, 0x44\n",
                "pshufd xmm10, xmm10, 0x44\npshufd xmm11, xmm11, 0x44"),
            rept!(8, "pextrq {d0}, xmm8, 1", "pextrq {d1}, xmm9, 1", "pextrq {d2}, xmm10, 1",
                "pextrq {d3}, xmm11, 1"),
            sum_d!());
    reg_vpbroadcastq_256_avx2: Copy 256 Avx2, Register cached, block 1024, align 1,
        "vpbroadcastq ymm, xmm (8 bytes to 4 lanes; counts 32 B)",
        regs!(vec, s_to_xmm8!("v"),
            rept!(8, "vpbroadcastq ymm0, xmm8", "vpbroadcastq ymm1, xmm9",
                "vpbroadcastq ymm2, xmm10", "vpbroadcastq ymm3, xmm11"),
            "vpaddq ymm0, ymm0, ymm1\nvpaddq ymm2, ymm2, ymm3\nvpaddq ymm0, ymm0, ymm2\nvextracti128 xmm0, ymm0, 1\nvpextrq {r}, xmm0, 1\nvzeroupper");
    reg_vpbroadcastq_512_avx512f: Copy 512 Avx512f, Register cached, block 2048, align 1,
        "vpbroadcastq zmm, r64 (GPR to 8 lanes; counts 64 B)",
        regs!(vec, "",
            rept!(8, "vpbroadcastq zmm0, {s0}", "vpbroadcastq zmm1, {s1}",
                "vpbroadcastq zmm2, {s2}", "vpbroadcastq zmm3, {s3}"),
            "vpaddq zmm0, zmm0, zmm1\nvpaddq zmm2, zmm2, zmm3\nvpaddq zmm0, zmm0, zmm2\nvextracti64x4 ymm0, zmm0, 1\nvextracti128 xmm0, ymm0, 1\nvpextrq {r}, xmm0, 1\nvzeroupper");
}
