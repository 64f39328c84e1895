//! Stop signals: SIGINT (Ctrl-C), SIGTERM (`timeout`, systemd, `docker
//! stop`, CI runners, Slurm) and SIGHUP (a closed terminal) all ask the run
//! to stop after the current sample and write every finished record; the
//! exit code is then 128 + the signal, as if the signal had killed us, so a
//! caller still sees which one it was. A second signal of the same kind
//! kills at once (SA_RESETHAND puts the default action back).
//!
//! A reader that closes our stdout (`| head`) stops a streaming run the same
//! way, as SIGPIPE ([`request_stop`]).

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);
/// The first signal that asked to stop (0 = none yet).
static WHICH: AtomicI32 = AtomicI32::new(0);
/// How many stop requests came, so a wait that began after the first one
/// (writing the results of a stopped run into a FIFO) can still end on
/// the next.
static COUNT: AtomicU32 = AtomicU32::new(0);

/// The signals that stop a run gracefully.
pub const STOP_SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

extern "C" fn on_signal(sig: libc::c_int) {
    // Only atomics: async-signal-safe.
    let _ = WHICH.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
    STOP.store(true, Ordering::SeqCst);
    COUNT.fetch_add(1, Ordering::SeqCst);
}

/// Stop requests so far (signals and [`request_stop`]).
pub fn count() -> u32 {
    COUNT.load(Ordering::SeqCst)
}

/// Install the handlers; returns the flag suites poll between samples.
pub fn install() -> &'static AtomicBool {
    for sig in STOP_SIGNALS {
        // SAFETY: the handler only stores to atomics (async-signal-safe);
        // the sigaction struct is fully initialised.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as usize;
            sa.sa_flags = libc::SA_RESETHAND;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
    &STOP
}

/// A file that reaches `ulimit -f` makes the kernel send SIGXFSZ, whose
/// default action kills the process mid-write (a CSV cut mid-row, the JSON
/// stale). Ignored, the write fails with EFBIG instead, and the run ends
/// as on a full disk: every finished record kept, the run marked
/// incomplete with the reason.
pub fn survive_file_size_limit() {
    // SAFETY: setting a signal's disposition to SIG_IGN has no preconditions.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}

/// The flag without installing anything (tests, library use).
pub fn flag() -> &'static AtomicBool {
    &STOP
}

pub fn stopped() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// Ask the run to stop as if `sig` had arrived (a closed stdout: SIGPIPE).
pub fn request_stop(sig: libc::c_int) {
    on_signal(sig);
}

/// The signal that stopped the run, if any.
pub fn received() -> Option<libc::c_int> {
    match WHICH.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// The exit code of a stopped run: 128 + the signal (130 for SIGINT, 143
/// for SIGTERM, 129 for SIGHUP, 141 for a closed pipe); 130 when the run
/// stopped without a recorded signal.
pub fn exit_code() -> u8 {
    code_for(received())
}

fn code_for(sig: Option<libc::c_int>) -> u8 {
    sig.map_or(130, |s| (128 + s.clamp(1, 127)) as u8)
}

/// A signal's conventional name, for messages.
pub fn name(sig: libc::c_int) -> &'static str {
    match sig {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        libc::SIGPIPE => "SIGPIPE (stdout closed)",
        _ => "a signal",
    }
}

#[cfg(test)]
mod tests {
    // The flag is process-wide, so only the pure part is tested here; the
    // signals themselves are sent to the binary in tests/robustness.rs.
    #[test]
    fn codes_follow_the_shell_convention() {
        assert_eq!(super::code_for(None), 130);
        assert_eq!(super::code_for(Some(libc::SIGINT)), 130);
        assert_eq!(super::code_for(Some(libc::SIGTERM)), 143);
        assert_eq!(super::code_for(Some(libc::SIGHUP)), 129);
        assert_eq!(super::code_for(Some(libc::SIGPIPE)), 141);
    }
}
