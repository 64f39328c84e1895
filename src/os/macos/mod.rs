//! macOS (Apple silicon and Intel Macs): the surface of `os` over `libc`.
//! Each file is one concern of the portable module of the same name.
//!
//! Type-checked and linted in CI (`scripts/macos-check.sh`, for
//! `aarch64-apple-darwin` and `x86_64-apple-darwin`); never run on a Mac
//! (docs/macos.md says what a Mac user should run first).
//!
//! What is POSIX and written once for Linux serves here as is: the
//! `fs`, `net` and `signal` files of `linux/` (their calls — `faccessat`,
//! `O_NOFOLLOW`, `flock`, `poll`, `getifaddrs`, `sigaction` — are the
//! same on macOS). What macOS does differently is here: topology from
//! `sysctl` (per performance level), placement as a quality-of-service
//! hint (no affinity), `CLOCK_UPTIME_RAW`, `libproc` for other processes,
//! `getentropy`, and no NUMA, tiers or device mappings.

pub mod cpu;
pub mod crt;
pub mod device;
pub mod fds;
#[path = "../linux/fs.rs"]
pub mod fs;
pub mod mem;
#[path = "../linux/net.rs"]
pub mod net;
pub mod numa;
pub mod process;
pub mod random;
#[path = "../linux/signal.rs"]
pub mod signal;
pub mod system;
pub mod team;
pub mod tiers;
pub mod time;

use std::ffi::CString;
use std::sync::OnceLock;

use crate::os::parse::sysctl::{self, MacHardware, Sysctl};

/// `sysctlbyname` read live. A value comes back as bytes: a string (NUL
/// terminated) or a 4- or 8-byte integer, told apart by the caller's
/// question.
struct Live;

/// The raw bytes of `key`; None when the system has no such key.
pub(crate) fn sysctl_bytes(key: &str) -> Option<Vec<u8>> {
    let name = CString::new(key).ok()?;
    let mut len = 0usize;
    // SAFETY: a size query (null buffer) for a NUL-terminated name.
    let rc = unsafe {
        libc::sysctlbyname(
            name.as_ptr(),
            std::ptr::null_mut(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    if rc != 0 || len == 0 {
        return None;
    }
    let mut buf = vec![0u8; len];
    // SAFETY: `buf` holds `len` bytes, the size the call reported.
    let rc = unsafe {
        libc::sysctlbyname(
            name.as_ptr(),
            buf.as_mut_ptr().cast(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    (rc == 0).then(|| {
        buf.truncate(len);
        buf
    })
}

/// An integer key (`int` or `int64_t`, by its size).
pub(crate) fn sysctl_int(key: &str) -> Option<u64> {
    let b = sysctl_bytes(key)?;
    match b.len() {
        4 => Some(u64::from(u32::from_ne_bytes(b[..4].try_into().ok()?))),
        8 => Some(u64::from_ne_bytes(b[..8].try_into().ok()?)),
        _ => None,
    }
}

/// A string key.
pub(crate) fn sysctl_text(key: &str) -> Option<String> {
    let b = sysctl_bytes(key)?;
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    Some(String::from_utf8_lossy(&b[..end]).into_owned())
}

impl Sysctl for Live {
    fn text(&self, key: &str) -> Option<String> {
        sysctl_text(key)
    }

    fn int(&self, key: &str) -> Option<u64> {
        sysctl_int(key)
    }
}

/// The machine's processor and memory facts, read once.
pub(crate) fn hw() -> &'static MacHardware {
    static HW: OnceLock<MacHardware> = OnceLock::new();
    HW.get_or_init(|| sysctl::read(&Live))
}

/// The system's page size (16 KiB on Apple silicon, 4 KiB on Intel).
pub(crate) fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}
