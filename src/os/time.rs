//! Clocks: one monotonic clock every worker stamps (threads and forked
//! processes alike, so their stamps compare), and CPU-time clocks of
//! processes.

pub use super::imp::time::{now_ns, process_cpu_ns, self_cpu_ns};
