//! Opening the store, as files others may have put something at.
//!
//! The default store is `bwscope/history.sqlite3` in the user's data
//! folder (`$XDG_DATA_HOME`, else `~/.local/share`; `%LOCALAPPDATA%` on
//! Windows); `--history PATH` or `BWSCOPE_HISTORY` chooses another. The
//! store and every file SQLite opens beside it are checked before SQLite
//! opens anything (`files`: the knee store's rules, for the whole set):
//! the folder, when bwscope makes it, is 0700, and one another user owns,
//! or others may write without the sticky bit, is not used; the file is
//! created exclusively, without following a link, 0600 (SQLite gives its
//! `-wal` and `-shm` files the same mode); an existing file is used only
//! when it is a regular file (not a link: SQLite opens it with
//! `SQLITE_OPEN_NOFOLLOW` too; not a FIFO, which would block), owned by
//! this user or root, and nobody else may write it, and so is each file of
//! its set.
//!
//! A store that fails any of this, or that SQLite cannot use (corrupt,
//! locked past the busy timeout, read-only, a full disk, a newer schema),
//! is reported as one `history_ignored` warning naming it and its cause
//! (`failure`); the run goes on and saves its own files.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use super::failure::Failure;
use crate::model::{StoreProblem, Warning};

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
        Store::open_checked(path, mode).map_err(|f| f.warning(path))
    }

    fn open_checked(path: &Path, mode: Mode) -> Result<Option<Store>, Failure> {
        // A setting that cannot be used is said before anything is made.
        let wait = busy()?;
        let Some(checked) = super::files::check(path, mode)? else {
            return Ok(None);
        };
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_NOFOLLOW
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut conn =
            Connection::open_with_flags(path, flags).map_err(|e| Failure::sql(&e, None, path))?;
        let sql = |e: rusqlite::Error, c: &Connection| Failure::sql(&e, Some(c), path);
        conn.busy_timeout(wait).map_err(|e| sql(e, &conn))?;
        // WAL: readers never wait for the writer, and a crash mid-write
        // leaves the last committed state.
        let journal: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .map_err(|e| sql(e, &conn))?;
        if !journal.eq_ignore_ascii_case("wal") {
            return Err(Failure::new(
                StoreProblem::Other,
                format!("SQLite could not put it in WAL mode (it stayed in {journal} mode)"),
            ));
        }
        checked.opened();
        conn.execute_batch("PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;")
            .map_err(|e| sql(e, &conn))?;
        super::schema::migrate(&mut conn, super::schema::MIGRATIONS)
            .map_err(|e| e.into_failure(&conn, path))?;
        Ok(Some(Store {
            conn,
            path: path.to_path_buf(),
        }))
    }

    /// SQLite's error `e` on this store, as a warning naming it.
    pub(crate) fn warn(&self, e: rusqlite::Error) -> Warning {
        Failure::sql(&e, Some(&self.conn), &self.path).warning(&self.path)
    }

    /// Read the whole store for damage (`PRAGMA quick_check`: every page
    /// and record well formed, every index the size of its table). A
    /// query meets only the pages it reads, and a damaged index can hand
    /// back part of a table without an error: a command that answers from
    /// the store checks it first, so no part is shown as the whole.
    pub fn verify(&self) -> Result<(), Warning> {
        let problems: Vec<String> = self
            .conn
            .prepare("PRAGMA quick_check(3)")
            .and_then(|mut st| {
                st.query_map([], |r| r.get::<_, String>(0))?
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(|e| self.warn(e))?;
        match problems.as_slice() {
            [ok] if ok == "ok" => Ok(()),
            _ => Err(Failure::new(
                StoreProblem::Corrupt,
                format!(
                    "it is damaged (SQLite's check: {})",
                    crate::util::text::foreign_message(&problems.join("; "))
                ),
            )
            .warning(&self.path)),
        }
    }
}

/// Longest wait `BWSCOPE_HISTORY_TIMEOUT_MS` may ask for: an hour (a
/// run waiting longer than that for the store is better told).
const MAX_BUSY_MS: u64 = 3_600_000;

/// The busy timeout: [`BUSY`], or `BWSCOPE_HISTORY_TIMEOUT_MS` when it is
/// a whole number of milliseconds up to [`MAX_BUSY_MS`] (SQLite takes
/// a C int: 2^31 ms and more once panicked inside rusqlite).
fn busy() -> Result<Duration, Failure> {
    let Some(v) = std::env::var_os("BWSCOPE_HISTORY_TIMEOUT_MS") else {
        return Ok(BUSY);
    };
    let text = v.to_string_lossy();
    match text.trim().parse::<u64>() {
        Ok(ms) if ms <= MAX_BUSY_MS => Ok(Duration::from_millis(ms)),
        _ => Err(Failure::new(
            StoreProblem::Setting,
            format!(
                "BWSCOPE_HISTORY_TIMEOUT_MS={:?} is not a number of milliseconds from 0 to {MAX_BUSY_MS}",
                crate::util::text::foreign_name(&text)
            ),
        )),
    }
}
