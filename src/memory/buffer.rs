//! Aligned, pre-faulted, randomly filled buffers from anonymous `mmap`.
//!
//! Why not `Vec`: the allocator gives no 2 MiB alignment and, with THP in
//! `madvise` mode (the Debian default), 4 KiB pages; at DRAM sizes that
//! costs ~10 % of read bandwidth (research: 21.6 vs 19.5 GB/s at 1 GiB).

use std::ptr::NonNull;

use crate::error::UserError;
use crate::memory::PageKind;
use crate::model::MemoryInfo;
use crate::os::mem::{Mapping, Pages};

/// 2 MiB: the x86-64 huge page size, so a THP buffer starts on a huge page.
pub const ALIGN: usize = 2 << 20;

/// An mmap'ed region, unmapped on drop (with its mapping).
pub struct Buffer {
    base: NonNull<u8>,
    /// The whole mapping (the buffer starts at an aligned place in it).
    _map: Mapping,
    len: usize,
    kind: PageKind,
}

impl Buffer {
    /// Map `len` bytes (rounded up to a page) aligned to 2 MiB with the page
    /// policy of `kind`, touch every page, and fill with pseudo-random data
    /// from `seed`. Must be called on the thread that will use it, so the
    /// first touch places it on that thread's NUMA node.
    pub fn new(len: usize, kind: PageKind, seed: u64) -> Result<Buffer, UserError> {
        let mut buf = Buffer::map(len, kind)?;
        buf.fill_random(seed);
        Ok(buf)
    }

    /// Map `len` bytes with the policy of `kind` without touching them, so
    /// the caller can time the first use. Hugetlb pages are reserved by the
    /// mmap (never `MAP_NORESERVE`: a fault on an exhausted pool is SIGBUS),
    /// and `Locked` is made resident by `mlock` here: that is its cost of
    /// first use.
    pub fn map(len: usize, kind: PageKind) -> Result<Buffer, UserError> {
        let kind = kind.available();
        let page = kind.hugetlb_page_bytes().unwrap_or(4096);
        let len = len.max(4096).next_multiple_of(page);
        // Hugetlb mappings are naturally aligned to their page size.
        let (map_len, pages) = match kind.hugetlb_page_bytes() {
            Some(p) => (len, Pages::Reserved(p)),
            // A THP policy covers whole 2 MiB pages: the advice below spans
            // the buffer rounded up to one, so even a 32 KiB buffer sits in
            // one physically contiguous huge page. On 4 KiB pages a buffer
            // sized for L2 lands on random physical pages, and how many of
            // them collide in the (physically indexed) L2 sets changes from
            // run to run: 256 KiB reads on Zen 4 came out at 97 or at
            // 116 GB/s depending on the allocation.
            None => (len.next_multiple_of(ALIGN) + ALIGN, Pages::Default),
        };
        let map = match Mapping::private(map_len, pages) {
            Ok(m) => m,
            Err(err) => {
                if let Some(pb) = kind.hugetlb_page_bytes() {
                    return Err(UserError::flag(
                        "--memory",
                        format!(
                            "mmap(MAP_HUGETLB) of {} failed ({}): {}",
                            crate::util::units::format_bytes(len as u64),
                            err,
                            super::kind::hugetlb_hint(pb, (len / pb) as u64)
                        ),
                    ));
                }
                let detail = match crate::os::process::address_space_left() {
                    Some((left, limit)) => format!(
                        "{err}; this process may map only {} more under its limit ({}, `ulimit -v`/`ulimit -d`)",
                        crate::util::units::format_bytes(left),
                        crate::util::units::format_bytes(limit)
                    ),
                    None => err.to_string(),
                };
                return Err(UserError::OutOfMemory {
                    bytes: len as u64,
                    detail,
                    hint: crate::error::LESS_MEMORY,
                });
            }
        };
        let map_ptr = map.as_ptr();
        let offset = (ALIGN - (map_ptr as usize % ALIGN)) % ALIGN;
        let offset = if kind.hugetlb_page_bytes().is_some() {
            0
        } else {
            offset
        };
        // SAFETY: offset < ALIGN and map_len >= len + ALIGN, so in bounds.
        let base = unsafe { map_ptr.add(offset) };
        let buf = Buffer {
            base: NonNull::new(base).expect("mmap returned null"),
            _map: map,
            len,
            kind,
        };
        let advice = match kind {
            PageKind::Thp => Some((true, len.next_multiple_of(ALIGN))),
            PageKind::NoHuge => Some((false, len)),
            _ => None,
        };
        if let Some((huge, span)) = advice {
            // SAFETY: base..base+span lies inside the mapping (span is at
            // most map_len - ALIGN); the advice only changes the page
            // policy. Failure just means no huge pages, which the page
            // facts check reports.
            unsafe { crate::os::mem::advise_huge(base, span, huge) };
        }
        if kind == PageKind::Locked {
            // SAFETY: base..base+len lies inside the mapping.
            if let Err(err) = unsafe { crate::os::mem::lock(base, len) } {
                let hint = super::kind::check_lockable(len as u64)
                    .err()
                    .unwrap_or_else(|| "raise RLIMIT_MEMLOCK (ulimit -l) or free memory".into());
                return Err(UserError::flag(
                    "--memory",
                    format!(
                        "mlock of {} failed ({}): {}",
                        crate::util::units::format_bytes(len as u64),
                        err,
                        hint
                    ),
                ));
            }
        }
        Ok(buf)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn as_ptr(&self) -> *const u8 {
        self.base.as_ptr()
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.base.as_ptr()
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: base..base+len is mapped and initialised by fill_random.
        unsafe { std::slice::from_raw_parts(self.base.as_ptr(), self.len) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self gives exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.base.as_ptr(), self.len) }
    }

    /// Fill with xorshift64* output: real data, never the zero page, and
    /// not compressible by any memory-compression scheme.
    pub fn fill_random(&mut self, seed: u64) {
        self.fill_random_prefix(self.len, seed);
    }

    /// Refill the first `len` bytes (clamped to the buffer) with random data.
    pub fn fill_random_prefix(&mut self, len: usize, seed: u64) {
        let words = len.min(self.len) / 8;
        // SAFETY: base is 2 MiB aligned and len is a multiple of 4096.
        let w = unsafe { std::slice::from_raw_parts_mut(self.base.as_ptr() as *mut u64, words) };
        crate::util::rng::fill_words(w, seed);
    }

    /// What the system actually gave us ([`crate::os::mem::page_facts`]).
    pub fn memory_info(&self) -> MemoryInfo {
        let s = crate::os::mem::page_facts(self.base.as_ptr() as usize);
        MemoryInfo {
            kind: self.kind.name().into(),
            page_bytes: s.as_ref().map(|s| s.kernel_page_bytes),
            thp_fraction: s
                .as_ref()
                .map(|s| (s.anon_huge_bytes as f64 / self.len as f64).min(1.0)),
            locked_fraction: s
                .as_ref()
                .map(|s| (s.locked_bytes as f64 / self.len as f64).min(1.0)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_filled_and_not_zero() {
        let b = Buffer::new(3 << 20, PageKind::Thp, 7).unwrap();
        assert_eq!(b.as_ptr() as usize % ALIGN, 0);
        assert!(b.len() >= 3 << 20);
        let zeros = b
            .as_slice()
            .chunks(8)
            .filter(|c| c.iter().all(|&x| x == 0))
            .count();
        assert!(
            zeros < 4,
            "buffer should hold random data, found {zeros} zero words"
        );
    }

    /// A THP buffer smaller than a huge page still gets one: the advice
    /// covers the whole 2 MiB page, not just the bytes asked for.
    #[test]
    fn a_small_thp_buffer_sits_in_a_huge_page() {
        if crate::platform::skip_emulated(
            "a_small_thp_buffer_sits_in_a_huge_page",
            "transparent huge pages (MADV_HUGEPAGE has no effect there)",
        ) {
            return;
        }
        let mode = crate::os::mem::thp_mode().unwrap_or_default();
        if mode.is_empty() || mode == "never" {
            eprintln!("skipped: transparent huge pages are off here ({mode:?})");
            return;
        }
        for len in [32 << 10, 256 << 10, 3 << 20] {
            let b = Buffer::new(len, PageKind::Thp, 3).unwrap();
            let info = b.memory_info();
            assert_eq!(info.thp_fraction, Some(1.0), "{len} bytes: {info:?}");
        }
    }

    #[test]
    fn smaps_sees_the_buffer() {
        let b = Buffer::new(4 << 20, PageKind::Regular, 1).unwrap();
        let info = b.memory_info();
        assert_eq!(info.kind, "regular");
        assert!(info.page_bytes.is_some(), "smaps lookup failed");
    }
}
