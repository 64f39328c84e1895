//! Windows states no memory tiers, HMAT claims, CXL regions or
//! interleave weights to a program: the host model records why.

use crate::os::parse::tiers::TierFacts;

pub fn facts() -> Result<TierFacts, String> {
    Err("Windows exports no memory tiers, HMAT claims or CXL regions to programs".into())
}

/// Windows has no weighted interleave.
pub fn interleave_weight_file(node: u32) -> String {
    format!("(no weighted interleave on Windows; node {node})")
}
