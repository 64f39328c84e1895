//! Claims on the files and folders a live run writes: see [`Claim`].

use std::fs::File;
use std::path::{Path, PathBuf};

use super::{dir_of, is_special, is_stdout, resolve, unwritable};
use crate::error::UserError;
use crate::os::fs as sys;

/// A file or folder this run writes, held for the run: an exclusive lock
/// (`flock`; `LockFile` on Windows) on a lock file beside it
/// (`.NAME.bwscope-lock`; `.bwscope-lock` inside a folder), taken without
/// waiting. The system drops the lock when the process ends, however it
/// ends, so a run that was killed never blocks the next; the lock file
/// is removed when the claim is dropped.
#[derive(Debug)]
pub struct Claim {
    lock: PathBuf,
    /// The locked lock file; closed by [`Claim::release`].
    file: std::sync::Mutex<Option<File>>,
}

/// The longest file name most file systems take (`NAME_MAX`, bytes).
const NAME_MAX: usize = 255;

/// The lock file's name for an output named `name`: `.NAME.bwscope-lock`,
/// or, where that would pass [`NAME_MAX`] (an output name of 242 to 255
/// bytes, which the system accepts), the name's first bytes and a hash of
/// all of it (`.PREFIX~HASH.bwscope-lock`): the lock must fit whenever
/// the output does, and the same output must always get the same lock.
fn lock_name(name: &str) -> String {
    const SUFFIX: &str = ".bwscope-lock";
    let full = format!(".{name}{SUFFIX}");
    if full.len() <= NAME_MAX {
        return full;
    }
    // FNV-1a: stable across releases and builds (a run of another
    // version must find the same lock), unlike std's hasher.
    let hash = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let room = NAME_MAX - (1 + 1 + 16 + SUFFIX.len());
    let mut end = room.min(name.len());
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    format!(".{}~{hash:016x}{SUFFIX}", &name[..end])
}

/// How often a claim is retried when the lock file was replaced between
/// its open and its lock (another run releasing it meanwhile).
const CLAIM_TRIES: usize = 8;

impl Claim {
    /// Claim the output `path` (after a trusted link); nothing to claim
    /// for stdout, a descriptor or a special file.
    pub fn output(path: &Path) -> Result<Option<Claim>, UserError> {
        if is_stdout(&path.to_string_lossy()) || is_special(path) {
            return Ok(None);
        }
        let target = resolve(path)?;
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let lock = dir_of(&target).join(lock_name(&name));
        Claim::take(&lock, path).map(Some)
    }

    /// Claim `path` for a long-running writer (`bwscope watch`): one at
    /// a time, under a lock of its own (`.NAME.bwscope-watch`) that holds
    /// the holder's pid, so a second one is refused naming it.
    pub fn watch(path: &Path) -> Result<Claim, UserError> {
        let target = resolve(path)?;
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let lock = dir_of(&target).join(format!(".{name}.bwscope-watch"));
        let holder = || {
            sys::open_for_input(&lock, false).ok().and_then(|f| {
                let mut s = String::new();
                std::io::Read::read_to_string(&mut std::io::Read::take(f, 32), &mut s).ok()?;
                s.trim().parse::<u32>().ok()
            })
        };
        let claim = Claim::take(&lock, path).map_err(|e| match holder() {
            Some(pid) => UserError::flag(
                "--openmetrics",
                format!(
                    "another bwscope watch (pid {pid}) is watching into {}; stop it first, or give another file",
                    path.display()
                ),
            ),
            None => e,
        })?;
        if let Some(f) = claim
            .file
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
        {
            let _ = f.set_len(0);
            let _ = std::io::Write::write_all(f, format!("{}\n", std::process::id()).as_bytes());
        }
        Ok(claim)
    }

    /// Claim the folder `dir`.
    pub fn folder(dir: &Path) -> Result<Claim, UserError> {
        Claim::take(&dir.join(".bwscope-lock"), dir)
    }

    fn take(lock: &Path, what: &Path) -> Result<Claim, UserError> {
        for _ in 0..CLAIM_TRIES {
            let file = match sys::create_new(lock, 0o600) {
                Ok(f) => f,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    match sys::open_for_input(lock, false) {
                        Ok(f) => f,
                        // Removed since: take it afresh.
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                        Err(e) => return Err(unwritable(what, claim_error(lock, e))),
                    }
                }
                Err(e) => return Err(unwritable(what, claim_error(lock, e))),
            };
            if !file.metadata().is_ok_and(|m| m.is_file()) {
                return Err(unwritable(
                    what,
                    format!(
                        "its lock file {} is not a regular file: someone else put it there; remove it",
                        lock.display()
                    ),
                ));
            }
            if !sys::try_lock(&file).map_err(|e| unwritable(what, claim_error(lock, e)))? {
                let owner = sys::facts(&file)
                    .ok()
                    .filter(|f| !f.owner.is_me)
                    .map_or(String::new(), |f| format!(" of {}", f.owner.name));
                return Err(unwritable(
                    what,
                    format!(
                        "another bwscope run{owner} is writing it now (it holds {}); wait for it to end, or give another path",
                        lock.display()
                    ),
                ));
            }
            // The one at the name now, not one its last holder removed
            // between our open and our lock.
            if sys::is_file_at(&file, lock) == Some(true) {
                return Ok(Claim {
                    lock: lock.to_path_buf(),
                    file: std::sync::Mutex::new(Some(file)),
                });
            }
        }
        Err(unwritable(
            what,
            format!(
                "its lock file {} kept changing: other runs are writing it",
                lock.display()
            ),
        ))
    }

    /// End the claim: remove the lock file, then close it (removed while
    /// still locked: a run that opened it meanwhile finds another file at
    /// the name once it has the lock, and tries again). A folder with
    /// nothing else in it is then empty, also on Windows, where a file
    /// removed while open stays until its handle closes.
    pub(super) fn release(&self) {
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        if file.is_some() {
            let _ = std::fs::remove_file(&self.lock);
        }
        drop(file.take());
    }
}

fn claim_error(lock: &Path, e: std::io::Error) -> String {
    if sys::is_link_refused(&e) {
        return format!(
            "cannot take its lock file {}: it is a symbolic link, which bwscope never makes there (someone else put it there); remove it",
            lock.display()
        );
    }
    format!("cannot take its lock file {}: {e}", lock.display())
}

impl Drop for Claim {
    fn drop(&mut self) {
        self.release();
    }
}

#[cfg(test)]
mod lock_name_tests {
    use super::{lock_name, NAME_MAX};

    #[test]
    fn a_lock_name_fits_whenever_the_output_name_does() {
        assert_eq!(lock_name("x.json"), ".x.json.bwscope-lock");
        for n in 230..=NAME_MAX {
            let name = "a".repeat(n - 5) + ".json";
            let l = lock_name(&name);
            assert!(l.len() <= NAME_MAX, "{n}: {}", l.len());
            assert_eq!(l, lock_name(&name), "stable");
        }
        let a = lock_name(&("a".repeat(250) + "1"));
        let b = lock_name(&("a".repeat(250) + "2"));
        assert_ne!(a, b);
        // Multi-byte names are cut on a character boundary.
        assert!(lock_name(&"é".repeat(127)).len() <= NAME_MAX);
    }
}
