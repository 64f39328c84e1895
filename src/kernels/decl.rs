//! One declaration per kernel, in the manner of likwid-bench's `.ptt`
//! files: [`kernels!`] takes a source file's list of kernels — each with
//! its name, op, width, ISA, pattern, store kind, block (granule),
//! alignment, description and loop — and emits from that one place every
//! kernel's function(s) and the file's registry slice `KERNELS`.
//!
//! A loop is a *shape* (`seq!`, `rand!`, `regs!`, `string!`, `chase!`,
//! `rust!`: the skeleton a family shares, in `shapes.rs`) filled with the
//! kernel's own instructions. Repetition is the assembler's: [`each!`]
//! wraps an access in `.irp i, 0, 1, …` so `\i` counts the accesses of a
//! block, and a kernel states one access instead of sixteen (GNU as and
//! LLVM's integrated assembler both implement `.irp`/`.rept`).
//!
//! Each kernel becomes a module of its name holding `timed` (the function
//! the harness times) and `CHECKSUM` (the verification variant, if any);
//! the registry points at them, so nothing restates a kernel's name,
//! width or block.

/// The access indices of a block: `idx!(8)` is `"0, 1, …, 7"`.
macro_rules! idx {
    (1) => {
        "0"
    };
    (2) => {
        "0, 1"
    };
    (4) => {
        "0, 1, 2, 3"
    };
    (8) => {
        "0, 1, 2, 3, 4, 5, 6, 7"
    };
    (16) => {
        "0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15"
    };
}

/// `$n` copies of the lines, `\i` = 0..n-1 in each (one asm template piece).
macro_rules! each {
    ($n:tt, $($line:expr),+ $(,)?) => {
        concat!(".irp i, ", idx!($n), "\n", $($line, "\n",)+ ".endr")
    };
}

/// `$n` copies of the lines, `\j` = 0..n-1 in each.
macro_rules! rept {
    ($n:tt, $($line:expr),+ $(,)?) => {
        concat!(".irp j, ", idx!($n), "\n", $($line, "\n",)+ ".endr")
    };
}

/// The function item with the `#[target_feature]` of its ISA (baseline
/// kernels enable SSE2, which every x86-64 has).
macro_rules! with_isa {
    (Scalar $f:item) => {
        #[target_feature(enable = "sse2")]
        $f
    };
    (Sse2 $f:item) => {
        #[target_feature(enable = "sse2")]
        $f
    };
    (Sse41 $f:item) => {
        #[target_feature(enable = "sse4.1")]
        $f
    };
    (Avx2 $f:item) => {
        #[target_feature(enable = "avx2")]
        $f
    };
    (Avx512f $f:item) => {
        #[target_feature(enable = "avx512f")]
        $f
    };
    (Libc $f:item) => {
        $f
    };
}

/// `asm!` with the vector registers 0–15 of the ISA's widest class marked
/// clobbered, so a kernel may use any of them without listing them.
/// (`clobber_abi` would do this, but it forbids allocator-chosen outputs.)
macro_rules! asm_for {
    (Avx512f; $($t:tt)*) => {
        core::arch::asm!($($t)*
            out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _,
            out("zmm4") _, out("zmm5") _, out("zmm6") _, out("zmm7") _,
            out("zmm8") _, out("zmm9") _, out("zmm10") _, out("zmm11") _,
            out("zmm12") _, out("zmm13") _, out("zmm14") _, out("zmm15") _)
    };
    (Avx2; $($t:tt)*) => {
        core::arch::asm!($($t)*
            out("ymm0") _, out("ymm1") _, out("ymm2") _, out("ymm3") _,
            out("ymm4") _, out("ymm5") _, out("ymm6") _, out("ymm7") _,
            out("ymm8") _, out("ymm9") _, out("ymm10") _, out("ymm11") _,
            out("ymm12") _, out("ymm13") _, out("ymm14") _, out("ymm15") _)
    };
    ($isa:ident; $($t:tt)*) => {
        core::arch::asm!($($t)*
            out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
            out("xmm4") _, out("xmm5") _, out("xmm6") _, out("xmm7") _,
            out("xmm8") _, out("xmm9") _, out("xmm10") _, out("xmm11") _,
            out("xmm12") _, out("xmm13") _, out("xmm14") _, out("xmm15") _)
    };
}

/// The last instruction of an AVX kernel (`vzeroupper`, so SSE code after
/// it pays no transition), nothing for others.
macro_rules! vzeroupper {
    (Avx2) => {
        "vzeroupper"
    };
    (Avx512f) => {
        "vzeroupper"
    };
    ($isa:ident) => {
        ""
    };
}

/// `sfence` after non-temporal stores, so the timed region includes their
/// reaching memory order; nothing after cached ones.
macro_rules! fence {
    (nt) => {
        "sfence"
    };
    (cached) => {
        ""
    };
}

macro_rules! is_nt {
    (nt) => {
        true
    };
    (cached) => {
        false
    };
}

/// A file's kernels: one entry per kernel, in display order, each
///
/// ```text
/// name: Op width Isa, Pattern store, block B, align A, "description",
///     shape!(the kernel's instructions);
/// ```
///
/// emits the kernel's module (`timed`, `CHECKSUM`) and its [`Kernel`] in
/// `KERNELS`. `store` is `cached` or `nt`; `block` is the granule: bytes
/// per stream of one loop iteration.
///
/// [`Kernel`]: super::Kernel
macro_rules! kernels {
    ($(
        $name:ident: $op:ident $width:literal $isa:ident, $pattern:ident $store:ident,
        block $block:literal, align $align:literal, $desc:literal,
        $shape:ident!($($body:tt)*);
    )*) => {
        $( $shape!($name, $isa, $store, $block; $($body)*); )*

        /// This file's kernels, in display order.
        pub(super) static KERNELS: &[$crate::kernels::Kernel] = &[$(
            $crate::kernels::Kernel {
                name: stringify!($name),
                op: $crate::kernels::Op::$op,
                width_bits: $width,
                isa: $crate::kernels::Isa::$isa,
                nontemporal: is_nt!($store),
                pattern: $crate::kernels::Pattern::$pattern,
                granule: $block,
                align: $align,
                description: $desc,
                func: $name::timed,
                checksum: $name::CHECKSUM,
            },
        )*];
    };
}

/// Whether `a` is a call the loop can run: at least one pass over at least
/// one whole block (a function, so that block = 1 is no `% 1` lint).
pub(super) fn runs(a: &super::KernelArgs, block: usize) -> bool {
    a.len > 0 && a.reps > 0 && a.len % block == 0
}

/// Blocks per stream.
pub(super) fn blocks(a: &super::KernelArgs, block: usize) -> usize {
    a.len / block
}
