//! Random-order bandwidth kernels: every cache line of the working set
//! once per pass, in the order of a line permutation built before timing
//! (`KernelArgs::index`, see `kernels::perm`), read, written or copied
//! whole with the kernel's width (16 × 32-bit … 1 × 512-bit accesses per
//! line). The loop (`rand!` in `shapes.rs`) costs one 4-byte index load
//! per line next to the sequential kernels, from a stream the prefetchers
//! follow.
//!
//! As in `x86.rs`, reads are timed as pure loads; their verification
//! variant adds every word into a checksum, which equals the sequential
//! kernel's: that proves every line was read exactly once.

kernels! {
    rand_read_32_scalar: Read 32 Scalar, Random cached, block 256, align 64,
        "mov r32, [line] ×16 per line, lines in permuted order (verified with add)",
        rand!(read 16, "mov r8d," / "add {r:e},", "dword ptr [{src} + \\q + 4*\\i]", gpr);
    rand_read_64_scalar: Read 64 Scalar, Random cached, block 256, align 64,
        "mov r64, [line] ×8 per line, lines in permuted order (verified with add)",
        rand!(read 8, "mov r8," / "add {r},", "qword ptr [{src} + \\q + 8*\\i]", gpr);
    rand_read_128_sse2: Read 128 Sse2, Random cached, block 256, align 64,
        "movdqa xmm, [line] ×4 per line, lines in permuted order (verified with paddq)",
        rand!(read 4, "movdqa xmm\\i," / "paddq xmm0,", "xmmword ptr [{src} + \\q + 16*\\i]", xmm);
    rand_read_256_avx2: Read 256 Avx2, Random cached, block 256, align 64,
        "vmovdqa ymm, [line] ×2 per line, lines in permuted order (verified with vpaddq)",
        rand!(read 2, "vmovdqa ymm\\i," / "vpaddq ymm0, ymm0,",
            "ymmword ptr [{src} + \\q + 32*\\i]", ymm);
    rand_read_512_avx512f: Read 512 Avx512f, Random cached, block 256, align 64,
        "vmovdqa64 zmm, [line] per line, lines in permuted order (verified with vpaddq)",
        rand!(read 1, "vmovdqa64 zmm\\i," / "vpaddq zmm0, zmm0,",
            "zmmword ptr [{src} + \\q + 64*\\i]", zmm);

    rand_write_32_scalar: Write 32 Scalar, Random cached, block 256, align 64,
        "mov [line], r32 ×16 per line, lines in permuted order",
        rand!(write 16, "", "mov dword ptr [{dst} + \\q + 4*\\i], {pat:e}");
    rand_write_64_scalar: Write 64 Scalar, Random cached, block 256, align 64,
        "mov [line], r64 ×8 per line, lines in permuted order",
        rand!(write 8, "", "mov qword ptr [{dst} + \\q + 8*\\i], {pat}");
    rand_write_128_sse2: Write 128 Sse2, Random cached, block 256, align 64,
        "movdqa [line], xmm ×4 per line, lines in permuted order",
        rand!(write 4, "movq xmm0, {pat}\npunpcklqdq xmm0, xmm0",
            "movdqa xmmword ptr [{dst} + \\q + 16*\\i], xmm0");
    rand_write_256_avx2: Write 256 Avx2, Random cached, block 256, align 64,
        "vmovdqa [line], ymm ×2 per line, lines in permuted order",
        rand!(write 2, "vmovq xmm0, {pat}\nvpbroadcastq ymm0, xmm0",
            "vmovdqa ymmword ptr [{dst} + \\q + 32*\\i], ymm0");
    rand_write_512_avx512f: Write 512 Avx512f, Random cached, block 256, align 64,
        "vmovdqa64 [line], zmm per line, lines in permuted order",
        rand!(write 1, "vpbroadcastq zmm0, {pat}",
            "vmovdqa64 zmmword ptr [{dst} + \\q + 64*\\i], zmm0");

    rand_copy_32_scalar: Copy 32 Scalar, Random cached, block 256, align 64,
        "mov r32 load + store ×16 per line, same permuted line in both streams",
        rand!(copy 16, "mov r8d, dword ptr [{src} + \\q + 4*\\i]",
            "mov dword ptr [{dst} + \\q + 4*\\i], r8d");
    rand_copy_64_scalar: Copy 64 Scalar, Random cached, block 256, align 64,
        "mov r64 load + store ×8 per line, same permuted line in both streams",
        rand!(copy 8, "mov r8, qword ptr [{src} + \\q + 8*\\i]",
            "mov qword ptr [{dst} + \\q + 8*\\i], r8");
    rand_copy_128_sse2: Copy 128 Sse2, Random cached, block 256, align 64,
        "movdqa load + store ×4 per line, same permuted line in both streams",
        rand!(copy 4, "movdqa xmm\\i, xmmword ptr [{src} + \\q + 16*\\i]",
            "movdqa xmmword ptr [{dst} + \\q + 16*\\i], xmm\\i");
    rand_copy_256_avx2: Copy 256 Avx2, Random cached, block 256, align 64,
        "vmovdqa load + store ×2 per line, same permuted line in both streams",
        rand!(copy 2, "vmovdqa ymm\\i, ymmword ptr [{src} + \\q + 32*\\i]",
            "vmovdqa ymmword ptr [{dst} + \\q + 32*\\i], ymm\\i");
    rand_copy_512_avx512f: Copy 512 Avx512f, Random cached, block 256, align 64,
        "vmovdqa64 load + store per line, same permuted line in both streams",
        rand!(copy 1, "vmovdqa64 zmm\\i, zmmword ptr [{src} + \\q + 64*\\i]",
            "vmovdqa64 zmmword ptr [{dst} + \\q + 64*\\i], zmm\\i");
}
