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

use std::fs::{File, Metadata, OpenOptions};
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::error::UserError;

fn unwritable(path: &Path, detail: impl std::fmt::Display) -> UserError {
    UserError::Unwritable {
        path: path.display().to_string(),
        detail: detail.to_string(),
    }
}

/// `access(2)` with the effective ids.
fn access(path: &Path, mode: libc::c_int) -> bool {
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: a valid NUL-terminated path; faccessat only reads it.
    unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), mode, libc::AT_EACCESS) == 0 }
}

/// The directory a path lives in (`.` for a bare name).
fn dir_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The descriptor a path names, for `/dev/stdout`, `/dev/stderr`,
/// `/dev/fd/N` and `/proc/self/fd/N` (a shell's `>(...)` gives the last
/// two). Such a path is the descriptor already open, not a file to
/// replace: resolving it would find `pipe:[…]`, or replace the file the
/// shell redirected to with a new one the descriptor no longer reaches.
pub fn descriptor(path: &Path) -> Option<libc::c_int> {
    let p = path.to_str()?;
    match p {
        "/dev/stdout" => return Some(1),
        "/dev/stderr" => return Some(2),
        _ => {}
    }
    let n = p
        .strip_prefix("/dev/fd/")
        .or_else(|| p.strip_prefix("/proc/self/fd/"))?;
    n.parse().ok()
}

/// Is `path` another name for stdout (`/dev/stdout`, `/dev/fd/1`)? Those
/// mean what `-` means.
pub fn is_stdout(path: &str) -> bool {
    path == "-" || descriptor(Path::new(path)) == Some(1)
}

/// Is descriptor `fd` open for writing?
fn fd_writable(fd: libc::c_int) -> bool {
    // SAFETY: F_GETFL on any number only reads the descriptor table.
    let fl = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    fl >= 0 && matches!(fl & libc::O_ACCMODE, libc::O_WRONLY | libc::O_RDWR)
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
    if path.as_os_str().as_bytes().ends_with(b"/") && !path.is_dir() {
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
    let dir = dir_of(path);
    if let Ok(d) = std::fs::metadata(&dir) {
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        let shared = d.mode() & 0o1002 == 0o1002;
        if shared && m.uid() != me && m.uid() != d.uid() {
            return Err(unwritable(
                path,
                format!(
                    "it is a symlink owned by uid {} in the shared directory {}; bwscope does not follow it (fs.protected_symlinks rule): write to the file by its own path",
                    m.uid(),
                    dir.display()
                ),
            ));
        }
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
    if m.mode() & 0o222 == 0 || !access(path, libc::W_OK) {
        return Err(unwritable(
            path,
            "the file is read-only (chmod u+w would allow it)",
        ));
    }
    let dir = dir_of(path);
    if !access(&dir, libc::W_OK | libc::X_OK) {
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

/// Would writing `path` work? Answered without creating or truncating
/// anything, so a typo fails before a long run instead of after it.
pub fn check_writable(path: &Path) -> Result<(), UserError> {
    let target = resolve(path)?;
    if let Some(fd) = descriptor(path) {
        return if fd_writable(fd) {
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
        Ok(_) if access(&target, libc::W_OK) => Ok(()),
        Ok(_) => Err(unwritable(path, "permission denied")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let dir = dir_of(&target);
            match std::fs::metadata(&dir) {
                Ok(d) if d.is_dir() => {
                    if access(&dir, libc::W_OK | libc::X_OK) {
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

/// 64 random bits from the kernel (time and pid if that fails).
fn random_u64() -> u64 {
    let mut v = 0u64;
    // SAFETY: writes at most 8 bytes into `v`.
    let n = unsafe { libc::getrandom(&mut v as *mut u64 as *mut libc::c_void, 8, 0) };
    if n == 8 {
        return v;
    }
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    crate::util::rng::XorShift64::new(t ^ u64::from(std::process::id()) << 32).next_u64()
}

/// A fresh temporary file beside `target`, created exclusively and without
/// following links, with `mode`. Returns it and its path.
pub fn create_temp(target: &Path, mode: u32) -> Result<(File, PathBuf), UserError> {
    let dir = dir_of(target);
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().chars().take(120).collect::<String>())
        .unwrap_or_default();
    let mut last = None;
    for _ in 0..16 {
        let tmp = dir.join(format!(".{name}.{:016x}.tmp", random_u64()));
        match OpenOptions::new()
            .write(true)
            .create_new(true) // O_CREAT | O_EXCL
            .mode(mode)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&tmp)
        {
            Ok(f) => return Ok((f, tmp)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(unwritable(target, e)),
        }
    }
    Err(unwritable(
        target,
        format!("no free temporary name in its directory ({last:?})"),
    ))
}

/// Give the replacement the old file's mode and (where allowed) owner.
fn copy_identity(f: &File, old: Option<&Metadata>) {
    use std::os::fd::AsRawFd;
    if let Some(m) = old {
        // SAFETY: a valid open descriptor; failures are ignored (an
        // unprivileged caller may not give the file away, and the mode set
        // at creation already excludes what the umask removed).
        unsafe {
            libc::fchown(f.as_raw_fd(), m.uid(), m.gid());
            libc::fchmod(f.as_raw_fd(), m.mode() & 0o777);
        }
    }
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
        let (file, tmp) = create_temp(&target, old.as_ref().map_or(0o666, |m| m.mode() & 0o777))?;
        copy_identity(&file, old.as_ref());
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
        use std::os::fd::FromRawFd;
        if let Some(fd) = descriptor(path) {
            check_writable(path)?;
            // SAFETY: dup of a descriptor checked to be open; the copy is
            // ours to own and close.
            let d = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
            if d < 0 {
                return Err(unwritable(path, std::io::Error::last_os_error()));
            }
            return Ok(Special {
                // SAFETY: `d` is a fresh descriptor nobody else owns.
                file: unsafe { File::from_raw_fd(d) },
                path: path.to_path_buf(),
            });
        }
        let target = resolve(path)?;
        let signals = crate::util::signal::count();
        let mut said = false;
        loop {
            match OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
                .open(&target)
            {
                Ok(file) => {
                    return Ok(Special {
                        file,
                        path: path.to_path_buf(),
                    })
                }
                // A FIFO nobody reads yet.
                Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
                    if !said {
                        eprintln!(
                            "note: waiting for a reader of the FIFO {} (Ctrl-C gives up on it)",
                            path.display()
                        );
                        said = true;
                    }
                    if crate::util::signal::count() != signals {
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
    pub fn write_all(&mut self, mut bytes: &[u8]) -> Result<(), UserError> {
        use std::os::fd::AsRawFd;
        let signals = crate::util::signal::count();
        let fd = self.file.as_raw_fd();
        while !bytes.is_empty() {
            // SAFETY: writes at most bytes.len() bytes from a live slice.
            let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
            if n > 0 {
                bytes = &bytes[n as usize..];
                continue;
            }
            if n == 0 {
                return Err(unwritable(&self.path, "the write took no bytes"));
            }
            let e = std::io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EAGAIN) | Some(libc::EINTR) => {
                    if crate::util::signal::count() != signals {
                        return Err(unwritable(
                            &self.path,
                            "its reader stopped reading, and a stop signal came while waiting; the rest was not written",
                        ));
                    }
                    let mut p = libc::pollfd {
                        fd,
                        events: libc::POLLOUT,
                        revents: 0,
                    };
                    // SAFETY: one valid pollfd for the duration of the call.
                    unsafe { libc::poll(&mut p, 1, STEP_MS) };
                }
                _ => return Err(unwritable(&self.path, e)),
            }
        }
        Ok(())
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
/// measured, so an unwritable path fails at once; removed again, with the
/// parents made for it, when the run ends with nothing to put in it.
#[derive(Debug, Clone)]
pub struct Folder {
    pub path: PathBuf,
    /// The folders this run made, outermost first.
    made: Vec<PathBuf>,
}

impl Folder {
    /// Make `path` (and its parents), and create and remove one file in it;
    /// `flag` names the option in errors.
    pub fn prepare(path: &Path, flag: &str) -> Result<Folder, UserError> {
        let made: Vec<PathBuf> = path
            .ancestors()
            .filter(|a| !a.as_os_str().is_empty() && !a.exists())
            .map(Path::to_path_buf)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        std::fs::create_dir_all(path).map_err(|e| unwritable(path, format!("{e} ({flag})")))?;
        // A fresh random name, created O_EXCL|O_NOFOLLOW: a fixed one
        // could be a link planted in a shared folder, and writing it would
        // truncate the link's target.
        let (_, probe) = create_temp(&path.join(".bwscope-write-test"), 0o600)
            .map_err(|e| unwritable(path, format!("{e} ({flag})")))?;
        let _ = std::fs::remove_file(probe);
        Ok(Folder {
            path: path.to_path_buf(),
            made,
        })
    }

    /// Remove the folders this run made, innermost first, as long as they
    /// are empty (a folder with anything in it stays).
    pub fn remove_if_empty(&self) {
        for d in self.made.iter().rev() {
            if std::fs::remove_dir(d).is_err() {
                break;
            }
        }
    }
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
    match (std::fs::metadata(&ra), std::fs::metadata(&rb)) {
        (Ok(x), Ok(y)) => {
            use std::os::unix::fs::FileTypeExt;
            x.dev() == y.dev() && x.ino() == y.ino() && !x.file_type().is_char_device()
        }
        (Err(_), Err(_)) => {
            let abs = |p: &Path| {
                let dir = std::fs::canonicalize(dir_of(p)).unwrap_or(dir_of(p));
                dir.join(p.file_name().unwrap_or_default())
            };
            abs(&ra) == abs(&rb)
        }
        _ => false,
    }
}
