//! The primitives of a team of worker processes: start a worker that runs
//! a function of this program and leaves without returning into the
//! parent's code, reap it, and sleep on a word of shared memory until a
//! worker wakes the parent.

pub use super::imp::team::{start_worker, wait_word, wake_word, Worker};
