//! AArch64 random-order bandwidth kernels: every cache line of the working
//! set once per pass, in the order of a line permutation built before
//! timing (`KernelArgs::index`, see `kernels::perm`), read, written or
//! copied whole with the kernel's width (8 × `ldr x`, 4 × `ldp x`, one
//! `ld1` of four q registers or 2 × `ldp q` per 64-byte line). The loop
//! (`rand!` in `arm_shapes.rs`) costs one 4-byte index load and an `add`
//! per line next to the sequential kernels.
//!
//! As in `arm.rs`, reads are timed as pure loads; their verification
//! variant adds every word into a checksum equal to the sequential
//! kernel's: that proves every line was read exactly once.

kernels! {
    rand_read_64_scalar: Read 64 Scalar, Random cached, block 256, align 64,
        "ldr x, [line] ×8 per line, lines in permuted order (verified by adding)",
        rand!(read 8, "ldr x10,", "[x9, #8*\\i]", "add {r}, {r}, x10", gpr);
    rand_read_128_scalar: Read 128 Scalar, Random cached, block 256, align 64,
        "ldp x, x, [line] ×4 per line, lines in permuted order",
        rand!(read 4, "ldp x10, x12,", "[x9, #16*\\i]", "add {r}, {r}, x10\nadd {r}, {r}, x12", gpr);
    rand_read_128_neon: Read 128 Neon, Random cached, block 256, align 64,
        "ld1 {v0.2d-v3.2d}, [line] per line, lines in permuted order",
        rand!(read 1, "ld1 {{v0.2d, v1.2d, v2.2d, v3.2d}},", "[x9]",
            "add v20.2d, v20.2d, v0.2d\nadd v21.2d, v21.2d, v1.2d\nadd v20.2d, v20.2d, v2.2d\nadd v21.2d, v21.2d, v3.2d",
            vec);
    rand_read_256_neon: Read 256 Neon, Random cached, block 256, align 64,
        "ldp q, q, [line] ×2 per line, lines in permuted order",
        rand!(read 2, "ldp q0, q1,", "[x9, #32*\\i]",
            "add v20.2d, v20.2d, v0.2d\nadd v21.2d, v21.2d, v1.2d", vec);

    rand_write_64_scalar: Write 64 Scalar, Random cached, block 256, align 64,
        "str x, [line] ×8 per line, lines in permuted order",
        rand!(write 8, "", "str {pat}, [x11, #8*\\i]");
    rand_write_128_scalar: Write 128 Scalar, Random cached, block 256, align 64,
        "stp x, x, [line] ×4 per line, lines in permuted order",
        rand!(write 4, "", "stp {pat}, {pat}, [x11, #16*\\i]");
    rand_write_128_neon: Write 128 Neon, Random cached, block 256, align 64,
        "st1 {v0.2d-v3.2d}, [line] per line, lines in permuted order",
        rand!(write 1,
            "dup v0.2d, {pat}\nmov v1.16b, v0.16b\nmov v2.16b, v0.16b\nmov v3.16b, v0.16b",
            "st1 {{v0.2d, v1.2d, v2.2d, v3.2d}}, [x11]");
    rand_write_256_neon: Write 256 Neon, Random cached, block 256, align 64,
        "stp q, q, [line] ×2 per line, lines in permuted order",
        rand!(write 2, "dup v0.2d, {pat}", "stp q0, q0, [x11, #32*\\i]");

    rand_copy_64_scalar: Copy 64 Scalar, Random cached, block 256, align 64,
        "ldr x + str x ×8 per line, same permuted line in both streams",
        rand!(copy 8, "ldr x10, [x9, #8*\\i]", "str x10, [x11, #8*\\i]");
    rand_copy_128_scalar: Copy 128 Scalar, Random cached, block 256, align 64,
        "ldp x + stp x ×4 per line, same permuted line in both streams",
        rand!(copy 4, "ldp x10, x12, [x9, #16*\\i]", "stp x10, x12, [x11, #16*\\i]");
    rand_copy_128_neon: Copy 128 Neon, Random cached, block 256, align 64,
        "ld1 + st1 {v0.2d-v3.2d} per line, same permuted line in both streams",
        rand!(copy 1, "ld1 {{v0.2d, v1.2d, v2.2d, v3.2d}}, [x9]", "st1 {{v0.2d, v1.2d, v2.2d, v3.2d}}, [x11]");
    rand_copy_256_neon: Copy 256 Neon, Random cached, block 256, align 64,
        "ldp q + stp q ×2 per line, same permuted line in both streams",
        rand!(copy 2, "ldp q\\i, q1\\i, [x9, #32*\\i]", "stp q\\i, q1\\i, [x11, #32*\\i]");
}
