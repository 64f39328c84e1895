//! The console's control events: Ctrl-C stops a run as SIGINT does
//! (exit 130), Ctrl-Break and a logoff or shutdown as SIGTERM (143), a
//! closed console window as SIGHUP (129). A second event of the same kind
//! is left to the default handler, which ends the process at once.

use std::sync::atomic::{AtomicU32, Ordering};

use windows_sys::core::BOOL;
use windows_sys::Win32::System::Console::{
    SetConsoleCtrlHandler, CTRL_BREAK_EVENT, CTRL_CLOSE_EVENT, CTRL_C_EVENT, CTRL_LOGOFF_EVENT,
    CTRL_SHUTDOWN_EVENT,
};

use crate::os::signal::{note, raise_flag, Stop};

/// Events of each kind handled so far (bit per kind: handled once).
static SEEN: AtomicU32 = AtomicU32::new(0);
/// Termination requests only raise the flag (the fleet's rule).
static TERMINATE_FLAG_ONLY: AtomicU32 = AtomicU32::new(0);

unsafe extern "system" fn on_event(kind: u32) -> BOOL {
    let why = match kind {
        CTRL_C_EVENT => Stop::Interrupt,
        CTRL_CLOSE_EVENT => Stop::Hangup,
        CTRL_BREAK_EVENT | CTRL_LOGOFF_EVENT | CTRL_SHUTDOWN_EVENT => Stop::Terminate,
        _ => return 0,
    };
    let bit = 1u32 << kind.min(31);
    if SEEN.fetch_or(bit, Ordering::SeqCst) & bit != 0 {
        // The second of its kind: the default handler ends the process.
        return 0;
    }
    if why == Stop::Terminate && TERMINATE_FLAG_ONLY.load(Ordering::SeqCst) != 0 {
        raise_flag();
    } else {
        note(why);
    }
    // Handled: the run stops after its current sample. (A closed window
    // gives the process a few seconds before Windows ends it.)
    1
}

pub fn install() {
    // SAFETY: a handler that only touches atomics.
    unsafe { SetConsoleCtrlHandler(Some(on_event), 1) };
}

/// Leave the console's events to the default handler again.
pub fn uninstall() {
    // SAFETY: removes the handler `install` added (a no-op without one).
    unsafe { SetConsoleCtrlHandler(Some(on_event), 0) };
}

pub fn terminate_raises_flag_only() {
    TERMINATE_FLAG_ONLY.store(1, Ordering::SeqCst);
}

/// No file size signal exists here: a write past a quota just fails.
pub fn survive_file_size_limit() {}
