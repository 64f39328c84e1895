//! The main thread's stack. Its size is the soft `ulimit -s` in force
//! (Linux grows it on demand up to the limit of the moment), and building
//! the command line alone takes about 90 KiB (clap's derived builders keep
//! every argument of every subcommand in one frame), so a limit of 64 KiB
//! aborted every command with a stack overflow, `--help` included. The
//! soft limit is raised towards the usual 8 MiB before anything else runs;
//! where the hard limit keeps it below what bwscope needs, that is said in
//! one line instead.

/// What bwscope is built and tested under: the default of most systems.
const WANT: u64 = 8 << 20;

/// Below this bwscope refuses to start: about three times the deepest
/// stack measured (the command line's builders, ≈ 90 KiB).
pub const NEED: u64 = 256 << 10;

/// Raise the soft stack limit to [`WANT`] where the hard limit allows
/// (no privilege needed); an error naming the limits when it stays below
/// [`NEED`].
pub fn ensure_room() -> Result<(), String> {
    let Some((soft, hard)) = raise_stack_limit(WANT) else {
        return Ok(()); // unlimited, or the limit cannot be read
    };
    if soft >= NEED {
        return Ok(());
    }
    let kib = |b: u64| b >> 10;
    let hard = hard.map_or("unlimited".into(), |h| format!("{} KiB", kib(h)));
    Err(format!(
        "ulimit -s: the stack limit is {} KiB (hard limit {hard}), below the {} KiB bwscope \
         needs; run it under ulimit -s {} or more",
        kib(soft),
        kib(NEED),
        kib(NEED)
    ))
}

/// Raise the soft `RLIMIT_STACK` to `want` (or to the hard limit, if
/// lower); the soft limit then in force and the hard one (None:
/// unlimited), or None when the soft limit is unlimited or unreadable.
fn raise_stack_limit(want: u64) -> Option<(u64, Option<u64>)> {
    // OS call: getrlimit/setrlimit(RLIMIT_STACK).
    // SAFETY: plain data, filled by getrlimit.
    let mut r: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: a valid rlimit to fill.
    if unsafe { libc::getrlimit(libc::RLIMIT_STACK, &mut r) } != 0
        || r.rlim_cur == libc::RLIM_INFINITY
    {
        return None;
    }
    let hard = (r.rlim_max != libc::RLIM_INFINITY).then_some(r.rlim_max);
    let target = hard.map_or(want, |h| h.min(want));
    if r.rlim_cur < target {
        let raised = libc::rlimit {
            rlim_cur: target,
            rlim_max: r.rlim_max,
        };
        // SAFETY: plain data; raising the soft limit up to the hard one
        // needs no privilege.
        if unsafe { libc::setrlimit(libc::RLIMIT_STACK, &raised) } == 0 {
            r.rlim_cur = target;
        }
    }
    Some((r.rlim_cur, hard))
}
