//! Errors a user can fix. Each names the flag or the cause and says what to
//! do; `main` prints it on one line and exits with [`EXIT_USAGE`].
//!
//! Anything else (an `anyhow::Error` without a `UserError` inside) is an
//! internal failure and exits with [`EXIT_FAILURE`].

use thiserror::Error;

/// Everything measured was written and nothing went wrong.
pub const EXIT_OK: u8 = 0;
/// An internal failure (a bug, an unexpected OS error).
pub const EXIT_FAILURE: u8 = 1;
/// Bad input: a flag, a file, a size; the message says what to change.
pub const EXIT_USAGE: u8 = 2;
/// Stopped by SIGINT; files hold every finished record. SIGTERM, SIGHUP
/// and a closed stdout stop the same way and exit 128 + their number
/// (`main` maps this code through `util::signal::exit_code`).
pub const EXIT_INTERRUPTED: u8 = 130;

#[derive(Debug, Error)]
pub enum UserError {
    /// A flag value that cannot be used as given.
    #[error("{flag}: {message}")]
    BadFlag { flag: &'static str, message: String },

    #[error("cannot allocate {bytes} bytes: {detail}; ask for less memory (smaller sizes or fewer threads)")]
    OutOfMemory { bytes: u64, detail: String },

    /// The rule: a run may use at most 90 % of MemAvailable, so the rest of
    /// the system keeps room and the OOM killer never gets a say.
    #[error("{flag}: the run needs {need} of memory, more than the {limit} bwscope allows itself (90 % of the {available} available now, MemAvailable); {hint}")]
    NotEnoughMemory {
        flag: &'static str,
        need: String,
        limit: String,
        available: String,
        /// What to change, naming only flags the command has.
        hint: &'static str,
    },

    #[error("cannot write {path}: {detail}; choose a writable path")]
    Unwritable { path: String, detail: String },

    #[error("{path}: {problem}")]
    BadInput { path: String, problem: String },
}

impl UserError {
    pub fn flag(flag: &'static str, message: impl Into<String>) -> UserError {
        UserError::BadFlag {
            flag,
            message: message.into(),
        }
    }
}

/// The exit code an error maps to.
pub fn exit_code(err: &anyhow::Error) -> u8 {
    if err.chain().any(|e| e.downcast_ref::<UserError>().is_some())
        || err
            .chain()
            .any(|e| e.downcast_ref::<crate::util::units::SizeError>().is_some())
    {
        EXIT_USAGE
    } else {
        EXIT_FAILURE
    }
}
