//! Files no output of this process may replace, whatever path it is
//! given: the history store and the files SQLite keeps beside it. A
//! `--json` (of any command) naming the store once replaced it with JSON,
//! rc 0, and the next run called the store "corrupt". The app names them
//! once, before any output is checked; every output is then compared with
//! them as two outputs are (`same_file`: device and inode for files that
//! exist, so a link or another path to the store counts; the absolute
//! path for those that do not yet).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::error::UserError;

/// What each kept file is, for the message.
static KEPT: Mutex<Vec<(PathBuf, &'static str)>> = Mutex::new(Vec::new());

/// Keep `paths` (described as `what`) from every output of this process.
pub fn keep(paths: impl IntoIterator<Item = PathBuf>, what: &'static str) {
    if let Ok(mut k) = KEPT.lock() {
        k.extend(paths.into_iter().map(|p| (p, what)));
    }
}

/// Refuse `path` as an output when it is one of the kept files.
pub(super) fn refuse(path: &Path) -> Result<(), UserError> {
    let kept = KEPT.lock().map(|k| k.clone()).unwrap_or_default();
    refuse_among(path, &kept)
}

fn refuse_among(path: &Path, kept: &[(PathBuf, &'static str)]) -> Result<(), UserError> {
    match kept.iter().find(|(k, _)| super::same_file(path, k)) {
        Some((k, what)) => Err(super::unwritable(
            path,
            format!(
                "it is {what} ({}); writing it would replace what is kept there: give another path, or '-' for stdout",
                k.display()
            ),
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_store_by_any_name_is_refused_and_other_files_are_not() {
        let d = tempfile::tempdir().unwrap();
        let store = d.path().join("h.sqlite3");
        std::fs::write(&store, b"SQLite format 3\0").unwrap();
        let kept = vec![
            (store.clone(), "the history store"),
            (d.path().join("h.sqlite3-wal"), "the history store"),
        ];
        let e = refuse_among(&store, &kept).unwrap_err().to_string();
        assert!(e.contains("it is the history store"), "{e}");
        // Through a link, by a relative path's twin, and a side file that
        // does not exist yet.
        let link = d.path().join("link.json");
        crate::os::fs::symlink(&store, &link).unwrap();
        if crate::os::system::emulator().is_none() {
            assert!(refuse_among(&link, &kept).is_err());
        }
        assert!(refuse_among(&d.path().join("h.sqlite3-wal"), &kept).is_err());
        assert!(refuse_among(&d.path().join("run.json"), &kept).is_ok());
    }
}
