//! Device memory a user names (`memtype --device-mem`): a PCI BAR through
//! sysfs (`resourceN`, `resourceN_wc`), a framebuffer, a DRM dumb buffer;
//! mapped shared, with the caching the kernel's PAT gives it. Linux's
//! ways of reaching device memory from user space; a system without them
//! refuses the flag with its reason.

pub use super::imp::device::*;
