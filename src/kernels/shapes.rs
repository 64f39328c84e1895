//! The x86-64 loop shapes the `kernels!` declarations fill (see
//! `decl.rs`). Each shape macro is called as `shape!(name, Isa, store,
//! block; the kernel's instructions)` and emits `mod name { timed,
//! CHECKSUM }`.
//!
//! Repetition is the assembler's (`each!`, `rept!`, `groups!` in
//! `decl.rs`).
//!
//! Operands a kernel's instructions may use: `{s}`/`{d}` (sequential) or
//! `{src} + \q`/`{dst} + \q` (random: the line's byte offset) for the read
//! and write streams, `{pat}` for the value writes store, `{r}` for the
//! checksum, and `r8` as scratch for general-purpose loads and copies;
//! vector registers 0–15 are free (see `asm_for!`).

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

/// The checksum accumulator of a read's verification variant: `gpr` adds
/// into `{r}` itself; `xmm`/`ymm`/`zmm` add into register 0 of the class
/// and fold its 64-bit lanes into `{r}` after the loop.
macro_rules! acc_zero {
    (gpr) => {
        "xor {r:e}, {r:e}"
    };
    (xmm) => {
        "pxor xmm0, xmm0"
    };
    (ymm) => {
        "vpxor ymm0, ymm0, ymm0"
    };
    (zmm) => {
        "vpxorq zmm0, zmm0, zmm0"
    };
}

macro_rules! acc_fold {
    (gpr) => {
        ""
    };
    (xmm) => {
        "pshufd xmm1, xmm0, 0x4e\npaddq xmm0, xmm1\nmovq {r}, xmm0"
    };
    (ymm) => {
        concat!(
            "vextracti128 xmm1, ymm0, 1\nvpaddq xmm0, xmm0, xmm1\n",
            "vpshufd xmm1, xmm0, 0x4e\nvpaddq xmm0, xmm0, xmm1\nvmovq {r}, xmm0\nvzeroupper"
        )
    };
    (zmm) => {
        concat!(
            "vextracti64x4 ymm1, zmm0, 1\nvpaddq ymm0, ymm0, ymm1\n",
            acc_fold!(ymm)
        )
    };
}

/// A read kernel's two functions over one loop: `timed` issues `$load $at`
/// per access into registers nobody reads (no ALU work competes with the
/// loads), `checksum` issues `$sum $at` — the same addresses, in the same
/// order — adding every word into the accumulator `$acc`. `$loop` is the
/// skeleton macro, `$ops` its stream operands.
macro_rules! read_pair {
    ($name:ident, $isa:ident, $block:literal, $a:ident, $loop:ident, [$($ops:tt)*];
     $($t:tt)*) => {
        read_pair!($name, $isa, $block, $a, $loop, each, [$($ops)*]; $($t)*);
    };
    ($name:ident, $isa:ident, $block:literal, $a:ident, $loop:ident, $mk:ident, [$($ops:tt)*];
     $n:tt, $load:literal / $sum:literal, $at:literal, $acc:ident) => {
        mod $name {
            use $crate::kernels::{KernelArgs, KernelFn};
            with_isa! { $isa
                pub(super) unsafe fn timed($a: &KernelArgs) -> u64 {
                    $loop!($isa, $a, $block, "", $mk!($n, concat!($load, " ", $at)),
                        vzeroupper!($isa), [$($ops)* out("r8") _,], [options(nostack, readonly)]);
                    0
                }
            }
            with_isa! { $isa
                pub(super) unsafe fn checksum($a: &KernelArgs) -> u64 {
                    let mut r = 0u64;
                    $loop!($isa, $a, $block, acc_zero!($acc), $mk!($n, concat!($sum, " ", $at)),
                        acc_fold!($acc), [$($ops)* r = out(reg) r,], [options(nostack, readonly)]);
                    r
                }
            }
            pub(super) const CHECKSUM: Option<KernelFn> = Some(checksum);
        }
    };
}

/// Sequential kernels: an outer loop over `reps` passes, an inner loop
/// over the stream in blocks of `block` bytes — `{s}` walks the read
/// stream, `{d}` the write stream, with `add`/`sub`/`jnz` as the only
/// overhead.
///
/// - `read N, "load" / "sum", "address", acc`: see `read_pair!`;
/// - `read pairs N, …`: the same, over two streams (see `seq_pairs_loop!`;
///   the address adds `\h`, the second stream's offset);
/// - `write N, "init", "store"`: `init` once (puts `{pat}` in a register),
///   then `store` per access;
/// - `copy G x N, "load", "store"`: `G` groups of `N` loads, then the
///   same `N` stores (`.Lg` = the group; the scratch registers r8–r11
///   are `N = r8`).
macro_rules! seq {
    ($name:ident, $isa:ident, $store:ident, $block:literal; read pairs $($t:tt)*) => {
        read_pair!($name, $isa, $block, a, seq_pairs_loop, pairs, []; $($t)*);
    };
    ($name:ident, $isa:ident, $store:ident, $block:literal; read $($t:tt)*) => {
        read_pair!($name, $isa, $block, a, seq_read_loop, []; $($t)*);
    };
    ($name:ident, $isa:ident, $store:ident, $block:literal;
     write $n:tt, $init:literal, $st:literal) => {
        plain!($name, $isa, $block, a, seq_write_loop, $init, each!($n, $st),
            concat!(fence!($store), "\n", vzeroupper!($isa)), [pat = in(reg) a.pattern,],
            [options(nostack)]);
    };
    ($name:ident, $isa:ident, $store:ident, $block:literal;
     copy $g:tt x $n:tt, $ld:literal, $st:literal) => {
        plain!($name, $isa, $block, a, seq_copy_loop, "", groups!($g, $n, $ld, $st),
            concat!(fence!($store), "\n", vzeroupper!($isa)),
            [out("r8") _, out("r9") _, out("r10") _, out("r11") _,], [options(nostack)]);
    };
}

/// The sequential skeleton over the pointers `[ptr = base, …]`.
macro_rules! seq_loop {
    ($isa:ident, $a:ident, $block:literal, [$($p:ident = $base:ident),+],
     $init:expr, $body:expr, $fini:expr, [$($ops:tt)*], [$($opts:tt)*]) => {
        if $crate::kernels::decl::runs($a, $block) {
            asm_for!($isa;
                $init,
                "2:",
                $(concat!("mov {", stringify!($p), "}, {", stringify!($base), "}"),)+
                "mov {n}, {len}",
                "3:",
                $body,
                $(concat!("add {", stringify!($p), "}, ", $block),)+
                concat!("sub {n}, ", $block),
                "jnz 3b",
                "dec {reps}",
                "jnz 2b",
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

/// `$n` accesses to each of two streams `{d}` bytes apart, alternating
/// between them: `\i` = 0..n-1, `\h` = 0 then `{d}`.
macro_rules! pairs {
    ($n:tt, $line:expr) => {
        concat!(
            ".irp i, ",
            idx!($n),
            "\n.irp h, 0, {d}\n",
            $line,
            "\n.endr\n.endr"
        )
    };
}

/// A read over two streams: a pass of up to [`PAIRED_MAX`] bytes reads its
/// first `2·D` bytes as the streams `[0, D)` and `[D, 2·D)` in step
/// (`pairs!`: half a block from each per iteration), `D` the largest
/// multiple of [`SET_SPAN`] up to half the pass; the rest (under
/// `2 · SET_SPAN` bytes, or all of a longer pass) runs in address order,
/// as `read N` does. Each byte once per pass.
///
/// Why: on Zen 4 (EPYC 9004 guest, 3.69 GHz) one stream of 512-bit loads
/// reads 60.5 of 64 B/cycle (94.5 %) at every L1 size from 2 KiB, unrolled
/// 8, 16 or 32 times, into one register or sixteen, aligned or not, with
/// the loop at any 64-byte offset; so do 256-bit loads of two lines per
/// cycle (the first halves of lines 0–7, then the second halves), while
/// 256-bit loads of both halves of one line per cycle reach 100 %. Loads
/// alternating between two lines 4 KiB apart (one L1 set) reach 100 %, at
/// 6 KiB apart 94.5 %. This fits the rule AMD documented for K8's banked
/// L1 (two loads in one cycle conflict when they need the same bank at
/// different indexes; a 64-byte load needs every bank): AMD, Software
/// Optimization Guide for AMD64 Processors (25112), §5.9. On Zen 4 the
/// cost is ~5.5 %, not one load in two, so the rule there is our reading.
///
/// [`PAIRED_MAX`]: crate::kernels::decl::PAIRED_MAX
/// [`SET_SPAN`]: crate::kernels::decl::SET_SPAN
macro_rules! seq_pairs_loop {
    ($isa:ident, $a:ident, $block:literal, $init:expr, pairs!($n:tt, $line:expr), $fini:expr,
     [$($ops:tt)*], [$($opts:tt)*]) => {
        if $crate::kernels::decl::runs($a, $block) {
            let span = $crate::kernels::decl::SET_SPAN;
            let half = if $a.len <= $crate::kernels::decl::PAIRED_MAX {
                $a.len / (2 * span) * span
            } else {
                0
            };
            asm_for!($isa;
                $init,
                "2:",
                "mov {s}, {src}",
                "mov {n}, {d}",
                "test {n}, {n}",
                "jz 4f",
                ".p2align 6",
                "3:",
                pairs!($n, $line),
                concat!("add {s}, ", $block, "/2"),
                concat!("sub {n}, ", $block, "/2"),
                "jnz 3b",
                "add {s}, {d}",
                "4:",
                "mov {n}, {rest}",
                "test {n}, {n}",
                "jz 6f",
                "5:",
                // The same accesses in address order: `\h` = 0, then half
                // a block.
                concat!(".irp h, 0, ", $block, "/2\n", each!($n, $line), "\n.endr"),
                concat!("add {s}, ", $block),
                concat!("sub {n}, ", $block),
                "jnz 5b",
                "6:",
                "dec {reps}",
                "jnz 2b",
                $fini,
                src = in(reg) $a.src,
                d = in(reg) half,
                rest = in(reg) $a.len - 2 * half,
                reps = inout(reg) $a.reps => _,
                s = out(reg) _,
                n = out(reg) _,
                $($ops)*
                $($opts)*,
            );
        }
    };
}

macro_rules! seq_read_loop {
    ($isa:ident, $a:ident, $block:literal, $($t:tt)*) => {
        seq_loop!($isa, $a, $block, [s = src], $($t)*)
    };
}

macro_rules! seq_write_loop {
    ($isa:ident, $a:ident, $block:literal, $($t:tt)*) => {
        seq_loop!($isa, $a, $block, [d = dst], $($t)*)
    };
}

macro_rules! seq_copy_loop {
    ($isa:ident, $a:ident, $block:literal, $($t:tt)*) => {
        seq_loop!($isa, $a, $block, [s = src, d = dst], $($t)*)
    };
}

/// A copy over four pages in step, the shape of glibc's large copies
/// (`large_memcpy_4x` in sysdeps/x86_64/multiarch/memmove-vec-unaligned-erms.S,
/// used above its non-temporal threshold): each iteration loads `$step`
/// bytes at the same offset of four consecutive 4 KiB pages, then stores
/// them (non-temporally) to the same offsets of the destination; after a
/// page's worth of iterations both pointers move on by four pages. Each
/// byte once per pass, so the granule is 16 KiB.
///
/// Why a kernel of its own: with 4 KiB pages a core's prefetchers stop at
/// each page boundary, and four pages in flight keep more DRAM requests
/// outstanding there than one stream does. Whether that beats one stream
/// depends on the core (Zen 4 guest, 1 GiB, 4 KiB pages: one stream 33.7,
/// four pages 28.0 GB/s), so it is measured beside `seq_`, never instead.
///
/// `$ld`/`$st` are one access with `\i` the register (0–15) and `.Lp` the
/// page (0–3): page `p` uses registers `4p`..`4p+3`.
#[allow(unused_macros)] // x86-64 only
macro_rules! pages {
    ($name:ident, $isa:ident, $store:ident, $block:literal;
     copy $step:literal, $ld:literal, $st:literal) => {
        plain!(
            $name,
            $isa,
            $block,
            a,
            pages_loop,
            $step,
            concat!(four_pages!($ld), "\n", four_pages!($st)),
            concat!(fence!($store), "\n", vzeroupper!($isa)),
            [],
            [options(nostack)]
        );
    };
}

/// `$line` for the four registers of each of the four pages, `.Lp` set to
/// the page.
macro_rules! four_pages {
    ($line:expr) => {
        concat!(
            ".set .Lp, 0\n",
            each4!("0, 1, 2, 3", $line),
            "\n.set .Lp, 1\n",
            each4!("4, 5, 6, 7", $line),
            "\n.set .Lp, 2\n",
            each4!("8, 9, 10, 11", $line),
            "\n.set .Lp, 3\n",
            each4!("12, 13, 14, 15", $line)
        )
    };
}

macro_rules! each4 {
    ($regs:literal, $line:expr) => {
        concat!(".irp i, ", $regs, "\n", $line, "\n.endr")
    };
}

/// The four-page skeleton: `{s}`/`{d}` walk a page's first `$step` bytes
/// per iteration (`{i}` counts the page's iterations), then skip the three
/// pages the iterations also covered.
macro_rules! pages_loop {
    ($isa:ident, $a:ident, $block:literal, $step:literal, $body:expr, $fini:expr,
     [$($ops:tt)*], [$($opts:tt)*]) => {
        if $crate::kernels::decl::runs($a, $block) {
            asm_for!($isa;
                "2:",
                "mov {s}, {src}",
                "mov {d}, {dst}",
                "mov {n}, {len}",
                "3:",
                concat!("mov {i:e}, 4096 / ", $step),
                "4:",
                $body,
                concat!("add {s}, ", $step),
                concat!("add {d}, ", $step),
                "dec {i:e}",
                "jnz 4b",
                "add {s}, 3 * 4096",
                "add {d}, 3 * 4096",
                concat!("sub {n}, ", $block),
                "jnz 3b",
                "dec {reps}",
                "jnz 2b",
                $fini,
                src = in(reg) $a.src,
                dst = in(reg) $a.dst,
                len = in(reg) $a.len,
                reps = inout(reg) $a.reps => _,
                s = out(reg) _,
                d = out(reg) _,
                n = out(reg) _,
                i = out(reg) _,
                $($ops)*
                $($opts)*,
            );
        }
    };
}

/// Random-order kernels: every line of the stream once per pass, in the
/// order of `KernelArgs::index`. Each iteration takes four line indices
/// (two pairs in rotating registers), turns them into byte offsets
/// (`shl 6`) and runs the kernel's per-line instructions with `\q` = the
/// line's offset; the next pair of indices is loaded one pair ahead, so
/// the data loads never wait for their address (with the index load right
/// before its use, random reads ran at 40–60 % of sequential at L1, Zen
/// 4). The arguments are as for `seq!`, per line instead of per block.
macro_rules! rand {
    ($name:ident, $isa:ident, $store:ident, $block:literal; read $($t:tt)*) => {
        read_pair!($name, $isa, $block, a, rand_loop, [src = in(reg) a.src,]; $($t)*);
    };
    ($name:ident, $isa:ident, $store:ident, $block:literal;
     write $n:tt, $init:literal, $st:literal) => {
        plain!($name, $isa, $block, a, rand_loop, $init, each!($n, $st), vzeroupper!($isa),
            [dst = in(reg) a.dst, pat = in(reg) a.pattern,], [options(nostack)]);
    };
    ($name:ident, $isa:ident, $store:ident, $block:literal;
     copy $n:tt, $ld:literal, $st:literal) => {
        plain!($name, $isa, $block, a, rand_loop, "", each!($n, $ld, $st), vzeroupper!($isa),
            [src = in(reg) a.src, dst = in(reg) a.dst, out("r8") _,], [options(nostack)]);
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
            "mov {q0:e}, dword ptr [{i}]",
            "mov {q1:e}, dword ptr [{i} + 4]",
            "shl {q0}, 6",
            "shl {q1}, 6",
            "3:",
            "mov {t0:e}, dword ptr [{i} + 8]",
            "mov {t1:e}, dword ptr [{i} + 12]",
            ".irp q, {q0}, {q1}", $line, ".endr",
            "shl {t0}, 6",
            "shl {t1}, 6",
            "mov {q0:e}, dword ptr [{i} + 16]",
            "mov {q1:e}, dword ptr [{i} + 20]",
            ".irp q, {t0}, {t1}", $line, ".endr",
            "shl {q0}, 6",
            "shl {q1}, 6",
            "add {i}, 16",
            "cmp {i}, {end}",
            "jne 3b",
            "dec {reps}",
            "jnz 2b",
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

/// Register kernels: `setup`, then `body` per iteration, then `fini`
/// leaves the sum of the four destinations in `{r}`. `{s0}`..`{s3}` hold
/// `p, p+1, p+2, p+3` (`p` = `KernelArgs::pattern`); `gpr` kernels also
/// get `{d0}`..`{d3}` as destinations. `stack` kernels move `rsp`
/// themselves (no `nostack`).
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
                    regs_asm!($kind $($stack)?; $isa;
                        $setup,
                        "2:",
                        $body,
                        "dec {reps}",
                        "jnz 2b",
                        $fini,
                        reps = inout(reg) a.reps => _,
                        s0 = in(reg) p,
                        s1 = in(reg) p.wrapping_add(1),
                        s2 = in(reg) p.wrapping_add(2),
                        s3 = in(reg) p.wrapping_add(3),
                        r = lateout(reg) r,
                    );
                    r
                }
            }
            pub(super) const CHECKSUM: Option<KernelFn> = None;
        }
    };
}

macro_rules! regs_asm {
    (gpr $($stack:ident)?; $isa:ident; $($t:tt)*) => {
        regs_asm!(vec $($stack)?; $isa; $($t)*
            d0 = out(reg) _, d1 = out(reg) _, d2 = out(reg) _, d3 = out(reg) _,)
    };
    (vec stack; $isa:ident; $($t:tt)*) => {
        asm_for!($isa; $($t)* options(),)
    };
    (vec; $isa:ident; $($t:tt)*) => {
        asm_for!($isa; $($t)* options(nostack),)
    };
}

/// String instructions (`lods`, `stos`, `movs` at one width, `rsi`/`rdi`
/// advancing implicitly; the ABI guarantees DF = 0 on entry to `asm!`, so
/// they run forward): plain, 16 per iteration (`lods` adds each unit, zero
/// extended, into an accumulator it returns), or one `rep` per pass
/// (`rep lods` returns the last unit).
macro_rules! string {
    ($name:ident, $isa:ident, $store:ident, $block:literal; $kind:ident $ins:literal) => {
        mod $name {
            use $crate::kernels::decl::{blocks, runs};
            use $crate::kernels::{KernelArgs, KernelFn};
            with_isa! { $isa
                pub(super) unsafe fn timed(a: &KernelArgs) -> u64 {
                    if !runs(a, $block) {
                        return 0;
                    }
                    string_asm!($kind $ins, a, blocks(a, $block))
                }
            }
            pub(super) const CHECKSUM: Option<KernelFn> = None;
        }
    };
}

macro_rules! string_asm {
    (lods $ins:literal, $a:ident, $cnt:expr) => {{
        let r: u64;
        string_loop!($a, $cnt, ["rsi" = src], "{n}", "xor eax, eax\nxor {acc:e}, {acc:e}",
            x16!(rept!(16, $ins, "add {acc}, rax")),
            [n = out(reg) _, acc = out(reg) r, out("rax") _,], readonly);
        r
    }};
    (rep_lods $ins:literal, $a:ident, $cnt:expr) => {{
        let r: u64;
        string_loop!($a, $cnt, ["rsi" = src], "rcx", "xor eax, eax", concat!("rep ", $ins),
            [out("rcx") _, out("rax") r,], readonly);
        r
    }};
    (stos $ins:literal, $a:ident, $cnt:expr) => {{
        string_loop!($a, $cnt, ["rdi" = dst], "{n}", "", x16!(rept!(16, $ins)),
            [n = out(reg) _, in("rax") $a.pattern,]);
        0
    }};
    (rep_stos $ins:literal, $a:ident, $cnt:expr) => {{
        string_loop!($a, $cnt, ["rdi" = dst], "rcx", "", concat!("rep ", $ins),
            [out("rcx") _, in("rax") $a.pattern,]);
        0
    }};
    (movs $ins:literal, $a:ident, $cnt:expr) => {{
        string_loop!($a, $cnt, ["rsi" = src, "rdi" = dst], "{n}", "", x16!(rept!(16, $ins)),
            [n = out(reg) _,]);
        0
    }};
    (rep_movs $ins:literal, $a:ident, $cnt:expr) => {{
        string_loop!($a, $cnt, ["rsi" = src, "rdi" = dst], "rcx", "", concat!("rep ", $ins),
            [out("rcx") _,]);
        0
    }};
}

/// The inner loop of the plain string kernels: `{n}` iterations of 16.
macro_rules! x16 {
    ($body:expr) => {
        concat!("3:\n", $body, "\ndec {n}\njnz 3b")
    };
}

/// The string skeleton: per pass, load the registers the instructions walk
/// (`["rsi" = src, …]`) and the counter (`{n}` for the plain loop, `rcx`
/// for `rep`) with `cnt`, then run `$body`.
macro_rules! string_loop {
    ($a:ident, $cnt:expr, [$($reg:tt = $base:ident),+], $counter:tt, $init:expr, $body:expr,
     [$($ops:tt)*] $(, $ro:ident)?) => {
        core::arch::asm!(
            $init,
            "2:",
            $(concat!("mov ", $reg, ", {", stringify!($base), "}"),)+
            concat!("mov ", $counter, ", {cnt}"),
            $body,
            "dec {reps}",
            "jnz 2b",
            $($base = in(reg) $a.$base,)+
            $(out($reg) _,)+
            cnt = in(reg) $cnt,
            reps = inout(reg) $a.reps => _,
            $($ops)*
            options(nostack $(, $ro)?),
        )
    };
}

/// The pointer chase: `$hops` dependent `mov p, [p]` per iteration; returns
/// where the chain ended (the pointer after the last hop).
macro_rules! chase {
    ($name:ident, $isa:ident, $store:ident, $block:literal; $hops:tt) => {
        mod $name {
            use $crate::kernels::{KernelArgs, KernelFn};
            with_isa! { $isa
                pub(super) unsafe fn timed(a: &KernelArgs) -> u64 {
                    if a.reps == 0 || a.src.is_null() {
                        return a.src as u64;
                    }
                    let p: u64;
                    core::arch::asm!(
                        "2:",
                        rept!($hops, "mov {p}, qword ptr [{p}]"),
                        "dec {reps}",
                        "jnz 2b",
                        p = inout(reg) a.src as u64 => p,
                        reps = inout(reg) a.reps => _,
                        options(nostack, readonly),
                    );
                    p
                }
            }
            pub(super) const CHECKSUM: Option<KernelFn> = None;
        }
    };
}
