//! Where bytes live: aligned buffers and their page policy.

pub mod buffer;
pub mod kind;
pub mod numa;

pub use buffer::Buffer;

/// Page policy of a CPU buffer. Device mappings (write-combining and
/// uncached BARs, framebuffers) are not anonymous memory: see
/// `os::device`; availability checks and verification live in [`kind`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PageKind {
    /// Plain anonymous mmap, kernel default policy.
    Regular,
    /// `MADV_HUGEPAGE`: transparent huge pages (the default for sweeps).
    #[default]
    Thp,
    /// `MADV_NOHUGEPAGE`: force 4 KiB pages.
    NoHuge,
    /// `MAP_HUGETLB | MAP_HUGE_2MB`: pages from the reserved pool
    /// (`vm.nr_hugepages`).
    #[serde(rename = "hugetlb-2M")]
    Hugetlb2M,
    /// `MAP_HUGETLB | MAP_HUGE_1GB`: pages from the 1 GiB pool
    /// (`/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages`).
    #[serde(rename = "hugetlb-1G")]
    Hugetlb1G,
    /// Plain anonymous mmap, then `mlock`: every page resident and pinned
    /// before first use (the fault cost moves into the allocation).
    Locked,
}

impl PageKind {
    pub fn name(self) -> &'static str {
        match self {
            PageKind::Regular => "regular",
            PageKind::Thp => "thp",
            PageKind::NoHuge => "nohuge",
            PageKind::Hugetlb2M => "hugetlb-2M",
            PageKind::Hugetlb1G => "hugetlb-1G",
            PageKind::Locked => "locked",
        }
    }

    /// Every anonymous kind, in the order `bwscope memtype` compares them.
    pub const ALL: [PageKind; 6] = [
        PageKind::Regular,
        PageKind::Thp,
        PageKind::NoHuge,
        PageKind::Hugetlb2M,
        PageKind::Hugetlb1G,
        PageKind::Locked,
    ];

    /// The kind named `name` (case-insensitive: `hugetlb-2m` works too).
    pub fn parse(name: &str) -> Option<PageKind> {
        PageKind::ALL
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(name.trim()))
    }

    /// The kind this system can give for it: transparent huge pages become
    /// regular pages where the system has none (Windows), so the default
    /// page policy means "the best default pages here" everywhere, and a
    /// record names the kind it really had.
    pub fn available(self) -> PageKind {
        match self {
            PageKind::Thp if !crate::os::mem::TRANSPARENT_HUGE_PAGES => PageKind::Regular,
            k => k,
        }
    }

    /// The huge page size of a hugetlb kind.
    pub fn hugetlb_page_bytes(self) -> Option<usize> {
        match self {
            PageKind::Hugetlb2M => Some(2 << 20),
            PageKind::Hugetlb1G => Some(1 << 30),
            _ => None,
        }
    }
}
