//! Descriptors: `RLIMIT_NOFILE` and `/dev/fd`.

/// Lift the soft limit on open files (256 by default on macOS) towards
/// the hard one; no privilege needed. macOS refuses a soft limit above
/// `kern.maxfilesperproc` (the hard limit is often "unlimited", which
/// setrlimit rejects with EINVAL: Apple's setrlimit(2) "COMPATIBILITY"),
/// so the target is the lower of the two.
pub fn raise_limit() {
    let per_proc = super::sysctl_int("kern.maxfilesperproc").unwrap_or(10240);
    // SAFETY: plain data in and out of getrlimit/setrlimit.
    unsafe {
        let mut r: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) == 0 {
            let target = r.rlim_max.min(per_proc);
            if r.rlim_cur < target {
                r.rlim_cur = target;
                libc::setrlimit(libc::RLIMIT_NOFILE, &r);
            }
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

/// Descriptors open now (the entries of /dev/fd, less the one the listing
/// itself holds).
pub fn in_use() -> u64 {
    std::fs::read_dir("/dev/fd").map_or(0, |d| d.count().saturating_sub(1) as u64)
}

/// Is `e` the process (EMFILE) or the system (ENFILE) out of descriptors?
pub fn is_exhausted(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EMFILE) | Some(libc::ENFILE))
}
