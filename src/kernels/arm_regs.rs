//! AArch64 register and stack transfers (suite `regs`), as `x86_regs.rs`:
//! blocks of 32 independent instructions repeated `reps` times, bytes per
//! instruction = bytes arriving in the destination (8 for `mov x`, `fmov`,
//! `ins`/`umov` of a d lane and an `str`/`ldr` x; 16 for `mov v.16b`, a
//! `dup v.2d` (16 bytes from 8) and an `stp`/`ldp` x pair). Each kernel
//! moves `p, p+1, p+2, p+3` and returns the sum of the four destinations,
//! `4p + 6`, which tests check.
//!
//! `mov x, x` and `mov v.16b, v.16b` may be eliminated at rename on recent
//! cores (Neoverse V2, Apple): they measure the front end, as on x86.
//! Stack kernels move `sp` by 256 bytes (a multiple of 16, as AArch64
//! requires of `sp` used as a base) and restore it.

/// `{r}` = `{d0} + {d1} + {d2} + {d3}`.
macro_rules! sum_d {
    () => {
        "add {r}, {d0}, {d1}\nadd {r}, {r}, {d2}\nadd {r}, {r}, {d3}"
    };
}

/// `{r}` = lane `$l` of `v0 + v1 + v2 + v3`.
macro_rules! sum_v {
    ($l:literal) => {
        concat!(
            "add v0.2d, v0.2d, v1.2d\nadd v2.2d, v2.2d, v3.2d\nadd v0.2d, v0.2d, v2.2d\nmov {r}, v0.d[",
            $l,
            "]"
        )
    };
}

/// `{s0}..{s3}` into both lanes of v16..v19.
macro_rules! s_to_v16 {
    () => {
        "dup v16.2d, {s0}\ndup v17.2d, {s1}\ndup v18.2d, {s2}\ndup v19.2d, {s3}"
    };
}

/// `$n` × 32 bytes of stack from `[sp]` up, filled with `{s0}..{s3}`.
macro_rules! fill_stack {
    ($n:tt) => {
        rept!(
            $n,
            "stp {s0}, {s1}, [sp, #32*\\j]",
            "stp {s2}, {s3}, [sp, #32*\\j + 16]"
        )
    };
}

kernels! {
    reg_mov_64_scalar: Copy 64 Scalar, Register cached, block 256, align 1,
        "mov x, x (4 independent pairs; may be eliminated at rename)",
        regs!(gpr, "",
            rept!(8, "mov {d0}, {s0}", "mov {d1}, {s1}", "mov {d2}, {s2}", "mov {d3}, {s3}"),
            sum_d!());
    reg_mov_128_neon: Copy 128 Neon, Register cached, block 512, align 1,
        "mov v.16b, v.16b (vector register to vector register)",
        regs!(vec, s_to_v16!(),
            rept!(8, "mov v0.16b, v16.16b", "mov v1.16b, v17.16b", "mov v2.16b, v18.16b",
                "mov v3.16b, v19.16b"),
            sum_v!("0"));
    reg_stack_store_64_scalar: Write 64 Scalar, Register cached, block 256, align 1,
        "str x, [sp, #k] (256 bytes of stack)",
        regs!(vec stack, "sub sp, sp, #256",
            rept!(8, "str {s0}, [sp, #32*\\j]", "str {s1}, [sp, #32*\\j + 8]",
                "str {s2}, [sp, #32*\\j + 16]", "str {s3}, [sp, #32*\\j + 24]"),
            "ldp x9, x10, [sp]\nldp x11, x12, [sp, #16]\nadd {r}, x9, x10\nadd {r}, {r}, x11\nadd {r}, {r}, x12\nadd sp, sp, #256");
    reg_stack_load_64_scalar: Read 64 Scalar, Register cached, block 256, align 1,
        "ldr x, [sp, #k] (256 bytes of stack)",
        regs!(gpr stack, concat!("sub sp, sp, #256\n", fill_stack!(8)),
            rept!(8, "ldr {d0}, [sp, #32*\\j]", "ldr {d1}, [sp, #32*\\j + 8]",
                "ldr {d2}, [sp, #32*\\j + 16]", "ldr {d3}, [sp, #32*\\j + 24]"),
            concat!(sum_d!(), "\nadd sp, sp, #256"));
    reg_stack_stp_128_scalar: Write 128 Scalar, Register cached, block 256, align 1,
        "stp x, x, [sp, #k] (256 bytes of stack)",
        regs!(vec stack, "sub sp, sp, #256", fill_stack!(8),
            "ldp x9, x10, [sp]\nldp x11, x12, [sp, #16]\nadd {r}, x9, x10\nadd {r}, {r}, x11\nadd {r}, {r}, x12\nadd sp, sp, #256");
    reg_stack_ldp_128_scalar: Read 128 Scalar, Register cached, block 256, align 1,
        "ldp x, x, [sp, #k] (256 bytes of stack)",
        regs!(gpr stack, concat!("sub sp, sp, #256\n", fill_stack!(8)),
            rept!(8, "ldp {d0}, {d1}, [sp, #32*\\j]", "ldp {d2}, {d3}, [sp, #32*\\j + 16]"),
            concat!(sum_d!(), "\nadd sp, sp, #256"));
    reg_fmov_to_neon_64_neon: Copy 64 Neon, Register cached, block 256, align 1,
        "fmov d, x (general-purpose to vector)",
        regs!(vec, "",
            rept!(8, "fmov d0, {s0}", "fmov d1, {s1}", "fmov d2, {s2}", "fmov d3, {s3}"),
            sum_v!("0"));
    reg_fmov_from_neon_64_neon: Copy 64 Neon, Register cached, block 256, align 1,
        "fmov x, d (vector to general-purpose)",
        regs!(gpr, s_to_v16!(),
            rept!(8, "fmov {d0}, d16", "fmov {d1}, d17", "fmov {d2}, d18", "fmov {d3}, d19"),
            sum_d!());
    reg_ins_64_neon: Copy 64 Neon, Register cached, block 256, align 1,
        "ins v.d[1], x (general-purpose into lane 1)",
        regs!(vec, "movi v0.2d, #0\nmovi v1.2d, #0\nmovi v2.2d, #0\nmovi v3.2d, #0",
            rept!(8, "ins v0.d[1], {s0}", "ins v1.d[1], {s1}", "ins v2.d[1], {s2}",
                "ins v3.d[1], {s3}"),
            sum_v!("1"));
    reg_umov_64_neon: Copy 64 Neon, Register cached, block 256, align 1,
        "umov x, v.d[1] (lane 1 to general-purpose)",
        regs!(gpr, s_to_v16!(),
            rept!(8, "umov {d0}, v16.d[1]", "umov {d1}, v17.d[1]", "umov {d2}, v18.d[1]",
                "umov {d3}, v19.d[1]"),
            sum_d!());
    reg_dup_128_neon: Copy 128 Neon, Register cached, block 512, align 1,
        "dup v.2d, x (8 bytes to 2 lanes; counts 16 B)",
        regs!(vec, "",
            rept!(8, "dup v0.2d, {s0}", "dup v1.2d, {s1}", "dup v2.2d, {s2}", "dup v3.2d, {s3}"),
            sum_v!("1"));
}
