//! Memory from the system: anonymous mappings (private, with small or
//! reserved huge pages; shared between the processes of a team), the
//! page-size policy of a range, locking, and what the system really gave
//! a range ([`page_facts`]).

pub use super::imp::mem::{
    advise_huge, default_huge_pages_free, hugetlb_pool, hugetlb_pool_knob, lock, page_facts,
    thp_mode, Mapping,
};
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
