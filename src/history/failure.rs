//! What went wrong with the store: a cause, which decides the advice
//! (`StoreProblem::advice`), and the reason in words. SQLite's terse codes
//! are told apart here, since the same "disk I/O error" can be a full
//! disk, and "unable to open" a read-only mount or another user's file.

use std::path::Path;

use rusqlite::Connection;

use crate::model::{StoreProblem, Warning};

/// Why the store was not used.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub cause: StoreProblem,
    pub reason: String,
}

impl Failure {
    pub fn new(cause: StoreProblem, reason: impl Into<String>) -> Failure {
        Failure {
            cause,
            reason: reason.into(),
        }
    }

    /// The warning naming the store at `path`.
    pub fn warning(self, path: &Path) -> Warning {
        Warning::HistoryIgnored {
            path: path.display().to_string(),
            reason: self.reason,
            cause: self.cause,
        }
    }

    /// SQLite's error `e` on the store at `path`, with what it means for
    /// the user; `conn`, where there is one, tells what the system said
    /// behind an I/O error.
    pub fn sql(e: &rusqlite::Error, conn: Option<&Connection>, path: &Path) -> Failure {
        use rusqlite::ErrorCode as C;
        let (cause, what) = match e.sqlite_error_code() {
            Some(C::NotADatabase) | Some(C::DatabaseCorrupt) => (
                StoreProblem::Corrupt,
                "it is corrupt or not a bwscope store",
            ),
            Some(C::DatabaseBusy) | Some(C::DatabaseLocked) => (
                StoreProblem::Locked,
                "another process held it locked past the wait",
            ),
            Some(C::DiskFull) => (StoreProblem::DiskFull, "the disk is full"),
            Some(C::ReadOnly) | Some(C::CannotOpen) | Some(C::PermissionDenied) => unwritable(path),
            Some(C::SystemIoFailure) => match conn.and_then(system_error) {
                Some(k) if is_full(k) => (StoreProblem::DiskFull, "the disk is full"),
                Some(std::io::ErrorKind::ReadOnlyFilesystem) => unwritable(path),
                _ => (StoreProblem::Other, "SQLite failed on it"),
            },
            _ => (StoreProblem::Other, "SQLite failed on it"),
        };
        Failure::new(cause, format!("{what} ({e})"))
    }

    /// A file-system error `e` met while `doing` something to the store
    /// at `path` (opening, creating, making its folder).
    pub fn io(e: &std::io::Error, doing: &str, path: &Path) -> Failure {
        use std::io::ErrorKind as K;
        let cause = match e.kind() {
            K::ReadOnlyFilesystem => StoreProblem::ReadOnlyMount,
            K::PermissionDenied => StoreProblem::NotWritable,
            k if is_full(k) => StoreProblem::DiskFull,
            _ if doing.contains("folder") => StoreProblem::NoFolder,
            _ => {
                if crate::os::fs::is_link_refused(e) {
                    StoreProblem::Link
                } else {
                    unwritable(path).0
                }
            }
        };
        let reason = match cause {
            StoreProblem::ReadOnlyMount => {
                format!("it is on a read-only file system ({doing}: {e})")
            }
            StoreProblem::DiskFull => format!("the disk is full ({doing}: {e})"),
            _ => format!("{doing}: {e}"),
        };
        Failure::new(cause, reason)
    }
}

/// A full disk or quota, as the system reports it.
fn is_full(k: std::io::ErrorKind) -> bool {
    matches!(
        k,
        std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
    )
}

/// Why SQLite could not write the store at `path`: its file system is
/// read-only, or this user may not (asked by opening it for writing,
/// which changes nothing).
fn unwritable(path: &Path) -> (StoreProblem, &'static str) {
    match std::fs::OpenOptions::new().write(true).open(path) {
        Err(e) if e.kind() == std::io::ErrorKind::ReadOnlyFilesystem => (
            StoreProblem::ReadOnlyMount,
            "it is on a read-only file system",
        ),
        _ => (StoreProblem::NotWritable, "it cannot be written"),
    }
}

/// The system's error behind SQLite's last failure on `conn` (a full
/// disk shows as "disk I/O error" otherwise).
fn system_error(conn: &Connection) -> Option<std::io::ErrorKind> {
    // SAFETY: the handle is the open connection's, used only to read its
    // last error number, on the thread that owns it.
    let n = unsafe { rusqlite::ffi::sqlite3_system_errno(conn.handle()) };
    (n != 0).then(|| std::io::Error::from_raw_os_error(n).kind())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causes_follow_what_sqlite_and_the_system_said() {
        let e = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
            None,
        );
        let f = Failure::sql(&e, None, Path::new("/nonexistent/h.sqlite3"));
        assert_eq!(f.cause, StoreProblem::Locked);
        assert!(f.cause.advice().contains("do not move the file away"));
        let e = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CORRUPT),
            None,
        );
        let f = Failure::sql(&e, None, Path::new("/nonexistent/h.sqlite3"));
        assert_eq!(f.cause, StoreProblem::Corrupt);
        let full = std::io::Error::from(std::io::ErrorKind::StorageFull);
        assert_eq!(
            Failure::io(&full, "it cannot be created", Path::new("x")).cause,
            StoreProblem::DiskFull
        );
        let w = Failure::new(StoreProblem::Planted, "x").warning(Path::new("h"));
        assert_eq!(w.hint(), StoreProblem::Planted.advice());
    }
}
