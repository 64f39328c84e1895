//! Can a memory kind be honoured here, and was it?
//!
//! Before allocating, [`check_available`] looks at the pools and limits a
//! kind depends on (hugetlb free pages, `RLIMIT_MEMLOCK`, the THP mode) so
//! a kind that cannot work fails with a message naming the knob to turn,
//! instead of an `ENOMEM` or a silent fallback. After the first touch,
//! [`verify`] checks what the system really gave (`os::mem::page_facts`:
//! `/proc/self/smaps` on Linux, `QueryWorkingSetEx` on Windows).

use crate::memory::PageKind;
use crate::model::MemoryInfo;
use crate::util::units::format_bytes;

/// (reserved, free) pages of the hugetlb pool, or None when the kernel has
/// no pool of that size.
pub fn pool(page_bytes: usize) -> Option<(u64, u64)> {
    crate::os::mem::hugetlb_pool(page_bytes)
}

/// What to do to make `need` more pages of `page_bytes` available.
pub fn hugetlb_hint(page_bytes: usize, need: u64) -> String {
    let (reserved, free) = pool(page_bytes).unwrap_or((0, 0));
    crate::os::mem::huge_pages_hint(
        page_bytes,
        reserved + need.saturating_sub(free),
        reserved,
        free,
    )
}

/// Whether `bytes` more can be mlocked: Err says by how much the limit is
/// short and how to raise it.
pub fn check_lockable(bytes: u64) -> Result<(), String> {
    let Some(room) = crate::os::process::lock_room() else {
        return Ok(());
    };
    let used = room.locked;
    let allowed = room.limit.saturating_sub(used);
    if bytes > allowed {
        return Err(format!(
            "locking {} needs RLIMIT_MEMLOCK of at least {} but it is {} ({} already locked): short by {}; raise it (ulimit -l {}) or run with CAP_IPC_LOCK",
            format_bytes(bytes),
            format_bytes(bytes + used),
            format_bytes(room.limit),
            format_bytes(used),
            format_bytes(bytes - allowed),
            (bytes + used).div_ceil(1024)
        ));
    }
    Ok(())
}

/// Whether `buffers` buffers of `bytes` each can be had with `kind`; Err is
/// the reason, naming the knob to turn.
pub fn check_available(kind: PageKind, bytes: u64, buffers: u64) -> Result<(), String> {
    match kind {
        PageKind::Regular | PageKind::NoHuge => Ok(()),
        // Buffers map it as regular pages where the system has none.
        PageKind::Thp if !crate::os::mem::TRANSPARENT_HUGE_PAGES => Ok(()),
        PageKind::Thp => match crate::os::mem::thp_mode() {
            None => Err("this kernel has no transparent huge pages (/sys/kernel/mm/transparent_hugepage absent)".into()),
            Some(m) if m == "never" => Err(
                "transparent huge pages are off (/sys/kernel/mm/transparent_hugepage/enabled = never); set it to madvise or always".into(),
            ),
            Some(_) => Ok(()),
        },
        PageKind::Hugetlb2M | PageKind::Hugetlb1G => {
            let pb = kind.hugetlb_page_bytes().expect("hugetlb kind");
            let need = bytes.div_ceil(pb as u64) * buffers;
            match pool(pb) {
                None => Err(crate::os::mem::no_huge_pages(pb)),
                Some((_, free)) if free < need => Err(format!(
                    "{} needs {} huge pages of {} but {} are free: {}",
                    kind.name(),
                    need,
                    format_bytes(pb as u64),
                    free,
                    hugetlb_hint(pb, need)
                )),
                Some(_) => Ok(()),
            }
        }
        PageKind::Locked => check_lockable(bytes * buffers),
    }
}

/// Check what the kernel gave (after the first touch) against the kind
/// asked for. Ok holds a short description of what was verified.
pub fn verify(kind: PageKind, info: &MemoryInfo, len: usize) -> Result<String, String> {
    let Some(page) = info.page_bytes else {
        return Err(
            "the system does not describe the mapping's pages, so they cannot be verified".into(),
        );
    };
    let thp = info.thp_fraction.unwrap_or(0.0);
    let locked = info.locked_fraction.unwrap_or(0.0);
    match kind {
        PageKind::Regular => Ok(format!(
            "KernelPageSize {}, {:.0} % THP (kernel default policy)",
            format_bytes(page),
            thp * 100.0
        )),
        PageKind::Thp if len >= 4 << 20 && thp == 0.0 => Err(
            "asked for transparent huge pages but got none (AnonHugePages 0 in smaps); memory may be too fragmented: try echo 1 > /proc/sys/vm/compact_memory"
                .into(),
        ),
        PageKind::Thp => Ok(format!("AnonHugePages {:.0} % of the buffer", thp * 100.0)),
        PageKind::NoHuge if thp > 0.0 => Err(format!(
            "asked for 4 KiB pages (MADV_NOHUGEPAGE) but {:.0} % is THP (transparent_hugepage/enabled = always ignores the advice?)",
            thp * 100.0
        )),
        PageKind::NoHuge => Ok(format!("KernelPageSize {}, no THP", format_bytes(page))),
        PageKind::Hugetlb2M | PageKind::Hugetlb1G => {
            let want = kind.hugetlb_page_bytes().expect("hugetlb kind") as u64;
            if page == want {
                Ok(format!("KernelPageSize {}", format_bytes(page)))
            } else {
                Err(format!(
                    "asked for {} pages but the system reports pages of {}",
                    format_bytes(want),
                    format_bytes(page)
                ))
            }
        }
        PageKind::Locked if locked < 0.999 => Err(format!(
            "asked for locked memory but the system reports {:.1} % of it locked",
            locked * 100.0
        )),
        PageKind::Locked => Ok(format!("Locked {:.0} % of the buffer", locked * 100.0)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for k in PageKind::ALL {
            assert_eq!(PageKind::parse(k.name()), Some(k));
        }
        assert_eq!(PageKind::parse("HUGETLB-2m"), Some(PageKind::Hugetlb2M));
        assert_eq!(PageKind::parse("huge"), None);
    }

    #[test]
    fn verify_rejects_wrong_pages() {
        let info = MemoryInfo {
            kind: "hugetlb-2M".into(),
            page_bytes: Some(4096),
            thp_fraction: Some(0.0),
            locked_fraction: Some(0.0),
        };
        assert!(verify(PageKind::Hugetlb2M, &info, 4 << 20)
            .unwrap_err()
            .contains("pages of 4 KiB"));
        assert!(verify(PageKind::Locked, &info, 4 << 20)
            .unwrap_err()
            .contains("locked"));
        assert!(verify(PageKind::Thp, &info, 4 << 20).is_err());
        assert!(verify(PageKind::Regular, &info, 4 << 20).is_ok());
        let huge = MemoryInfo {
            page_bytes: Some(2 << 20),
            ..info
        };
        assert!(verify(PageKind::Hugetlb2M, &huge, 4 << 20).is_ok());
        assert!(verify(PageKind::Hugetlb1G, &huge, 4 << 20).is_err());
    }

    #[test]
    fn a_huge_pool_request_names_the_knob() {
        // More pages than any CI machine reserves.
        let e = check_available(PageKind::Hugetlb2M, 1 << 40, 1).unwrap_err();
        assert!(
            e.contains(&crate::os::mem::hugetlb_pool_knob(2 << 20))
                || e.contains("vm.nr_hugepages")
                || e.contains("no 2 MiB huge pages"),
            "{e}"
        );
        let e = check_available(PageKind::Hugetlb1G, 1 << 40, 1).unwrap_err();
        assert!(
            e.contains(&crate::os::mem::hugetlb_pool_knob(1 << 30)) || e.contains("not 1 GiB"),
            "{e}"
        );
    }

    #[test]
    fn locked_buffer_is_locked() {
        if crate::platform::skip_emulated("locked_buffer_is_locked", "the locked bit of a page") {
            return;
        }
        if check_lockable(4 << 20).is_err() {
            eprintln!("skipping: RLIMIT_MEMLOCK below 4 MiB and no CAP_IPC_LOCK");
            return;
        }
        let b = crate::memory::Buffer::new(4 << 20, PageKind::Locked, 3).unwrap();
        let info = b.memory_info();
        assert_eq!(info.kind, "locked");
        verify(PageKind::Locked, &info, b.len()).unwrap();
    }

    #[test]
    fn hugetlb_buffer_has_huge_pages_when_reserved() {
        if crate::platform::skip_emulated(
            "hugetlb_buffer_has_huge_pages_when_reserved",
            "mmap(MAP_HUGETLB)",
        ) {
            return;
        }
        if check_available(PageKind::Hugetlb2M, 4 << 20, 1).is_err() {
            eprintln!(
                "skipping: no free 2 MiB huge pages (sysctl -w vm.nr_hugepages=64 to run this)"
            );
            return;
        }
        let b = crate::memory::Buffer::new(4 << 20, PageKind::Hugetlb2M, 3).unwrap();
        assert_eq!(b.as_ptr() as usize % (2 << 20), 0);
        verify(PageKind::Hugetlb2M, &b.memory_info(), b.len()).unwrap();
        let zeros = b
            .as_slice()
            .chunks(8)
            .filter(|c| c.iter().all(|&x| x == 0))
            .count();
        assert!(zeros < 4);
    }
}
