//! Device memory a user names (`memtype --device-mem`): a PCI BAR through
//! sysfs (`resourceN`, `resourceN_wc`), a framebuffer, a DRM dumb buffer;
//! mapped shared, with the caching the kernel's PAT gives it. Linux's
//! ways of reaching device memory from user space; a system without them
//! refuses the flag with its reason.

pub use super::imp::device::{identify, pat_types, DeviceMapping};

use std::path::PathBuf;

/// A device region bwscope agreed to map.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DeviceSpec {
    /// The path as the user named it.
    pub path: String,
    /// The file mapped (symlinks resolved).
    pub resolved: PathBuf,
    /// `device-wc`, `device-uc`, `device-fb` or `device-dumb`: the mapping
    /// asked for.
    pub kind: &'static str,
    /// Physical start address of the region (for the PAT lookup); 0 when
    /// not known (DRM dumb buffers, shadow framebuffers).
    pub phys_start: u64,
    /// Bytes that may be mapped (dumb buffers: the largest allowed).
    pub size: u64,
    /// BAR flags from the `resource` file (PCI only).
    pub flags: Option<u64>,
    /// What it is, for the record: "PCI 0000:00:03.0 BAR 2 (prefetchable memory)".
    pub what: String,
}
