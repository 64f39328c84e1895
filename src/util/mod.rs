//! Small helpers with no better home: RNG, size units, cpu lists, stdout
//! that survives a closed pipe. (Everything that calls the system —
//! signals, descriptors, input files — is in `os`.)

pub mod cpulist;
pub mod date;
pub mod out;
pub mod rng;
pub mod text;
pub mod units;
