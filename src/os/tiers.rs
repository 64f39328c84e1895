//! What the system states about its memory tiers: each node's cpus and
//! memory, the kernel's memory tiers, ACPI HMAT's claims as exported, CXL
//! regions, DAX devices and device memory onlined as a node, and the
//! weighted-interleave weights in force. Linux reads its sysfs (and a GPU
//! driver's `/proc` file) through [`crate::os::parse::tiers`]; other
//! systems state none of it and say so.

pub use super::imp::tiers::{facts, interleave_weight_file};
pub use crate::os::parse::tiers::{NodeFacts, TierFacts};
