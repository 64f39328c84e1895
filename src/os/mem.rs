//! Memory from the system: private mappings (with small or reserved huge
//! pages, or a caching type of their own where the system gives one on
//! plain RAM), the page-size policy of a range, locking, and what the
//! system really gave a range ([`page_facts`], [`protection_at`]).

pub use super::imp::mem::{
    advise_huge, default_huge_pages_free, huge_pages_hint, hugetlb_pool, hugetlb_pool_knob, lock,
    no_huge_pages, page_facts, protection_at, thp_mode, Guarded, Mapping, PLAIN_RAM_CACHING,
    TRANSPARENT_HUGE_PAGES,
};

/// The caching type of a mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Caching {
    /// Ordinary write-back memory.
    WriteBack,
    /// Write-combining: stores gather in buffers and go out as whole
    /// lines; loads are not cached.
    WriteCombining,
    /// Uncached: every access goes to memory.
    Uncached,
}
pub use super::parse::smaps::PageFacts;

/// Which pages back a private mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pages {
    /// The system's default pages, reserved lazily (faults allocate).
    Default,
    /// Pages of this size from the reserved huge page pool, reserved at
    /// mapping time (a fault on an exhausted pool would kill the process).
    Reserved(usize),
}

impl Caching {
    /// What the mapping asks the system for, as the system names it.
    pub fn protection(self) -> &'static str {
        match self {
            Caching::WriteBack => "PAGE_READWRITE",
            Caching::WriteCombining => "PAGE_READWRITE | PAGE_WRITECOMBINE",
            Caching::Uncached => "PAGE_READWRITE | PAGE_NOCACHE",
        }
    }
}
