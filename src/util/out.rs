//! stdout for tables and listings. A reader that goes away (`| head -1`)
//! ends the command quietly with status 0, like other Unix filters, instead
//! of the panic `print!` gives on a closed pipe; any other write error
//! (a full disk behind a redirection) is a one-line error, status 1.
//!
//! Everything here runs after the measuring is over (files are already
//! written), so ending the process at once loses nothing. Streaming output
//! during a run uses [`try_write`] and stops the run instead.

use std::io::{self, Write};

/// Write `text` to stdout, or end the process as described above.
pub fn print(text: &str) {
    write_bytes(text.as_bytes());
}

/// Write `bytes` to stdout, or end the process as described above.
pub fn write_bytes(bytes: &[u8]) {
    if let Err(e) = try_write(bytes) {
        gone(&e);
    }
}

/// Write and flush, handing any error back (the sink turns a closed pipe
/// into a stop request so files still get every finished record).
pub fn try_write(bytes: &[u8]) -> io::Result<()> {
    let mut o = io::stdout().lock();
    o.write_all(bytes)?;
    o.flush()
}

/// True when `e` means the reader closed the pipe.
pub fn is_closed_pipe(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe
}

fn gone(e: &io::Error) -> ! {
    if is_closed_pipe(e) {
        std::process::exit(0);
    }
    eprintln!("error: cannot write to stdout: {e}");
    std::process::exit(1);
}
