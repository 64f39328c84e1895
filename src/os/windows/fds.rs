//! Handles and sockets have no per-process limit a user sets on Windows
//! (the C runtime's 512 `FILE`s are not used): there is nothing to raise
//! and no count to report.

/// Nothing to raise.
pub fn raise_limit() {}

/// No limit.
pub fn limit() -> Option<u64> {
    None
}

/// Not counted (no limit makes it matter).
pub fn in_use() -> u64 {
    0
}

/// Is `e` the system out of sockets (WSAEMFILE, WSAENOBUFS)?
pub fn is_exhausted(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(10024) | Some(10055))
}
