//! SIGINT: the first Ctrl-C asks the run to stop after the current sample
//! and write every finished record; a second one kills (SA_RESETHAND puts
//! the default action back).

use std::sync::atomic::{AtomicBool, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigint(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// Install the handler; returns the flag suites poll between samples.
pub fn install() -> &'static AtomicBool {
    // SAFETY: the handler only stores to an atomic (async-signal-safe).
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_sigint as *const () as usize;
        sa.sa_flags = libc::SA_RESETHAND;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGINT, &sa, std::ptr::null_mut());
    }
    &STOP
}

/// The flag without installing anything (tests, library use).
pub fn flag() -> &'static AtomicBool {
    &STOP
}

pub fn stopped() -> bool {
    STOP.load(Ordering::Relaxed)
}
