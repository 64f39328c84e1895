//! The run context: what one invocation of bwscope hands to everything it
//! runs, built once by `dispatch` from the command line and the
//! environment and passed down as a value (ripgrep's `HiArgs`,
//! hyperfine's executor), never kept in a process static that whatever
//! ran earlier in the process could have set.
//!
//! - **The history** (`history::Settings`): where runs are recorded and
//!   read; every session opens the store it names.
//! - **The stop flag**: SIGINT, SIGTERM and SIGHUP (and a closed stdout)
//!   set it; measuring commands install the handlers through
//!   [`Context::stop`] before they measure. (The flag itself must be a
//!   static: a signal handler can reach nothing else.)
//! - **The spell probes** are not here but one level down: each run (a
//!   command, the survey, a watch's series of samples, a fleet node's
//!   run) makes its own `measure::probe::SpellProbes` in its `Recorder`,
//!   so a record is judged by its own run's readings.

use std::sync::atomic::AtomicBool;

use super::history::Settings;
use crate::cli::Cli;

/// What one invocation carries (see the module docs).
#[derive(Debug, Clone)]
pub struct Context {
    pub history: Settings,
}

impl Context {
    /// From the parsed command line (and `BWSCOPE_HISTORY`).
    pub fn of(cli: &Cli) -> Context {
        Context {
            history: Settings::of(cli),
        }
    }

    /// A context with the history at `history` (tests, library callers).
    pub fn with_history(history: Settings) -> Context {
        Context { history }
    }

    /// The stop flag, with the handlers installed (idempotent).
    pub fn stop(&self) -> &'static AtomicBool {
        crate::os::signal::install()
    }
}
