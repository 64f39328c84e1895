//! `mmap`/`munmap`, `mlock`, `mincore`, and `mach_vm_region` (what
//! `/proc/self/smaps` says on Linux).
//!
//! Pages are 16 KiB on Apple silicon and 4 KiB on Intel Macs; macOS has
//! no transparent huge pages and no huge page pool. The only larger pages
//! a program may ask for are 2 MiB superpages on Intel Macs
//! (`VM_FLAGS_SUPERPAGE_SIZE_2MB`, passed in `mmap`'s descriptor argument
//! for anonymous memory, mmap(2)); the kernel implements them only on
//! x86-64 (apple-oss-distributions/xnu, `osfmk/mach/vm_statistics.h`,
//! under `#if defined(__x86_64__) || !defined(KERNEL)`), so Apple silicon
//! refuses them here with that reason. Write-combined and uncached memory
//! do not exist for programs: refused with the reason.

use std::ptr::NonNull;

use crate::os::mem::{Caching, PageFacts, Pages};

/// No transparent huge pages on macOS.
pub const TRANSPARENT_HUGE_PAGES: bool = false;

/// No write-combined or uncached user memory.
pub const PLAIN_RAM_CACHING: bool = false;

/// An anonymous mapping, unmapped on drop.
pub struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is plain memory owned by this value.
unsafe impl Send for Mapping {}
// SAFETY: a shared `&Mapping` hands out only its address and length.
unsafe impl Sync for Mapping {}

/// 2 MiB superpages: Intel Macs only.
const SUPERPAGE: usize = 2 << 20;

/// `VM_FLAGS_SUPERPAGE_SIZE_2MB`: `SUPERPAGE_SIZE_2MB` (2) shifted by
/// `VM_FLAGS_SUPERPAGE_SHIFT` (16), xnu `osfmk/mach/vm_statistics.h`
/// (libc's copy is deprecated in favour of the mach2 crate).
const VM_FLAGS_SUPERPAGE_SIZE_2MB: libc::c_int = 2 << 16;

fn unsupported(why: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::Unsupported, why)
}

impl Mapping {
    /// `fd` is -1, or Mach VM flags for anonymous memory (mmap(2)).
    fn map(len: usize, flags: libc::c_int, fd: libc::c_int) -> std::io::Result<Mapping> {
        // SAFETY: an anonymous mapping, checked for MAP_FAILED.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                flags,
                fd,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Mapping {
            ptr: NonNull::new(p.cast()).ok_or_else(std::io::Error::last_os_error)?,
            len,
        })
    }

    /// `len` bytes of private memory (zeroed, not yet touched); reserved
    /// pages only as 2 MiB superpages on an Intel Mac.
    pub fn private(len: usize, pages: Pages) -> std::io::Result<Mapping> {
        let flags = libc::MAP_PRIVATE | libc::MAP_ANON;
        match pages {
            Pages::Default => Mapping::map(len, flags, -1),
            Pages::Reserved(p) if p == SUPERPAGE && cfg!(target_arch = "x86_64") => {
                Mapping::map(len.next_multiple_of(p), flags, VM_FLAGS_SUPERPAGE_SIZE_2MB)
            }
            Pages::Reserved(_) => Err(unsupported(no_huge_pages(0))),
        }
    }

    /// `len` bytes shared with the processes this one forks afterwards.
    pub(crate) fn shared(len: usize) -> std::io::Result<Mapping> {
        Mapping::map(len, libc::MAP_SHARED | libc::MAP_ANON, -1)
    }

    pub fn private_caching(len: usize, caching: Caching) -> std::io::Result<Mapping> {
        match caching {
            Caching::WriteBack => Mapping::private(len, Pages::Default),
            _ => Err(unsupported(
                "macOS gives programs no write-combined or uncached memory".into(),
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
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// No transparent huge pages: nothing to advise.
///
/// # Safety
/// None needed; `unsafe` for the shared signature.
pub unsafe fn advise_huge(_addr: *mut u8, _len: usize, _huge: bool) {}

/// Lock `addr..addr+len` in memory (every page made resident now).
///
/// # Safety
/// The range must lie inside a mapping this process owns.
pub unsafe fn lock(addr: *const u8, len: usize) -> std::io::Result<()> {
    if libc::mlock(addr.cast(), len) != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// `vm_region_basic_info_64` (xnu `osfmk/mach/vm_region.h`, packed to 4
/// bytes): only `user_wired_count` is read, the count of `mlock`s on the
/// region.
#[repr(C, packed(4))]
struct BasicInfo64 {
    protection: libc::c_int,
    max_protection: libc::c_int,
    inheritance: libc::c_uint,
    shared: libc::c_int,
    reserved: libc::c_int,
    offset: u64,
    behavior: libc::c_int,
    user_wired_count: libc::c_ushort,
}

/// `VM_REGION_BASIC_INFO_64` and its count in ints (vm_region.h).
const VM_REGION_BASIC_INFO_64: libc::c_int = 9;
const BASIC_INFO_64_COUNT: u32 =
    (std::mem::size_of::<BasicInfo64>() / std::mem::size_of::<libc::c_int>()) as u32;

extern "C" {
    /// `mach/mach_vm.h`.
    fn mach_vm_region(
        task: libc::mach_port_t,
        address: *mut u64,
        size: *mut u64,
        flavor: libc::c_int,
        info: *mut libc::c_int,
        count: *mut u32,
        object_name: *mut libc::mach_port_t,
    ) -> libc::kern_return_t;
}

/// The region holding `addr`: (start, length, wired).
fn region(addr: usize) -> Option<(usize, usize, bool)> {
    let (mut a, mut size) = (addr as u64, 0u64);
    // SAFETY: plain data, filled by the call.
    let mut info: BasicInfo64 = unsafe { std::mem::zeroed() };
    let mut count = BASIC_INFO_64_COUNT;
    let mut object = 0;
    // SAFETY: out-pointers to locals of the sizes the flavor names.
    // (libc deprecates its Mach calls in favour of the mach2 crate; three
    // calls do not justify a dependency.)
    #[allow(deprecated)]
    let kr = unsafe {
        mach_vm_region(
            libc::mach_task_self(),
            &mut a,
            &mut size,
            VM_REGION_BASIC_INFO_64,
            (&mut info as *mut BasicInfo64).cast(),
            &mut count,
            &mut object,
        )
    };
    // The call returns the next region when `addr` lies in none.
    let (start, len) = (a as usize, size as usize);
    (kr == libc::KERN_SUCCESS && start <= addr && addr < start + len).then(|| {
        let wired = info.user_wired_count;
        (start, len, wired > 0)
    })
}

/// Resident pages of a page-aligned range, one flag per system page.
fn resident(start: usize, len: usize) -> Option<Vec<bool>> {
    let pages = len.div_ceil(super::page_size());
    let mut v = vec![0 as libc::c_char; pages];
    // SAFETY: `v` holds one byte per page of the page-aligned range.
    (unsafe { libc::mincore(start as *const libc::c_void, len, v.as_mut_ptr()) } == 0)
        .then(|| v.iter().map(|b| b & 1 == 1).collect())
}

/// What the system gave the region that holds `addr`: its pages (the
/// system's size: no huge pages here), how much is resident, and whether
/// it is wired (`mlock` wires a whole range or fails).
pub fn page_facts(addr: usize) -> Option<PageFacts> {
    let (start, len, wired) = region(addr)?;
    let page = super::page_size() as u64;
    let rss = resident(start, len)?.iter().filter(|r| **r).count() as u64 * page;
    Some(PageFacts {
        start,
        end: start + len,
        kernel_page_bytes: page,
        anon_huge_bytes: 0,
        locked_bytes: if wired { len as u64 } else { 0 },
        rss_bytes: rss,
    })
}

/// macOS names no caching type for user memory.
pub fn protection_at(_addr: usize) -> Option<String> {
    None
}

/// No transparent huge pages.
pub fn thp_mode() -> Option<String> {
    None
}

/// Nothing to size: superpages come from free memory (Intel Macs).
pub fn hugetlb_pool_knob(_page_bytes: usize) -> String {
    "(macOS has no huge page pool)".into()
}

/// No pool is reserved ahead on macOS.
pub fn hugetlb_pool(_page_bytes: usize) -> Option<(u64, u64)> {
    None
}

/// Why pages of `page_bytes` cannot be had.
pub fn no_huge_pages(_page_bytes: usize) -> String {
    if cfg!(target_arch = "x86_64") {
        "macOS has no huge page pool: only 2 MiB superpages (VM_FLAGS_SUPERPAGE_SIZE_2MB), taken from free memory when the kernel finds contiguous pages".into()
    } else {
        "macOS on Apple silicon has no huge pages (16 KiB pages only; superpages are an x86-64 feature of its kernel)".into()
    }
}

pub fn huge_pages_hint(_page_bytes: usize, _target: u64, _reserved: u64, _free: u64) -> String {
    no_huge_pages(0)
}

/// No pool: 0 free, no size.
pub fn default_huge_pages_free() -> (u64, Option<u64>) {
    (0, None)
}

/// `pages` fresh readable pages of 4 KiB (never touched) between two
/// inaccessible guard pages. The guards are system pages (16 KiB on Apple
/// silicon), so the stream starts one system page in and the guard after
/// it starts at the next system page boundary: up to 12 KiB past the
/// stream are readable there, where a 4 KiB system faults at once.
pub struct Guarded {
    map: Mapping,
    pages: usize,
}

impl Guarded {
    pub fn new(pages: usize) -> std::io::Result<Guarded> {
        let sys = super::page_size();
        let stream_len = (pages * 4096).next_multiple_of(sys);
        let total = stream_len + 2 * sys;
        let map = Mapping::map(total, libc::MAP_PRIVATE | libc::MAP_ANON, -1)?;
        // SAFETY: the stream pages lie inside the mapping just made.
        unsafe {
            let stream = map.as_ptr().add(sys).cast();
            if libc::mprotect(map.as_ptr().cast(), total, libc::PROT_NONE) != 0
                || libc::mprotect(stream, stream_len, libc::PROT_READ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(Guarded { map, pages })
    }

    pub fn stream(&self) -> *const u8 {
        self.map.as_ptr().wrapping_add(super::page_size())
    }

    /// Which 4 KiB stream pages are resident (as their system page is).
    pub fn touched(&self) -> std::io::Result<Vec<bool>> {
        let sys = super::page_size();
        let stream_len = (self.pages * 4096).next_multiple_of(sys);
        let res = resident(self.stream() as usize, stream_len)
            .ok_or_else(std::io::Error::last_os_error)?;
        Ok((0..self.pages).map(|i| res[i * 4096 / sys]).collect())
    }
}
