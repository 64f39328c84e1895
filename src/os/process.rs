//! Processes: this one's limits and parent, other processes' CPU time
//! (the noise figure), the children this one started, and whether a
//! process that wrote something still runs.

pub use super::imp::process::{
    address_space_left, children, lock_room, others_cpu_ns, parent_pid, start_time,
};

/// How much more this process may lock in memory (`mlock`,
/// `VirtualLock`): its limit and what it has locked already; None when no
/// limit applies (none set, or the privilege to exceed it held).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockRoom {
    pub limit: u64,
    pub locked: u64,
}
