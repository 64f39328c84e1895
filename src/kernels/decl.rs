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

macro_rules! is_nt {
    (nt) => {
        true
    };
    (cached) => {
        false
    };
}

/// A kernel's [`Form`] from its shape: string instructions with or without
/// `rep`, a Rust call, else a loop of the declared instructions.
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
