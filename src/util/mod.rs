//! Small helpers with no better home: RNG, size units, cpu lists, stop
//! signals, stdout that survives a closed pipe.

pub mod cpulist;
pub mod out;
pub mod rng;
pub mod signal;
pub mod units;
