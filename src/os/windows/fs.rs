//! Files on Windows: owners and access entries (ACLs) instead of uid and
//! mode bits, owner-only files instead of mode 0600, reparse points
//! (symbolic links, junctions) refused where a link is, device names
//! (`NUL`, `CON`, …) written in place as special files.

use std::fs::{File, Metadata, OpenOptions};
use std::os::windows::ffi::OsStrExt;
use std::os::windows::fs::OpenOptionsExt;
use std::os::windows::io::AsRawHandle;
use std::path::Path;
use std::sync::OnceLock;

use windows_sys::Win32::Foundation::{LocalFree, ERROR_CANT_RESOLVE_FILENAME, HANDLE};
use windows_sys::Win32::Security::Authorization::{
    ConvertSidToStringSidW, GetSecurityInfo, SetEntriesInAclW, SetSecurityInfo, EXPLICIT_ACCESS_W,
    NO_MULTIPLE_TRUSTEE, SET_ACCESS, SE_FILE_OBJECT, TRUSTEE_IS_SID, TRUSTEE_IS_UNKNOWN, TRUSTEE_W,
};
use windows_sys::Win32::Security::{
    AclSizeInformation, EqualSid, GetAce, GetAclInformation, GetLengthSid, GetTokenInformation,
    IsWellKnownSid, TokenUser, WinBuiltinAdministratorsSid, WinLocalSystemSid, ACCESS_ALLOWED_ACE,
    ACL, ACL_SIZE_INFORMATION, DACL_SECURITY_INFORMATION, NO_INHERITANCE,
    OWNER_SECURITY_INFORMATION, PROTECTED_DACL_SECURITY_INFORMATION, PSECURITY_DESCRIPTOR, PSID,
    TOKEN_QUERY, TOKEN_USER,
};
use windows_sys::Win32::Storage::FileSystem::{
    GetFileInformationByHandle, GetFileType, BY_HANDLE_FILE_INFORMATION,
    FILE_FLAG_BACKUP_SEMANTICS, FILE_FLAG_OPEN_REPARSE_POINT, FILE_GENERIC_READ,
    FILE_GENERIC_WRITE, FILE_TYPE_CHAR, FILE_TYPE_DISK, READ_CONTROL,
};
/// `ACCESS_ALLOWED_ACE_TYPE` (winnt.h).
const ACCESS_ALLOWED_ACE_TYPE: u32 = 0;
/// `INHERIT_ONLY_ACE` (winnt.h): an entry a folder passes to what is made
/// in it, which grants nothing on the folder itself (`CREATOR OWNER`'s
/// entries are such).
const INHERIT_ONLY_ACE: u8 = 0x08;
use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};

use crate::os::fs::{Facts, FolderFacts, Owner};

/// This process's user, as its token says (the bytes of its SID).
fn my_sid() -> &'static [u8] {
    static SID: OnceLock<Vec<u8>> = OnceLock::new();
    SID.get_or_init(|| {
        let mut token: HANDLE = std::ptr::null_mut();
        // SAFETY: an out-pointer to a local; closed below.
        if unsafe { OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) } == 0 {
            return Vec::new();
        }
        let token = super::Handle(token);
        let mut buf = vec![0u64; 64];
        let mut len = 0u32;
        // SAFETY: `buf` holds 512 bytes, 8-byte aligned.
        if unsafe {
            GetTokenInformation(token.0, TokenUser, buf.as_mut_ptr().cast(), 512, &mut len)
        } == 0
        {
            return Vec::new();
        }
        // SAFETY: the call wrote a TOKEN_USER at the start of `buf`.
        let sid = unsafe { (*buf.as_ptr().cast::<TOKEN_USER>()).User.Sid };
        // SAFETY: a valid SID inside `buf`.
        let n = unsafe { GetLengthSid(sid) } as usize;
        // SAFETY: `n` bytes of the SID.
        unsafe { std::slice::from_raw_parts(sid.cast::<u8>(), n) }.to_vec()
    })
}

fn sid_text(sid: PSID) -> String {
    let mut s: *mut u16 = std::ptr::null_mut();
    // SAFETY: a valid SID; the string is freed with LocalFree.
    if unsafe { ConvertSidToStringSidW(sid, &mut s) } == 0 {
        return "an unknown account".into();
    }
    // SAFETY: a NUL-terminated string from the call.
    let t = unsafe { super::from_wide(s) };
    // SAFETY: allocated by ConvertSidToStringSidW.
    unsafe { LocalFree(s.cast()) };
    format!("SID {t}")
}

fn is_me(sid: PSID) -> bool {
    let me = my_sid();
    // SAFETY: both are valid SIDs (ours copied out of the token).
    !me.is_empty() && unsafe { EqualSid(sid, me.as_ptr() as PSID) } != 0
}

fn is_admin(sid: PSID) -> bool {
    // SAFETY: a valid SID.
    unsafe {
        IsWellKnownSid(sid, WinBuiltinAdministratorsSid) != 0
            || IsWellKnownSid(sid, WinLocalSystemSid) != 0
    }
}

/// The owner and the access entries of the object behind `h`.
fn facts_of_handle(h: HANDLE) -> std::io::Result<Facts> {
    let (mut owner, mut dacl, mut sd): (PSID, *mut ACL, PSECURITY_DESCRIPTOR) = (
        std::ptr::null_mut(),
        std::ptr::null_mut(),
        std::ptr::null_mut(),
    );
    // SAFETY: out-pointers to locals; the descriptor is freed below.
    let e = unsafe {
        GetSecurityInfo(
            h,
            SE_FILE_OBJECT,
            OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION,
            &mut owner,
            std::ptr::null_mut(),
            &mut dacl,
            std::ptr::null_mut(),
            &mut sd,
        )
    };
    if e != 0 {
        return Err(std::io::Error::from_raw_os_error(e as i32));
    }
    let facts = Facts {
        owner: Owner {
            name: sid_text(owner),
            is_me: is_me(owner),
            is_admin: is_admin(owner),
        },
        others_may_access: others(dacl, owner, READ_OR_WRITE),
        others_may_write: others(dacl, owner, WRITE),
    };
    // SAFETY: allocated by GetSecurityInfo.
    unsafe { LocalFree(sd) };
    Ok(facts)
}

/// Reading or writing the data, or changing who may: attributes,
/// READ_CONTROL and SYNCHRONIZE alone reveal nothing.
const READ_OR_WRITE: u32 = 0x1 | 0x2 | 0x4 // FILE_READ_DATA, FILE_WRITE_DATA, FILE_APPEND_DATA
    | 0x0004_0000 | 0x0008_0000 // WRITE_DAC, WRITE_OWNER
    | 0x1000_0000 | 0x4000_0000 | 0x8000_0000; // GENERIC_ALL, _WRITE, _READ

/// Changing the data, or who may.
const WRITE: u32 = 0x2 | 0x4 // FILE_WRITE_DATA, FILE_APPEND_DATA
    | 0x0004_0000 | 0x0008_0000 // WRITE_DAC, WRITE_OWNER
    | 0x1000_0000 | 0x4000_0000; // GENERIC_ALL, GENERIC_WRITE

/// An allow entry granting any of `mask` to someone other than the owner,
/// the administrators or the system; a missing DACL lets everyone in.
fn others(dacl: *mut ACL, owner: PSID, mask: u32) -> Option<String> {
    if dacl.is_null() {
        return Some("no access list (everyone may read and write it)".into());
    }
    let mut info = ACL_SIZE_INFORMATION::default();
    // SAFETY: a valid ACL and an out-struct of the size passed.
    if unsafe {
        GetAclInformation(
            dacl,
            (&mut info as *mut ACL_SIZE_INFORMATION).cast(),
            std::mem::size_of::<ACL_SIZE_INFORMATION>() as u32,
            AclSizeInformation,
        )
    } == 0
    {
        return None;
    }
    for i in 0..info.AceCount {
        let mut ace: *mut core::ffi::c_void = std::ptr::null_mut();
        // SAFETY: i < AceCount of a valid ACL.
        if unsafe { GetAce(dacl, i, &mut ace) } == 0 {
            continue;
        }
        // SAFETY: every ACE starts with its header.
        let a = unsafe { &*ace.cast::<ACCESS_ALLOWED_ACE>() };
        if a.Header.AceType as u32 != ACCESS_ALLOWED_ACE_TYPE
            || a.Header.AceFlags & INHERIT_ONLY_ACE != 0
        {
            continue;
        }
        if a.Mask & mask == 0 {
            continue;
        }
        let sid = (&a.SidStart as *const u32) as PSID;
        // SAFETY: both SIDs are valid.
        if unsafe { EqualSid(sid, owner) } != 0 || is_me(sid) || is_admin(sid) {
            continue;
        }
        return Some(format!(
            "an access entry for {} (access {:#x})",
            sid_text(sid),
            a.Mask
        ));
    }
    None
}

/// May this process write `path`? (Its read-only attribute; access lists
/// are left to the write itself, which names the error.)
pub fn can_write(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.permissions().readonly())
}

/// May this process create files in `dir`? (A folder; the temporary file
/// a replacement is written through names any refusal.)
pub fn can_write_dir(dir: &Path) -> bool {
    std::fs::metadata(dir).is_ok_and(|m| m.is_dir())
}

/// Who owns the open file `f` and who else may touch it.
pub fn facts(f: &File) -> std::io::Result<Facts> {
    facts_of_handle(f.as_raw_handle() as HANDLE)
}

/// The owner of what is at `path`, not following a reparse point.
pub fn owner_at(path: &Path) -> Option<Owner> {
    let f = OpenOptions::new()
        .access_mode(READ_CONTROL)
        .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT | FILE_FLAG_BACKUP_SEMANTICS)
        .open(path)
        .ok()?;
    facts(&f).ok().map(|f| f.owner)
}

/// Who may write the folder `dir` (following a link to it); Windows has
/// no sticky bit, so a folder others may write is never "shared but
/// safe".
pub fn folder_facts(dir: &Path) -> std::io::Result<FolderFacts> {
    let f = OpenOptions::new()
        .access_mode(READ_CONTROL)
        .custom_flags(FILE_FLAG_BACKUP_SEMANTICS)
        .open(dir)?;
    if !f.metadata()?.is_dir() {
        return Err(std::io::Error::other(format!(
            "{} is not a folder",
            dir.display()
        )));
    }
    Ok(FolderFacts {
        facts: facts(&f)?,
        sticky: false,
    })
}

pub fn me() -> String {
    let me = my_sid();
    if me.is_empty() {
        return "an unknown account".into();
    }
    sid_text(me.as_ptr() as PSID)
}

/// Read-only files are 0o444, others 0o666 (what the attribute says).
pub fn permissions(m: &Metadata) -> u32 {
    if m.permissions().readonly() {
        0o444
    } else {
        0o666
    }
}

/// An access list: its owner alone (`private`), or the owner and
/// everyone; freed on drop.
struct Acl(*mut ACL);

impl Acl {
    fn new(private: bool) -> std::io::Result<Acl> {
        let me = my_sid();
        if me.is_empty() {
            return Err(std::io::Error::other("this process's account is unknown"));
        }
        let world: [u8; 12] = [1, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0]; // S-1-1-0, Everyone
        let entry = |sid: *const u8, mask: u32| EXPLICIT_ACCESS_W {
            grfAccessPermissions: mask,
            grfAccessMode: SET_ACCESS,
            grfInheritance: NO_INHERITANCE,
            Trustee: TRUSTEE_W {
                pMultipleTrustee: std::ptr::null_mut(),
                MultipleTrusteeOperation: NO_MULTIPLE_TRUSTEE,
                TrusteeForm: TRUSTEE_IS_SID,
                TrusteeType: TRUSTEE_IS_UNKNOWN,
                ptstrName: sid as *mut u16,
            },
        };
        const ALL: u32 = 0x001F_01FF; // FILE_ALL_ACCESS
        let mut entries = vec![entry(me.as_ptr(), ALL)];
        if !private {
            entries.push(entry(
                world.as_ptr(),
                FILE_GENERIC_READ | FILE_GENERIC_WRITE,
            ));
        }
        let mut acl: *mut ACL = std::ptr::null_mut();
        // SAFETY: entries point at SIDs alive for the call; the new ACL is
        // freed on drop.
        let e = unsafe {
            SetEntriesInAclW(
                entries.len() as u32,
                entries.as_ptr(),
                std::ptr::null(),
                &mut acl,
            )
        };
        if e != 0 {
            return Err(std::io::Error::from_raw_os_error(e as i32));
        }
        Ok(Acl(acl))
    }
}

impl Drop for Acl {
    fn drop(&mut self) {
        // SAFETY: allocated by SetEntriesInAclW.
        unsafe { LocalFree(self.0.cast()) };
    }
}

/// Give the open file `h` (opened with WRITE_DAC and WRITE_OWNER) the
/// access list of [`Acl::new`], protected from the folder's inherited
/// entries, with us as its owner.
fn set_access(h: HANDLE, private: bool) -> std::io::Result<()> {
    let acl = Acl::new(private)?;
    // SAFETY: a live handle and a valid ACL and SID.
    let e = unsafe {
        SetSecurityInfo(
            h,
            SE_FILE_OBJECT,
            OWNER_SECURITY_INFORMATION
                | DACL_SECURITY_INFORMATION
                | PROTECTED_DACL_SECURITY_INFORMATION,
            my_sid().as_ptr() as PSID,
            std::ptr::null_mut(),
            acl.0,
            std::ptr::null(),
        )
    };
    if e != 0 {
        return Err(std::io::Error::from_raw_os_error(e as i32));
    }
    Ok(())
}

/// Set a file's access: owner only when `mode` gives group and others
/// nothing, owner and everyone otherwise; read-only when the owner may
/// not write. A private file is replaced by a private copy (made private
/// at its creation): an access list set on an existing file is not
/// honoured by every implementation (wine keeps the one it derives from
/// the Unix mode).
pub fn set_permissions(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::io::Write;
    if mode & 0o077 == 0 {
        let bytes = std::fs::read(path)?;
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(format!(".{:016x}.tmp", crate::os::random::u64()));
        let tmp = std::path::PathBuf::from(tmp);
        let mut f = create_new(&tmp, 0o600)?;
        let written = f.write_all(&bytes);
        drop(f);
        if let Err(e) = written.and_then(|_| std::fs::rename(&tmp, path)) {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    } else {
        let f = OpenOptions::new()
            .access_mode(
                READ_CONTROL | 0x0004_0000 /* WRITE_DAC */ | 0x0008_0000, /* WRITE_OWNER */
            )
            .custom_flags(FILE_FLAG_BACKUP_SEMANTICS)
            .open(path)?;
        set_access(f.as_raw_handle() as HANDLE, false)?;
    }
    let mut p = std::fs::metadata(path)?.permissions();
    p.set_readonly(mode & 0o200 == 0);
    std::fs::set_permissions(path, p)
}

/// No sticky shared folders on Windows: no link is refused this way.
pub fn untrusted_link(_link: &Metadata, _dir: &Metadata) -> Option<String> {
    None
}

/// Create `path` for writing, exclusively (an existing file or link at
/// the name makes it fail), not inherited by children; owner-only when
/// `mode` gives group and others nothing (the counterpart of 0600), and
/// so from its creation (the access list is part of the create).
pub fn create_new(path: &Path, mode: u32) -> std::io::Result<File> {
    use std::os::windows::io::FromRawHandle;
    use windows_sys::Win32::Security::{
        InitializeSecurityDescriptor, SetSecurityDescriptorControl, SetSecurityDescriptorDacl,
        SetSecurityDescriptorOwner, SECURITY_ATTRIBUTES, SECURITY_DESCRIPTOR, SE_DACL_PROTECTED,
    };
    use windows_sys::Win32::Storage::FileSystem::{
        CreateFileW, CREATE_NEW, FILE_ATTRIBUTE_NORMAL, FILE_SHARE_DELETE, FILE_SHARE_READ,
        FILE_SHARE_WRITE,
    };
    let private = mode & 0o077 == 0;
    let acl = if private { Some(Acl::new(true)?) } else { None };
    // SAFETY: plain data, initialised by the calls below.
    let mut sd: SECURITY_DESCRIPTOR = unsafe { std::mem::zeroed() };
    let sdp = (&mut sd as *mut SECURITY_DESCRIPTOR).cast();
    let sa = SECURITY_ATTRIBUTES {
        nLength: std::mem::size_of::<SECURITY_ATTRIBUTES>() as u32,
        lpSecurityDescriptor: if acl.is_some() {
            sdp
        } else {
            std::ptr::null_mut()
        },
        bInheritHandle: 0,
    };
    if let Some(acl) = &acl {
        // SAFETY: an absolute descriptor in `sd` pointing at an ACL and a
        // SID that outlive the create.
        unsafe {
            InitializeSecurityDescriptor(sdp, 1);
            SetSecurityDescriptorOwner(sdp, my_sid().as_ptr() as PSID, 0);
            SetSecurityDescriptorDacl(sdp, 1, acl.0, 0);
            SetSecurityDescriptorControl(sdp, SE_DACL_PROTECTED, SE_DACL_PROTECTED);
        }
    }
    let wpath: Vec<u16> = path
        .as_os_str()
        .encode_wide()
        .chain(std::iter::once(0))
        .collect();
    // SAFETY: a NUL-terminated path and security attributes alive for the
    // call; the handle is owned by the File.
    let h = unsafe {
        CreateFileW(
            wpath.as_ptr(),
            FILE_GENERIC_WRITE | READ_CONTROL,
            FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
            &sa,
            CREATE_NEW,
            FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT,
            std::ptr::null_mut(),
        )
    };
    if h == windows_sys::Win32::Foundation::INVALID_HANDLE_VALUE {
        return Err(super::last_error());
    }
    // SAFETY: a fresh handle nobody else owns.
    Ok(unsafe { File::from_raw_handle(h as _) })
}

/// A replacement inherits its folder's access list; nothing to copy.
pub fn copy_identity(_f: &File, _old: &Metadata) {}

/// No path names an open handle here (`/dev/fd/N` has no counterpart).
pub fn descriptor(_path: &Path) -> Option<i32> {
    None
}

pub fn descriptor_writable(_fd: i32) -> bool {
    false
}

pub fn dup_descriptor(_fd: i32) -> std::io::Result<File> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "no descriptors by number on Windows",
    ))
}

/// Open a device (`NUL`, `CON`) or a named pipe for writing in place.
pub fn open_special(path: &Path) -> std::io::Result<File> {
    OpenOptions::new().write(true).open(path)
}

pub fn is_no_reader(_e: &std::io::Error) -> bool {
    false
}

/// The error [`open_for_input`] gives for a reparse point it may not
/// follow.
pub fn is_link_refused(e: &std::io::Error) -> bool {
    e.raw_os_error() == Some(ERROR_CANT_RESOLVE_FILENAME as i32)
}

/// Writes to devices and pipes block here; nothing to wait on.
pub fn wait_writable(_f: &File, ms: i32) {
    std::thread::sleep(std::time::Duration::from_millis(ms.max(0) as u64));
}

/// (volume serial, file index) of an existing path; None for a character
/// device (`NUL` may take any number of outputs).
fn identity(path: &Path) -> Option<(u32, u64)> {
    let f = OpenOptions::new()
        .access_mode(0)
        .custom_flags(FILE_FLAG_BACKUP_SEMANTICS)
        .open(path)
        .ok()?;
    let h = f.as_raw_handle() as HANDLE;
    // SAFETY: a live handle.
    if unsafe { GetFileType(h) } == FILE_TYPE_CHAR {
        return None;
    }
    file_index(h)
}

/// (volume serial, file index) of an open disk file; None for anything
/// else (a console, a pipe, `NUL`).
fn identity_of(h: HANDLE) -> Option<(u32, u64)> {
    // SAFETY: a live handle.
    if unsafe { GetFileType(h) } != FILE_TYPE_DISK {
        return None;
    }
    file_index(h)
}

/// (volume serial, file index) of the object behind `h`.
fn file_index(h: HANDLE) -> Option<(u32, u64)> {
    // SAFETY: plain data, all-zero is a valid value.
    let mut i: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
    // SAFETY: a live handle and an out-struct.
    if unsafe { GetFileInformationByHandle(h, &mut i) } == 0 {
        return None;
    }
    Some((
        i.dwVolumeSerialNumber,
        (i.nFileIndexHigh as u64) << 32 | i.nFileIndexLow as u64,
    ))
}

/// Is the open file `f` the one at `path` now?
pub fn is_file_at(f: &File, path: &Path) -> Option<bool> {
    let here = identity_of(f.as_raw_handle() as HANDLE);
    let there = identity(path)?;
    Some(here == Some(there))
}

/// Is stdin the file at `path` (a shell's `< path`)?
pub fn stdin_is(path: &Path) -> Option<bool> {
    use windows_sys::Win32::System::Console::{GetStdHandle, STD_INPUT_HANDLE};
    // SAFETY: no preconditions; the handle is borrowed, not closed.
    let h = unsafe { GetStdHandle(STD_INPUT_HANDLE) };
    if h.is_null() || h == windows_sys::Win32::Foundation::INVALID_HANDLE_VALUE {
        return None;
    }
    let there = identity(path)?;
    Some(identity_of(h) == Some(there))
}

/// Take an exclusive lock on the open file `f` without waiting (`LockFile`
/// on its first byte, which never waits): `Ok(false)` when another handle
/// holds it. The lock ends when the handle closes, also when the process
/// dies.
pub fn try_lock(f: &File) -> std::io::Result<bool> {
    use windows_sys::Win32::Storage::FileSystem::LockFile;
    // SAFETY: a live handle.
    if unsafe { LockFile(f.as_raw_handle() as HANDLE, 0, 0, 1, 0) } != 0 {
        return Ok(true);
    }
    let e = super::last_error();
    if e.raw_os_error() == Some(windows_sys::Win32::Foundation::ERROR_LOCK_VIOLATION as i32) {
        Ok(false)
    } else {
        Err(e)
    }
}

/// Are `a` and `b` (both existing) one file?
pub fn same_file(a: &Path, b: &Path) -> Option<bool> {
    if !a.exists() || !b.exists() {
        return None;
    }
    Some(matches!((identity(a), identity(b)), (Some(x), Some(y)) if x == y))
}

/// A reserved device name (`NUL`, `CON`, `COM1`, …, in any folder and
/// with any extension) or a `\\.\` device path.
pub fn is_device_name(path: &Path) -> bool {
    if path.as_os_str().to_string_lossy().starts_with(r"\\.\") {
        return true;
    }
    let Some(stem) = path
        .file_stem()
        .map(|s| s.to_string_lossy().to_ascii_uppercase())
    else {
        return false;
    };
    let stem = stem.trim_end_matches([' ', '.']);
    matches!(stem, "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$")
        || ((stem.starts_with("COM") || stem.starts_with("LPT"))
            && stem.len() == 4
            && stem.as_bytes()[3].is_ascii_digit()
            && stem.as_bytes()[3] != b'0')
}

pub fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::windows::fs::symlink_file(target, link)
}

pub fn make_fifo(_path: &Path) -> std::io::Result<()> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "no FIFOs on Windows",
    ))
}

/// Open `path` to read a file someone else may have put there, refusing a
/// reparse point (link, junction) at the path unless `follow`.
pub fn open_for_input(path: &Path, follow: bool) -> std::io::Result<File> {
    let mut o = OpenOptions::new();
    o.read(true);
    // Folders open too (then refused as folders, as elsewhere).
    o.custom_flags(if follow {
        FILE_FLAG_BACKUP_SEMANTICS
    } else {
        FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT
    });
    let f = o.open(path)?;
    if !follow && f.metadata()?.file_type().is_symlink() {
        return Err(std::io::Error::from_raw_os_error(
            ERROR_CANT_RESOLVE_FILENAME as i32,
        ));
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    #[test]
    fn device_names() {
        use std::path::Path;
        for n in [
            "NUL",
            "nul.txt",
            r"C:\x\COM3",
            "con",
            r"\\.\pipe\x",
            "LPT1.log",
        ] {
            assert!(super::is_device_name(Path::new(n)), "{n}");
        }
        for n in ["null", "COM0", "COM10", "run.json", "CONSOLE"] {
            assert!(!super::is_device_name(Path::new(n)), "{n}");
        }
    }

    #[test]
    fn private_files_are_owned_by_us_and_shared_with_nobody() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("secret");
        let f = super::create_new(&p, 0o600).unwrap();
        let facts = super::facts(&f).unwrap();
        assert!(facts.owner.is_me, "{facts:?}");
        assert_eq!(facts.others_may_access, None, "{facts:?}");
        assert_eq!(facts.others_may_write, None, "{facts:?}");
        assert!(facts.kept_by_us().is_ok());
        drop(f);
        super::set_permissions(&p, 0o644).unwrap();
        let f = std::fs::File::open(&p).unwrap();
        let facts = super::facts(&f).unwrap();
        assert!(facts.others_may_access.is_some());
        // Everyone may write it (the counterpart of 0666 here).
        assert!(facts.others_may_write.is_some(), "{facts:?}");
        assert!(facts.kept_by_us().is_err());
        assert!(super::create_new(&p, 0o600).is_err(), "exclusive");
    }
}
