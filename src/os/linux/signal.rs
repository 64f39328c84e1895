//! POSIX signals: SIGINT, SIGTERM and SIGHUP stop a run; SA_RESETHAND puts
//! the default action back, so a second one of the same kind kills.

use std::sync::atomic::{AtomicU8, Ordering};

use crate::os::signal::{note, raise_flag, Stop};

extern "C" fn on_signal(sig: libc::c_int) {
    let why = match sig {
        libc::SIGINT => Stop::Interrupt,
        libc::SIGTERM => Stop::Terminate,
        libc::SIGHUP => Stop::Hangup,
        _ => Stop::ClosedPipe,
    };
    note(why);
}

extern "C" fn on_flag_only(_: libc::c_int) {
    raise_flag();
}

/// The stop signals, in the order of [`IGNORED`]'s bits.
const STOPS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Which of [`STOPS`] the process was started with ignored (a shell's
/// background job ignores SIGINT), read at the first install, so
/// [`uninstall`] puts back what was there; bit 3: read.
static IGNORED: AtomicU8 = AtomicU8::new(0);
const READ: u8 = 1 << 3;

fn handle(sig: libc::c_int, handler: extern "C" fn(libc::c_int)) {
    // SAFETY: the handler only stores to atomics (async-signal-safe); the
    // sigaction structs are fully initialised.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = handler as *const () as usize;
        sa.sa_flags = libc::SA_RESETHAND;
        libc::sigemptyset(&mut sa.sa_mask);
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, &sa, &mut old);
        if IGNORED.load(Ordering::SeqCst) & READ == 0 && old.sa_sigaction == libc::SIG_IGN {
            if let Some(i) = STOPS.iter().position(|&s| s == sig) {
                IGNORED.fetch_or(1 << i, Ordering::SeqCst);
            }
        }
    }
}

pub fn install() {
    for sig in STOPS {
        handle(sig, on_signal);
    }
    IGNORED.fetch_or(READ, Ordering::SeqCst);
}

/// Put back the dispositions the process started with.
pub fn uninstall() {
    let ignored = IGNORED.load(Ordering::SeqCst);
    for (i, sig) in STOPS.into_iter().enumerate() {
        let back = if ignored & (1 << i) != 0 {
            libc::SIG_IGN
        } else {
            libc::SIG_DFL
        };
        // SAFETY: setting a standard disposition has no preconditions.
        unsafe { libc::signal(sig, back) };
    }
}

pub fn terminate_raises_flag_only() {
    handle(libc::SIGTERM, on_flag_only);
}

/// SIGXFSZ ignored: a write past `ulimit -f` fails with EFBIG instead.
pub fn survive_file_size_limit() {
    // SAFETY: setting a signal's disposition to SIG_IGN has no preconditions.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}
