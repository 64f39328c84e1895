//! Windows: the surface of `os` over `windows-sys`. Each file is one
//! concern of the portable module of the same name; the helpers here are
//! what several share (wide strings, handles, FILETIME).
//!
//! Proven under wine, which runs the calls on the host's kernel and CPU
//! but fakes some of them (write-combining and uncached pages, large
//! pages, console events): no time taken under wine is a Windows figure.

pub mod cpu;
pub mod crt;
pub mod device;
pub mod fds;
pub mod fs;
pub mod mem;
pub mod net;
pub mod numa;
pub mod process;
pub mod random;
pub mod signal;
pub mod system;
pub mod team;
pub mod tiers;
pub mod time;

use std::sync::OnceLock;

use windows_sys::Win32::Foundation::{CloseHandle, GetLastError, FILETIME, HANDLE};
use windows_sys::Win32::System::SystemInformation::{
    GetLogicalProcessorInformationEx, RelationAll,
};

use crate::os::parse::winlpi::{self, Lpi};

/// The system's processor records, read once (cpus, nodes and caches:
/// `cpu`, `numa` and `system` read them).
pub(crate) fn lpi() -> &'static Lpi {
    static L: OnceLock<Lpi> = OnceLock::new();
    L.get_or_init(|| {
        let mut len = 0u32;
        // SAFETY: a size query with a null buffer.
        unsafe { GetLogicalProcessorInformationEx(RelationAll, std::ptr::null_mut(), &mut len) };
        let mut buf = vec![0u64; (len as usize).div_ceil(8)];
        // SAFETY: `buf` holds `len` bytes, 8-byte aligned.
        let ok = len > 0
            && unsafe {
                GetLogicalProcessorInformationEx(RelationAll, buf.as_mut_ptr().cast(), &mut len)
            } != 0;
        let bytes = if ok {
            // SAFETY: the call filled `len` bytes of `buf`.
            unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), len as usize) }
        } else {
            &[]
        };
        winlpi::parse(bytes)
    })
}

/// `s` as a NUL-terminated UTF-16 string.
pub(crate) fn wide(s: &str) -> Vec<u16> {
    s.encode_utf16().chain(std::iter::once(0)).collect()
}

/// A NUL-terminated UTF-16 string as Rust text.
///
/// # Safety
/// `p` must point at a NUL-terminated UTF-16 string (or be null).
pub(crate) unsafe fn from_wide(p: *const u16) -> String {
    if p.is_null() {
        return String::new();
    }
    let mut n = 0;
    while *p.add(n) != 0 {
        n += 1;
    }
    String::from_utf16_lossy(std::slice::from_raw_parts(p, n))
}

pub(crate) fn last_error() -> std::io::Error {
    // SAFETY: no preconditions.
    std::io::Error::from_raw_os_error(unsafe { GetLastError() } as i32)
}

/// A handle closed on drop.
pub(crate) struct Handle(pub HANDLE);

impl Handle {
    /// Wraps a handle a call returned; `None` for null or invalid.
    pub(crate) fn new(h: HANDLE) -> Option<Handle> {
        (!h.is_null() && h != windows_sys::Win32::Foundation::INVALID_HANDLE_VALUE)
            .then_some(Handle(h))
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: a handle this value owns.
        unsafe { CloseHandle(self.0) };
    }
}

// SAFETY: kernel handles may be used from any thread.
unsafe impl Send for Handle {}
// SAFETY: as above; a shared reference only reads the handle's value.
unsafe impl Sync for Handle {}

/// A FILETIME (100 ns units) as ns.
pub(crate) fn filetime_ns(f: &FILETIME) -> u64 {
    ((f.dwHighDateTime as u64) << 32 | f.dwLowDateTime as u64) * 100
}

pub(crate) const ZERO_FILETIME: FILETIME = FILETIME {
    dwLowDateTime: 0,
    dwHighDateTime: 0,
};
