//! macOS states no memory tiers, HMAT claims, CXL regions or interleave
//! weights: a Mac's memory is one pool (unified memory on Apple silicon),
//! and the host model records why there is nothing to read.

use crate::os::parse::tiers::TierFacts;

pub fn facts() -> Result<TierFacts, String> {
    Err("macOS has one memory pool and exports no memory tiers, HMAT claims or CXL regions".into())
}

/// macOS has no weighted interleave.
pub fn interleave_weight_file(node: u32) -> String {
    format!("(no weighted interleave on macOS; node {node})")
}
