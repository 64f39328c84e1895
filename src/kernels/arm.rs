//! AArch64 sequential kernels in `asm!`: scalar `ldr`/`str` and x pairs
//! (`ldp`/`stp`), NEON (`ld1`/`st1` of four q registers, `ldp`/`stp` q),
//! non-temporal pairs (`ldnp`/`stnp`), SVE (vector-length agnostic) and
//! `dc zva` block zeroing. Shapes: `arm_shapes.rs`.
//!
//! Widths are the bits of one access as the load/store pipes take it: 64
//! for `ldr x`, 128 for an x pair or a q register (each register of an
//! `ld1 {v0-v3}` is one 128-bit access), 256 for a q pair (two 128-bit
//! accesses in one instruction); SVE kernels declare 0 and their records
//! carry the vector length they ran with (`sve_vector_bits`).
//!
//! Why these shapes, from the table's rows (`platform/uarch/arm.rs`), so
//! the first run on hardware can be judged against them:
//!
//! - Neoverse N1 / Cortex-A76: two load/store pipes of 128 bit: 32 B/cycle
//!   of loads with `ldr q`, `ld1` or `ldp q` alike (an `ldp q` is two
//!   128-bit accesses, one instruction per cycle); `ldp x` reaches the
//!   same 32 B/cycle with half the bytes per access, `ldr x` 16 B/cycle.
//!   Stores: one 128-bit store per cycle (16 B/cycle), copies one load +
//!   one store per cycle.
//! - Neoverse V1/V2, N2, Cortex-A78/X1, Apple Firestorm: three load pipes
//!   (two load/store + one load-only): 48 B/cycle with 128-bit accesses, so
//!   a 256 B block of 16 accesses (8 `ldp q`) takes ≥ 5.3 cycles and the
//!   loop's `add`/`subs`/`b.ne` (three of 11 instructions, on the integer
//!   and branch pipes) never limit it at 8-wide dispatch. V1 with SVE
//!   (256-bit vectors, two load pipes take them) reaches 64 B/cycle: SVE,
//!   not NEON, is V1's widest read.
//! - Cortex-A53/A55: in order, one 64-bit read path: 8 B/cycle whatever the
//!   width, so the loop overhead (dual issue with the loads) is what the
//!   wider forms save; stores may go out 128 bit wide.
//! - A64FX: two 512-bit SVE loads per cycle (128 B/cycle), one 512-bit
//!   store; NEON gets a quarter of that.
//!
//! Every block is 16 accesses (or 4 `ld1`/`st1` of four registers) of
//! fixed offsets from one pointer per stream, as on x86; `ld1`/`st1`
//! have no offset form and post-increment their pointer instead.
//!
//! Reads are timed as pure loads into registers nobody reads; each read's
//! verification variant is the same loop adding what it loaded into a
//! checksum (`Kernel::checksum`), run once outside the timed samples.
//! Non-temporal kernels end in `dmb ishst`.

kernels! {
    seq_read_64_scalar: Read 64 Scalar, Seq cached, block 128, align 8,
        "ldr x, [mem] (verified by the same loop adding each word)",
        seq!(read 16 offset, "ldr x9,", "[{s}, #8*\\i]", "add {r}, {r}, x9", gpr);
    seq_read_128_scalar: Read 128 Scalar, Seq cached, block 256, align 16,
        "ldp x, x, [mem] (pairs of 64-bit registers)",
        seq!(read 16 offset, "ldp x9, x10,", "[{s}, #16*\\i]",
            "add {r}, {r}, x9\nadd {r}, {r}, x10", gpr);
    seq_read_128_neon: Read 128 Neon, Seq cached, block 256, align 16,
        "ld1 {v0.2d-v3.2d}, [mem], #64 (four q registers per instruction)",
        seq!(read 4 post, "ld1 {{v0.2d, v1.2d, v2.2d, v3.2d}},", "[{s}], #64",
            "add v20.2d, v20.2d, v0.2d\nadd v21.2d, v21.2d, v1.2d\nadd v20.2d, v20.2d, v2.2d\nadd v21.2d, v21.2d, v3.2d",
            vec);
    seq_read_256_neon: Read 256 Neon, Seq cached, block 256, align 32,
        "ldp q, q, [mem] (pairs of 128-bit registers)",
        seq!(read 8 offset, "ldp q\\i, q1\\i,", "[{s}, #32*\\i]",
            "add v20.2d, v20.2d, v\\i\\().2d\nadd v21.2d, v21.2d, v1\\i\\().2d", vec);
    seq_read_128_nt_scalar: Read 128 Scalar, Seq nt, block 256, align 16,
        "ldnp x, x, [mem] (non-temporal hint: the line need not be kept)",
        seq!(read 16 offset, "ldnp x9, x10,", "[{s}, #16*\\i]",
            "add {r}, {r}, x9\nadd {r}, {r}, x10", gpr);
    seq_read_256_nt_neon: Read 256 Neon, Seq nt, block 256, align 32,
        "ldnp q, q, [mem] (non-temporal hint)",
        seq!(read 8 offset, "ldnp q\\i, q1\\i,", "[{s}, #32*\\i]",
            "add v20.2d, v20.2d, v\\i\\().2d\nadd v21.2d, v21.2d, v1\\i\\().2d", vec);
    seq_read_sve: Read 0 Sve, Seq cached, block 64, align 64,
        "ld1d z, p/z, [mem, #k, mul vl] (vector-length agnostic; the record states the length)",
        sve!(read "ld1d");

    seq_write_64_scalar: Write 64 Scalar, Seq cached, block 128, align 8,
        "str x, [mem]",
        seq!(write 16 offset, "", "str {pat}, [{d}, #8*\\i]");
    seq_write_128_scalar: Write 128 Scalar, Seq cached, block 256, align 16,
        "stp x, x, [mem]",
        seq!(write 16 offset, "", "stp {pat}, {pat}, [{d}, #16*\\i]");
    seq_write_128_neon: Write 128 Neon, Seq cached, block 256, align 16,
        "st1 {v0.2d-v3.2d}, [mem], #64",
        seq!(write 4 post,
            "dup v0.2d, {pat}\nmov v1.16b, v0.16b\nmov v2.16b, v0.16b\nmov v3.16b, v0.16b",
            "st1 {{v0.2d, v1.2d, v2.2d, v3.2d}}, [{d}], #64");
    seq_write_256_neon: Write 256 Neon, Seq cached, block 256, align 32,
        "stp q, q, [mem]",
        seq!(write 8 offset, "dup v0.2d, {pat}", "stp q0, q0, [{d}, #32*\\i]");
    seq_write_sve: Write 0 Sve, Seq cached, block 64, align 64,
        "st1d z, p, [mem, #k, mul vl] (vector-length agnostic)",
        sve!(write "st1d");
    seq_write_128_nt_scalar: Write 128 Scalar, Seq nt, block 256, align 16,
        "stnp x, x, [mem] + dmb ishst (non-temporal pair)",
        seq!(write 16 offset, "", "stnp {pat}, {pat}, [{d}, #16*\\i]");
    seq_write_256_nt_neon: Write 256 Neon, Seq nt, block 256, align 32,
        "stnp q, q, [mem] + dmb ishst (non-temporal pair; what memset uses past the caches)",
        seq!(write 8 offset, "dup v0.2d, {pat}", "stnp q0, q0, [{d}, #32*\\i]");
    seq_write_nt_sve: Write 0 Sve, Seq nt, block 64, align 64,
        "stnt1d z, p, [mem, #k, mul vl] + dmb ishst (non-temporal, vector-length agnostic)",
        sve!(write "stnt1d");

    seq_copy_64_scalar: Copy 64 Scalar, Seq cached, block 64, align 8,
        "ldr x + str x, 8 loads then 8 stores",
        seq!(copy 8 offset, "ldr x1\\i, [{s}, #8*\\i]", "str x1\\i, [{d}, #8*\\i]");
    seq_copy_128_scalar: Copy 128 Scalar, Seq cached, block 64, align 16,
        "ldp x, x + stp x, x",
        seq!(copy 4 offset, "ldp x1\\i, x2\\i, [{s}, #16*\\i]", "stp x1\\i, x2\\i, [{d}, #16*\\i]");
    seq_copy_128_neon: Copy 128 Neon, Seq cached, block 256, align 16,
        "ld1 {4 × q}, [src], #64 + st1 {4 × q}, [dst], #64",
        seq!(copy 1 post,
            "ld1 {{v0.2d, v1.2d, v2.2d, v3.2d}}, [{s}], #64\nld1 {{v4.2d, v5.2d, v6.2d, v7.2d}}, [{s}], #64\nld1 {{v16.2d, v17.2d, v18.2d, v19.2d}}, [{s}], #64\nld1 {{v24.2d, v25.2d, v26.2d, v27.2d}}, [{s}], #64",
            "st1 {{v0.2d, v1.2d, v2.2d, v3.2d}}, [{d}], #64\nst1 {{v4.2d, v5.2d, v6.2d, v7.2d}}, [{d}], #64\nst1 {{v16.2d, v17.2d, v18.2d, v19.2d}}, [{d}], #64\nst1 {{v24.2d, v25.2d, v26.2d, v27.2d}}, [{d}], #64");
    seq_copy_256_neon: Copy 256 Neon, Seq cached, block 256, align 32,
        "ldp q, q + stp q, q",
        seq!(copy 8 offset, "ldp q\\i, q1\\i, [{s}, #32*\\i]", "stp q\\i, q1\\i, [{d}, #32*\\i]");
    seq_copy_sve: Copy 0 Sve, Seq cached, block 64, align 64,
        "ld1d + st1d (vector-length agnostic)",
        sve!(copy "ld1d", "st1d");
    seq_copy_128_nt_scalar: Copy 128 Scalar, Seq nt, block 64, align 16,
        "ldp x, x + stnp x, x + dmb ishst",
        seq!(copy 4 offset, "ldp x1\\i, x2\\i, [{s}, #16*\\i]", "stnp x1\\i, x2\\i, [{d}, #16*\\i]");
    seq_copy_256_nt_neon: Copy 256 Neon, Seq nt, block 256, align 32,
        "ldp q, q + stnp q, q + dmb ishst",
        seq!(copy 8 offset, "ldp q\\i, q1\\i, [{s}, #32*\\i]", "stnp q\\i, q1\\i, [{d}, #32*\\i]");

    // Block zeroing, the counterpart of `rep stosb`: what glibc's memset
    // uses for zero fills of a few KiB and more where `DCZID_EL0` allows.
    dc_zva: Write 0 DcZva, Seq cached, block 2048, align 2048,
        "dc zva (zeroes one DCZID_EL0 block per instruction; writes zeros, whatever the pattern)",
        zva!();
}

/// The SVE vector length this thread runs with, bits (`rdvl`); None on a
/// core without SVE.
pub(super) fn sve_vector_bits() -> Option<u32> {
    #[target_feature(enable = "sve")]
    unsafe fn rdvl() -> u64 {
        let v: u64;
        core::arch::asm!(".arch_extension sve", "rdvl {}, #1", out(reg) v, options(nomem, nostack));
        v
    }
    if !std::arch::is_aarch64_feature_detected!("sve") {
        return None;
    }
    // SAFETY: the CPU has SVE (checked above).
    Some(unsafe { rdvl() } as u32 * 8)
}
