//! One declaration per kernel, in the manner of likwid-bench's `.ptt`
//! files: `kernels!` takes a source file's list of kernels — each with its
//! name, op, width, ISA, pattern, store kind, block (granule), alignment,
//! description and loop — and emits from that one place every kernel's
//! function(s) and the file's registry slice `KERNELS`.
//!
//! A loop is a *shape*: the skeleton a family shares (`seq!`, `rand!`,
//! `regs!`, `string!`, `chase!` in `shapes.rs`, x86-64 only; `rust!` here)
//! filled with the kernel's own instructions. Each kernel becomes a module
//! of its name holding `timed` (the function the harness times) and
//! `CHECKSUM` (its verification variant, if any); the registry points at
//! them, so nothing restates a kernel's name, width or block.

// Repetition is the assembler's: `each!` wraps an access in `.irp i, 0,
// 1, …` so `\i` counts the accesses of a block, and a kernel states one
// access instead of sixteen (GNU as and LLVM's integrated assembler both
// implement `.irp`, for x86-64 and AArch64 alike).

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
    // The scratch registers r8–r11, by number.
    (r8) => {
        "8, 9, 10, 11"
    };
}

/// `$n` copies of the lines, `\i` = 0..n-1 in each (one asm template piece).
macro_rules! each {
    ($n:tt, $($line:expr),+ $(,)?) => {
        concat!(".irp i, ", idx!($n), "\n", $($line, "\n",)+ ".endr")
    };
}

/// `$g` groups of `$n` loads then the same `$n` stores, with the
/// assembler symbol `.Lg` = the group's index (set before each group, not
/// a nested `.irp`: an outer `.irp` would eat the `\()` in `r\i\()d`).
#[allow(unused_macros)] // x86-64's copies only
macro_rules! groups {
    (1, $n:tt, $ld:expr, $st:expr) => {
        concat!(".set .Lg, 0\n", each!($n, $ld), "\n", each!($n, $st))
    };
    (2, $n:tt, $ld:expr, $st:expr) => {
        concat!(
            groups!(1, $n, $ld, $st),
            "\n.set .Lg, 1\n",
            each!($n, $ld),
            "\n",
            each!($n, $st)
        )
    };
}

/// `$n` copies of the lines, `\j` = 0..n-1 in each.
macro_rules! rept {
    ($n:tt, $($line:expr),+ $(,)?) => {
        concat!(".irp j, ", idx!($n), "\n", $($line, "\n",)+ ".endr")
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

/// A kernel's [`Form`] from its shape: string instructions with or without
/// `rep`, a Rust call, `dc zva` block zeroing, else a loop of the declared
/// instructions.
///
/// [`Form`]: super::Form
macro_rules! form {
    (string rep_lods $($t:tt)*) => {
        $crate::kernels::Form::RepString
    };
    (string rep_stos $($t:tt)*) => {
        $crate::kernels::Form::RepString
    };
    (string rep_movs $($t:tt)*) => {
        $crate::kernels::Form::RepString
    };
    (string $($t:tt)*) => {
        $crate::kernels::Form::String
    };
    (rust $($t:tt)*) => {
        $crate::kernels::Form::Call
    };
    (zva $($t:tt)*) => {
        $crate::kernels::Form::Block
    };
    ($shape:ident $($t:tt)*) => {
        $crate::kernels::Form::Loop
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
                form: form!($shape $($body)*),
                granule: $block,
                align: $align,
                description: $desc,
                func: $name::timed,
                checksum: $name::CHECKSUM,
            },
        )*];
    };
}

/// A kernel with no verification variant: `timed` runs the skeleton
/// `$loop` once with the given pieces and returns 0 (writes and copies
/// are checked by reading back their destination). `with_isa!` is the
/// architecture's (`shapes.rs`, `arm_shapes.rs`).
macro_rules! plain {
    ($name:ident, $isa:ident, $block:literal, $a:ident, $loop:ident, $($args:tt)*) => {
        mod $name {
            use $crate::kernels::{KernelArgs, KernelFn};
            with_isa! { $isa
                pub(super) unsafe fn timed($a: &KernelArgs) -> u64 {
                    $loop!($isa, $a, $block, $($args)*);
                    0
                }
            }
            pub(super) const CHECKSUM: Option<KernelFn> = None;
        }
    };
}

/// A kernel written in Rust (the libc calls): `|a| { body }`.
macro_rules! rust {
    ($name:ident, $isa:ident, $store:ident, $block:literal; |$a:ident| $body:block) => {
        mod $name {
            use super::*;
            use $crate::kernels::{KernelArgs, KernelFn};
            pub(super) unsafe fn timed($a: &KernelArgs) -> u64 $body
            pub(super) const CHECKSUM: Option<KernelFn> = None;
        }
    };
}

/// Bytes between two lines of the same L1 set on the cores bwscope knows
/// (64 sets of 64-byte lines: Zen 2–5's 32/48 KiB, Intel's 32/48 KiB L1D).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // x86-64's paired read
pub(super) const SET_SPAN: usize = 4096;

/// The longest pass a two-stream read splits (above every L1D bwscope
/// knows); longer passes run as one stream, since two streams half a
/// pass apart read DRAM slower (Zen 4, 4 KiB pages: about 7 % at 1 GiB).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // x86-64's paired read
pub(super) const PAIRED_MAX: usize = 64 * 1024;

/// Whether `a` is a call the loop can run: at least one pass over at least
/// one whole block (a function, so that block = 1 is no `% 1` lint).
pub(super) fn runs(a: &super::KernelArgs, block: usize) -> bool {
    a.len > 0 && a.reps > 0 && a.len % block == 0
}

/// Blocks per stream.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // the x86 string kernels
pub(super) fn blocks(a: &super::KernelArgs, block: usize) -> usize {
    a.len / block
}

/// The end of a random pass's line index. Panics unless `a` describes a
/// valid random pass: the kernels trust the indices, so a harness bug must
/// stop here rather than read out of bounds or report a pass that did not
/// happen.
pub(super) fn random_end(a: &super::KernelArgs) -> *const u32 {
    let lines = a.len / super::perm::LINE;
    assert!(
        !a.index.is_null()
            && lines > 0
            && lines % 4 == 0
            && a.len % super::perm::LINE == 0
            && a.index_len >= lines + super::perm::READ_AHEAD
            && a.reps > 0,
        "random kernel called without a matching line index (len {}, index_len {})",
        a.len,
        a.index_len
    );
    a.index.wrapping_add(lines)
}
