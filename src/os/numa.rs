//! NUMA placement: bind a range to a node, steer a thread's own faults,
//! and count where a range's pages really are.
//!
//! Why binding and not first touch or migration: with automatic NUMA
//! balancing on (Linux enables it by itself on multi-node machines), pages
//! placed by first touch or migrated with `move_pages` drift back towards
//! the cpu that uses them within seconds; a range bound with `MPOL_BIND`
//! stays put (research: QEMU 4-node guest, `numaprobe drift`). This is
//! what `numactl --membind` and MLC do.

pub use super::imp::numa::{
    bind_range, census, census_of, node_free_bytes, pages_migrated, prefer_thread,
    set_thread_policy, weighted_interleave_range,
};

/// Where the pages of a range are, from `move_pages(0, …, NULL, status)`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PageCensus {
    /// Pages asked about (one per 4 KiB).
    pub pages: u64,
    /// Pages per node, ascending by node.
    pub per_node: Vec<(u32, u64)>,
    /// Pages not present or not queryable after retries (-ENOENT, -EFAULT,
    /// still -EBUSY).
    pub unknown: u64,
}

impl PageCensus {
    pub fn on_node(&self, node: u32) -> u64 {
        self.per_node
            .iter()
            .find(|(n, _)| *n == node)
            .map_or(0, |p| p.1)
    }

    /// Fraction of all pages on `node`, 0..1.
    pub fn fraction_on(&self, node: u32) -> f64 {
        if self.pages == 0 {
            return 0.0;
        }
        self.on_node(node) as f64 / self.pages as f64
    }
}
