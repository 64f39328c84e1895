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
/// A judgement that had too few clean figures to say anything
/// (`history --check` with no case that has enough clean runs): neither
/// "ok" nor "stepped".
pub const EXIT_NOT_JUDGED: u8 = 4;
/// Stopped by SIGINT; files hold every finished record. SIGTERM, SIGHUP
/// and a closed stdout stop the same way and exit 128 + their number
/// (`main` maps this code through `os::signal::exit_code`).
pub const EXIT_INTERRUPTED: u8 = 130;

#[derive(Debug, Error)]
pub enum UserError {
    /// A flag value that cannot be used as given.
    #[error("{flag}: {message}")]
    BadFlag { flag: &'static str, message: String },

    /// `detail` carries the address-space limit when one is set, `hint`
    /// what to change (the survey's differs from a suite's).
    #[error("cannot allocate {bytes} bytes: {detail}; {hint}")]
    OutOfMemory {
        bytes: u64,
        detail: String,
        hint: &'static str,
    },

    /// The address-space rule: a run needing more than the process may
    /// still map under `ulimit -v`/`-d` is refused before it allocates
    /// (it used to fail at the first large buffer).
    #[error("{flag}: the run needs {need} of address space, more than the {left} this process may still map under its limit ({limit}, `ulimit -v`/`ulimit -d`); {hint}, or raise the limit")]
    AddressSpace {
        flag: &'static str,
        need: String,
        left: String,
        limit: String,
        hint: &'static str,
    },

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

/// What to change when memory runs out, for a command with sizes and
/// threads.
pub const LESS_MEMORY: &str = "ask for less memory (smaller sizes or fewer threads)";

impl UserError {
    /// The same memory refusal with another hint and flag (the survey has
    /// neither --sizes nor --threads); other errors unchanged.
    pub fn with_memory_hint(self, flag: &'static str, hint: &'static str) -> UserError {
        match self {
            UserError::OutOfMemory { bytes, detail, .. } => UserError::OutOfMemory {
                bytes,
                detail,
                hint,
            },
            UserError::NotEnoughMemory {
                need,
                limit,
                available,
                ..
            } => UserError::NotEnoughMemory {
                flag,
                need,
                limit,
                available,
                hint,
            },
            UserError::AddressSpace {
                need, left, limit, ..
            } => UserError::AddressSpace {
                flag,
                need,
                left,
                limit,
                hint,
            },
            other => other,
        }
    }

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
