//! Output files that cannot be turned against their writer.
//!
//! - A result replaces its target atomically through a temporary file with
//!   a random name in the target's own directory, created with
//!   `O_CREAT|O_EXCL|O_NOFOLLOW` (a planted symlink or file at that name
//!   makes the create fail, never redirects it), with the target's mode
//!   (and owner, when we may) when the target exists. A reader never sees
//!   half a file.
//! - Special files (`/dev/null`, a FIFO, a terminal) are written in place:
//!   renaming over one would swap the device node for a plain file
//!   (`bwscope report run.json -o /dev/null` once turned a machine's
//!   /dev/null into one). A run's JSON goes there once, at the end (each
//!   write is one more document to a FIFO's reader), and neither opening a
//!   FIFO nor writing into a full one holds a stop signal up ([`Special`]).
//! - `/dev/stdout` and `/dev/fd/1` mean stdout, as `-` does; `/dev/fd/N`
//!   (a shell's `>(…)`) is that descriptor, written in place.
//! - A path ending in `/` names a directory: refused before the run when
//!   there is none (it used to fail after the first record).
//! - A symlink at the target is followed (its target is replaced, the link
//!   kept) unless it sits in a sticky world-writable directory such as /tmp
//!   and belongs to someone else: the rule of the kernel's
//!   `fs.protected_symlinks`, which resolving the link ourselves would
//!   otherwise bypass.
//! - A target without write permission is refused, also for root: a file
//!   someone made read-only is not silently replaced.
//! - [`check_writable`] answers all this before anything is measured,
//!   without creating or truncating anything.
//! - A file or folder a live run writes is claimed ([`Claim`]) before
//!   anything is measured: a second run given the same `--json`, `--csv`
//!   or `--out` is refused in one line instead of interleaving its files
//!   with the first's; a default results folder is never shared
//!   ([`Folder::fresh`]).

use std::fs::{File, Metadata};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::UserError;
use crate::os::fs as sys;

mod claim;
mod kept;
pub use claim::Claim;
pub use kept::keep;

/// [`Claim::watch`].
pub fn claim_watch(path: &Path) -> Result<Claim, UserError> {
    Claim::watch(path)
}

fn unwritable(path: &Path, detail: impl std::fmt::Display) -> UserError {
    UserError::Unwritable {
        path: path.display().to_string(),
        detail: detail.to_string(),
    }
}

/// The directory a path lives in (`.` for a bare name).
fn dir_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The descriptor a path names (`/dev/stdout`, `/dev/fd/N`, …): see
/// [`crate::os::fs::descriptor`].
pub fn descriptor(path: &Path) -> Option<i32> {
    sys::descriptor(path)
}

/// Is `path` another name for stdout (`/dev/stdout`, `/dev/fd/1`)? Those
/// mean what `-` means.
pub fn is_stdout(path: &str) -> bool {
    path == "-" || descriptor(Path::new(path)) == Some(1)
}

/// The owner of the link `m` describes at `path`, and its directory, when
/// another user planted it in a shared sticky directory (see
/// [`crate::os::fs::untrusted_link`]).
fn planted(path: &Path, m: &Metadata) -> Option<(String, PathBuf)> {
    let dir = dir_of(path);
    let owner = std::fs::metadata(&dir)
        .ok()
        .and_then(|d| sys::untrusted_link(m, &d))?;
    Some((owner, dir))
}

/// Where writing `path` really goes: itself, or the file a trusted symlink
/// points to.
fn resolve(path: &Path) -> Result<PathBuf, UserError> {
    if path.as_os_str().is_empty() {
        return Err(unwritable(path, "the path is empty"));
    }
    if descriptor(path).is_some() {
        return Ok(path.to_path_buf());
    }
    if sys::ends_with_separator(path) && !path.is_dir() {
        return Err(unwritable(
            path,
            "it ends in '/', so it names a directory, and there is none: give a file name (e.g. results/run.json), after creating the directory",
        ));
    }
    let Ok(m) = std::fs::symlink_metadata(path) else {
        return Ok(path.to_path_buf());
    };
    if !m.file_type().is_symlink() {
        return Ok(path.to_path_buf());
    }
    if let Some((owner, dir)) = planted(path, &m) {
        return Err(unwritable(
            path,
            format!(
                "it is a symlink owned by {owner} in the shared directory {}; bwscope does not follow it (fs.protected_symlinks rule): write to the file by its own path",
                dir.display()
            ),
        ));
    }
    std::fs::canonicalize(path).map_err(|e| {
        unwritable(
            path,
            format!("it is a symlink whose target cannot be resolved ({e})"),
        )
    })
}

/// Refuse a regular file the caller may not write, or one nobody may write
/// (root bypasses the permission bits; we do not).
fn check_regular(path: &Path, m: &Metadata) -> Result<(), UserError> {
    if sys::is_read_only(m) || !sys::can_write(path) {
        return Err(unwritable(path, why_read_only(path, m)));
    }
    let dir = dir_of(path);
    if !sys::can_write_dir(&dir) {
        return Err(unwritable(
            path,
            format!(
                "its directory {} is not writable (the file is replaced through a temporary file beside it)",
                dir.display()
            ),
        ));
    }
    Ok(())
}

/// Why a regular file cannot be written, in words: the hint must be one
/// that helps (`chmod u+w` does nothing for a file on a read-only mount,
/// or for one of another user).
fn why_read_only(path: &Path, m: &Metadata) -> String {
    // Opened for writing without truncating or creating: nothing changes,
    // and the error says which of the reasons it is.
    let opened = std::fs::OpenOptions::new().write(true).open(path);
    match opened {
        Err(e) if e.kind() == std::io::ErrorKind::ReadOnlyFilesystem => {
            "it is on a read-only file system (mounted ro): no mode change would allow it".into()
        }
        _ if sys::is_read_only(m) => "the file is read-only (chmod u+w would allow it)".into(),
        _ => "the file is read-only for this user (its owner or mode forbid writing)".into(),
    }
}

/// Would writing `path` work? Answered without creating or truncating
/// anything, so a typo fails before a long run instead of after it.
pub fn check_writable(path: &Path) -> Result<(), UserError> {
    kept::refuse(path)?;
    let target = resolve(path)?;
    if let Some(fd) = descriptor(path) {
        return if sys::descriptor_writable(fd) {
            Ok(())
        } else {
            Err(unwritable(
                path,
                format!("descriptor {fd} is not open for writing"),
            ))
        };
    }
    match std::fs::metadata(&target) {
        Ok(m) if m.is_dir() => Err(unwritable(path, "it is a directory")),
        Ok(m) if m.is_file() => check_regular(&target, &m),
        Ok(_) if sys::can_write(&target) => Ok(()),
        Ok(_) => Err(unwritable(path, "permission denied")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let dir = dir_of(&target);
            match std::fs::metadata(&dir) {
                Ok(d) if d.is_dir() => {
                    if sys::can_write_dir(&dir) {
                        Ok(())
                    } else {
                        Err(unwritable(
                            path,
                            format!("the directory {} is not writable", dir.display()),
                        ))
                    }
                }
                Ok(_) => Err(unwritable(
                    path,
                    format!("{} is not a directory", dir.display()),
                )),
                Err(_) => Err(unwritable(
                    path,
                    format!(
                        "the directory {} does not exist; create it first",
                        dir.display()
                    ),
                )),
            }
        }
        Err(e) => Err(unwritable(path, e)),
    }
}

/// A fresh temporary file beside `target`, created exclusively and without
/// following links, with `mode`. Returns it and its path.
pub fn create_temp(target: &Path, mode: u32) -> Result<(File, PathBuf), UserError> {
    sys::create_temp_beside(target, mode).map_err(|e| unwritable(target, e))
}

/// A file that replaces `target` when [`Replacement::commit`] is called;
/// dropped uncommitted, it removes its temporary file.
pub struct Replacement {
    pub file: File,
    tmp: PathBuf,
    target: PathBuf,
    committed: bool,
}

impl Replacement {
    /// Start replacing `path` (resolved as [`check_writable`] does).
    pub fn start(path: &Path) -> Result<Replacement, UserError> {
        kept::refuse(path)?;
        let target = resolve(path)?;
        let old = match std::fs::metadata(&target) {
            Ok(m) if m.is_file() => {
                check_regular(&target, &m)?;
                Some(m)
            }
            Ok(m) if m.is_dir() => return Err(unwritable(path, "it is a directory")),
            Ok(_) => {
                return Err(unwritable(
                    path,
                    "not a regular file (written in place instead)",
                ))
            }
            Err(_) => None,
        };
        let (file, tmp) = create_temp(
            &target,
            old.as_ref().map_or(0o666, |m| sys::mode_of(m) & 0o777),
        )?;
        if let Some(m) = &old {
            sys::copy_identity(&file, m);
        }
        Ok(Replacement {
            file,
            tmp,
            target,
            committed: false,
        })
    }

    pub fn is_committed(&self) -> bool {
        self.committed
    }

    /// Rename the temporary file over the target. The open file stays
    /// valid (it is the target now), so a stream can go on appending.
    pub fn commit(&mut self) -> Result<(), UserError> {
        std::fs::rename(&self.tmp, &self.target).map_err(|e| unwritable(&self.target, e))?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for Replacement {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Is `path` (after a trusted link) something other than a regular file or
/// a missing one (a FIFO, a device, a descriptor), i.e. to be written in
/// place, and once?
pub fn is_special(path: &Path) -> bool {
    descriptor(path).is_some()
        || sys::is_device_name(path)
        || resolve(path)
            .ok()
            .and_then(|t| std::fs::metadata(t).ok())
            .is_some_and(|m| !m.is_file() && !m.is_dir())
}

/// A special file open for writing in place (no create, no truncate).
/// Neither the open nor a write ever holds a stop signal up: a FIFO is
/// opened without waiting and waited on in steps, and every wait ends when
/// a signal (Ctrl-C, SIGTERM) arrives after it began.
pub struct Special {
    file: File,
    path: PathBuf,
}

/// How long one step of a wait on a FIFO is.
const STEP_MS: i32 = 100;

impl Special {
    /// Open `path` (see [`is_special`]). A FIFO without a reader is waited
    /// for, saying so once on stderr.
    pub fn open(path: &Path) -> Result<Special, UserError> {
        if let Some(fd) = descriptor(path) {
            check_writable(path)?;
            return Ok(Special {
                file: sys::dup_descriptor(fd).map_err(|e| unwritable(path, e))?,
                path: path.to_path_buf(),
            });
        }
        let target = resolve(path)?;
        let signals = crate::os::signal::count();
        let mut said = false;
        loop {
            match sys::open_special(&target) {
                Ok(file) => {
                    return Ok(Special {
                        file,
                        path: path.to_path_buf(),
                    })
                }
                // A FIFO nobody reads yet.
                Err(e) if sys::is_no_reader(&e) => {
                    if !said {
                        eprintln!(
                            "note: waiting for a reader of the FIFO {} (Ctrl-C gives up on it)",
                            path.display()
                        );
                        said = true;
                    }
                    if crate::os::signal::count() != signals {
                        return Err(unwritable(
                            path,
                            "no reader opened the FIFO before the stop signal; nothing was written there",
                        ));
                    }
                    std::thread::sleep(std::time::Duration::from_millis(STEP_MS as u64));
                }
                Err(e) => return Err(unwritable(path, e)),
            }
        }
    }

    /// Write all of `bytes`, waiting in steps while a pipe is full.
    pub fn write_all(&mut self, bytes: &[u8]) -> Result<(), UserError> {
        let signals = crate::os::signal::count();
        sys::write_all_nonblocking(&mut self.file, bytes, STEP_MS, || {
            crate::os::signal::count() != signals
        })
        .map_err(|e| match e {
            sys::WriteError::NoProgress => unwritable(&self.path, "the write took no bytes"),
            sys::WriteError::GaveUp => unwritable(
                &self.path,
                "its reader stopped reading, and a stop signal came while waiting; the rest was not written",
            ),
            sys::WriteError::Io(e) => unwritable(&self.path, e),
        })
    }
}

/// Write `bytes` to `path` atomically; see the module comment.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), UserError> {
    // The same answers as before a run (a missing directory is named).
    check_writable(path)?;
    if is_special(path) {
        return Special::open(path)?.write_all(bytes);
    }
    let mut r = Replacement::start(path)?;
    r.file.write_all(bytes).map_err(|e| unwritable(path, e))?;
    r.commit()
}

/// A results folder (`--out DIR`): made and probed before anything is
/// measured, so an unwritable path fails at once; claimed for the run;
/// removed again, with the parents made for it, when the run ends with
/// nothing to put in it.
#[derive(Debug, Clone)]
pub struct Folder {
    pub path: PathBuf,
    /// The folders this run made, outermost first.
    made: Vec<PathBuf>,
    claim: Option<std::sync::Arc<Claim>>,
}

impl Folder {
    /// Make `path` (and its parents), and create and remove one file in it;
    /// `flag` names the option in errors.
    pub fn prepare(path: &Path, flag: &str) -> Result<Folder, UserError> {
        no_planted_link(path, flag)?;
        let made = missing_ancestors(path);
        std::fs::create_dir_all(path).map_err(|e| unwritable(path, format!("{e} ({flag})")))?;
        Folder::probed(path.to_path_buf(), made, flag)
    }

    /// A folder of its own for this run: `base` if nobody has made it yet,
    /// else `base-2`, `base-3`, …, each made exclusively (`mkdir`), so two
    /// runs started in the same second never share one.
    pub fn fresh(base: &Path, flag: &str) -> Result<Folder, UserError> {
        let parent = dir_of(base);
        no_planted_link(&parent, flag)?;
        let mut made = missing_ancestors(&parent);
        std::fs::create_dir_all(&parent)
            .map_err(|e| unwritable(&parent, format!("{e} ({flag})")))?;
        let name = base.file_name().unwrap_or_default().to_string_lossy();
        for n in 1..=1000 {
            let path = match n {
                1 => base.to_path_buf(),
                _ => parent.join(format!("{name}-{n}")),
            };
            match std::fs::create_dir(&path) {
                Ok(()) => {
                    made.push(path.clone());
                    return Folder::probed(path, made, flag);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(unwritable(&path, format!("{e} ({flag})"))),
            }
        }
        Err(unwritable(
            base,
            format!("1000 folders of that name exist already ({flag}): give one with {flag}"),
        ))
    }

    /// Probe the folder made at `path` and claim it.
    fn probed(path: PathBuf, made: Vec<PathBuf>, flag: &str) -> Result<Folder, UserError> {
        let mut folder = Folder {
            path,
            made,
            claim: None,
        };
        let path = &folder.path;
        // A fresh random name, created O_EXCL|O_NOFOLLOW: a fixed one
        // could be a link planted in a shared folder, and writing it would
        // truncate the link's target.
        let claimed = create_temp(&path.join(".bwscope-write-test"), 0o600)
            .map_err(|e| unwritable(path, format!("{e} ({flag})")))
            .and_then(|(_, probe)| {
                let _ = std::fs::remove_file(probe);
                Claim::folder(path)
            });
        match claimed {
            Ok(c) => {
                folder.claim = Some(std::sync::Arc::new(c));
                Ok(folder)
            }
            Err(e) => {
                folder.remove_if_empty();
                Err(e)
            }
        }
    }

    /// Remove the folders this run made, innermost first, as long as they
    /// are empty (a folder with anything in it stays).
    pub fn remove_if_empty(&self) {
        if let Some(c) = &self.claim {
            c.release();
        }
        for d in self.made.iter().rev() {
            if std::fs::remove_dir(d).is_err() {
                break;
            }
        }
    }
}

/// Refuse a folder path through a link another user planted in a shared
/// sticky folder (`/tmp`, a scratch): the `fs.protected_symlinks` rule,
/// which a system with the setting off (some containers and guests) does
/// not apply, for each part of the path that exists. Without it, another
/// user's `bwscope-results -> /etc` in a shared working folder would have
/// a root survey make its folder and files where the link points.
fn no_planted_link(path: &Path, flag: &str) -> Result<(), UserError> {
    for part in path.ancestors().filter(|a| !a.as_os_str().is_empty()) {
        let Ok(m) = std::fs::symlink_metadata(part) else {
            continue;
        };
        if !m.file_type().is_symlink() {
            continue;
        }
        if let Some((owner, dir)) = planted(part, &m) {
            return Err(unwritable(
                path,
                format!(
                    "{} is a symlink owned by {owner} in the shared directory {}; bwscope does not follow it (fs.protected_symlinks rule) ({flag})",
                    part.display(),
                    dir.display()
                ),
            ));
        }
    }
    Ok(())
}

/// The folders `path` needs that do not exist, outermost first.
fn missing_ancestors(path: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = path
        .ancestors()
        .filter(|a| !a.as_os_str().is_empty() && !a.exists())
        .map(Path::to_path_buf)
        .collect();
    v.reverse();
    v
}

/// A [`Folder`] removed when this is dropped, if the run put nothing in
/// it: every way out of a run, errors included, without a path each.
pub struct RemoveIfEmpty(pub Folder);

impl Drop for RemoveIfEmpty {
    fn drop(&mut self) {
        self.0.remove_if_empty();
    }
}

/// Do two output paths name the same file? Existing files compare by
/// device and inode (a character device such as /dev/null may take both);
/// new ones by their absolute path.
pub fn same_file(a: &Path, b: &Path) -> bool {
    let (ra, rb) = (
        resolve(a).unwrap_or(a.to_path_buf()),
        resolve(b).unwrap_or(b.to_path_buf()),
    );
    match (sys::same_file(&ra, &rb), ra.exists(), rb.exists()) {
        (Some(same), _, _) => same,
        (None, false, false) => {
            let abs = |p: &Path| {
                let dir = std::fs::canonicalize(dir_of(p)).unwrap_or(dir_of(p));
                dir.join(p.file_name().unwrap_or_default())
            };
            abs(&ra) == abs(&rb)
        }
        _ => false,
    }
}

/// Is the output `path` (after a trusted link) the file stdin reads (a
/// shell's `< path`)? A device such as /dev/null never is.
pub fn is_stdin(path: &Path) -> bool {
    let target = resolve(path).unwrap_or(path.to_path_buf());
    sys::stdin_is(&target).unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_or_file_is_claimed_by_one_run_at_a_time() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("out");
        let first = Folder::prepare(&out, "--out").unwrap();
        let e = Folder::prepare(&out, "--out").unwrap_err().to_string();
        assert!(e.contains("another bwscope run is writing it now"), "{e}");
        // A run that wrote nothing leaves no folder (its lock file is not
        // "something in it").
        first.remove_if_empty();
        assert!(!out.exists(), "a folder the run made and left empty");
        drop(first);
        // Released when the run ends, lock file and all.
        let again = Folder::prepare(&out, "--out").unwrap();
        std::fs::write(out.join("run.json"), "{}").unwrap();
        drop(again);
        assert!(!out.join(".bwscope-lock").exists());
        assert!(Folder::prepare(&out, "--out").is_ok());
        // A default folder taken (by a run started the same second) gets
        // a suffix; the one taken is left alone.
        let base = d.path().join("results").join("2026-11-26T10-00-00Z");
        std::fs::create_dir_all(&base).unwrap();
        let f = Folder::fresh(&base, "--out").unwrap();
        assert_eq!(f.path, base.with_file_name("2026-11-26T10-00-00Z-2"));
        let g = Folder::fresh(&base, "--out").unwrap();
        assert_eq!(g.path, base.with_file_name("2026-11-26T10-00-00Z-3"));
        // Files.
        let p = d.path().join("run.json");
        let c = Claim::output(&p).unwrap().unwrap();
        let e = Claim::output(&p).unwrap_err().to_string();
        assert!(e.contains("another bwscope run"), "{e}");
        drop(c);
        assert!(Claim::output(&p).unwrap().is_some());
        assert!(Claim::output(Path::new("-")).unwrap().is_none());
    }
}
