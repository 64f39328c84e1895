//! libc `memcpy` and `memset`, labelled as such.
//!
//! glibc picks an implementation at load time (ERMS, AVX2, EVEX...) and
//! switches to non-temporal stores above `__x86_shared_non_temporal_threshold`
//! (about 3/4 of the L3 share), so at DRAM sizes these are different kernels
//! from the cached ones at L1–L3. The functions are called through a
//! `black_box`ed pointer so the compiler cannot recognise them and fold
//! repeated calls (dead-store elimination of earlier passes).

use super::{Isa, Kernel, KernelArgs, Op, Pattern};

type Memcpy = unsafe extern "C" fn(*mut libc::c_void, *const libc::c_void, usize) -> *mut libc::c_void;
type Memset = unsafe extern "C" fn(*mut libc::c_void, libc::c_int, usize) -> *mut libc::c_void;

/// `libc::memcpy(dst, src, len)`, `reps` times.
pub unsafe fn libc_memcpy(a: &KernelArgs) -> u64 {
    let f: Memcpy = std::hint::black_box(libc::memcpy as Memcpy);
    for _ in 0..a.reps {
        f(
            std::hint::black_box(a.dst) as *mut libc::c_void,
            a.src as *const libc::c_void,
            a.len,
        );
    }
    0
}

/// `libc::memset(dst, pattern & 0xff, len)`, `reps` times.
pub unsafe fn libc_memset(a: &KernelArgs) -> u64 {
    let f: Memset = std::hint::black_box(libc::memset as Memset);
    for _ in 0..a.reps {
        f(
            std::hint::black_box(a.dst) as *mut libc::c_void,
            (a.pattern & 0xff) as libc::c_int,
            a.len,
        );
    }
    0
}

pub const MEMCPY: Kernel = Kernel {
    name: "libc_memcpy",
    op: Op::Copy,
    width_bits: 0,
    isa: Isa::Libc,
    nontemporal: false,
    pattern: Pattern::Seq,
    granule: 1,
    align: 1,
    description: "libc memcpy (implementation chosen by libc; may use NT stores above its threshold)",
    func: libc_memcpy,
};

pub const MEMSET: Kernel = Kernel {
    name: "libc_memset",
    op: Op::Write,
    width_bits: 0,
    isa: Isa::Libc,
    nontemporal: false,
    pattern: Pattern::Seq,
    granule: 1,
    align: 1,
    description: "libc memset (implementation chosen by libc; may use NT stores above its threshold)",
    func: libc_memset,
};

#[cfg(not(target_arch = "x86_64"))]
pub static KERNELS: &[Kernel] = &[MEMCPY, MEMSET];
