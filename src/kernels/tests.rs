//! Every kernel verified on random data at odd sizes and alignments it
//! accepts: reads' checksums equal a reference and leave memory untouched;
//! writes write exactly their region (guard bytes before and after stay);
//! copies copy exactly. Kernels whose ISA is missing here are skipped with
//! a message (they are still compiled).

use super::{registry, Isa, Kernel, KernelArgs, Op};
use crate::memory::{Buffer, PageKind};
use crate::util::rng::XorShift64;

const GUARD: usize = 4096;

/// The checksum a read kernel must return: the wrapping sum of its words
/// (u32 words for 32-bit kernels, u64 lanes otherwise) times `reps`.
fn reference_checksum(k: &Kernel, data: &[u8], reps: u64) -> u64 {
    if k.width_bits == 32 {
        let s = data
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .fold(0u32, |a, b| a.wrapping_add(b));
        s.wrapping_mul(reps as u32) as u64
    } else {
        let s = data
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .fold(0u64, |a, b| a.wrapping_add(b));
        s.wrapping_mul(reps)
    }
}

/// Bytes a write kernel must leave: the pattern repeated at its unit (SVE
/// stores 64-bit elements; libc's memset a byte), or zeros (`dc zva`).
fn expected_write_byte(k: &Kernel, pattern: u64, i: usize) -> u8 {
    if k.isa == Isa::DcZva {
        return 0;
    }
    let unit = match k.width_bits {
        32 => 4,
        w if w >= 64 || k.isa == Isa::Sve => 8,
        _ => 1,
    };
    pattern.to_le_bytes()[i % unit]
}

/// Cases: (offset from a 2 MiB boundary, stream length) per kernel.
fn cases(k: &Kernel, rng: &mut XorShift64) -> Vec<(usize, usize)> {
    let mut v = vec![(0, k.granule), (k.align, k.granule * 3)];
    // Lengths where a two-stream read (`read pairs`) changes split: two
    // streams and no rest, two streams and a rest, one granule short.
    let span = super::decl::SET_SPAN;
    for len in [2 * span, 5 * span + k.granule, 4 * span - k.granule] {
        if len % k.granule == 0 {
            v.push((k.align, len));
        }
    }
    for _ in 0..6 {
        let off = k.align * (1 + rng.below(7) as usize);
        let len = k.granule * (1 + rng.below(97) as usize);
        v.push((off, len));
    }
    v
}

/// Guard check: nothing outside `[off, off + len)` changed.
fn assert_outside_untouched(before: &[u8], after: &[u8], off: usize, len: usize, ctx: &str) {
    assert!(
        after[..off] == before[..off],
        "{ctx}: wrote before its region"
    );
    assert!(
        after[off + len..] == before[off + len..],
        "{ctx}: wrote past its region"
    );
}

fn check_kernel(k: &'static Kernel) {
    let mut rng = XorShift64::new(k.name.len() as u64 * 7919);
    for (off, len) in cases(k, &mut rng) {
        let total = GUARD + off + 2 * len + 64 + GUARD;
        let mut buf = Buffer::new(total, PageKind::Regular, rng.next_u64()).unwrap();
        let before = buf.as_slice().to_vec();
        let base = buf.as_mut_ptr();
        let src_off = GUARD + off;
        // The copy's destination starts a cache line past the source, like
        // the harness (team::dst_offset), keeping the kernel's alignment.
        let dst_off = if k.op == Op::Copy {
            src_off + len.next_multiple_of(64)
        } else {
            src_off
        };
        let pattern = rng.next_u64() | 0x0101_0101_0101_0101;
        let reps = 3;
        let mut args = KernelArgs::new(
            // SAFETY: both offsets plus `len` lie inside the buffer.
            unsafe { base.add(src_off) },
            // SAFETY: as above.
            unsafe { base.add(dst_off) },
            len,
            reps,
        );
        args.pattern = pattern;
        // SAFETY: both streams lie inside `buf` with GUARD bytes around them,
        // aligned to k.align; the ISA was checked by the caller.
        unsafe { (k.func)(&args) };
        let ctx = format!("{} off={} len={}", k.name, off, len);
        match k.op {
            Op::Read => {
                assert!(
                    buf.as_slice() == &before[..],
                    "{ctx}: a read kernel changed memory"
                );
                // The timed loop only loads; its verification variant (the
                // same loop adding every word) proves what it read.
                // SAFETY: as above.
                let sum = unsafe { (k.verify_fn())(&args) };
                assert_eq!(
                    sum,
                    reference_checksum(k, &before[src_off..src_off + len], reps),
                    "{ctx}: checksum"
                );
                assert!(
                    buf.as_slice() == &before[..],
                    "{ctx}: a read kernel changed memory"
                );
            }
            Op::Write => {
                let after = buf.as_slice();
                for i in 0..len {
                    assert_eq!(
                        after[dst_off + i],
                        expected_write_byte(k, pattern, i),
                        "{ctx}: byte {i} not written"
                    );
                }
                assert_outside_untouched(&before, after, dst_off, len, &ctx);
            }
            Op::Copy => {
                let after = buf.as_slice();
                assert!(
                    after[dst_off..dst_off + len] == before[src_off..src_off + len],
                    "{ctx}: copy differs"
                );
                assert_outside_untouched(&before, after, dst_off, len, &ctx);
            }
            // Latency kernels are filtered out above; no kernel has
            // another op (a registry test checks each kernel's op).
            _ => unreachable!("filtered out above"),
        }
    }
}

#[test]
fn every_kernel_moves_exactly_its_bytes() {
    let f = crate::platform::cpu::detect_features();
    let mut ran = 0;
    // Sequential, rep, dc zva and libc kernels; random, string, chase and
    // register kernels have their own checks in tests/kernels_more.rs.
    for k in registry().iter().filter(|k| {
        k.name.starts_with("seq_")
            || k.name.starts_with("libc_")
            || k.name == "rep_movsb"
            || k.name == "rep_stosb"
            || k.name == "dc_zva"
    }) {
        if let Some(why) = k.skip_reason(&f) {
            eprintln!("skipping {}: {}", k.name, why);
            continue;
        }
        check_kernel(k);
        ran += 1;
    }
    // Every x86-64 runs the 19 scalar, SSE2, rep and libc ones (so this
    // holds under BWSCOPE_DISABLE_ISA=avx512f,avx2 too); every AArch64 the
    // 9 scalar and 2 libc ones (BWSCOPE_DISABLE_ISA=asimd,sve,dc_zva too).
    let least = if cfg!(target_arch = "aarch64") {
        11
    } else {
        19
    };
    assert!(ran >= least, "only {ran} kernels ran");
}

#[test]
fn reference_checksum_detects_a_missed_word() {
    // The check above can fail: a kernel that skipped one word would not
    // match. Show the reference differs when one word is left out.
    let k = registry()
        .iter()
        .find(|k| k.name == "seq_read_64_scalar")
        .unwrap();
    let data: Vec<u8> = (0..256u32).map(|i| (i * 37 + 11) as u8).collect();
    assert_ne!(
        reference_checksum(k, &data, 1),
        reference_checksum(k, &data[..248], 1)
    );
}

#[test]
fn verify_accepts_every_read_loop_and_rejects_one_that_skips_a_word() {
    let f = crate::platform::cpu::detect_features();
    let mut buf = Buffer::new(2 * 4096, PageKind::Regular, 77).unwrap();
    let len = 4096;
    let base = buf.as_mut_ptr();
    let index = super::perm::padded(super::perm::shuffled(len / 64, 5));
    let mut checked = 0;
    for k in registry().iter().filter(|k| k.checksum.is_some()) {
        if !k.supported(&f) {
            continue;
        }
        let mut a = KernelArgs::new(base, base, len, 2);
        a.index = index.as_ptr();
        a.index_len = index.len();
        // SAFETY: the stream lies inside `buf`, 2 MiB aligned, with a
        // line order for the random kernels; the ISA is present.
        unsafe { k.verify(&a) }.unwrap_or_else(|e| panic!("{e}"));
        checked += 1;
    }
    // x86-64: 6 baseline reads; AArch64: 5 scalar ones (3 seq, 2 random).
    let least = if cfg!(target_arch = "aarch64") { 5 } else { 6 };
    assert!(checked >= least, "only {checked} verification variants ran");

    // A loop that missed the stream's last word fails verification.
    unsafe fn skips_last_word(a: &KernelArgs) -> u64 {
        let words = std::slice::from_raw_parts(a.src as *const u64, a.len / 8 - 1);
        words
            .iter()
            .fold(0u64, |s, w| s.wrapping_add(*w))
            .wrapping_mul(a.reps)
    }
    let k = registry()
        .iter()
        .find(|k| k.name == "seq_read_64_scalar")
        .unwrap();
    let broken = Kernel {
        checksum: Some(skips_last_word),
        ..k.clone()
    };
    let a = KernelArgs::new(base, base, len, 2);
    // SAFETY: as above.
    let err = unsafe { broken.verify(&a) }.unwrap_err();
    assert!(err.contains("did not read every byte"), "{err}");
}
