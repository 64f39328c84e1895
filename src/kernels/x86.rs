//! x86-64 sequential kernels in `asm!`, and `rep movsb`/`rep stosb`.
//!
//! Why asm and not Rust or intrinsics: only asm fixes the exact instruction
//! (`vmovdqa` vs `vmovntdq` vs `mov r64`), the unroll and the registers, and
//! an `asm!` block without `pure` can never be hoisted or deleted. Plain
//! Rust on the default target reaches 25–50 % of the L1 peak (SSE2 only);
//! the asm here reaches 96–99 % (research notes, Zen 3).
//!
//! Shape of every loop (`seq!` in `shapes.rs`): an outer loop over `reps`
//! passes, an inner loop over the stream in blocks of `block` bytes with
//! fixed offsets, `add`/`sub`/`jnz` as the only overhead.
//!
//! Reads are timed as pure loads into registers nobody reads. On a
//! Granite Rapids-class core the add-from-memory loop bwscope used before
//! (`vpaddq zmm, zmm, [mem]` into 4 accumulators) reached 305–316 GB/s at
//! 16 KiB where 8 × `vmovdqa64` per 512 B reached 411–420: the loads need
//! no ALU, while the adds share ports 0 and 5 with the loop's scalar ops
//! (our reading of it; on Zen 4 both forms run at the same rate). Each
//! read's verification variant (`Kernel::checksum`) is the same loop over
//! the same addresses adding every word into a checksum, run once outside
//! the timed samples to prove every byte was read.
//!
//! The 512-bit read walks an L1-sized pass as two streams in step (`read
//! pairs`, see `seq_pairs_loop!`): on Zen 4 one stream of 512-bit loads
//! stays at about 94.5 % of one load per cycle, two streams whose lines
//! share an L1 set reach it.
//!
//! AVX kernels end in `vzeroupper`; non-temporal kernels end in `sfence` so
//! the timed region includes the stores reaching memory order.

kernels! {
    seq_read_32_scalar: Read 32 Scalar, Seq cached, block 64, align 4,
        "mov r32, [mem] (verified by the same loop with add r32, [mem])",
        seq!(read 16, "mov r8d," / "add {r:e},", "dword ptr [{s} + 4*\\i]", gpr);
    seq_read_64_scalar: Read 64 Scalar, Seq cached, block 128, align 8,
        "mov r64, [mem] (verified by the same loop with add r64, [mem])",
        seq!(read 16, "mov r8," / "add {r},", "qword ptr [{s} + 8*\\i]", gpr);
    seq_read_128_sse2: Read 128 Sse2, Seq cached, block 128, align 16,
        "movdqa xmm, [mem] (verified by the same loop with paddq xmm, [mem])",
        seq!(read 8, "movdqa xmm\\i," / "paddq xmm0,", "xmmword ptr [{s} + 16*\\i]", xmm);
    seq_read_256_avx2: Read 256 Avx2, Seq cached, block 256, align 32,
        "vmovdqa ymm, [mem] (verified by the same loop with vpaddq ymm, ymm, [mem])",
        seq!(read 8, "vmovdqa ymm\\i," / "vpaddq ymm0, ymm0,", "ymmword ptr [{s} + 32*\\i]", ymm);
    seq_read_512_avx512f: Read 512 Avx512f, Seq cached, block 512, align 64,
        "vmovdqa64 zmm, [mem]; a pass up to 64 KiB as two streams a multiple of 4 KiB apart, read in step (verified by the same loop with vpaddq zmm, zmm, [mem])",
        seq!(read pairs 4, "vmovdqa64 zmm\\i," / "vpaddq zmm0, zmm0,",
            "zmmword ptr [{s} + \\h + 64*\\i]", zmm);

    seq_write_32_scalar: Write 32 Scalar, Seq cached, block 64, align 4,
        "mov [mem], r32",
        seq!(write 16, "", "mov dword ptr [{d} + 4*\\i], {pat:e}");
    seq_write_64_scalar: Write 64 Scalar, Seq cached, block 128, align 8,
        "mov [mem], r64",
        seq!(write 16, "", "mov qword ptr [{d} + 8*\\i], {pat}");
    seq_write_128_sse2: Write 128 Sse2, Seq cached, block 128, align 16,
        "movdqa [mem], xmm",
        seq!(write 8, "movq xmm0, {pat}\npunpcklqdq xmm0, xmm0",
            "movdqa xmmword ptr [{d} + 16*\\i], xmm0");
    seq_write_256_avx2: Write 256 Avx2, Seq cached, block 256, align 32,
        "vmovdqa [mem], ymm",
        seq!(write 8, "vmovq xmm0, {pat}\nvpbroadcastq ymm0, xmm0",
            "vmovdqa ymmword ptr [{d} + 32*\\i], ymm0");
    seq_write_512_avx512f: Write 512 Avx512f, Seq cached, block 512, align 64,
        "vmovdqa64 [mem], zmm",
        seq!(write 8, "vpbroadcastq zmm0, {pat}", "vmovdqa64 zmmword ptr [{d} + 64*\\i], zmm0");
    seq_write_32_nt_scalar: Write 32 Scalar, Seq nt, block 64, align 4,
        "movnti [mem], r32 + sfence (bypasses caches)",
        seq!(write 16, "", "movnti dword ptr [{d} + 4*\\i], {pat:e}");
    seq_write_64_nt_scalar: Write 64 Scalar, Seq nt, block 128, align 8,
        "movnti [mem], r64 + sfence (bypasses caches)",
        seq!(write 16, "", "movnti qword ptr [{d} + 8*\\i], {pat}");
    seq_write_128_nt_sse2: Write 128 Sse2, Seq nt, block 128, align 16,
        "movntdq [mem], xmm + sfence (bypasses caches)",
        seq!(write 8, "movq xmm0, {pat}\npunpcklqdq xmm0, xmm0",
            "movntdq xmmword ptr [{d} + 16*\\i], xmm0");
    seq_write_256_nt_avx2: Write 256 Avx2, Seq nt, block 256, align 32,
        "vmovntdq [mem], ymm + sfence (bypasses caches)",
        seq!(write 8, "vmovq xmm0, {pat}\nvpbroadcastq ymm0, xmm0",
            "vmovntdq ymmword ptr [{d} + 32*\\i], ymm0");
    seq_write_512_nt_avx512f: Write 512 Avx512f, Seq nt, block 512, align 64,
        "vmovntdq [mem], zmm + sfence (bypasses caches)",
        seq!(write 8, "vpbroadcastq zmm0, {pat}", "vmovntdq zmmword ptr [{d} + 64*\\i], zmm0");

    seq_copy_32_scalar: Copy 32 Scalar, Seq cached, block 32, align 4,
        "mov r32 load + store",
        seq!(copy 2 x r8, "mov r\\i\\()d, dword ptr [{s} + 4*(4*.Lg + \\i - 8)]",
            "mov dword ptr [{d} + 4*(4*.Lg + \\i - 8)], r\\i\\()d");
    seq_copy_64_scalar: Copy 64 Scalar, Seq cached, block 64, align 8,
        "mov r64 load + store",
        seq!(copy 2 x r8, "mov r\\i, qword ptr [{s} + 8*(4*.Lg + \\i - 8)]",
            "mov qword ptr [{d} + 8*(4*.Lg + \\i - 8)], r\\i");
    seq_copy_128_sse2: Copy 128 Sse2, Seq cached, block 128, align 16,
        "movdqa load + store",
        seq!(copy 1 x 8, "movdqa xmm\\i, xmmword ptr [{s} + 16*\\i]",
            "movdqa xmmword ptr [{d} + 16*\\i], xmm\\i");
    seq_copy_256_avx2: Copy 256 Avx2, Seq cached, block 256, align 32,
        "vmovdqa load + store",
        seq!(copy 1 x 8, "vmovdqa ymm\\i, ymmword ptr [{s} + 32*\\i]",
            "vmovdqa ymmword ptr [{d} + 32*\\i], ymm\\i");
    seq_copy_512_avx512f: Copy 512 Avx512f, Seq cached, block 512, align 64,
        "vmovdqa64 load + store",
        seq!(copy 1 x 8, "vmovdqa64 zmm\\i, zmmword ptr [{s} + 64*\\i]",
            "vmovdqa64 zmmword ptr [{d} + 64*\\i], zmm\\i");
    seq_copy_32_nt_scalar: Copy 32 Scalar, Seq nt, block 32, align 4,
        "mov r32 load + movnti store + sfence",
        seq!(copy 2 x r8, "mov r\\i\\()d, dword ptr [{s} + 4*(4*.Lg + \\i - 8)]",
            "movnti dword ptr [{d} + 4*(4*.Lg + \\i - 8)], r\\i\\()d");
    seq_copy_64_nt_scalar: Copy 64 Scalar, Seq nt, block 64, align 8,
        "mov r64 load + movnti store + sfence",
        seq!(copy 2 x r8, "mov r\\i, qword ptr [{s} + 8*(4*.Lg + \\i - 8)]",
            "movnti qword ptr [{d} + 8*(4*.Lg + \\i - 8)], r\\i");
    seq_copy_128_nt_sse2: Copy 128 Sse2, Seq nt, block 128, align 16,
        "movdqa load + movntdq store + sfence",
        seq!(copy 1 x 8, "movdqa xmm\\i, xmmword ptr [{s} + 16*\\i]",
            "movntdq xmmword ptr [{d} + 16*\\i], xmm\\i");
    seq_copy_256_nt_avx2: Copy 256 Avx2, Seq nt, block 256, align 32,
        "vmovdqa load + vmovntdq store + sfence",
        seq!(copy 1 x 8, "vmovdqa ymm\\i, ymmword ptr [{s} + 32*\\i]",
            "vmovntdq ymmword ptr [{d} + 32*\\i], ymm\\i");
    seq_copy_512_nt_avx512f: Copy 512 Avx512f, Seq nt, block 512, align 64,
        "vmovdqa64 load + vmovntdq store + sfence",
        seq!(copy 1 x 8, "vmovdqa64 zmm\\i, zmmword ptr [{s} + 64*\\i]",
            "vmovntdq zmmword ptr [{d} + 64*\\i], zmm\\i");

    // glibc's large-copy shape: four 4 KiB pages in step (`pages!`).
    pages_copy_256_nt_avx2: Copy 256 Avx2, Pages nt, block 16384, align 32,
        "vmovdqa load + vmovntdq store + sfence, four 4 KiB pages in step (glibc's large_memcpy_4x shape)",
        pages!(copy 128, "vmovdqa ymm\\i, ymmword ptr [{s} + 4096*.Lp + 32*(\\i - 4*.Lp)]",
            "vmovntdq ymmword ptr [{d} + 4096*.Lp + 32*(\\i - 4*.Lp)], ymm\\i");
    pages_copy_512_nt_avx512f: Copy 512 Avx512f, Pages nt, block 16384, align 64,
        "vmovdqa64 load + vmovntdq store + sfence, four 4 KiB pages in step (glibc's large_memcpy_4x shape)",
        pages!(copy 256, "vmovdqa64 zmm\\i, zmmword ptr [{s} + 4096*.Lp + 64*(\\i - 4*.Lp)]",
            "vmovntdq zmmword ptr [{d} + 4096*.Lp + 64*(\\i - 4*.Lp)], zmm\\i");

    // The microcoded string copy and fill; with ERMS/FSRM they pick their
    // own strategy and, above a size threshold, may avoid the RFO.
    rep_movsb: Copy 8 Scalar, Seq cached, block 1, align 1,
        "rep movsb (microcoded; ERMS/FSRM pick the strategy, may avoid RFO at large sizes)",
        string!(rep_movs "movsb");
    rep_stosb: Write 8 Scalar, Seq cached, block 1, align 1,
        "rep stosb (microcoded fill)",
        string!(rep_stos "stosb");
}
