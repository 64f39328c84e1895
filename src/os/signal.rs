//! Stop requests: Ctrl-C, a termination request (`timeout`, systemd,
//! `docker stop`, CI runners, Slurm) and a closed terminal all ask the run
//! to stop after the current sample and write every finished record; the
//! exit code is then 128 + the signal's number on Linux (130, 143, 129),
//! as if the signal had killed us, so a caller still sees which one it
//! was. A second request of the same kind kills at once.
//!
//! A reader that closes our stdout (`| head`) stops a streaming run the
//! same way ([`request_stop`] with [`Stop::ClosedPipe`], exit 141).
//!
//! The state is three atomics, the only thing a handler touches
//! (async-signal-safe); the system's part (`imp::signal`) installs the
//! handlers and maps its signals onto [`Stop`].

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU8, Ordering};

/// Why a run was asked to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Ctrl-C (SIGINT).
    Interrupt,
    /// A termination request (SIGTERM).
    Terminate,
    /// The terminal went away (SIGHUP).
    Hangup,
    /// The reader of stdout closed it (SIGPIPE).
    ClosedPipe,
}

impl Stop {
    const ALL: [Stop; 4] = [
        Stop::Interrupt,
        Stop::Terminate,
        Stop::Hangup,
        Stop::ClosedPipe,
    ];

    /// The exit code of a run stopped this way: 128 + the signal, the
    /// shell's convention for a process a signal ended.
    pub fn exit_code(self) -> u8 {
        match self {
            Stop::Interrupt => 130,
            Stop::Terminate => 143,
            Stop::Hangup => 129,
            Stop::ClosedPipe => 141,
        }
    }

    /// Its conventional name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Stop::Interrupt => "SIGINT",
            Stop::Terminate => "SIGTERM",
            Stop::Hangup => "SIGHUP",
            Stop::ClosedPipe => "SIGPIPE (stdout closed)",
        }
    }

    fn from_code(code: u8) -> Option<Stop> {
        Stop::ALL.into_iter().find(|s| s.exit_code() == code)
    }
}

static STOP: AtomicBool = AtomicBool::new(false);
/// The exit code of the first request that asked to stop (0 = none yet).
static WHICH: AtomicU8 = AtomicU8::new(0);
/// How many stop requests came, so a wait that began after the first one
/// (writing the results of a stopped run into a FIFO) can still end on
/// the next.
static COUNT: AtomicU32 = AtomicU32::new(0);

/// Note a stop request. Only atomics: safe inside a signal handler.
pub(super) fn note(why: Stop) {
    let _ = WHICH.compare_exchange(0, why.exit_code(), Ordering::SeqCst, Ordering::SeqCst);
    STOP.store(true, Ordering::SeqCst);
    COUNT.fetch_add(1, Ordering::SeqCst);
}

/// Raise only the flag (the fleet's termination request; see
/// [`install_for_fleet`]). Safe inside a signal handler.
pub(super) fn raise_flag() {
    STOP.store(true, Ordering::SeqCst);
}

/// Stop requests so far (signals and [`request_stop`]).
pub fn count() -> u32 {
    COUNT.load(Ordering::SeqCst)
}

/// Install the handlers; returns the flag suites poll between samples.
pub fn install() -> &'static AtomicBool {
    super::imp::signal::install();
    &STOP
}

/// Give the stop signals back the action the process started with, for a
/// command that never asks whether to stop (`report`, `history`, …: a
/// Ctrl-C ends it at once, as for any filter). `main` installs the
/// handlers before anything else, so a request in a measuring command's
/// first moments is not lost (W7: one in `watch`'s first 0.1 s was, while
/// the host was read); a command that does not poll hands them back here
/// and gets the request that already came, if any, to end on.
pub fn uninstall() -> Option<Stop> {
    super::imp::signal::uninstall();
    received()
}

/// [`install`], except that a termination request (what `mpirun` and
/// `srun` send when they are interrupted) only raises the flag: a fleet
/// stops the same orderly way for it and for Ctrl-C, and exits 130 for
/// both (docs/fleet.md).
pub fn install_for_fleet() -> &'static AtomicBool {
    super::imp::signal::install();
    super::imp::signal::terminate_raises_flag_only();
    &STOP
}

/// A file that reaches its size limit (`ulimit -f`) must fail the write
/// instead of killing the process mid-write (a CSV cut mid-row, the JSON
/// stale); the run then ends as on a full disk: every finished record
/// kept, the run marked incomplete with the reason.
pub fn survive_file_size_limit() {
    super::imp::signal::survive_file_size_limit();
}

/// The flag without installing anything (tests, library use).
pub fn flag() -> &'static AtomicBool {
    &STOP
}

pub fn stopped() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// Ask the run to stop as if `why` had come (a closed stdout).
pub fn request_stop(why: Stop) {
    note(why);
}

/// What stopped the run, if anything did.
pub fn received() -> Option<Stop> {
    Stop::from_code(WHICH.load(Ordering::SeqCst))
}

/// The exit code of a stopped run (130 when it stopped without a recorded
/// cause).
pub fn exit_code() -> u8 {
    code_for(received())
}

fn code_for(why: Option<Stop>) -> u8 {
    why.map_or(130, Stop::exit_code)
}

#[cfg(test)]
mod tests {
    use super::Stop;

    // The flag is process-wide, so only the pure part is tested here; the
    // signals themselves are sent to the binary in tests/robustness.rs.
    #[test]
    fn codes_follow_the_shell_convention() {
        assert_eq!(super::code_for(None), 130);
        assert_eq!(super::code_for(Some(Stop::Interrupt)), 130);
        assert_eq!(super::code_for(Some(Stop::Terminate)), 143);
        assert_eq!(super::code_for(Some(Stop::Hangup)), 129);
        assert_eq!(super::code_for(Some(Stop::ClosedPipe)), 141);
        for s in Stop::ALL {
            assert_eq!(Stop::from_code(s.exit_code()), Some(s));
        }
        assert_eq!(Stop::from_code(0), None);
    }
}
