//! Files as the system sees them: who owns one and who else may touch it,
//! creating a file exclusively without following a link, writing special
//! files (descriptors, FIFOs, devices) in place without blocking, and
//! telling two names of one file apart.
//!
//! The policies built on these (replace a result atomically, trust a
//! token only from its owner) live with their users (`report::outfile`,
//! `net::token`, `cluster::rendezvous`); this module answers the system's
//! part of each question.

use std::fs::{File, Metadata};
use std::io::Write;
use std::path::{Path, PathBuf};

pub use super::imp::fs::{
    can_write, can_write_dir, copy_identity, create_new, descriptor, descriptor_writable,
    dup_descriptor, facts, folder_facts, is_device_name, is_file_at, is_link_refused, is_no_reader,
    make_fifo, me, open_for_input, open_special, owner_at, permissions, same_file, set_permissions,
    stdin_is, symlink, try_lock, untrusted_link, wait_writable,
};

/// Who may touch a file, as its open handle says (so the answer is about
/// the file read, not one swapped in at its name since).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts {
    pub owner: Owner,
    /// Others than the owner may read or write it: how, for a message
    /// (`mode 0644`; on Windows the account an access entry names).
    pub others_may_access: Option<String>,
    /// Others than the owner may change it (a subset of
    /// `others_may_access`: `mode 0664`; on Windows an entry granting
    /// write): what a file read but not secret must not allow.
    pub others_may_write: Option<String>,
}

impl Facts {
    /// The rule for files bwscope keeps and reads back (rendezvous notes,
    /// the knee store): owned by us or root, and nobody else may change
    /// it. `Err` says why not, for a message.
    pub fn kept_by_us(&self) -> Result<(), String> {
        if !self.owner.trusted() {
            return Err(format!(
                "it belongs to {}, not to you ({}) or root",
                self.owner.name,
                me()
            ));
        }
        match &self.others_may_write {
            Some(how) => Err(format!("others may change it ({how})")),
            None => Ok(()),
        }
    }
}

/// Who may write a folder, and whether only a file's owner may remove or
/// rename it there (the sticky bit of /tmp): what decides whether a file
/// kept in it can be replaced, or planted beside, by someone else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FolderFacts {
    pub facts: Facts,
    pub sticky: bool,
}

/// Who owns a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    /// How the system names the owner in a message (`uid 1000`).
    pub name: String,
    /// This process's effective user.
    pub is_me: bool,
    /// The system's administrator (root).
    pub is_admin: bool,
}

impl Owner {
    /// Owned by us or by the administrator: someone whose content we may
    /// trust (the rule for tokens and rendezvous notes).
    pub fn trusted(&self) -> bool {
        self.is_me || self.is_admin
    }
}

/// A file's permissions as bits to give a replacement (0o666 where the
/// system has no such bits for it).
pub fn mode_of(m: &Metadata) -> u32 {
    permissions(m)
}

/// Nobody may write it (by its permission bits; root included, by our
/// rule).
pub fn is_read_only(m: &Metadata) -> bool {
    permissions(m) & 0o222 == 0
}

/// Write all of `bytes` to a special file opened with [`open_special`] or
/// [`dup_descriptor`], waiting in steps of `step_ms` while a pipe is full;
/// `give_up` is asked between steps (a stop signal came) and ends the wait
/// with its own error.
pub fn write_all_nonblocking(
    file: &mut File,
    mut bytes: &[u8],
    step_ms: i32,
    give_up: impl Fn() -> bool,
) -> Result<(), WriteError> {
    while !bytes.is_empty() {
        match file.write(bytes) {
            Ok(0) => return Err(WriteError::NoProgress),
            Ok(n) => bytes = &bytes[n..],
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
                ) =>
            {
                if give_up() {
                    return Err(WriteError::GaveUp);
                }
                wait_writable(file, step_ms);
            }
            Err(e) => return Err(WriteError::Io(e)),
        }
    }
    Ok(())
}

/// Why [`write_all_nonblocking`] stopped.
#[derive(Debug)]
pub enum WriteError {
    NoProgress,
    GaveUp,
    Io(std::io::Error),
}

/// A fresh file beside `target` (`.NAME.RANDOM.tmp` in its folder),
/// created exclusively and without following a link (a file or link
/// planted at the name makes the create fail, never redirects it), with
/// `mode`: what a replacement is written through before its rename.
/// Returns it and its path.
pub fn create_temp_beside(target: &Path, mode: u32) -> std::io::Result<(File, PathBuf)> {
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    // At most 120 bytes of the name (on a character boundary), so the
    // temporary name stays within the 255 bytes a name may have however
    // many bytes each character of a long name takes.
    let name = target
        .file_name()
        .map(|n| {
            let mut out = String::new();
            for c in n.to_string_lossy().chars() {
                if out.len() + c.len_utf8() > 120 {
                    break;
                }
                out.push(c);
            }
            out
        })
        .unwrap_or_default();
    let mut last = None;
    for _ in 0..16 {
        let tmp = dir.join(format!(".{name}.{:016x}.tmp", super::random::u64()));
        match create_new(&tmp, mode) {
            Ok(f) => return Ok((f, tmp)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::AlreadyExists,
        format!("no free temporary name in its directory ({last:?})"),
    ))
}

/// Does `path` end in a separator (so names a directory)?
pub fn ends_with_separator(path: &Path) -> bool {
    let b = path.as_os_str().as_encoded_bytes();
    b.ends_with(b"/") || (cfg!(windows) && b.ends_with(b"\\"))
}
