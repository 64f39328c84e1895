//! The primitives of a team of worker processes: a region of memory the
//! team shares, a worker process that runs a function of this program
//! with the region mapped, a sleep on a word of the region until a worker
//! wakes the parent, and reaping.
//!
//! On Linux a worker is a fork that calls its entry directly. On Windows
//! it is this program started again with the region's name in its
//! environment: `main` hands it to [`run_if_worker`] before anything
//! else, which maps the region and calls the same entry.

/// A worker's work: runs in the worker process with the team's region
/// mapped; returns the worker's exit code.
pub type Entry = fn(region: &Region, index: usize) -> i32;

pub use super::imp::team::{run_if_worker, start_worker, Region, Worker, FORKS};
