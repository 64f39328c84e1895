//! The C library's `memcpy`/`memset` (glibc here; musl where linked so).

/// Which C library the functions come from, for labels.
pub const RUNTIME: &str = "libc";

pub fn memcpy_fn() -> crate::os::crt::Memcpy {
    libc::memcpy
}

pub fn memset_fn() -> crate::os::crt::Memset {
    libc::memset
}
