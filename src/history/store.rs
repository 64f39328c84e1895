//! Opening the store, as a file others may have put something at.
//!
//! The default store is `bwscope/history.sqlite3` in the user's data
//! folder (`$XDG_DATA_HOME`, else `~/.local/share`; `%LOCALAPPDATA%` on
//! Windows); `--history PATH` or `BWSCOPE_HISTORY` chooses another. The
//! rules are the knee store's (`platform::knee_store`):
//! - the folder, when bwscope makes it, is 0700; a folder another user
//!   owns is not used;
//! - the file is created exclusively, without following a link, 0600
//!   (SQLite gives its `-wal` and `-shm` files the same mode);
//! - an existing file is used only when it is a regular file (not a link:
//!   SQLite opens it with `SQLITE_OPEN_NOFOLLOW` too; not a FIFO, which
//!   would block), owned by this user or root, and nobody else may write
//!   it.
//!
//! A store that fails any of this, or that SQLite cannot use (corrupt,
//! locked past the busy timeout, read-only, a full disk, a newer schema),
//! is reported as one `history_ignored` warning naming it; the run goes
//! on and saves its own files.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use crate::model::Warning;

/// How long a writer waits for another one (WAL lets readers through; two
/// runs finishing at once take turns) before the store counts as locked.
/// `BWSCOPE_HISTORY_TIMEOUT_MS` changes it (tests of a locked store).
const BUSY: Duration = Duration::from_secs(5);

/// Where the history goes, from the flags and the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// `--no-history`, or no data folder to put it in.
    Off,
    At(PathBuf),
}

/// `--no-history` wins, then `--history PATH`, then `BWSCOPE_HISTORY`
/// (empty or `off`: no history), then the user's data folder.
pub fn place(flag: Option<&str>, no_history: bool) -> Place {
    if no_history {
        return Place::Off;
    }
    if let Some(p) = flag {
        return Place::At(PathBuf::from(p));
    }
    match std::env::var_os("BWSCOPE_HISTORY") {
        Some(v) if v.is_empty() || v == "off" => Place::Off,
        Some(v) => Place::At(PathBuf::from(v)),
        None => match crate::os::system::user_data_dir() {
            Some(d) => Place::At(d.join("bwscope").join("history.sqlite3")),
            None => Place::Off,
        },
    }
}

/// An open store.
pub struct Store {
    pub(crate) conn: Connection,
    pub path: PathBuf,
}

/// How a store is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Make it when absent (a run recording itself, an import).
    Create,
    /// Only read or change an existing one (`bwscope history`): an absent
    /// store is `Ok(None)`.
    Existing,
}

impl Store {
    /// Open the store at `path` (see the module comment). `Ok(None)`: none
    /// there and `mode` does not make one.
    pub fn open(path: &Path, mode: Mode) -> Result<Option<Store>, Warning> {
        let ignored = |reason: String| Warning::HistoryIgnored {
            path: path.display().to_string(),
            reason,
        };
        if !check_file(path, mode).map_err(ignored)? {
            return Ok(None);
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_NOFOLLOW
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let sql = |e: rusqlite::Error| ignored(describe(&e));
        let mut conn = Connection::open_with_flags(path, flags).map_err(sql)?;
        conn.busy_timeout(busy()).map_err(sql)?;
        // WAL: readers never wait for the writer, and a crash mid-write
        // leaves the last committed state.
        let journal: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .map_err(sql)?;
        if !journal.eq_ignore_ascii_case("wal") {
            return Err(ignored(format!(
                "SQLite could not put it in WAL mode (it stayed in {journal} mode)"
            )));
        }
        conn.execute_batch("PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;")
            .map_err(sql)?;
        super::schema::migrate(&mut conn, super::schema::MIGRATIONS).map_err(ignored)?;
        Ok(Some(Store {
            conn,
            path: path.to_path_buf(),
        }))
    }
}

fn busy() -> Duration {
    std::env::var("BWSCOPE_HISTORY_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(BUSY, Duration::from_millis)
}

/// SQLite's message, with what it means for the user where it is terse.
pub(crate) fn describe(e: &rusqlite::Error) -> String {
    use rusqlite::ErrorCode as C;
    let code = e.sqlite_error_code();
    let what = match code {
        Some(C::NotADatabase) | Some(C::DatabaseCorrupt) => "it is corrupt or not a bwscope store",
        Some(C::DatabaseBusy) | Some(C::DatabaseLocked) => {
            "another process held it locked past the wait"
        }
        Some(C::ReadOnly) | Some(C::CannotOpen) | Some(C::PermissionDenied) => {
            "it cannot be written"
        }
        Some(C::DiskFull) => "the disk is full",
        _ => "SQLite failed on it",
    };
    format!("{what} ({e})")
}

/// The folder and the file's checks; creates both when `mode` says so.
/// Ok(false): no store there and none to be made.
fn check_file(path: &Path, mode: Mode) -> Result<bool, String> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !dir.exists() {
        if mode == Mode::Existing {
            return Ok(false);
        }
        std::fs::create_dir_all(&dir).map_err(|e| format!("its folder cannot be made: {e}"))?;
        // Only this user reads their history.
        let _ = crate::os::fs::set_permissions(&dir, 0o700);
    }
    if let Some(owner) = crate::os::fs::owner_at(&dir).filter(|o| !o.trusted()) {
        return Err(format!(
            "its folder belongs to {}, not to you ({}) or root",
            owner.name,
            crate::os::fs::me()
        ));
    }
    let f = match crate::os::fs::open_for_input(path, false) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if mode == Mode::Existing {
                return Ok(false);
            }
            return match crate::os::fs::create_new(path, 0o600) {
                Ok(_) => Ok(true),
                // Another run made it just now: check that one.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    check_file(path, Mode::Existing)
                }
                Err(e) => Err(format!("it cannot be created: {e}")),
            };
        }
        Err(e) if crate::os::fs::is_link_refused(&e) => {
            return Err("it is a symbolic link, which bwscope never makes there".into())
        }
        Err(e) => return Err(format!("it cannot be opened: {e}")),
    };
    let m = f.metadata().map_err(|e| e.to_string())?;
    if !m.is_file() {
        return Err("it is not a regular file (a FIFO, a device or a folder)".into());
    }
    crate::os::fs::facts(&f)
        .map_err(|e| e.to_string())?
        .kept_by_us()?;
    Ok(true)
}
