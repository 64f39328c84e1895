//! Small helpers with no better home: RNG, time stamps, size units.

pub mod cpulist;
pub mod rng;
pub mod signal;
pub mod units;
