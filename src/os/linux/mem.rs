//! `mmap`/`munmap`, `madvise`, `mlock`, `/proc/self/smaps`, and the huge
//! page pools in `/sys/kernel/mm`.

use std::ptr::NonNull;

use crate::os::mem::{Caching, PageFacts, Pages};
use crate::os::parse;

// sysfs and /proc attributes: a page at most, read bounded and never
// waiting (`os::input`), whatever sits at the path.
fn read(p: &str) -> Option<String> {
    crate::os::input::read_small_text(std::path::Path::new(p)).map(|s| s.trim().to_string())
}

/// The kernel can back memory with transparent huge pages on advice.
pub const TRANSPARENT_HUGE_PAGES: bool = true;

/// Write-combined and uncached memory only over devices, never on plain
/// anonymous memory.
pub const PLAIN_RAM_CACHING: bool = false;

/// An anonymous mapping, unmapped on drop.
pub struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is plain memory owned by this value; moving it
// between threads is fine, sharing needs the usual care its users take.
unsafe impl Send for Mapping {}
// SAFETY: a shared `&Mapping` hands out only its address and length;
// what is written through them is its users' care, as above.
unsafe impl Sync for Mapping {}

impl Mapping {
    pub(crate) fn map(len: usize, flags: libc::c_int) -> std::io::Result<Mapping> {
        // SAFETY: an anonymous mapping, no file, checked for MAP_FAILED.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                flags,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Mapping {
            ptr: NonNull::new(p as *mut u8).ok_or_else(std::io::Error::last_os_error)?,
            len,
        })
    }

    /// `len` bytes of private memory (zeroed, not yet touched). Default
    /// pages are not reserved (`MAP_NORESERVE`); huge pages of a pool are
    /// (`MAP_HUGETLB | MAP_HUGE_*`, naturally aligned to their size).
    pub fn private(len: usize, pages: Pages) -> std::io::Result<Mapping> {
        let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
        match pages {
            Pages::Default => Mapping::map(len, flags | libc::MAP_NORESERVE),
            Pages::Reserved(p) => Mapping::map(
                len,
                flags | libc::MAP_HUGETLB | ((p.trailing_zeros() as i32) << libc::MAP_HUGE_SHIFT),
            ),
        }
    }

    /// `len` bytes shared with the processes this one forks afterwards.
    pub(crate) fn shared(len: usize) -> std::io::Result<Mapping> {
        Mapping::map(len, libc::MAP_SHARED | libc::MAP_ANONYMOUS)
    }

    /// Write-combined or uncached anonymous memory: Linux maps those
    /// types only over device memory (`--device-mem`).
    pub fn private_caching(len: usize, caching: Caching) -> std::io::Result<Mapping> {
        match caching {
            Caching::WriteBack => Mapping::private(len, Pages::Default),
            _ => Err(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "Linux gives write-combined and uncached mappings only over device memory (--device-mem)",
            )),
        }
    }

    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: exactly what mmap returned.
        unsafe { libc::munmap(self.ptr.as_ptr() as *mut libc::c_void, self.len) };
    }
}

/// Ask for huge pages (`true`, `MADV_HUGEPAGE`) or small ones
/// (`MADV_NOHUGEPAGE`) for `addr..addr+len`. A hint: failure only means
/// the pages stay as they are, which [`page_facts`] shows.
///
/// # Safety
/// The range must lie inside a mapping this process owns.
pub unsafe fn advise_huge(addr: *mut u8, len: usize, huge: bool) {
    let a = if huge {
        libc::MADV_HUGEPAGE
    } else {
        libc::MADV_NOHUGEPAGE
    };
    libc::madvise(addr as *mut libc::c_void, len, a);
}

/// Lock `addr..addr+len` in memory (every page made resident now).
///
/// # Safety
/// The range must lie inside a mapping this process owns.
pub unsafe fn lock(addr: *const u8, len: usize) -> std::io::Result<()> {
    if libc::mlock(addr as *const libc::c_void, len) != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// What the kernel gave the mapping that holds `addr` (`/proc/self/smaps`).
pub fn page_facts(addr: usize) -> Option<PageFacts> {
    parse::smaps::parse(&std::fs::read_to_string("/proc/self/smaps").ok()?, addr)
}

/// The transparent huge page mode (`always`, `madvise`, `never`); None
/// where the kernel has none.
pub fn thp_mode() -> Option<String> {
    read("/sys/kernel/mm/transparent_hugepage/enabled").and_then(|s| parse::selected(&s))
}

/// Where the pool of `page_bytes` pages is sized (for a hint a user can
/// follow).
pub fn hugetlb_pool_knob(page_bytes: usize) -> String {
    format!(
        "/sys/kernel/mm/hugepages/hugepages-{}kB/nr_hugepages",
        page_bytes / 1024
    )
}

/// (reserved, free) pages of the pool of `page_bytes` pages; None when
/// the kernel has no such pool.
pub fn hugetlb_pool(page_bytes: usize) -> Option<(u64, u64)> {
    let d = format!("/sys/kernel/mm/hugepages/hugepages-{}kB", page_bytes / 1024);
    let n = read(&format!("{d}/nr_hugepages"))?.parse().ok()?;
    let f = read(&format!("{d}/free_hugepages"))?.parse().ok()?;
    Some((n, f))
}

/// Free pages of the default huge page pool and their size (`/proc/meminfo`
/// `HugePages_Free`, `Hugepagesize`); the size None when not stated.
pub fn default_huge_pages_free() -> (u64, Option<u64>) {
    let text = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    (
        parse::count_line(&text, "HugePages_Free").unwrap_or(0),
        parse::kb_line(&text, "Hugepagesize"),
    )
}

/// The protection of the page at `addr` as the system names it: Linux
/// states no caching type for anonymous memory.
pub fn protection_at(_addr: usize) -> Option<String> {
    None
}

/// Why pages of `page_bytes` cannot be had: the kernel has no such pool.
pub fn no_huge_pages(page_bytes: usize) -> String {
    format!(
        "this kernel has no {} huge pages ({} absent)",
        crate::util::units::format_bytes(page_bytes as u64),
        hugetlb_pool_knob(page_bytes)
    )
}

/// What to run to reserve `target` pages of `page_bytes` (the pool has
/// `reserved`, `free` of them free).
pub fn huge_pages_hint(page_bytes: usize, target: u64, reserved: u64, free: u64) -> String {
    if page_bytes == 2 << 20 {
        format!(
            "reserve 2 MiB huge pages as root: sysctl -w vm.nr_hugepages={target} (now {reserved}, {free} free)"
        )
    } else {
        format!(
            "reserve {} huge pages as root: echo {target} > {} (now {reserved}, {free} free)",
            crate::util::units::format_bytes(page_bytes as u64),
            hugetlb_pool_knob(page_bytes),
        )
    }
}

/// `pages` fresh readable pages of 4 KiB (never touched, no huge pages)
/// between two inaccessible guard pages: an access before or after the
/// stream faults. For tests that a kernel reads exactly its stream.
pub struct Guarded {
    map: Mapping,
    pages: usize,
}

impl Guarded {
    pub fn new(pages: usize) -> std::io::Result<Guarded> {
        let total = (pages + 2) * 4096;
        let map = Mapping::map(
            total,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
        )?;
        // SAFETY: the stream pages lie inside the mapping just made.
        unsafe {
            let all = map.as_ptr() as *mut libc::c_void;
            let stream = map.as_ptr().add(4096) as *mut libc::c_void;
            if libc::mprotect(all, total, libc::PROT_NONE) != 0
                || libc::madvise(stream, pages * 4096, libc::MADV_NOHUGEPAGE) != 0
                || libc::mprotect(stream, pages * 4096, libc::PROT_READ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(Guarded { map, pages })
    }

    pub fn stream(&self) -> *const u8 {
        self.map.as_ptr().wrapping_add(4096)
    }

    /// Which stream pages are resident (a read of an untouched page maps
    /// the shared zero page, which counts).
    pub fn touched(&self) -> std::io::Result<Vec<bool>> {
        let mut v = vec![0u8; self.pages];
        // SAFETY: the range is page aligned and inside the mapping.
        let rc = unsafe {
            libc::mincore(
                self.stream() as *mut libc::c_void,
                self.pages * 4096,
                v.as_mut_ptr(),
            )
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(v.iter().map(|b| b & 1 == 1).collect())
    }
}
