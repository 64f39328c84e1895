//! The C runtime's `memcpy` and `memset`, as function pointers: the
//! `libc_memcpy`/`libc_memset` kernels time whatever the system's C
//! library chose (glibc switches strategy with size and CPU).

use core::ffi::{c_int, c_void};

pub type Memcpy = unsafe extern "C" fn(*mut c_void, *const c_void, usize) -> *mut c_void;
pub type Memset = unsafe extern "C" fn(*mut c_void, c_int, usize) -> *mut c_void;

pub use super::imp::crt::{memcpy_fn as memcpy, memset_fn as memset, RUNTIME};
