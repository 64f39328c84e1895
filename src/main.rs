//! Thin entry: parse, dispatch, map errors to exit codes (see `error`).

use std::process::ExitCode;

fn main() -> ExitCode {
    // A worker of a process team started as a program of its own (Windows)
    // does its work and nothing else.
    if let Some(code) = bwscope::app::run_if_worker() {
        return ExitCode::from(code.clamp(0, 255) as u8);
    }
    // Before anything can panic: a bug says so in one line and never
    // hangs resolving a backtrace under `ulimit -v` (`app::panic`).
    bwscope::app::panic::install();
    // Before the command line is read and the host detected: a Ctrl-C or
    // SIGTERM in a run's first moments stops it instead of being lost
    // (issue 49, W7). A command that never asks whether to stop gives the
    // signals back in `app::dispatch`.
    bwscope::os::signal::install();
    // Before the command line is built: that alone needs more stack than
    // a tiny `ulimit -s` gives.
    if let Err(e) = bwscope::os::stack::ensure_room() {
        eprintln!("error: {e}");
        return ExitCode::from(bwscope::error::EXIT_USAGE);
    }
    let cli = bwscope::app::command::parse();
    match bwscope::app::dispatch(cli) {
        // A run stopped by SIGTERM/SIGHUP/a closed pipe exits 128 + that
        // signal, as if it had killed us (SIGINT: 130, unchanged).
        Ok(bwscope::error::EXIT_INTERRUPTED) => ExitCode::from(bwscope::os::signal::exit_code()),
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            // A closed pipe (`bwscope ... | head`) is not an error.
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
                return ExitCode::SUCCESS;
            }
            eprintln!("error: {:#}", e);
            ExitCode::from(bwscope::error::exit_code(&e))
        }
    }
}
