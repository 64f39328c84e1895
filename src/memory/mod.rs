//! Where bytes live: aligned buffers and their page policy.

pub mod buffer;
pub mod numa;
pub mod smaps;

pub use buffer::Buffer;

/// Page policy of a CPU buffer. (More kinds, such as hugetlb, locked and
/// device mappings, belong to the memory-type suite.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PageKind {
    /// Plain anonymous mmap, kernel default policy.
    Regular,
    /// `MADV_HUGEPAGE`: transparent huge pages (the default for sweeps).
    Thp,
    /// `MADV_NOHUGEPAGE`: force 4 KiB pages.
    NoHuge,
}

impl PageKind {
    pub fn name(self) -> &'static str {
        match self {
            PageKind::Regular => "regular",
            PageKind::Thp => "thp",
            PageKind::NoHuge => "nohuge",
        }
    }
}
