//! Open files: how many this process holds and may hold. A server or a
//! fleet's rank 0 holds a descriptor per connection, so a low `ulimit -n`
//! is a limit on streams and ranks that should be said up front rather
//! than found as `accept` failing.

pub use super::imp::fds::{in_use, is_exhausted, limit, raise_limit};

/// Descriptors this process may still open: (free, limit); None without a
/// limit.
pub fn free() -> Option<(u64, u64)> {
    limit().map(|l| (l.saturating_sub(in_use()), l))
}
