//! Descriptors: `RLIMIT_NOFILE` and `/proc/self/fd`.

/// Lift the soft limit on open files (often 1024) to the hard one; no
/// privilege needed.
pub fn raise_limit() {
    // SAFETY: plain data in and out of getrlimit/setrlimit.
    unsafe {
        let mut r: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) == 0 && r.rlim_cur < r.rlim_max {
            r.rlim_cur = r.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &r);
        }
    }
}

/// The soft limit on open files (`ulimit -n`); None when unlimited.
pub fn limit() -> Option<u64> {
    // SAFETY: plain data filled by getrlimit.
    let mut r: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: a valid rlimit to fill.
    (unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } == 0
        && r.rlim_cur != libc::RLIM_INFINITY)
        .then_some(r.rlim_cur)
}

/// Descriptors open now (the entries of /proc/self/fd, less the one the
/// listing itself holds).
pub fn in_use() -> u64 {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count().saturating_sub(1) as u64)
}

/// Is `e` the process (EMFILE) or the system (ENFILE) out of descriptors?
pub fn is_exhausted(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EMFILE) | Some(libc::ENFILE))
}

#[cfg(test)]
mod tests {
    /// Other tests of this process open and close files at the same time,
    /// so the count is never compared before and after: only with what is
    /// certainly open while it is taken (the three standard descriptors
    /// and 64 of this test's own), and with the limit.
    #[test]
    fn counts_are_sane() {
        let f = std::fs::File::open("/proc/self/status").unwrap();
        let mine: Vec<std::fs::File> = (0..64).map(|_| f.try_clone().unwrap()).collect();
        let n = super::in_use();
        assert!(n >= 3 + 1 + mine.len() as u64, "{n}");
        if let Some(lim) = super::limit() {
            assert!(n <= lim, "{n} > {lim}");
        }
        if let Some((free, lim)) = crate::os::fds::free() {
            assert!(free <= lim);
        }
        drop(mine);
        assert!(super::is_exhausted(&std::io::Error::from_raw_os_error(
            libc::EMFILE
        )));
        assert!(!super::is_exhausted(&std::io::Error::from_raw_os_error(
            libc::ENOENT
        )));
    }
}
