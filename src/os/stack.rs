//! The main thread's stack. On Linux its size is the soft `ulimit -s` in force
//! (Linux grows it on demand up to the limit of the moment), and building
//! the command line alone takes about 90 KiB (clap's derived builders keep
//! every argument of every subcommand in one frame), so a limit of 64 KiB
//! aborted every command with a stack overflow, `--help` included. The
//! soft limit is raised towards the usual 8 MiB before anything else runs;
//! where the hard limit keeps it below what bwscope needs, that is said in
//! one line instead. (On Windows the stack is fixed when the program is
//! linked: nothing to raise.)

/// What bwscope is built and tested under: the default of most systems.
const WANT: u64 = 8 << 20;

/// Below this bwscope refuses to start: about three times the deepest
/// stack measured (the command line's builders, ≈ 90 KiB).
pub const NEED: u64 = 256 << 10;

/// Raise the soft stack limit to [`WANT`] where the hard limit allows
/// (no privilege needed); an error naming the limits when it stays below
/// [`NEED`].
pub fn ensure_room() -> Result<(), String> {
    let Some((soft, hard)) = super::imp::process::raise_stack_limit(WANT) else {
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
