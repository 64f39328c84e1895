//! stdout for tables and listings. A reader that goes away (`| head -1`)
//! ends the command quietly with status 0, like other Unix filters, instead
//! of the panic `print!` gives on a closed pipe; any other write error
//! (a full disk behind a redirection) is a one-line error, status 1.
//!
//! Everything here runs after the measuring is over (files are already
//! written), so ending the process at once loses nothing. Streaming output
//! during a run uses [`try_write`] and stops the run instead.

use std::io::{self, Write};

/// Write `text` to stdout, or end the process as described above. Text
/// can carry what others wrote (a run file, a fleet's node, firmware
/// strings), so control characters are shown as `�`: see [`printable`].
pub fn print(text: &str) {
    write_bytes(printable(text).as_bytes());
}

/// `s` with every control character but newline and tab, and every
/// bidirectional, zero-width or separator character, replaced by `�`,
/// one character for one so columns stay aligned: see
/// [`super::text::is_hostile`] for why each.
pub fn printable(s: &str) -> std::borrow::Cow<'_, str> {
    super::text::printable(s)
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

#[cfg(test)]
mod tests {
    #[test]
    fn printable_keeps_lines_and_tabs_and_replaces_escapes_one_for_one() {
        use super::printable;
        assert!(matches!(
            printable("a\tb\nc"),
            std::borrow::Cow::Borrowed(_)
        ));
        let hostile = "k\u{1b}]0;x\u{7}\u{1b}[2J\r\u{9b}1m\u{7f}";
        let p = printable(hostile);
        assert_eq!(p, "k�]0;x��[2J��1m�");
        assert_eq!(p.chars().count(), hostile.chars().count());
    }
}
