//! POSIX signals: SIGINT, SIGTERM and SIGHUP stop a run; SA_RESETHAND puts
//! the default action back, so a second one of the same kind kills.

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

fn handle(sig: libc::c_int, handler: extern "C" fn(libc::c_int)) {
    // SAFETY: the handler only stores to atomics (async-signal-safe); the
    // sigaction struct is fully initialised.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = handler as *const () as usize;
        sa.sa_flags = libc::SA_RESETHAND;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(sig, &sa, std::ptr::null_mut());
    }
}

pub fn install() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        handle(sig, on_signal);
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
