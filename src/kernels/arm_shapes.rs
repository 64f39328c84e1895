//! The AArch64 loop shapes the `kernels!` declarations fill (see
//! `decl.rs`): the same skeletons as x86-64's `shapes.rs` — an outer loop
//! over `reps` passes, an inner loop over the stream in blocks — written
//! in A64. Each shape macro is called as `shape!(name, Isa, store, block;
//! the kernel's instructions)` and emits `mod name { timed, CHECKSUM }`.
//!
//! Operands a kernel's instructions may use: `{s}`/`{d}` (sequential
//! streams, advanced by the block after each iteration unless the shape is
//! told the accesses post-increment them), `x9`/`x11` (random: the line's
//! address in the read and write streams), `{pat}` (the value writes
//! store), `{r}` (the checksum); scratch: x10–x17 and x20–x23 in copies,
//! x9–x12 in read checksums, every vector register v0–v31 (z0–z31) and the
//! predicates p0–p1 in NEON and SVE kernels (see `asm_for!`).
//!
//! Loop overhead per block is `add` (per stream), `subs`, `b.ne` on the
//! integer and branch pipes, which the loads and stores do not use; a
//! block of 16 accesses keeps it under a fifth of the instructions.

/// The function item with the `#[target_feature]` of its ISA.
macro_rules! with_isa {
    (Neon $f:item) => {
        #[target_feature(enable = "neon")]
        $f
    };
    (Sve $f:item) => {
        #[target_feature(enable = "sve")]
        $f
    };
    ($isa:ident $f:item) => {
        $f
    };
}

/// `asm!` with every vector register (and for SVE the predicates p0–p1)
/// marked clobbered for NEON and SVE kernels, nothing extra for scalar
/// ones. (SVE's z registers extend the v registers; Rust names the v
/// halves, and nothing of the caller lives in the upper bits.)
macro_rules! asm_for {
    (Sve; $($t:tt)*) => {
        asm_for!(Neon; $($t)* out("p0") _, out("p1") _,)
    };
    (Neon; $($t:tt)*) => {
        core::arch::asm!($($t)*
            out("v0") _, out("v1") _, out("v2") _, out("v3") _,
            out("v4") _, out("v5") _, out("v6") _, out("v7") _,
            out("v8") _, out("v9") _, out("v10") _, out("v11") _,
            out("v12") _, out("v13") _, out("v14") _, out("v15") _,
            out("v16") _, out("v17") _, out("v18") _, out("v19") _,
            out("v20") _, out("v21") _, out("v22") _, out("v23") _,
            out("v24") _, out("v25") _, out("v26") _, out("v27") _,
            out("v28") _, out("v29") _, out("v30") _, out("v31") _)
    };
    ($isa:ident; $($t:tt)*) => {
        core::arch::asm!($($t)*)
    };
}

/// After non-temporal stores, `dmb ishst`, so the timed region includes
/// their ordering (the counterpart of x86's `sfence`); nothing after
/// cached ones.
macro_rules! fence {
    (nt) => {
        "dmb ishst"
    };
    (cached) => {
        ""
    };
}

/// A read's checksum accumulator: `gpr` adds into `{r}` itself; `vec`
/// adds 64-bit lanes into v20/v21 and folds them into `{r}` after the
/// loop; `sve` adds into z20 and folds it with `uaddv`.
macro_rules! acc_zero {
    (gpr) => {
        "mov {r}, xzr"
    };
    (vec) => {
        "movi v20.2d, #0\nmovi v21.2d, #0"
    };
}

macro_rules! acc_fold {
    (gpr) => {
        ""
    };
    (vec) => {
        "add v20.2d, v20.2d, v21.2d\naddp d20, v20.2d\nfmov {r}, d20"
    };
}

/// A read kernel's two functions over one loop: `timed` issues `$load
/// $at` per access into registers nobody reads, `checksum` the same loads
/// followed by `$sum`, adding what they loaded into the accumulator
/// `$acc`. `$loop` is the skeleton macro, `$ops` its stream operands.
macro_rules! read_pair {
    ($name:ident, $isa:ident, $block:literal, $a:ident, $loop:ident, $adv:ident, [$($ops:tt)*];
     $n:tt, $load:literal, $at:literal, $sum:literal, $acc:ident) => {
        mod $name {
            use $crate::kernels::{KernelArgs, KernelFn};
            with_isa! { $isa
                pub(super) unsafe fn timed($a: &KernelArgs) -> u64 {
                    $loop!($isa, $a, $block, $adv, "", each!($n, concat!($load, " ", $at)), "",
                        [$($ops)* out("x9") _, out("x10") _, out("x11") _, out("x12") _,],
                        [options(nostack, readonly)]);
                    0
                }
            }
            with_isa! { $isa
                pub(super) unsafe fn checksum($a: &KernelArgs) -> u64 {
                    let mut r = 0u64;
                    $loop!($isa, $a, $block, $adv, acc_zero!($acc),
                        each!($n, concat!($load, " ", $at, "\n", $sum)), acc_fold!($acc),
                        [$($ops)* r = out(reg) r, out("x9") _, out("x10") _, out("x11") _,
                         out("x12") _,],
                        [options(nostack, readonly)]);
                    r
                }
            }
            pub(super) const CHECKSUM: Option<KernelFn> = Some(checksum);
        }
    };
}

/// Sequential kernels. `offset` accesses address `[{s}, #k]` and the
/// shape advances the pointers by the block; `post` accesses post-
/// increment the pointers themselves (`ld1 {…}, [{s}], #64`).
///
/// - `read N offset|post, "load", "address", "sum", acc`: `read_pair!`;
/// - `write N offset|post, "init", "store"`: `init` once (puts `{pat}` in
///   a register), then `store` per access;
/// - `copy N offset|post, "load", "store"`: `N` loads, then the `N`
///   stores.
macro_rules! seq {
    ($name:ident, $isa:ident, $store:ident, $block:literal;
     read $n:tt $adv:ident, $($t:tt)*) => {
        read_pair!($name, $isa, $block, a, seq_read_loop, $adv, []; $n, $($t)*);
    };
    ($name:ident, $isa:ident, $store:ident, $block:literal;
     write $n:tt $adv:ident, $init:literal, $st:literal) => {
        plain!($name, $isa, $block, a, seq_write_loop, $adv, $init, each!($n, $st),
            fence!($store), [pat = in(reg) a.pattern,], [options(nostack)]);
    };
    ($name:ident, $isa:ident, $store:ident, $block:literal;
     copy $n:tt $adv:ident, $ld:literal, $st:literal) => {
        plain!($name, $isa, $block, a, seq_copy_loop, $adv, "",
            concat!(each!($n, $ld), "\n", each!($n, $st)), fence!($store),
            [out("x10") _, out("x11") _, out("x12") _, out("x13") _,
             out("x14") _, out("x15") _, out("x16") _, out("x17") _,
             out("x20") _, out("x21") _, out("x22") _, out("x23") _,],
            [options(nostack)]);
    };
}

/// `add p, p, #block` for each pointer (`offset`), or nothing (`post`).
macro_rules! advance {
    (offset, $block:literal, $($p:ident),+) => {
        concat!($("add {", stringify!($p), "}, {", stringify!($p), "}, #", $block, "\n",)+)
    };
    (post, $block:literal, $($p:ident),+) => {
        ""
    };
}

/// The sequential skeleton over the pointers `[ptr = base, …]`.
macro_rules! seq_loop {
    ($isa:ident, $a:ident, $block:literal, [$($p:ident = $base:ident),+], $adv:ident,
     $init:expr, $body:expr, $fini:expr, [$($ops:tt)*], [$($opts:tt)*]) => {
        if $crate::kernels::decl::runs($a, $block) {
            asm_for!($isa;
                $init,
                "2:",
                $(concat!("mov {", stringify!($p), "}, {", stringify!($base), "}"),)+
                "mov {n}, {len}",
                "3:",
                $body,
                advance!($adv, $block, $($p),+),
                concat!("subs {n}, {n}, #", $block),
                "b.ne 3b",
                "subs {reps}, {reps}, #1",
                "b.ne 2b",
                $fini,
                $($base = in(reg) $a.$base,)+
                $($p = out(reg) _,)+
                len = in(reg) $a.len,
                reps = inout(reg) $a.reps => _,
                n = out(reg) _,
                $($ops)*
                $($opts)*,
            );
        }
    };
}

macro_rules! seq_read_loop {
    ($isa:ident, $a:ident, $block:literal, $adv:ident, $($t:tt)*) => {
        seq_loop!($isa, $a, $block, [s = src], $adv, $($t)*)
    };
}

macro_rules! seq_write_loop {
    ($isa:ident, $a:ident, $block:literal, $adv:ident, $($t:tt)*) => {
        seq_loop!($isa, $a, $block, [d = dst], $adv, $($t)*)
    };
}

macro_rules! seq_copy_loop {
    ($isa:ident, $a:ident, $block:literal, $adv:ident, $($t:tt)*) => {
        seq_loop!($isa, $a, $block, [s = src, d = dst], $adv, $($t)*)
    };
}

/// Random-order kernels: every line of the stream once per pass, in the
/// order of `KernelArgs::index`, as x86-64's `rand!`: four line indices
/// per iteration in two rotating pairs, each turned into a byte offset
/// (`lsl #6`) one pair ahead of its use, so the data loads never wait for
/// their address. Per line, `x9` = the line in the read stream and `x11`
/// the line in the write stream; the kernel's instructions address
/// `[x9, #k]` / `[x11, #k]`.
macro_rules! rand {
    ($name:ident, $isa:ident, $store:ident, $block:literal;
     read $n:tt, $load:literal, $at:literal, $sum:literal, $acc:ident) => {
        read_pair!($name, $isa, $block, a, rand_read_loop, offset, [src = in(reg) a.src,];
            $n, $load, $at, $sum, $acc);
    };
    ($name:ident, $isa:ident, $store:ident, $block:literal;
     write $n:tt, $init:literal, $st:literal) => {
        plain!($name, $isa, $block, a, rand_loop, $init,
            concat!("add x11, {dst}, \\q\n", each!($n, $st)), "",
            [dst = in(reg) a.dst, pat = in(reg) a.pattern, out("x11") _,], [options(nostack)]);
    };
    ($name:ident, $isa:ident, $store:ident, $block:literal;
     copy $n:tt, $ld:literal, $st:literal) => {
        plain!($name, $isa, $block, a, rand_loop, "",
            concat!("add x9, {src}, \\q\nadd x11, {dst}, \\q\n", each!($n, $ld, $st)), "",
            [src = in(reg) a.src, dst = in(reg) a.dst, out("x9") _, out("x10") _,
             out("x11") _, out("x12") _,], [options(nostack)]);
    };
}

/// `rand_loop` for a read: the line's address in `x9` before its loads
/// (`read_pair!` passes the access text, this prepends the address).
macro_rules! rand_read_loop {
    ($isa:ident, $a:ident, $block:literal, $adv:ident, $init:expr, $line:expr, $fini:expr,
     [$($ops:tt)*], [$($opts:tt)*]) => {
        rand_loop!($isa, $a, $block, $init, concat!("add x9, {src}, \\q\n", $line), $fini,
            [$($ops)*], [$($opts)*])
    };
}

macro_rules! rand_loop {
    ($isa:ident, $a:ident, $block:literal, $init:expr, $line:expr, $fini:expr,
     [$($ops:tt)*], [$($opts:tt)*]) => {
        let end = $crate::kernels::decl::random_end($a);
        asm_for!($isa;
            $init,
            "2:",
            "mov {i}, {idx}",
            "ldr {q0:w}, [{i}]",
            "ldr {q1:w}, [{i}, #4]",
            "lsl {q0}, {q0}, #6",
            "lsl {q1}, {q1}, #6",
            "3:",
            "ldr {t0:w}, [{i}, #8]",
            "ldr {t1:w}, [{i}, #12]",
            ".irp q, {q0}, {q1}", $line, ".endr",
            "lsl {t0}, {t0}, #6",
            "lsl {t1}, {t1}, #6",
            "ldr {q0:w}, [{i}, #16]",
            "ldr {q1:w}, [{i}, #20]",
            ".irp q, {t0}, {t1}", $line, ".endr",
            "lsl {q0}, {q0}, #6",
            "lsl {q1}, {q1}, #6",
            "add {i}, {i}, #16",
            "cmp {i}, {end}",
            "b.ne 3b",
            "subs {reps}, {reps}, #1",
            "b.ne 2b",
            $fini,
            idx = in(reg) $a.index,
            end = in(reg) end,
            reps = inout(reg) $a.reps => _,
            i = out(reg) _,
            q0 = out(reg) _,
            q1 = out(reg) _,
            t0 = out(reg) _,
            t1 = out(reg) _,
            $($ops)*
            $($opts)*,
        );
    };
}

/// SVE kernels, vector-length agnostic: per pass, blocks of four whole
/// vectors (`[{s}, #k, mul vl]` under an all-true predicate) while at
/// least four remain, then one predicated vector at a time (`whilelo`)
/// for the rest, so any multiple of 8 bytes is covered exactly at any
/// vector length. `{vl4}` holds four vectors' bytes (`rdvl`).
///
/// - `read "ld1d"`: the timed loop loads into z0–z3; the checksum adds
///   each loaded vector into z20 (zeroing predication leaves inactive
///   lanes 0) and folds it with `uaddv`;
/// - `write "st1d"`: stores z0 (the pattern in every lane);
/// - `copy "ld1d", "st1d"`: four loads, then four stores.
///
/// The tail uses the same instructions under `p1` with `[…, {e}, lsl #3]`
/// addressing.
macro_rules! sve {
    ($name:ident, $isa:ident, $store:ident, $block:literal; read $op:literal) => {
        mod $name {
            use $crate::kernels::{KernelArgs, KernelFn};
            with_isa! { Sve
                pub(super) unsafe fn timed(a: &KernelArgs) -> u64 {
                    sve_loop!(Sve, a, 8, [s = src], "", sve_block!(concat!($op, " z\\k\\().d, p0/z, [{s}, #\\k, mul vl]")),
                        concat!($op, " z0.d, p1/z, [{s}, {e}, lsl #3]"), "", [],
                        [options(nostack, readonly)]);
                    0
                }
            }
            with_isa! { Sve
                pub(super) unsafe fn checksum(a: &KernelArgs) -> u64 {
                    let mut r = 0u64;
                    sve_loop!(Sve, a, 8, [s = src], "mov z20.d, #0",
                        sve_block!(concat!($op, " z\\k\\().d, p0/z, [{s}, #\\k, mul vl]\nadd z20.d, z20.d, z\\k\\().d")),
                        concat!($op, " z0.d, p1/z, [{s}, {e}, lsl #3]\nadd z20.d, z20.d, z0.d"),
                        "uaddv d20, p0, z20.d\nfmov {r}, d20", [r = out(reg) r,],
                        [options(nostack, readonly)]);
                    r
                }
            }
            pub(super) const CHECKSUM: Option<KernelFn> = Some(checksum);
        }
    };
    ($name:ident, $isa:ident, $store:ident, $block:literal; write $op:literal) => {
        plain!($name, Sve, $block, a, sve_loop, [d = dst], "mov z0.d, {pat}",
            sve_block!(concat!($op, " z0.d, p0, [{d}, #\\k, mul vl]")),
            concat!($op, " z0.d, p1, [{d}, {e}, lsl #3]"), fence!($store),
            [pat = in(reg) a.pattern,], [options(nostack)]);
    };
    ($name:ident, $isa:ident, $store:ident, $block:literal; copy $ld:literal, $st:literal) => {
        plain!($name, Sve, $block, a, sve_loop, [s = src, d = dst], "",
            concat!(
                sve_block!(concat!($ld, " z\\k\\().d, p0/z, [{s}, #\\k, mul vl]")), "\n",
                sve_block!(concat!($st, " z\\k\\().d, p0, [{d}, #\\k, mul vl]"))
            ),
            concat!($ld, " z0.d, p1/z, [{s}, {e}, lsl #3]\n",
                $st, " z0.d, p1, [{d}, {e}, lsl #3]"),
            fence!($store), [], [options(nostack)]);
    };
}

/// Four vectors of a block: `\k` = 0..3.
macro_rules! sve_block {
    ($line:expr) => {
        concat!(".irp k, 0, 1, 2, 3\n", $line, "\n.endr")
    };
}

/// The SVE skeleton: `$body` per block of four vectors, `$tail` per
/// predicated vector after it (`p1` from `whilelo`, `{e}` the element
/// index, 8-byte elements). `runs` needs a non-zero multiple of 8 bytes.
macro_rules! sve_loop {
    ($isa:ident, $a:ident, $block:literal, [$($p:ident = $base:ident),+], $init:expr, $body:expr, $tail:expr, $fini:expr,
     [$($ops:tt)*], [$($opts:tt)*]) => {
        if $crate::kernels::decl::runs($a, 8) {
            asm_for!(Sve;
                ".arch_extension sve",
                "ptrue p0.d",
                "rdvl {vl4}, #4",
                $init,
                "2:",
                $(concat!("mov {", stringify!($p), "}, {", stringify!($base), "}"),)+
                "mov {n}, {len}",
                "cmp {n}, {vl4}",
                "b.lo 4f",
                "3:",
                $body,
                $(concat!("add {", stringify!($p), "}, {", stringify!($p), "}, {vl4}"),)+
                "sub {n}, {n}, {vl4}",
                "cmp {n}, {vl4}",
                "b.hs 3b",
                "4:",
                "cbz {n}, 6f",
                "lsr {el}, {n}, #3",
                "mov {e}, xzr",
                "5:",
                "whilelo p1.d, {e}, {el}",
                $tail,
                "incd {e}",
                "cmp {e}, {el}",
                "b.lo 5b",
                "6:",
                "subs {reps}, {reps}, #1",
                "b.ne 2b",
                $fini,
                $($base = in(reg) $a.$base,)+
                $($p = out(reg) _,)+
                len = in(reg) $a.len,
                reps = inout(reg) $a.reps => _,
                n = out(reg) _,
                vl4 = out(reg) _,
                el = out(reg) _,
                e = out(reg) _,
                $($ops)*
                $($opts)*,
            );
        }
    };
}

/// Register kernels, as x86-64's `regs!`: `setup`, then `body` per
/// iteration, then `fini` leaves the sum of the four destinations in
/// `{r}`. `{s0}`..`{s3}` hold `p, p+1, p+2, p+3`; `gpr` kernels also get
/// `{d0}`..`{d3}`. `stack` kernels move `sp` themselves (by multiples of
/// 16, which AArch64 requires of `sp` used as a base) and always restore
/// it; they touch only the bytes between the `sp` they moved to and the
/// one they started with (AArch64 Linux has no red zone).
macro_rules! regs {
    ($name:ident, $isa:ident, $store:ident, $block:literal;
     $kind:ident $($stack:ident)?, $setup:expr, $body:expr, $fini:expr) => {
        mod $name {
            use $crate::kernels::{KernelArgs, KernelFn};
            with_isa! { $isa
                pub(super) unsafe fn timed(a: &KernelArgs) -> u64 {
                    if a.reps == 0 {
                        return 0;
                    }
                    let p = a.pattern;
                    let r: u64;
                    regs_asm!($kind $($stack)?;
                        $setup,
                        "2:",
                        $body,
                        "subs {reps}, {reps}, #1",
                        "b.ne 2b",
                        $fini,
                        reps = inout(reg) a.reps => _,
                        s0 = in(reg) p,
                        s1 = in(reg) p.wrapping_add(1),
                        s2 = in(reg) p.wrapping_add(2),
                        s3 = in(reg) p.wrapping_add(3),
                        r = lateout(reg) r,
                        out("x9") _, out("x10") _, out("x11") _, out("x12") _,
                    );
                    r
                }
            }
            pub(super) const CHECKSUM: Option<KernelFn> = None;
        }
    };
}

macro_rules! regs_asm {
    (gpr $($stack:ident)?; $($t:tt)*) => {
        regs_asm!(vec $($stack)?; $($t)*
            d0 = out(reg) _, d1 = out(reg) _, d2 = out(reg) _, d3 = out(reg) _,)
    };
    (vec stack; $($t:tt)*) => {
        asm_for!(Neon; $($t)* options(),)
    };
    (vec; $($t:tt)*) => {
        asm_for!(Neon; $($t)* options(nostack),)
    };
}

/// The pointer chase: `$hops` dependent `ldr p, [p]` per iteration;
/// returns where the chain ended.
macro_rules! chase {
    ($name:ident, $isa:ident, $store:ident, $block:literal; $hops:tt) => {
        mod $name {
            use $crate::kernels::{KernelArgs, KernelFn};
            pub(super) unsafe fn timed(a: &KernelArgs) -> u64 {
                if a.reps == 0 || a.src.is_null() {
                    return a.src as u64;
                }
                let p: u64;
                core::arch::asm!(
                    "2:",
                    rept!($hops, "ldr {p}, [{p}]"),
                    "subs {reps}, {reps}, #1",
                    "b.ne 2b",
                    p = inout(reg) a.src as u64 => p,
                    reps = inout(reg) a.reps => _,
                    options(nostack, readonly),
                );
                p
            }
            pub(super) const CHECKSUM: Option<KernelFn> = None;
        }
    };
}

/// `dc zva` block zeroing: one `dc zva` per block of `DCZID_EL0.BS`
/// bytes (read before the loop). The declaration's block and alignment
/// (2 KiB, the largest block `DCZID_EL0` can state) make every stream a
/// whole number of blocks, aligned, at any block size.
macro_rules! zva {
    ($name:ident, $isa:ident, $store:ident, $block:literal;) => {
        mod $name {
            use $crate::kernels::{KernelArgs, KernelFn};
            pub(super) unsafe fn timed(a: &KernelArgs) -> u64 {
                let dczid: u64;
                core::arch::asm!("mrs {}, dczid_el0", out(reg) dczid, options(nomem, nostack));
                // DZP (bit 4) prohibits it; BS [3:0] is log2 of the block
                // in 4-byte words (Arm ARM, DCZID_EL0).
                let bs = 4u64 << (dczid & 0xf);
                if dczid & 0x10 != 0
                    || !$crate::kernels::decl::runs(a, $block)
                    || a.dst as u64 % bs != 0
                {
                    return 0;
                }
                core::arch::asm!(
                    "2:",
                    "mov {d}, {dst}",
                    "mov {n}, {len}",
                    "3:",
                    "dc zva, {d}",
                    "add {d}, {d}, {bs}",
                    "subs {n}, {n}, {bs}",
                    "b.ne 3b",
                    "subs {reps}, {reps}, #1",
                    "b.ne 2b",
                    dst = in(reg) a.dst,
                    len = in(reg) a.len,
                    bs = in(reg) bs,
                    reps = inout(reg) a.reps => _,
                    d = out(reg) _,
                    n = out(reg) _,
                    options(nostack),
                );
                0
            }
            pub(super) const CHECKSUM: Option<KernelFn> = None;
        }
    };
}
