//! Planning helpers every suite shares, one layer below the suites: which
//! cpus a run uses and in what order, whether its memory fits, and the
//! sweep's sizes and kernel lists derived from the host. They read the
//! host and never a suite, so no suite depends on a sibling for them.

pub mod classes;
pub mod cpus;
pub mod pairs;
pub mod sizes;
