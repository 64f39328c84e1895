//! The C library's `memcpy`/`memset`: libSystem's (its
//! `platform_memmove`/`bzero` pick a routine per CPU, as glibc does).

/// Which C library the functions come from, for labels.
pub const RUNTIME: &str = "macOS libSystem";

pub fn memcpy_fn() -> crate::os::crt::Memcpy {
    libc::memcpy
}

pub fn memset_fn() -> crate::os::crt::Memset {
    libc::memset
}
