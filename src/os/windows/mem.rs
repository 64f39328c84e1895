//! `VirtualAlloc` (with `MEM_LARGE_PAGES` when the account holds "Lock
//! pages in memory"), `VirtualLock`, `VirtualQuery` and
//! `QueryWorkingSetEx` (what `/proc/self/smaps` says on Linux).

use std::ptr::NonNull;
use std::sync::OnceLock;

use windows_sys::Win32::Foundation::{ERROR_NOT_ALL_ASSIGNED, HANDLE, LUID};
use windows_sys::Win32::Security::{
    AdjustTokenPrivileges, LookupPrivilegeValueW, LUID_AND_ATTRIBUTES, SE_LOCK_MEMORY_NAME,
    SE_PRIVILEGE_ENABLED, TOKEN_ADJUST_PRIVILEGES, TOKEN_PRIVILEGES, TOKEN_QUERY,
};
use windows_sys::Win32::System::Memory::{
    GetLargePageMinimum, VirtualAlloc, VirtualFree, VirtualLock, VirtualQuery,
    MEMORY_BASIC_INFORMATION, MEM_COMMIT, MEM_LARGE_PAGES, MEM_RELEASE, MEM_RESERVE, PAGE_NOCACHE,
    PAGE_READWRITE, PAGE_WRITECOMBINE,
};
use windows_sys::Win32::System::ProcessStatus::{
    QueryWorkingSetEx, PSAPI_WORKING_SET_EX_INFORMATION,
};
use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};

use crate::os::mem::{Caching, PageFacts, Pages};

/// No transparent huge pages: large pages only on request, with a right.
pub const TRANSPARENT_HUGE_PAGES: bool = false;

/// Any user may allocate plain RAM write-combined (`PAGE_WRITECOMBINE`) or
/// uncached (`PAGE_NOCACHE`).
pub const PLAIN_RAM_CACHING: bool = true;

/// A private allocation, released on drop.
pub struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: plain memory owned by this value.
unsafe impl Send for Mapping {}
// SAFETY: as above; a shared reference gives out only the address.
unsafe impl Sync for Mapping {}

/// The large page size (0 where the system has none).
pub(crate) fn large_page() -> usize {
    // SAFETY: no preconditions.
    unsafe { GetLargePageMinimum() }
}

/// Enable SeLockMemoryPrivilege in this process's token, once: large
/// pages need it held *and* enabled. Err when the account lacks it.
fn lock_memory_privilege() -> Result<(), std::io::Error> {
    static R: OnceLock<Result<(), i32>> = OnceLock::new();
    let r = R.get_or_init(|| {
        let mut token: HANDLE = std::ptr::null_mut();
        // SAFETY: out-pointer to a local; the token is closed below.
        if unsafe {
            OpenProcessToken(
                GetCurrentProcess(),
                TOKEN_ADJUST_PRIVILEGES | TOKEN_QUERY,
                &mut token,
            )
        } == 0
        {
            return Err(super::last_error().raw_os_error().unwrap_or(0));
        }
        let token = super::Handle(token);
        let mut tp = TOKEN_PRIVILEGES {
            PrivilegeCount: 1,
            Privileges: [LUID_AND_ATTRIBUTES {
                Luid: LUID {
                    LowPart: 0,
                    HighPart: 0,
                },
                Attributes: SE_PRIVILEGE_ENABLED,
            }],
        };
        // SAFETY: a valid name and out-pointer.
        if unsafe {
            LookupPrivilegeValueW(
                std::ptr::null(),
                SE_LOCK_MEMORY_NAME,
                &mut tp.Privileges[0].Luid,
            )
        } == 0
        {
            return Err(super::last_error().raw_os_error().unwrap_or(0));
        }
        // SAFETY: a live token and a fully initialised TOKEN_PRIVILEGES.
        let ok = unsafe {
            AdjustTokenPrivileges(
                token.0,
                0,
                &tp,
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        // AdjustTokenPrivileges succeeds with ERROR_NOT_ALL_ASSIGNED when
        // the account does not hold the privilege.
        let e = super::last_error().raw_os_error().unwrap_or(0);
        if ok == 0 || e == ERROR_NOT_ALL_ASSIGNED as i32 {
            return Err(e);
        }
        Ok(())
    });
    r.map_err(std::io::Error::from_raw_os_error)
}

impl Mapping {
    fn alloc(len: usize, kind: u32, protect: u32) -> std::io::Result<Mapping> {
        // SAFETY: a fresh allocation anywhere; checked for null.
        let p = unsafe {
            VirtualAlloc(
                std::ptr::null(),
                len,
                MEM_RESERVE | MEM_COMMIT | kind,
                protect,
            )
        };
        Ok(Mapping {
            ptr: NonNull::new(p.cast()).ok_or_else(super::last_error)?,
            len,
        })
    }

    /// `len` bytes of private memory (zeroed, not yet touched). Reserved
    /// pages are large pages (`MEM_LARGE_PAGES`), of the one size the
    /// system has.
    pub fn private(len: usize, pages: Pages) -> std::io::Result<Mapping> {
        match pages {
            Pages::Default => Mapping::alloc(len, 0, PAGE_READWRITE),
            Pages::Reserved(p) if p != large_page() || p == 0 => Err(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                format!(
                    "this system's large pages are {} bytes, not {p}",
                    large_page()
                ),
            )),
            Pages::Reserved(p) => {
                lock_memory_privilege()?;
                Mapping::alloc(len.next_multiple_of(p), MEM_LARGE_PAGES, PAGE_READWRITE)
            }
        }
    }

    /// `len` bytes of private memory with a caching type of its own:
    /// write-combined (`PAGE_WRITECOMBINE`) or uncached (`PAGE_NOCACHE`),
    /// on plain RAM, for any user.
    pub fn private_caching(len: usize, caching: Caching) -> std::io::Result<Mapping> {
        let protect = match caching {
            Caching::WriteBack => PAGE_READWRITE,
            Caching::WriteCombining => PAGE_READWRITE | PAGE_WRITECOMBINE,
            Caching::Uncached => PAGE_READWRITE | PAGE_NOCACHE,
        };
        Mapping::alloc(len, 0, protect)
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
        // SAFETY: exactly what VirtualAlloc returned.
        unsafe { VirtualFree(self.ptr.as_ptr().cast(), 0, MEM_RELEASE) };
    }
}

/// No transparent huge pages on Windows: nothing to advise.
///
/// # Safety
/// None needed; `unsafe` for the same signature as elsewhere.
pub unsafe fn advise_huge(_addr: *mut u8, _len: usize, _huge: bool) {}

/// Lock `addr..addr+len` in the working set (`VirtualLock`).
///
/// # Safety
/// The range must lie inside an allocation this process owns.
pub unsafe fn lock(addr: *const u8, len: usize) -> std::io::Result<()> {
    if VirtualLock(addr.cast(), len) == 0 {
        return Err(super::last_error());
    }
    Ok(())
}

/// `VirtualQuery`: the region holding `addr` (base, size, protection).
pub(crate) fn region(addr: usize) -> Option<MEMORY_BASIC_INFORMATION> {
    // SAFETY: plain data filled by VirtualQuery; any address may be asked.
    let mut mbi: MEMORY_BASIC_INFORMATION = unsafe { std::mem::zeroed() };
    // SAFETY: `mbi` is a local of the size passed.
    let n = unsafe {
        VirtualQuery(
            addr as *const _,
            &mut mbi,
            std::mem::size_of::<MEMORY_BASIC_INFORMATION>(),
        )
    };
    (n != 0 && mbi.State == MEM_COMMIT).then_some(mbi)
}

/// The working-set bits of every 4 KiB page of `addr..addr+len`: valid
/// (bit 0), node (bits 16..21), locked (22), large (23).
pub(crate) fn working_set(addr: usize, len: usize) -> Option<Vec<usize>> {
    working_set_every(addr, len, 1)
}

/// Pages of one region [`page_facts`] asks about, at most: past this it
/// asks about every `stride`-th page and scales the counts. Every page of
/// a 2 GiB buffer is 524,288 entries; wine answers each with its own read
/// of /proc/self/pagemap, and the survey under wine spent minutes there
/// (its buffers' facts are read for every record). 16,384 evenly spread
/// pages put a fraction within 1/16,384 of what every page would say.
const FACT_PAGES: usize = 1 << 14;

/// [`working_set`] of every `stride`-th page from `addr`.
fn working_set_every(addr: usize, len: usize, stride: usize) -> Option<Vec<usize>> {
    let pages = len.div_ceil(4096).div_ceil(stride.max(1));
    let mut info: Vec<PSAPI_WORKING_SET_EX_INFORMATION> = (0..pages)
        .map(|i| PSAPI_WORKING_SET_EX_INFORMATION {
            VirtualAddress: (addr + i * stride.max(1) * 4096) as *mut _,
            // SAFETY: plain data, filled by the call.
            VirtualAttributes: unsafe { std::mem::zeroed() },
        })
        .collect();
    let bytes = std::mem::size_of_val(info.as_slice());
    // SAFETY: `info` holds `pages` entries of the size passed.
    let ok =
        unsafe { QueryWorkingSetEx(GetCurrentProcess(), info.as_mut_ptr().cast(), bytes as u32) };
    // SAFETY: the union's Flags view is plain bits.
    (ok != 0).then(|| {
        info.iter()
            // SAFETY: as above.
            .map(|i| unsafe { i.VirtualAttributes.Flags })
            .collect()
    })
}

/// What the system gave the allocation region that holds `addr`
/// (`VirtualQuery` for its extent, `QueryWorkingSetEx` for its pages; past
/// [`FACT_PAGES`] pages, for an even sample of them, the byte counts
/// scaled to the region).
pub fn page_facts(addr: usize) -> Option<PageFacts> {
    let r = region(addr)?;
    let (start, len) = (r.BaseAddress as usize, r.RegionSize);
    let stride = len.div_ceil(4096).div_ceil(FACT_PAGES).max(1);
    let bits = working_set_every(start, len, stride)?;
    let bytes = |n: usize| (n * stride * 4096).min(len) as u64;
    let valid = bits.iter().filter(|b| *b & 1 == 1).count();
    let large = bits
        .iter()
        .filter(|b| *b & 1 == 1 && *b >> 23 & 1 == 1)
        .count();
    let locked = bits
        .iter()
        .filter(|b| *b & 1 == 1 && *b >> 22 & 1 == 1)
        .count();
    Some(PageFacts {
        start,
        end: start + len,
        kernel_page_bytes: if large > 0 { large_page() as u64 } else { 4096 },
        anon_huge_bytes: bytes(large),
        locked_bytes: bytes(locked),
        rss_bytes: bytes(valid),
    })
}

/// The protection `VirtualQuery` reports for the page at `addr`, named.
pub fn protection_at(addr: usize) -> Option<String> {
    let p = region(addr)?.Protect;
    let mut names = vec![if p & 0xff == PAGE_READWRITE {
        "PAGE_READWRITE".to_string()
    } else {
        format!("{:#x}", p & 0xff)
    }];
    if p & PAGE_WRITECOMBINE != 0 {
        names.push("PAGE_WRITECOMBINE".into());
    }
    if p & PAGE_NOCACHE != 0 {
        names.push("PAGE_NOCACHE".into());
    }
    Some(names.join(" | "))
}

/// No transparent huge pages.
pub fn thp_mode() -> Option<String> {
    None
}

/// How a user gets large pages here.
pub fn hugetlb_pool_knob(_page_bytes: usize) -> String {
    "the \"Lock pages in memory\" right (secpol.msc: Local Policies, User Rights Assignment; log off and on again)".into()
}

/// No pool is reserved ahead on Windows: large pages come from free
/// physical memory when the right is held, so the "pool" is the free
/// memory in large pages; None without the right or for another size.
pub fn hugetlb_pool(page_bytes: usize) -> Option<(u64, u64)> {
    if page_bytes == 0 || page_bytes != large_page() || lock_memory_privilege().is_err() {
        return None;
    }
    let free = super::system::memory_available()? / page_bytes as u64;
    Some((free, free))
}

/// Why pages of `page_bytes` cannot be had.
pub fn no_huge_pages(page_bytes: usize) -> String {
    use crate::util::units::format_bytes;
    if page_bytes != large_page() {
        return format!(
            "Windows has large pages of {} here, not {}",
            format_bytes(large_page() as u64),
            format_bytes(page_bytes as u64)
        );
    }
    format!(
        "large pages need {}: without it VirtualAlloc(MEM_LARGE_PAGES) fails (error 1314)",
        hugetlb_pool_knob(page_bytes)
    )
}

/// How to get more large pages: free memory (they must be physically
/// contiguous, so a long-running machine may have too few).
pub fn huge_pages_hint(page_bytes: usize, target: u64, _reserved: u64, free: u64) -> String {
    format!(
        "{target} large pages of {} are needed and about {free} are free: close programs or reboot (large pages need contiguous physical memory)",
        crate::util::units::format_bytes(page_bytes as u64)
    )
}

/// No pool: 0 free, and the large page size.
pub fn default_huge_pages_free() -> (u64, Option<u64>) {
    (0, Some(large_page() as u64).filter(|&p| p > 0))
}

/// `pages` fresh readable pages of 4 KiB (committed read-only, never
/// touched) between two reserved, inaccessible guard pages: an access
/// before or after the stream faults. For tests that a kernel reads
/// exactly its stream.
pub struct Guarded {
    base: NonNull<u8>,
    pages: usize,
}

impl Guarded {
    pub fn new(pages: usize) -> std::io::Result<Guarded> {
        use windows_sys::Win32::System::Memory::{PAGE_NOACCESS, PAGE_READONLY};
        let total = (pages + 2) * 4096;
        // SAFETY: a fresh reservation, no access; checked for null.
        let p = unsafe { VirtualAlloc(std::ptr::null(), total, MEM_RESERVE, PAGE_NOACCESS) };
        let base = NonNull::new(p.cast::<u8>()).ok_or_else(super::last_error)?;
        let g = Guarded { base, pages };
        // SAFETY: the stream pages lie inside the reservation.
        let s = unsafe { VirtualAlloc(g.stream().cast(), pages * 4096, MEM_COMMIT, PAGE_READONLY) };
        if s.is_null() {
            return Err(super::last_error());
        }
        Ok(g)
    }

    pub fn stream(&self) -> *const u8 {
        self.base.as_ptr().wrapping_add(4096)
    }

    /// Which stream pages are resident.
    pub fn touched(&self) -> std::io::Result<Vec<bool>> {
        working_set(self.stream() as usize, self.pages * 4096)
            .map(|bits| bits.iter().map(|b| b & 1 == 1).collect())
            .ok_or_else(super::last_error)
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        // SAFETY: exactly the reservation `new` made.
        unsafe { VirtualFree(self.base.as_ptr().cast(), 0, MEM_RELEASE) };
    }
}
