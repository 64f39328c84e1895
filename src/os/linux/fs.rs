//! POSIX files: uid and mode bits, `faccessat`, `O_EXCL|O_NOFOLLOW`,
//! `/dev/fd/N`, FIFOs opened `O_NONBLOCK`, `poll`.

use std::fs::{File, Metadata, OpenOptions};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

use crate::os::fs::{Facts, FolderFacts, Owner};

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

/// `access(2)` with the effective ids.
fn access(path: &Path, mode: libc::c_int) -> bool {
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: a valid NUL-terminated path; faccessat only reads it.
    unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), mode, libc::AT_EACCESS) == 0 }
}

/// May this process write `path` (an existing file or device)?
pub fn can_write(path: &Path) -> bool {
    access(path, libc::W_OK)
}

/// May this process create and remove files in the directory `dir`?
pub fn can_write_dir(dir: &Path) -> bool {
    access(dir, libc::W_OK | libc::X_OK)
}

/// The owner of the file `m` describes.
fn owner(m: &Metadata) -> Owner {
    Owner {
        name: format!("uid {}", m.uid()),
        is_me: m.uid() == euid(),
        is_admin: m.uid() == 0,
    }
}

/// How this process's user is named in messages (`uid 1000`).
pub fn me() -> String {
    format!("uid {}", euid())
}

/// The permission bits (`0o7777` of the mode).
pub fn permissions(m: &Metadata) -> u32 {
    m.mode() & 0o7777
}

/// Set a file's permission bits.
pub fn set_permissions(path: &Path, mode: u32) -> std::io::Result<()> {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

/// Who may touch the open file `f` (its owner, and the mode when group or
/// others have any bit).
pub fn facts(f: &File) -> std::io::Result<Facts> {
    let m = f.metadata()?;
    Ok(Facts {
        owner: owner(&m),
        others_may_access: (m.mode() & 0o077 != 0)
            .then(|| format!("mode {:04o}", m.mode() & 0o7777)),
        others_may_write: (m.mode() & 0o022 != 0)
            .then(|| format!("mode {:04o}", m.mode() & 0o7777)),
    })
}

/// Who may write the folder `dir` (following a link to it: a data folder
/// may be reached through one), and whether it is sticky.
pub fn folder_facts(dir: &Path) -> std::io::Result<FolderFacts> {
    let m = std::fs::metadata(dir)?;
    if !m.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotADirectory,
            format!("{} is not a folder", dir.display()),
        ));
    }
    let mode = m.mode() & 0o7777;
    Ok(FolderFacts {
        facts: Facts {
            owner: owner(&m),
            others_may_access: (mode & 0o077 != 0).then(|| format!("mode {mode:04o}")),
            others_may_write: (mode & 0o022 != 0).then(|| format!("mode {mode:04o}")),
        },
        sticky: mode & 0o1000 != 0,
    })
}

/// The owner of what is at `path`, not following a link.
pub fn owner_at(path: &Path) -> Option<Owner> {
    std::fs::symlink_metadata(path).ok().map(|m| owner(&m))
}

/// The kernel's `fs.protected_symlinks` rule, which resolving a link
/// ourselves would otherwise bypass: a link in a sticky world-writable
/// directory (such as /tmp) that belongs to neither us nor the directory's
/// owner is not followed. Returns its owner's name when refused.
pub fn untrusted_link(link: &Metadata, dir: &Metadata) -> Option<String> {
    let shared = dir.mode() & 0o1002 == 0o1002;
    (shared && link.uid() != euid() && link.uid() != dir.uid())
        .then(|| format!("uid {}", link.uid()))
}

/// Create `path` for writing, exclusively (`O_CREAT|O_EXCL`: an existing
/// file or a planted link at the name makes it fail, never redirects it),
/// not following a link, not inherited by children, with `mode`.
pub fn create_new(path: &Path, mode: u32) -> std::io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// Give a replacement file the old one's mode and (where allowed) owner.
/// Failures are ignored: an unprivileged caller may not give the file
/// away, and the mode set at creation already excludes what the umask
/// removed.
pub fn copy_identity(f: &File, old: &Metadata) {
    // SAFETY: a valid open descriptor.
    unsafe {
        libc::fchown(f.as_raw_fd(), old.uid(), old.gid());
        // mode_t is 16 bits on macOS (this file serves it too).
        libc::fchmod(f.as_raw_fd(), (old.mode() & 0o777) as libc::mode_t);
    }
}

/// The descriptor a path names: `/dev/stdout`, `/dev/stderr`, `/dev/fd/N`
/// and `/proc/self/fd/N` (a shell's `>(...)` gives the last two). Such a
/// path is the descriptor already open, not a file to replace: resolving
/// it would find `pipe:[…]`, or replace the file the shell redirected to
/// with a new one the descriptor no longer reaches.
pub fn descriptor(path: &Path) -> Option<i32> {
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

/// Is descriptor `fd` open for writing?
pub fn descriptor_writable(fd: i32) -> bool {
    // SAFETY: F_GETFL on any number only reads the descriptor table.
    let fl = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    fl >= 0 && matches!(fl & libc::O_ACCMODE, libc::O_WRONLY | libc::O_RDWR)
}

/// A copy of descriptor `fd` ours to own and close.
pub fn dup_descriptor(fd: i32) -> std::io::Result<File> {
    // SAFETY: F_DUPFD_CLOEXEC on any number fails cleanly if it is not open.
    let d = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
    if d < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `d` is a fresh descriptor nobody else owns.
    Ok(unsafe { File::from_raw_fd(d) })
}

/// Open a special file (FIFO, device) for writing in place: no create, no
/// truncate, never waiting (`O_NONBLOCK`).
pub fn open_special(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
}

/// Did [`open_special`] fail because a FIFO has no reader yet (ENXIO)?
pub fn is_no_reader(e: &std::io::Error) -> bool {
    e.raw_os_error() == Some(libc::ENXIO)
}

/// Did an open refuse to follow a symbolic link (ELOOP with O_NOFOLLOW)?
pub fn is_link_refused(e: &std::io::Error) -> bool {
    e.raw_os_error() == Some(libc::ELOOP)
}

/// Wait up to `ms` for `f` to take more bytes (a full pipe).
pub fn wait_writable(f: &File, ms: i32) {
    let mut p = libc::pollfd {
        fd: f.as_raw_fd(),
        events: libc::POLLOUT,
        revents: 0,
    };
    // SAFETY: one valid pollfd for the duration of the call.
    unsafe { libc::poll(&mut p, 1, ms) };
}

/// Are `a` and `b` (both existing) one file, by device and inode? A
/// character device such as /dev/null may take any number of outputs.
pub fn same_file(a: &Path, b: &Path) -> Option<bool> {
    let (a, b) = (std::fs::metadata(a).ok()?, std::fs::metadata(b).ok()?);
    Some(a.dev() == b.dev() && a.ino() == b.ino() && !a.file_type().is_char_device())
}

/// Is the open file `f` the one at `path` now (by device and inode,
/// following a link)? A character device such as /dev/null is never
/// "the same": it may take any number of streams.
pub fn is_file_at(f: &File, path: &Path) -> Option<bool> {
    let (a, b) = (f.metadata().ok()?, std::fs::metadata(path).ok()?);
    Some(a.dev() == b.dev() && a.ino() == b.ino() && !a.file_type().is_char_device())
}

/// Is stdin the file at `path` (a shell's `< path`)? None when stdin is
/// closed or `path` does not exist.
pub fn stdin_is(path: &Path) -> Option<bool> {
    use std::os::fd::AsFd;
    let fd = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
    is_file_at(&File::from(fd), path)
}

/// Take an exclusive lock on the open file `f` without waiting
/// (`flock(LOCK_EX|LOCK_NB)`): `Ok(false)` when another open file holds
/// it. The lock ends with the last descriptor of `f`, also when the
/// process dies.
pub fn try_lock(f: &File) -> std::io::Result<bool> {
    // SAFETY: a valid open descriptor.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Ok(false)
    } else {
        Err(e)
    }
}

/// A name that means a device whatever the folder (none here: devices are
/// files in /dev, which their metadata shows).
pub fn is_device_name(_path: &Path) -> bool {
    false
}

/// A symbolic link at `link` to `target` (tests, fixtures).
pub fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

/// A FIFO at `path`, mode 0600 (tests of readers that must not wait).
pub fn make_fifo(path: &Path) -> std::io::Result<()> {
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())?;
    // SAFETY: a valid NUL-terminated path.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Open `path` to read a file someone else may have put there: never
/// waiting (`O_NONBLOCK`: a FIFO without a writer would otherwise block
/// `open()` until one comes), and refusing a symbolic link at the path
/// unless `follow`.
pub fn open_for_input(path: &Path, follow: bool) -> std::io::Result<File> {
    let mut flags = libc::O_NONBLOCK | libc::O_CLOEXEC;
    if !follow {
        flags |= libc::O_NOFOLLOW;
    }
    OpenOptions::new().read(true).custom_flags(flags).open(path)
}
