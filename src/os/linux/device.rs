//! Device memory mapped into user space: write-combining and uncached
//! mappings of PCI BARs and framebuffers.
//!
//! Writing to device memory can crash a machine or a device (a register BAR
//! is not memory), so this module only accepts what it can identify as
//! plain memory, and only paths the user named:
//! - a PCI BAR through sysfs, `.../resourceN` (mapped uncached-minus by the
//!   kernel) or `.../resourceN_wc` (write-combining), and only when the
//!   `resource` file flags BAR N as a *prefetchable memory* BAR (the PCI
//!   spec's promise that reads have no side effects, so it is RAM-like:
//!   VRAM apertures, ivshmem);
//! - a framebuffer `/dev/fbN` (fbdev, char major 29), whose mmap the kernel
//!   maps uncached-minus on x86 unless an MTRR makes it write-combining;
//! - a DRM *dumb buffer* created on `/dev/dri/cardN` (char major 226,
//!   primary node): fresh scan-out-capable memory the driver maps the way
//!   it maps buffers for the CPU (usually write-combining), destroyed
//!   again afterwards; nothing on screen is touched.
//!
//! The memory type the kernel actually chose is read back from the PAT
//! list (`/sys/kernel/debug/x86/pat_memtype_list`, root + debugfs) where
//! readable.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::Path;

use crate::os::device::DeviceSpec;

/// `IORESOURCE_IO`, `IORESOURCE_MEM`, `IORESOURCE_PREFETCH` (linux/ioport.h).
const IORESOURCE_IO: u64 = 0x100;
const IORESOURCE_MEM: u64 = 0x200;
const IORESOURCE_PREFETCH: u64 = 0x2000;
/// `FBIOGET_FSCREENINFO` (linux/fb.h).
const FBIOGET_FSCREENINFO: u64 = 0x4602;
/// Char major of fbdev devices.
const FB_MAJOR: u32 = 29;
/// Char major of DRM devices; minors below 64 are primary (`cardN`) nodes.
const DRM_MAJOR: u32 = 226;
/// `DRM_IOCTL_MODE_CREATE_DUMB`, `_MAP_DUMB`, `_DESTROY_DUMB` (drm.h).
const DRM_IOCTL_MODE_CREATE_DUMB: u64 = 0xC020_64B2;
const DRM_IOCTL_MODE_MAP_DUMB: u64 = 0xC010_64B3;
const DRM_IOCTL_MODE_DESTROY_DUMB: u64 = 0xC004_64B4;
/// Width of the dumb buffers created (32 bpp: 4 KiB per row).
const DUMB_WIDTH: u32 = 1024;

pub const PAT_LIST: &str = "/sys/kernel/debug/x86/pat_memtype_list";

/// Parse one line of a PCI device's `resource` file: start, end, flags.
fn parse_resource_line(line: &str) -> Option<(u64, u64, u64)> {
    let mut it = line
        .split_whitespace()
        .map(|v| u64::from_str_radix(v.trim_start_matches("0x"), 16));
    Some((it.next()?.ok()?, it.next()?.ok()?, it.next()?.ok()?))
}

/// `resource2_wc` → (2, true); `resource2` → (2, false).
fn bar_of(name: &str) -> Option<(usize, bool)> {
    let rest = name.strip_prefix("resource")?;
    let (num, wc) = match rest.strip_suffix("_wc") {
        Some(n) => (n, true),
        None => (rest, false),
    };
    if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((num.parse().ok()?, wc))
}

/// Decide whether `path` names device memory bwscope may write, and where
/// it lies. Err is a one-line reason (the caller names the flag).
pub fn identify(path: &str) -> Result<DeviceSpec, String> {
    let resolved =
        std::fs::canonicalize(path).map_err(|e| format!("cannot open '{}': {}", path, e))?;
    let name = resolved.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let refuse = || {
        format!(
            "'{}' is neither a PCI BAR file (.../resourceN or resourceN_wc under /sys/bus/pci/devices) nor a framebuffer (/dev/fbN) nor a DRM card (/dev/dri/cardN); bwscope writes only to device memory it can identify as plain memory",
            path
        )
    };
    if let Some((bar, wc)) = bar_of(name) {
        let dir = resolved.parent().ok_or_else(refuse)?;
        if !resolved.starts_with("/sys/") || !dir.join("vendor").exists() {
            return Err(refuse());
        }
        return identify_bar(path, &resolved, dir, bar, wc);
    }
    let meta =
        std::fs::metadata(&resolved).map_err(|e| format!("cannot stat '{}': {}", path, e))?;
    if meta.file_type().is_char_device() && libc::major(meta.rdev()) == FB_MAJOR {
        return identify_fb(path, &resolved);
    }
    if meta.file_type().is_char_device() && libc::major(meta.rdev()) == DRM_MAJOR {
        if libc::minor(meta.rdev()) >= 64 {
            return Err(format!("'{}' is a DRM render node, which cannot create dumb buffers; name the primary node /dev/dri/cardN", path));
        }
        return Ok(DeviceSpec {
            path: path.into(),
            resolved: resolved.clone(),
            kind: "device-dumb",
            phys_start: 0,
            size: 1 << 30,
            flags: None,
            what: format!("DRM dumb buffer on {}", resolved.display()),
        });
    }
    Err(refuse())
}

fn identify_bar(
    path: &str,
    resolved: &Path,
    dir: &Path,
    bar: usize,
    wc: bool,
) -> Result<DeviceSpec, String> {
    let res = crate::os::input::read_small_text(&dir.join("resource")).ok_or_else(|| {
        format!(
            "cannot read {}/resource (not a small text file)",
            dir.display()
        )
    })?;
    let (start, end, flags) = res
        .lines()
        .nth(bar)
        .and_then(parse_resource_line)
        .ok_or_else(|| format!("{}/resource has no line for BAR {}", dir.display(), bar))?;
    let slot = dir.file_name().and_then(|n| n.to_str()).unwrap_or("?");
    if flags & IORESOURCE_IO != 0 || flags & IORESOURCE_MEM == 0 {
        return Err(format!(
            "'{}' is BAR {} of {}, an I/O-port BAR (flags {:#x}), not memory: refused",
            path, bar, slot, flags
        ));
    }
    if flags & IORESOURCE_PREFETCH == 0 {
        return Err(format!(
            "'{}' is BAR {} of {}, a non-prefetchable memory BAR (flags {:#x}): device registers, not memory, so writing it could harm the device; refused (only prefetchable BARs are accepted)",
            path, bar, slot, flags
        ));
    }
    if end <= start {
        return Err(format!(
            "'{}': BAR {} of {} is not assigned an address",
            path, bar, slot
        ));
    }
    if let Some(en) = crate::os::input::read_small_text(&dir.join("enable")) {
        if en.trim() == "0" {
            return Err(format!(
                "'{}': PCI device {} is disabled, so its BAR does not decode; enable it first as root: echo 1 > {}/enable",
                path,
                slot,
                dir.display()
            ));
        }
    }
    Ok(DeviceSpec {
        path: path.into(),
        resolved: resolved.to_path_buf(),
        kind: if wc { "device-wc" } else { "device-uc" },
        phys_start: start,
        size: end - start + 1,
        flags: Some(flags),
        what: format!(
            "PCI {} BAR {} (prefetchable memory, flags {:#x})",
            slot, bar, flags
        ),
    })
}

fn identify_fb(path: &str, resolved: &Path) -> Result<DeviceSpec, String> {
    let f = File::open(resolved).map_err(|e| format!("cannot open '{}': {}", path, e))?;
    // struct fb_fix_screeninfo is 80 bytes on 64-bit; the buffer has room
    // to spare. smem_start (unsigned long) is at 16, smem_len (u32) at 24.
    let mut fix = [0u8; 128];
    // SAFETY: FBIOGET_FSCREENINFO writes one fb_fix_screeninfo into `fix`,
    // which is larger than it.
    let rc = unsafe { libc::ioctl(f.as_raw_fd(), FBIOGET_FSCREENINFO as _, fix.as_mut_ptr()) };
    if rc != 0 {
        return Err(format!(
            "'{}': FBIOGET_FSCREENINFO failed ({}), not a usable framebuffer",
            path,
            std::io::Error::last_os_error()
        ));
    }
    let id = String::from_utf8_lossy(&fix[..16])
        .trim_end_matches('\0')
        .to_string();
    let start = u64::from_ne_bytes(fix[16..24].try_into().expect("8 bytes"));
    let len = u32::from_ne_bytes(fix[24..28].try_into().expect("4 bytes")) as u64;
    if len == 0 {
        return Err(format!(
            "'{}': framebuffer '{}' reports no memory (smem_len 0)",
            path, id
        ));
    }
    Ok(DeviceSpec {
        path: path.into(),
        resolved: resolved.to_path_buf(),
        kind: "device-fb",
        phys_start: start,
        size: len,
        flags: None,
        what: format!("framebuffer '{}' ({} bytes at {:#x})", id, len, start),
    })
}

/// A shared mapping of device memory, unmapped on drop (and a dumb buffer
/// destroyed).
pub struct DeviceMapping {
    ptr: *mut u8,
    len: usize,
    dumb_handle: Option<u32>,
    file: File,
}

#[repr(C)]
#[derive(Default)]
struct CreateDumb {
    height: u32,
    width: u32,
    bpp: u32,
    flags: u32,
    handle: u32,
    pitch: u32,
    size: u64,
}

#[repr(C)]
#[derive(Default)]
struct MapDumb {
    handle: u32,
    pad: u32,
    offset: u64,
}

fn destroy_dumb(file: &File, handle: u32) {
    let mut h = handle;
    // SAFETY: DESTROY_DUMB reads one u32 handle.
    unsafe { libc::ioctl(file.as_raw_fd(), DRM_IOCTL_MODE_DESTROY_DUMB as _, &mut h) };
}

impl DeviceMapping {
    /// Map the first `len` bytes (≤ spec.size) read-write, shared. For a
    /// DRM device, create a dumb buffer of at least `len` bytes and map it.
    pub fn map(spec: &DeviceSpec, len: usize) -> std::io::Result<DeviceMapping> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_SYNC)
            .open(&spec.resolved)?;
        let mut len = len.next_multiple_of(4096).min(spec.size as usize);
        let mut offset: i64 = 0;
        let mut dumb_handle = None;
        if spec.kind == "device-dumb" {
            let mut c = CreateDumb {
                width: DUMB_WIDTH,
                height: (len as u64).div_ceil(DUMB_WIDTH as u64 * 4) as u32,
                bpp: 32,
                ..CreateDumb::default()
            };
            // SAFETY: CREATE_DUMB reads and writes one drm_mode_create_dumb.
            if unsafe { libc::ioctl(file.as_raw_fd(), DRM_IOCTL_MODE_CREATE_DUMB as _, &mut c) }
                != 0
            {
                let e = std::io::Error::last_os_error();
                return Err(std::io::Error::new(
                    e.kind(),
                    format!(
                        "DRM_IOCTL_MODE_CREATE_DUMB {}x{}x32: {}",
                        c.width, c.height, e
                    ),
                ));
            }
            let mut m = MapDumb {
                handle: c.handle,
                ..MapDumb::default()
            };
            // SAFETY: MAP_DUMB reads and writes one drm_mode_map_dumb.
            if unsafe { libc::ioctl(file.as_raw_fd(), DRM_IOCTL_MODE_MAP_DUMB as _, &mut m) } != 0 {
                let e = std::io::Error::last_os_error();
                destroy_dumb(&file, c.handle);
                return Err(e);
            }
            dumb_handle = Some(c.handle);
            offset = m.offset as i64;
            len = len.min(c.size as usize);
        }
        // SAFETY: a shared file mapping of a region the kernel validates
        // against the BAR / framebuffer size; checked for MAP_FAILED.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                offset,
            )
        };
        if p == libc::MAP_FAILED {
            let e = std::io::Error::last_os_error();
            if let Some(h) = dumb_handle {
                destroy_dumb(&file, h);
            }
            return Err(e);
        }
        Ok(DeviceMapping {
            ptr: p as *mut u8,
            len,
            dumb_handle,
            file,
        })
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

impl Drop for DeviceMapping {
    fn drop(&mut self) {
        // SAFETY: exactly what mmap returned.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
        if let Some(h) = self.dumb_handle {
            destroy_dumb(&self.file, h);
        }
    }
}

/// PAT memory types of entries overlapping [start, start+len): Err when the
/// list cannot be read (not root, debugfs not mounted, not x86).
pub fn pat_types(start: u64, len: u64) -> Result<Vec<String>, String> {
    if start == 0 {
        return Err("the physical address of this mapping is not visible from user space, so its PAT entry cannot be found".into());
    }
    let text = std::fs::read_to_string(PAT_LIST).map_err(|e| {
        format!(
            "{} not readable ({}); as root: mount -t debugfs none /sys/kernel/debug",
            PAT_LIST, e
        )
    })?;
    Ok(parse_pat(&text, start, len))
}

/// Parse `PAT: [mem 0x00000000fd000000-0x00000000fe000000] write-combining`
/// lines; the distinct types of those overlapping the range, in order.
fn parse_pat(text: &str, start: u64, len: u64) -> Vec<String> {
    let end = start + len;
    let mut out: Vec<String> = Vec::new();
    for l in text.lines() {
        let Some(a) = l.find("[mem ") else { continue };
        let rest = &l[a + 5..];
        let Some(b) = rest.find(']') else { continue };
        let Some((lo, hi)) = rest[..b].split_once('-') else {
            continue;
        };
        let p = |s: &str| u64::from_str_radix(s.trim().trim_start_matches("0x"), 16).ok();
        let (Some(lo), Some(hi)) = (p(lo), p(hi)) else {
            continue;
        };
        let ty = rest[b + 1..].trim().to_string();
        if lo < end && start < hi && !ty.is_empty() && !out.contains(&ty) {
            out.push(ty);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bar_names() {
        assert_eq!(bar_of("resource2_wc"), Some((2, true)));
        assert_eq!(bar_of("resource0"), Some((0, false)));
        assert_eq!(bar_of("resource"), None);
        assert_eq!(bar_of("resourcex"), None);
    }

    #[test]
    fn resource_lines() {
        let l = "0x00000000fd000000 0x00000000fdffffff 0x000000000014220c";
        let (s, e, f) = parse_resource_line(l).unwrap();
        assert_eq!((s, e - s + 1), (0xfd000000, 16 << 20));
        assert!(f & IORESOURCE_MEM != 0 && f & IORESOURCE_PREFETCH != 0);
    }

    #[test]
    fn pat_lines() {
        let t = "PAT: [mem 0x00000000fd000000-0x00000000fe000000] write-combining\n\
                 PAT: [mem 0x00000000fe000000-0x00000000fe001000] uncached-minus\n";
        assert_eq!(parse_pat(t, 0xfd000000, 1 << 20), vec!["write-combining"]);
        assert!(parse_pat(t, 0x1000, 4096).is_empty());
        assert_eq!(parse_pat(t, 0xfd000000, 32 << 20).len(), 2);
    }

    #[test]
    fn refuses_what_is_not_device_memory() {
        assert!(identify("/proc/self/status")
            .unwrap_err()
            .contains("neither a PCI BAR"));
        assert!(identify("/nonexistent/resource0")
            .unwrap_err()
            .contains("cannot open"));
        // A regular file named like a BAR outside sysfs is refused too.
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("resource0_wc");
        std::fs::write(&p, b"x").unwrap();
        assert!(identify(p.to_str().unwrap())
            .unwrap_err()
            .contains("neither a PCI BAR"));
    }
}
