//! libc `memcpy` and `memset`, labelled as such.
//!
//! glibc picks an implementation at load time (ERMS, AVX2, EVEX...) and
//! switches to non-temporal stores above `__x86_shared_non_temporal_threshold`
//! (about 3/4 of the L3 share), so at DRAM sizes these are different kernels
//! from the cached ones at L1–L3. On a Zen 5 guest glibc 2.36 runs
//! `__memmove_avx512_unaligned_erms` (`ld.so --list-diagnostics`:
//! `rep_movsb_threshold` 2 KiB, `rep_movsb_stop_threshold` 1 MiB, the L2,
//! which glibc caps `rep movsb` at on AMD; `non_temporal_threshold` 288 MiB):
//! up to 1 MiB `rep movsb`, then a cached 4-vector loop, and from 288 MiB
//! its 2-page interleaved non-temporal loop with `prefetcht0` (the
//! `large_memcpy_2x` of `memmove-vec-unaligned-erms.S`). There it lost to
//! bwscope's own NT copy and `rep movsb` at 1 GiB (the summary names the
//! winner, `report::summary::dram_copy`). The functions are called through a
//! `black_box`ed pointer so the compiler cannot recognise them and fold
//! repeated calls (dead-store elimination of earlier passes).

use crate::os::crt::{Memcpy, Memset};

kernels! {
    libc_memcpy: Copy 0 Libc, Seq cached, block 1, align 1,
        "the C library's memcpy (glibc on Linux, msvcrt on Windows; may use NT stores above its threshold)",
        rust!(|a| {
            let f: Memcpy = std::hint::black_box(crate::os::crt::memcpy());
            for _ in 0..a.reps {
                f(std::hint::black_box(a.dst).cast(), a.src.cast(), a.len);
            }
            0
        });
    libc_memset: Write 0 Libc, Seq cached, block 1, align 1,
        "the C library's memset (glibc on Linux, msvcrt on Windows; may use NT stores above its threshold)",
        rust!(|a| {
            let f: Memset = std::hint::black_box(crate::os::crt::memset());
            for _ in 0..a.reps {
                f(std::hint::black_box(a.dst).cast(), (a.pattern & 0xff) as core::ffi::c_int, a.len);
            }
            0
        });
}
