//! libc `memcpy` and `memset`, labelled as such.
//!
//! glibc picks an implementation at load time (ERMS, AVX2, EVEX...) and
//! switches to non-temporal stores above `__x86_shared_non_temporal_threshold`
//! (about 3/4 of the L3 share), so at DRAM sizes these are different kernels
//! from the cached ones at L1–L3. The functions are called through a
//! `black_box`ed pointer so the compiler cannot recognise them and fold
//! repeated calls (dead-store elimination of earlier passes).

type Memcpy =
    unsafe extern "C" fn(*mut libc::c_void, *const libc::c_void, usize) -> *mut libc::c_void;
type Memset = unsafe extern "C" fn(*mut libc::c_void, libc::c_int, usize) -> *mut libc::c_void;

kernels! {
    libc_memcpy: Copy 0 Libc, Seq cached, block 1, align 1,
        "libc memcpy (implementation chosen by libc; may use NT stores above its threshold)",
        rust!(|a| {
            let f: Memcpy = std::hint::black_box(libc::memcpy as Memcpy);
            for _ in 0..a.reps {
                f(std::hint::black_box(a.dst).cast(), a.src.cast(), a.len);
            }
            0
        });
    libc_memset: Write 0 Libc, Seq cached, block 1, align 1,
        "libc memset (implementation chosen by libc; may use NT stores above its threshold)",
        rust!(|a| {
            let f: Memset = std::hint::black_box(libc::memset as Memset);
            for _ in 0..a.reps {
                f(std::hint::black_box(a.dst).cast(), (a.pattern & 0xff) as libc::c_int, a.len);
            }
            0
        });
}
