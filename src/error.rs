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
/// Interrupted by SIGINT; files hold every finished record.
pub const EXIT_INTERRUPTED: u8 = 130;

#[derive(Debug, Error)]
pub enum UserError {
    /// A flag value that cannot be used as given.
    #[error("{flag}: {message}")]
    BadFlag { flag: &'static str, message: String },

    #[error("cannot allocate {bytes} bytes: {detail}; ask for smaller sizes (--sizes) or fewer threads")]
    OutOfMemory { bytes: u64, detail: String },

    #[error("{flag}: the run needs {need} of memory but only {available} is available (MemAvailable); use smaller --sizes or fewer --threads")]
    NotEnoughMemory {
        flag: &'static str,
        need: String,
        available: String,
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
