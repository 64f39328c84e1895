//! A process team without fork: a named shared mapping and a named event
//! for the parent's sleep, the workers started with `CreateProcess` of
//! this program (the region's name in their environment) in a job object
//! that kills them when the parent ends (`PR_SET_PDEATHSIG`'s
//! counterpart), in their own process group so the console's Ctrl-C
//! reaches the parent only.

use std::os::windows::io::AsRawHandle;
use std::os::windows::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use windows_sys::core::BOOL;
use windows_sys::Win32::Foundation::{HANDLE, INVALID_HANDLE_VALUE};
use windows_sys::Win32::System::Console::SetConsoleCtrlHandler;
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JobObjectExtendedLimitInformation,
    SetInformationJobObject, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
    JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
};
use windows_sys::Win32::System::Memory::{
    CreateFileMappingW, MapViewOfFile, OpenFileMappingW, UnmapViewOfFile, FILE_MAP_ALL_ACCESS,
    MEMORY_MAPPED_VIEW_ADDRESS, PAGE_READWRITE,
};
use windows_sys::Win32::System::Threading::{
    CreateEventW, OpenEventW, SetEvent, WaitForSingleObject, CREATE_NEW_PROCESS_GROUP,
    EVENT_MODIFY_STATE, SYNCHRONIZATION_SYNCHRONIZE,
};

use super::{last_error, wide, Handle};
use crate::os::team::Entry;

/// The environment variable that makes this program a team's worker:
/// `NAME:LEN:INDEX`.
const WORKER_VAR: &str = "BWSCOPE_TEAM_WORKER";

/// Memory shared with the team's workers (a named file mapping backed by
/// the paging file, zeroed), and the event the parent sleeps on.
pub struct Region {
    view: *mut u8,
    name: String,
    len: usize,
    _map: Handle,
    event: Handle,
    /// The parent's job object (workers are killed when it closes).
    job: Option<Handle>,
}

// SAFETY: the view is shared memory used only through atomics; handles
// may be used from any thread.
unsafe impl Send for Region {}
// SAFETY: as above.
unsafe impl Sync for Region {}

fn map_view(map: HANDLE, len: usize) -> std::io::Result<*mut u8> {
    // SAFETY: a live mapping of at least `len` bytes.
    let v = unsafe { MapViewOfFile(map, FILE_MAP_ALL_ACCESS, 0, 0, len) };
    if v.Value.is_null() {
        return Err(last_error());
    }
    Ok(v.Value.cast())
}

fn kill_on_close_job() -> Option<Handle> {
    // SAFETY: an anonymous job object, closed on drop.
    let job = Handle::new(unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) })?;
    // SAFETY: plain data.
    let mut lim: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
    lim.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
    // SAFETY: a live job and a struct of the size passed.
    let ok = unsafe {
        SetInformationJobObject(
            job.0,
            JobObjectExtendedLimitInformation,
            (&lim as *const JOBOBJECT_EXTENDED_LIMIT_INFORMATION).cast(),
            std::mem::size_of_val(&lim) as u32,
        )
    };
    (ok != 0).then_some(job)
}

impl Region {
    pub fn new(len: usize) -> std::io::Result<Region> {
        let name = format!(
            "Local\\bwscope-team-{}-{:016x}",
            std::process::id(),
            crate::os::random::u64()
        );
        let wmap = wide(&name);
        // SAFETY: a paging-file-backed mapping; closed on drop.
        let map = Handle::new(unsafe {
            CreateFileMappingW(
                INVALID_HANDLE_VALUE,
                std::ptr::null(),
                PAGE_READWRITE,
                (len as u64 >> 32) as u32,
                len as u32,
                wmap.as_ptr(),
            )
        })
        .ok_or_else(last_error)?;
        let wev = wide(&format!("{name}-wake"));
        // SAFETY: an auto-reset event, not signalled; closed on drop.
        let event = Handle::new(unsafe { CreateEventW(std::ptr::null(), 0, 0, wev.as_ptr()) })
            .ok_or_else(last_error)?;
        Ok(Region {
            view: map_view(map.0, len)?,
            name,
            len,
            _map: map,
            event,
            job: kill_on_close_job(),
        })
    }

    /// The region a worker's environment names.
    fn open(name: &str, len: usize) -> std::io::Result<Region> {
        let wmap = wide(name);
        // SAFETY: opening by name; closed on drop.
        let map = Handle::new(unsafe { OpenFileMappingW(FILE_MAP_ALL_ACCESS, 0, wmap.as_ptr()) })
            .ok_or_else(last_error)?;
        let wev = wide(&format!("{name}-wake"));
        // SAFETY: as above.
        let event = Handle::new(unsafe {
            OpenEventW(
                EVENT_MODIFY_STATE | SYNCHRONIZATION_SYNCHRONIZE,
                0,
                wev.as_ptr(),
            )
        })
        .ok_or_else(last_error)?;
        Ok(Region {
            view: map_view(map.0, len)?,
            name: name.to_string(),
            len,
            _map: map,
            event,
            job: None,
        })
    }

    pub fn as_ptr(&self) -> *mut u8 {
        self.view
    }

    /// Sleep while `word` still holds `seen`, at most `timeout`.
    pub fn wait(&self, word: &AtomicU32, seen: u32, timeout: Duration) {
        if word.load(Ordering::Acquire) != seen {
            return;
        }
        // SAFETY: a live event handle.
        unsafe {
            WaitForSingleObject(
                self.event.0,
                timeout.as_millis().min(u32::MAX as u128) as u32,
            )
        };
    }

    /// Wake the process sleeping in [`Region::wait`].
    pub fn wake(&self, _word: &AtomicU32) {
        // SAFETY: a live event handle.
        unsafe { SetEvent(self.event.0) };
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: the view MapViewOfFile returned.
        unsafe {
            UnmapViewOfFile(MEMORY_MAPPED_VIEW_ADDRESS {
                Value: self.view.cast(),
            })
        };
    }
}

/// A worker is this program started again (its `main` runs the entry).
pub const FORKS: bool = false;

/// A worker process; [`Worker::reap`] waits for it to end.
pub struct Worker {
    child: Child,
}

impl Worker {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn reap(mut self) {
        let _ = self.child.wait();
    }
}

/// Start worker `index`: this program again, told by its environment to
/// run `entry` (the one `main` gives [`run_if_worker`]) on `region`.
///
/// # Safety
/// None beyond the caller's: `unsafe` for the shared signature (a fork
/// elsewhere).
pub unsafe fn start_worker(
    region: &Region,
    index: usize,
    _entry: Entry,
) -> std::io::Result<Worker> {
    let exe = std::env::current_exe()?;
    let child = Command::new(exe)
        .env(
            WORKER_VAR,
            format!("{}:{}:{}", region.name, region.len, index),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .creation_flags(CREATE_NEW_PROCESS_GROUP)
        .spawn()?;
    if let Some(job) = &region.job {
        AssignProcessToJobObject(job.0, child.as_raw_handle() as HANDLE);
    }
    Ok(Worker { child })
}

unsafe extern "system" fn ignore(_: u32) -> BOOL {
    1
}

/// When this process is a team's worker: map the region, run `entry`,
/// return its exit code. Console events are the parent's to handle.
pub fn run_if_worker(entry: Entry) -> Option<i32> {
    let spec = std::env::var(WORKER_VAR).ok()?;
    let mut parts = spec.rsplitn(3, ':');
    let (index, len, name) = (parts.next()?, parts.next()?, parts.next()?);
    let (Ok(index), Ok(len)) = (index.parse::<usize>(), len.parse::<usize>()) else {
        eprintln!("bwscope: {WORKER_VAR}={spec:?} names no team");
        return Some(2);
    };
    let region = match Region::open(name, len) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("bwscope: {WORKER_VAR} names a team that is gone ({e})");
            return Some(2);
        }
    };
    // SAFETY: a handler that only returns.
    unsafe { SetConsoleCtrlHandler(Some(ignore), 1) };
    Some(entry(&region, index))
}
