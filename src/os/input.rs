//! Reading a small input file that someone else may have put there: a run,
//! a token, a reference file, a rendezvous note.
//!
//! The file is opened first and checked on the open descriptor (`fstat`),
//! so it cannot be swapped between the check and the read; the open never
//! waits (`O_NONBLOCK`: a FIFO without a writer would otherwise block
//! `open()` until one comes, and a signal with it); anything but a regular
//! file is refused; at most `max` bytes are read, however large the file
//! is or grows while it is read.

use std::fs::File;
use std::io::Read;
use std::path::Path;

/// Why a file was not read.
#[derive(Debug)]
pub enum InputError {
    /// `open`/`fstat`/`read` failed (missing, no permission, a symlink
    /// where none may be followed: [`crate::os::fs::is_link_refused`]).
    Io(std::io::Error),
    Directory,
    /// A device, FIFO or socket.
    NotRegular,
    /// Larger than the cap (from `fstat`, or more bytes than it said).
    TooLarge {
        max: u64,
    },
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            InputError::Io(e) => write!(f, "cannot read: {e}"),
            InputError::Directory => write!(f, "is a directory"),
            InputError::NotRegular => {
                write!(f, "is not a regular file (a device, FIFO or socket)")
            }
            InputError::TooLarge { max } => write!(f, "is larger than {max} bytes"),
        }
    }
}

/// How to open.
#[derive(Debug, Clone, Copy)]
pub struct Rules {
    /// Most bytes accepted.
    pub max: u64,
    /// Follow a symlink at the path (`false`: a link is refused, ELOOP).
    pub follow: bool,
}

/// The file's bytes and who may touch it, read from one descriptor.
pub fn read_regular(path: &Path, rules: Rules) -> Result<(Vec<u8>, super::fs::Facts), InputError> {
    let f: File = super::imp::fs::open_for_input(path, rules.follow).map_err(InputError::Io)?;
    let m = f.metadata().map_err(InputError::Io)?;
    if m.is_dir() {
        return Err(InputError::Directory);
    }
    if !m.is_file() {
        return Err(InputError::NotRegular);
    }
    if m.len() > rules.max {
        return Err(InputError::TooLarge { max: rules.max });
    }
    let mut buf = Vec::with_capacity(m.len() as usize);
    (&f).take(rules.max + 1)
        .read_to_end(&mut buf)
        .map_err(InputError::Io)?;
    if buf.len() as u64 > rules.max {
        return Err(InputError::TooLarge { max: rules.max });
    }
    let facts = super::imp::fs::facts(&f).map_err(InputError::Io)?;
    Ok((buf, facts))
}

/// Most bytes [`read_small_text`] reads: a sysfs attribute is one page.
pub const MAX_SMALL_TEXT: u64 = 64 << 10;

/// The text of a small file (a sysfs attribute, or a fixture tree's copy
/// of one named by a variable such as `BWSCOPE_SYSFS_PCI_ROOT`), read as
/// [`read_regular`] reads; None when it cannot be read, is not a regular
/// file, is larger than [`MAX_SMALL_TEXT`] or is not UTF-8.
pub fn read_small_text(path: &Path) -> Option<String> {
    let rules = Rules {
        max: MAX_SMALL_TEXT,
        follow: true,
    };
    String::from_utf8(read_regular(path, rules).ok()?.0).ok()
}

/// The bytes with a UTF-8 byte-order mark at the start removed: editors on
/// some systems write one, and it means nothing to a JSON reader but "not
/// JSON".
pub fn strip_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    const R: Rules = Rules {
        max: 16,
        follow: true,
    };

    #[test]
    fn regular_small_files_only() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        std::fs::write(&p, b"0123456789").unwrap();
        assert_eq!(read_regular(&p, R).unwrap().0, b"0123456789");
        std::fs::write(&p, [b'x'; 17]).unwrap();
        assert!(matches!(
            read_regular(&p, R),
            Err(InputError::TooLarge { max: 16 })
        ));
        assert!(matches!(
            read_regular(d.path(), R),
            Err(InputError::Directory)
        ));
        if Path::new("/dev/zero").exists() {
            assert!(matches!(
                read_regular(Path::new("/dev/zero"), R),
                Err(InputError::NotRegular)
            ));
        }
        // A FIFO without a writer: refused at once, not waited on.
        let fifo = d.path().join("fifo");
        match crate::os::fs::make_fifo(&fifo) {
            Ok(()) => assert!(matches!(
                read_regular(&fifo, R),
                Err(InputError::NotRegular)
            )),
            Err(e) if e.kind() == std::io::ErrorKind::Unsupported => {
                eprintln!("no FIFOs here ({e}): that case is not tested")
            }
            Err(e) => panic!("{e}"),
        }
        // A link is followed only when asked.
        let l = d.path().join("l");
        std::fs::write(&p, b"ok").unwrap();
        crate::os::fs::symlink(&p, &l).unwrap();
        if crate::os::system::emulator().is_some() {
            eprintln!("links are not tested under an emulator (wine stores a Windows target in a Unix link)");
            return;
        }
        assert!(read_regular(&l, R).is_ok());
        let no = Rules { follow: false, ..R };
        assert!(matches!(read_regular(&l, no), Err(InputError::Io(_))));
    }

    #[test]
    fn bom_is_stripped_once() {
        assert_eq!(strip_bom(b"\xEF\xBB\xBF{}"), b"{}");
        assert_eq!(strip_bom(b"{}"), b"{}");
        assert_eq!(strip_bom(b"\xEF\xBB"), b"\xEF\xBB");
    }
}
