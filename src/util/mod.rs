//! Small helpers with no better home: RNG, size units, cpu lists, stop
//! signals, stdout that survives a closed pipe, small input files read
//! without waiting or growing, room on the main thread's stack.

pub mod cpulist;
pub mod fds;
pub mod input;
pub mod out;
pub mod rng;
pub mod signal;
pub mod stack;
pub mod units;
