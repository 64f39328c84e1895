//! The store's files, as something others may have put there. A store is
//! not one file: SQLite opens a write-ahead log (`-wal`) and its index
//! (`-shm`) beside it, and plays back a rollback journal (`-journal`) it
//! finds there on its first read, even for a store in WAL mode. A `-wal`
//! planted beside a store holds whole pages that SQLite then reads as the
//! store's and checkpoints into it, so the rules of the store file apply to
//! every file of the set, checked before SQLite opens anything:
//!
//! - the folder is this user's or root's; one others may write is used
//!   only when it is sticky (/tmp: nobody may remove or rename another's
//!   file there) and every file of the set is this user's, and then the
//!   set's missing names are taken first, exclusively, so nothing can be
//!   planted between the check and SQLite's open;
//! - the store is a regular file, not a link, this user's or root's (this
//!   user's alone in a shared folder), and nobody else may write it;
//! - each file of the set that exists is a regular file, not a link,
//!   of the store's owner or this user, and nobody else may write it.

use std::path::{Path, PathBuf};

use super::failure::Failure;
use super::Mode;
use crate::model::StoreProblem;
use crate::os::fs as sys;

/// The names SQLite may open beside the store.
const SIDE: [&str; 3] = ["-wal", "-shm", "-journal"];

/// The store's file and every file SQLite may open beside it.
pub fn set(path: &Path) -> Vec<PathBuf> {
    let mut v = vec![path.to_path_buf()];
    v.extend(SIDE.iter().map(|s| {
        let mut p = path.as_os_str().to_owned();
        p.push(s);
        PathBuf::from(p)
    }));
    v
}

/// A store that passed the checks. In a shared folder it holds the names
/// of the set that were free, made empty and this user's; the journal's
/// is given back once SQLite has read the store in WAL mode (it never
/// looks for a journal again on that connection).
#[derive(Debug, Default)]
pub struct Checked {
    journal: Option<PathBuf>,
}

impl Checked {
    /// SQLite has the store open in WAL mode: the journal's name, taken
    /// only to keep it from being planted, is no longer needed.
    pub fn opened(self) {
        if let Some(j) = self.journal {
            let _ = std::fs::remove_file(j);
        }
    }
}

fn refused(cause: StoreProblem, reason: impl Into<String>) -> Failure {
    Failure::new(cause, reason)
}

/// The folder's checks; Ok(shared) says it is a sticky folder others may
/// write. Makes it (0700) when absent and `mode` says so; Ok(None): no
/// folder and none to make.
fn folder(dir: &Path, mode: Mode) -> Result<Option<bool>, Failure> {
    if !dir.exists() {
        if mode == Mode::Existing {
            return Ok(None);
        }
        std::fs::create_dir_all(dir)
            .map_err(|e| Failure::io(&e, "its folder cannot be made", dir))?;
        // Only this user reads their history.
        let _ = sys::set_permissions(dir, 0o700);
    }
    let f = sys::folder_facts(dir).map_err(|e| {
        refused(
            StoreProblem::NoFolder,
            format!("its folder {} cannot be used: {e}", dir.display()),
        )
    })?;
    if !f.facts.owner.trusted() {
        return Err(refused(
            StoreProblem::NotYours,
            format!(
                "its folder belongs to {}, not to you ({}) or root",
                f.facts.owner.name,
                sys::me()
            ),
        ));
    }
    match (&f.facts.others_may_write, f.sticky) {
        (Some(how), false) => Err(refused(
            StoreProblem::Planted,
            format!(
                "others may write its folder {} ({how}) and it is not sticky: anyone could replace the store, or plant a -wal or -journal beside it",
                dir.display()
            ),
        )),
        (Some(_), true) => Ok(Some(true)),
        (None, _) => Ok(Some(false)),
    }
}

/// Check the store at `path` and its set (see the module comment); make
/// the store (0600) when absent and `mode` says so. Ok(None): no store
/// and none to make.
pub fn check(path: &Path, mode: Mode) -> Result<Option<Checked>, Failure> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let Some(shared) = folder(&dir, mode)? else {
        return Ok(None);
    };
    let Some(owner) = store_file(path, mode, shared)? else {
        return Ok(None);
    };
    let mut checked = Checked::default();
    for side in &set(path)[1..] {
        if side_file(side, &owner, shared)? && side.to_string_lossy().ends_with("-journal") {
            checked.journal = Some(side.clone());
        }
    }
    Ok(Some(checked))
}

/// The store file's checks, making it when absent; its owner's name.
fn store_file(path: &Path, mode: Mode, shared: bool) -> Result<Option<String>, Failure> {
    let f = match sys::open_for_input(path, false) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if mode == Mode::Existing {
                return Ok(None);
            }
            return match sys::create_new(path, 0o600) {
                Ok(_) => Ok(Some(sys::me())),
                // Another run made it just now: check that one.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    store_file(path, Mode::Existing, shared)
                }
                Err(e) => Err(Failure::io(&e, "it cannot be created", path)),
            };
        }
        Err(e) if sys::is_link_refused(&e) => {
            return Err(refused(
                StoreProblem::Link,
                "it is a symbolic link, which bwscope never makes there",
            ))
        }
        Err(e) => return Err(Failure::io(&e, "it cannot be opened", path)),
    };
    let m = f
        .metadata()
        .map_err(|e| Failure::io(&e, "it cannot be read", path))?;
    if !m.is_file() {
        return Err(refused(
            StoreProblem::NotAFile,
            "it is not a regular file (a FIFO, a device such as /dev/null, or a folder)",
        ));
    }
    let facts = sys::facts(&f).map_err(|e| Failure::io(&e, "it cannot be read", path))?;
    facts
        .kept_by_us()
        .map_err(|why| refused(StoreProblem::NotYours, why))?;
    if shared && !facts.owner.is_me {
        return Err(refused(
            StoreProblem::NotYours,
            format!(
                "it belongs to {}, and in a folder others may write every file of the store must be yours ({})",
                facts.owner.name,
                sys::me()
            ),
        ));
    }
    Ok(Some(facts.owner.name))
}

/// One file of the set beside the store (owned by `owner`); in a shared
/// folder a free name is taken. Ok(true): this call made it.
fn side_file(side: &Path, owner: &str, shared: bool) -> Result<bool, Failure> {
    let name = side.display();
    let planted = |why: String| refused(StoreProblem::Planted, format!("{name} {why}"));
    let f = match sys::open_for_input(side, false) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if !shared {
                return Ok(false);
            }
            return match sys::create_new(side, 0o600) {
                Ok(_) => Ok(true),
                // Planted between the look and the take: check it.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    side_file(side, owner, false).map(|_| false)
                }
                Err(e) => Err(Failure::io(&e, "a file beside it cannot be made", side)),
            };
        }
        Err(e) if sys::is_link_refused(&e) => {
            return Err(planted(
                "is a symbolic link, which neither bwscope nor SQLite makes".into(),
            ))
        }
        Err(e) => return Err(planted(format!("cannot be checked ({e})"))),
    };
    let m = f
        .metadata()
        .map_err(|e| planted(format!("cannot be checked ({e})")))?;
    if !m.is_file() {
        return Err(planted(
            "is not a regular file (a FIFO, a device or a folder)".into(),
        ));
    }
    let facts = sys::facts(&f).map_err(|e| planted(format!("cannot be checked ({e})")))?;
    if facts.owner.name != owner && !facts.owner.is_me {
        return Err(planted(format!(
            "belongs to {}, not to the store's owner ({owner}): SQLite would read it as part of the store",
            facts.owner.name
        )));
    }
    if let Some(how) = facts.others_may_write {
        return Err(planted(format!(
            "may be changed by others ({how}): SQLite would read it as part of the store"
        )));
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// In a sticky folder others may write, the set's free names are taken
    /// before SQLite opens the store, the journal's given back once it is
    /// open; a file of the set others may change is refused.
    #[test]
    fn a_shared_folder_takes_the_free_names_and_refuses_a_changeable_one() {
        if crate::os::system::emulator().is_some() {
            eprintln!("no sticky folders under an emulator: not tested");
            return;
        }
        let d = tempfile::tempdir().unwrap();
        let shared = d.path().join("shared");
        std::fs::create_dir(&shared).unwrap();
        if crate::os::fs::set_permissions(&shared, 0o1777).is_err()
            || !crate::os::fs::folder_facts(&shared).is_ok_and(|f| f.sticky)
        {
            eprintln!("no sticky bit here: not tested");
            return;
        }
        let store = shared.join("h.sqlite3");
        let s = super::super::Store::open(&store, Mode::Create)
            .unwrap()
            .unwrap();
        let names = set(&store);
        assert!(names[1].exists() && names[2].exists(), "-wal and -shm held");
        assert!(!names[3].exists(), "the journal's name given back");
        drop(s);
        std::fs::write(&names[3], b"x").unwrap();
        crate::os::fs::set_permissions(&names[3], 0o666).unwrap();
        let e = check(&store, Mode::Existing).unwrap_err();
        assert_eq!(e.cause, StoreProblem::Planted);
        assert!(
            e.reason.contains("may be changed by others"),
            "{}",
            e.reason
        );
    }

    #[test]
    fn the_set_names_every_file_sqlite_opens() {
        let s = set(Path::new("/x/h.sqlite3"));
        assert_eq!(
            s,
            [
                "/x/h.sqlite3",
                "/x/h.sqlite3-wal",
                "/x/h.sqlite3-shm",
                "/x/h.sqlite3-journal"
            ]
            .map(PathBuf::from)
        );
    }
}
