//! The C runtime's `memcpy`/`memset` this program links (msvcrt or the
//! UCRT with the GNU toolchain, vcruntime with MSVC): not glibc's, so
//! `libc_memcpy` there is a different implementation under the same name.

use core::ffi::{c_int, c_void};

/// Which C runtime the functions come from, for labels.
pub const RUNTIME: &str = "the Windows C runtime";

extern "C" {
    fn memcpy(dst: *mut c_void, src: *const c_void, n: usize) -> *mut c_void;
    fn memset(dst: *mut c_void, c: c_int, n: usize) -> *mut c_void;
}

pub fn memcpy_fn() -> crate::os::crt::Memcpy {
    memcpy
}

pub fn memset_fn() -> crate::os::crt::Memset {
    memset
}
