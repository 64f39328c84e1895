//! Small helpers with no better home: RNG, time stamps, size units.

pub mod rng;
pub mod signal;
pub mod time;
pub mod units;
