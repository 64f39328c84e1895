//! String instructions as kernels: `lods`, `stos` and `movs` at every
//! width (b/w/d/q), each as a plain unrolled loop (16 instructions per
//! iteration, the pointer registers advancing implicitly) and with `rep`.
//!
//! The seed benchmark added `lods` "proving just how slow they are": a
//! `lodsq` is several micro-ops on current cores, while `rep movs`/`rep
//! stos` are microcoded fast paths (ERMS/FSRM). `rep_movsb` and `rep_stosb`
//! live in `x86.rs` with the foundation kernels; the rest are here.
//!
//! Reads: the plain `lods` loop adds every loaded unit (zero-extended:
//! `rax` is zeroed first and `lodsb`/`lodsw` only write `al`/`ax`) into an
//! accumulator, so its checksum proves each unit was read once. `rep lods`
//! keeps only the last unit, which is what it returns. The ABI guarantees
//! DF = 0 on entry to `asm!`, so every instruction runs forward.

// Every kernel here has the one contract of `KernelFn` (documented there
// under Safety), so the per-function section would only repeat it.
#![allow(clippy::missing_safety_doc)]

use super::{Isa, Kernel, KernelArgs, Op, Pattern};
use core::arch::asm;

/// `len` is a whole number of `unit`s (a function, so that `unit` = 1 does
/// not read as a pointless `% 1` in the macros).
fn whole(len: usize, unit: usize) -> bool {
    len % unit == 0
}

macro_rules! x16 {
    ($s:expr) => {
        concat!(
            $s, "\n", $s, "\n", $s, "\n", $s, "\n", $s, "\n", $s, "\n", $s, "\n", $s, "\n", $s,
            "\n", $s, "\n", $s, "\n", $s, "\n", $s, "\n", $s, "\n", $s, "\n", $s
        )
    };
}

/// Plain `lods`: 16 × (`lods`, `add acc, rax`) per iteration.
macro_rules! lods_kernel {
    ($name:ident, $ins:literal, $unit:literal) => {
        pub unsafe fn $name(a: &KernelArgs) -> u64 {
            if a.len == 0 || a.reps == 0 || a.len % (16 * $unit) != 0 {
                return 0;
            }
            let r: u64;
            asm!(
                "xor eax, eax",
                "xor {acc:e}, {acc:e}",
                "2:",
                "mov rsi, {src}",
                "mov {n}, {cnt}",
                "3:",
                x16!(concat!($ins, "\nadd {acc}, rax")),
                "dec {n}",
                "jnz 3b",
                "dec {reps}",
                "jnz 2b",
                src = in(reg) a.src,
                cnt = in(reg) a.len / (16 * $unit),
                reps = inout(reg) a.reps => _,
                n = out(reg) _,
                acc = out(reg) r,
                out("rax") _, out("rsi") _,
                options(nostack, readonly),
            );
            r
        }
    };
}

/// `rep lods`: returns the last unit loaded (zero-extended).
macro_rules! rep_lods_kernel {
    ($name:ident, $ins:literal, $unit:literal) => {
        pub unsafe fn $name(a: &KernelArgs) -> u64 {
            if a.len == 0 || a.reps == 0 || !whole(a.len, $unit) {
                return 0;
            }
            let r: u64;
            asm!(
                "xor eax, eax",
                "2:",
                "mov rsi, {src}",
                "mov rcx, {cnt}",
                concat!("rep ", $ins),
                "dec {reps}",
                "jnz 2b",
                src = in(reg) a.src,
                cnt = in(reg) a.len / $unit,
                reps = inout(reg) a.reps => _,
                out("rax") r, out("rsi") _, out("rcx") _,
                options(nostack, readonly),
            );
            r
        }
    };
}

/// Plain `stos`: 16 per iteration, storing the pattern's low unit.
macro_rules! stos_kernel {
    ($name:ident, $ins:literal, $unit:literal) => {
        pub unsafe fn $name(a: &KernelArgs) -> u64 {
            if a.len == 0 || a.reps == 0 || a.len % (16 * $unit) != 0 {
                return 0;
            }
            asm!(
                "2:",
                "mov rdi, {dst}",
                "mov {n}, {cnt}",
                "3:",
                x16!($ins),
                "dec {n}",
                "jnz 3b",
                "dec {reps}",
                "jnz 2b",
                dst = in(reg) a.dst,
                cnt = in(reg) a.len / (16 * $unit),
                reps = inout(reg) a.reps => _,
                n = out(reg) _,
                in("rax") a.pattern,
                out("rdi") _,
                options(nostack),
            );
            0
        }
    };
}

/// `rep stos`.
macro_rules! rep_stos_kernel {
    ($name:ident, $ins:literal, $unit:literal) => {
        pub unsafe fn $name(a: &KernelArgs) -> u64 {
            if a.len == 0 || a.reps == 0 || !whole(a.len, $unit) {
                return 0;
            }
            asm!(
                "2:",
                "mov rdi, {dst}",
                "mov rcx, {cnt}",
                concat!("rep ", $ins),
                "dec {reps}",
                "jnz 2b",
                dst = in(reg) a.dst,
                cnt = in(reg) a.len / $unit,
                reps = inout(reg) a.reps => _,
                in("rax") a.pattern,
                out("rdi") _, out("rcx") _,
                options(nostack),
            );
            0
        }
    };
}

/// Plain `movs`: 16 per iteration.
macro_rules! movs_kernel {
    ($name:ident, $ins:literal, $unit:literal) => {
        pub unsafe fn $name(a: &KernelArgs) -> u64 {
            if a.len == 0 || a.reps == 0 || a.len % (16 * $unit) != 0 {
                return 0;
            }
            asm!(
                "2:",
                "mov rsi, {src}",
                "mov rdi, {dst}",
                "mov {n}, {cnt}",
                "3:",
                x16!($ins),
                "dec {n}",
                "jnz 3b",
                "dec {reps}",
                "jnz 2b",
                src = in(reg) a.src,
                dst = in(reg) a.dst,
                cnt = in(reg) a.len / (16 * $unit),
                reps = inout(reg) a.reps => _,
                n = out(reg) _,
                out("rsi") _, out("rdi") _,
                options(nostack),
            );
            0
        }
    };
}

/// `rep movs`.
macro_rules! rep_movs_kernel {
    ($name:ident, $ins:literal, $unit:literal) => {
        pub unsafe fn $name(a: &KernelArgs) -> u64 {
            if a.len == 0 || a.reps == 0 || !whole(a.len, $unit) {
                return 0;
            }
            asm!(
                "2:",
                "mov rsi, {src}",
                "mov rdi, {dst}",
                "mov rcx, {cnt}",
                concat!("rep ", $ins),
                "dec {reps}",
                "jnz 2b",
                src = in(reg) a.src,
                dst = in(reg) a.dst,
                cnt = in(reg) a.len / $unit,
                reps = inout(reg) a.reps => _,
                out("rsi") _, out("rdi") _, out("rcx") _,
                options(nostack),
            );
            0
        }
    };
}

lods_kernel!(lodsb, "lodsb", 1);
lods_kernel!(lodsw, "lodsw", 2);
lods_kernel!(lodsd, "lodsd", 4);
lods_kernel!(lodsq, "lodsq", 8);
rep_lods_kernel!(rep_lodsb, "lodsb", 1);
rep_lods_kernel!(rep_lodsw, "lodsw", 2);
rep_lods_kernel!(rep_lodsd, "lodsd", 4);
rep_lods_kernel!(rep_lodsq, "lodsq", 8);
stos_kernel!(stosb, "stosb", 1);
stos_kernel!(stosw, "stosw", 2);
stos_kernel!(stosd, "stosd", 4);
stos_kernel!(stosq, "stosq", 8);
rep_stos_kernel!(rep_stosw, "stosw", 2);
rep_stos_kernel!(rep_stosd, "stosd", 4);
rep_stos_kernel!(rep_stosq, "stosq", 8);
movs_kernel!(movsb, "movsb", 1);
movs_kernel!(movsw, "movsw", 2);
movs_kernel!(movsd, "movsd", 4);
movs_kernel!(movsq, "movsq", 8);
rep_movs_kernel!(rep_movsw, "movsw", 2);
rep_movs_kernel!(rep_movsd, "movsd", 4);
rep_movs_kernel!(rep_movsq, "movsq", 8);

const fn k(
    name: &'static str,
    op: Op,
    unit: usize,
    rep: bool,
    description: &'static str,
    func: super::KernelFn,
) -> Kernel {
    Kernel {
        name,
        op,
        width_bits: unit as u32 * 8,
        isa: Isa::Scalar,
        nontemporal: false,
        pattern: Pattern::Seq,
        granule: if rep { unit } else { 16 * unit },
        align: unit,
        description,
        func,
    }
}

use Op::{Copy, Read, Write};

/// String-instruction kernels (besides `rep_movsb`/`rep_stosb` in x86.rs).
pub static KERNELS: &[Kernel] = &[
    k(
        "lodsb",
        Read,
        1,
        false,
        "lodsb + add (8-bit loads through al)",
        lodsb,
    ),
    k(
        "lodsw",
        Read,
        2,
        false,
        "lodsw + add (16-bit loads through ax)",
        lodsw,
    ),
    k(
        "lodsd",
        Read,
        4,
        false,
        "lodsd + add (32-bit loads through eax)",
        lodsd,
    ),
    k(
        "lodsq",
        Read,
        8,
        false,
        "lodsq + add (64-bit loads through rax)",
        lodsq,
    ),
    k(
        "rep_lodsb",
        Read,
        1,
        true,
        "rep lodsb (each byte overwrites al)",
        rep_lodsb,
    ),
    k("rep_lodsw", Read, 2, true, "rep lodsw", rep_lodsw),
    k("rep_lodsd", Read, 4, true, "rep lodsd", rep_lodsd),
    k("rep_lodsq", Read, 8, true, "rep lodsq", rep_lodsq),
    k("stosb", Write, 1, false, "stosb unrolled (no rep)", stosb),
    k("stosw", Write, 2, false, "stosw unrolled (no rep)", stosw),
    k("stosd", Write, 4, false, "stosd unrolled (no rep)", stosd),
    k("stosq", Write, 8, false, "stosq unrolled (no rep)", stosq),
    k(
        "rep_stosw",
        Write,
        2,
        true,
        "rep stosw (microcoded fill)",
        rep_stosw,
    ),
    k(
        "rep_stosd",
        Write,
        4,
        true,
        "rep stosd (microcoded fill)",
        rep_stosd,
    ),
    k(
        "rep_stosq",
        Write,
        8,
        true,
        "rep stosq (microcoded fill)",
        rep_stosq,
    ),
    k("movsb", Copy, 1, false, "movsb unrolled (no rep)", movsb),
    k("movsw", Copy, 2, false, "movsw unrolled (no rep)", movsw),
    k("movsd", Copy, 4, false, "movsd unrolled (no rep)", movsd),
    k("movsq", Copy, 8, false, "movsq unrolled (no rep)", movsq),
    k(
        "rep_movsw",
        Copy,
        2,
        true,
        "rep movsw (microcoded copy)",
        rep_movsw,
    ),
    k(
        "rep_movsd",
        Copy,
        4,
        true,
        "rep movsd (microcoded copy)",
        rep_movsd,
    ),
    k(
        "rep_movsq",
        Copy,
        8,
        true,
        "rep movsq (microcoded copy)",
        rep_movsq,
    ),
];
