//! Device mappings (`--device-mem`) are Linux's: sysfs BARs, fbdev and DRM
//! dumb buffers. macOS gives a program no way to map device memory (its
//! drivers live in the kernel or in DriverKit), so the flag is refused
//! with that reason and `memtype` records its device kinds as skipped.

use crate::os::device::DeviceSpec;

/// A mapping of one (never made here).
pub struct DeviceMapping {
    ptr: *mut u8,
    len: usize,
}

pub fn identify(path: &str) -> Result<DeviceSpec, String> {
    Err(format!(
        "'{path}': device mappings (--device-mem) are Linux's (sysfs BARs, framebuffers, DRM); macOS lets no program map device memory"
    ))
}

impl DeviceMapping {
    pub fn map(_spec: &DeviceSpec, _len: usize) -> std::io::Result<DeviceMapping> {
        Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "device mappings are Linux's",
        ))
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The memory types the kernel chose: no PAT list here.
pub fn pat_types(_start: u64, _len: u64) -> Result<Vec<String>, String> {
    Err("no memory type list on macOS".into())
}
