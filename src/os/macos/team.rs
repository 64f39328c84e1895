//! `fork`, `_exit`, `waitpid`, a shared anonymous mapping, and waits on
//! a word of it with `__ulock_wait`/`__ulock_wake`.
//!
//! Forking is safe for the callers for the reasons `linux/team.rs` gives
//! (the parent is single-threaded when it forks; a worker leaves with
//! `_exit`). macOS has no futex and no `PR_SET_PDEATHSIG`: the word waits
//! use the kernel's user-space lock calls (xnu `bsd/sys/ulock.h`; what
//! libc++'s `std::atomic::wait` uses on Apple systems, llvm-project
//! `libcxx/src/atomic.cpp`), in their shared (cross-process) form, and a
//! worker watches its parent with a kqueue `EVFILT_PROC`/`NOTE_EXIT`
//! filter so it never outlives a killed parent.

use std::sync::atomic::AtomicU32;
use std::time::Duration;

use crate::os::mem::Mapping;
use crate::os::team::Entry;

/// `UL_COMPARE_AND_WAIT_SHARED` (xnu `bsd/sys/ulock.h`): compare a 32-bit
/// word that several processes map.
const UL_COMPARE_AND_WAIT_SHARED: u32 = 3;

extern "C" {
    fn __ulock_wait(operation: u32, addr: *mut libc::c_void, value: u64, timeout_us: u32) -> i32;
    fn __ulock_wake(operation: u32, addr: *mut libc::c_void, wake_value: u64) -> i32;
}

/// Memory shared with the workers started after it (a `MAP_SHARED`
/// anonymous mapping, zeroed).
pub struct Region {
    map: Mapping,
}

impl Region {
    pub fn new(len: usize) -> std::io::Result<Region> {
        Ok(Region {
            map: Mapping::shared(len)?,
        })
    }

    pub fn as_ptr(&self) -> *mut u8 {
        self.map.as_ptr()
    }

    /// Sleep while `word` (inside the region) still holds `seen`, at most
    /// `timeout`; returns early when woken, on a signal, or when the word
    /// already changed.
    pub fn wait(&self, word: &AtomicU32, seen: u32, timeout: Duration) {
        // A timeout of 0 µs would wait forever: at least 1 µs.
        let us = timeout.as_micros().clamp(1, u128::from(u32::MAX)) as u32;
        // SAFETY: `word` is a live aligned u32 in shared memory; the call
        // only reads it.
        unsafe {
            __ulock_wait(
                UL_COMPARE_AND_WAIT_SHARED,
                word.as_ptr().cast(),
                u64::from(seen),
                us,
            )
        };
    }

    /// Wake one process sleeping in [`Region::wait`] on `word`.
    pub fn wake(&self, word: &AtomicU32) {
        // SAFETY: as in `wait`; waking with nobody waiting is a no-op.
        unsafe { __ulock_wake(UL_COMPARE_AND_WAIT_SHARED, word.as_ptr().cast(), 0) };
    }
}

/// A worker is a fork of this process (it runs its entry at once).
pub const FORKS: bool = true;

/// A worker process; [`Worker::reap`] waits for it to end.
pub struct Worker {
    pid: libc::pid_t,
}

impl Worker {
    pub fn pid(&self) -> u32 {
        self.pid as u32
    }

    /// Wait for the worker to end.
    pub fn reap(self) {
        let mut status = 0;
        // SAFETY: our own child.
        unsafe { libc::waitpid(self.pid, &mut status, 0) };
    }
}

/// In a worker: end it when `parent` exits (a thread blocked in
/// `kevent` until then, so it costs the measuring thread nothing).
fn die_with(parent: libc::pid_t) {
    // SAFETY: a new kqueue; the event is plain data fully initialised.
    let kq = unsafe { libc::kqueue() };
    if kq < 0 {
        return;
    }
    // SAFETY: plain data.
    let mut ev: libc::kevent = unsafe { std::mem::zeroed() };
    ev.ident = parent as usize;
    ev.filter = libc::EVFILT_PROC;
    ev.flags = libc::EV_ADD | libc::EV_ONESHOT;
    ev.fflags = libc::NOTE_EXIT;
    // SAFETY: one change, no events out.
    let added = unsafe { libc::kevent(kq, &ev, 1, std::ptr::null_mut(), 0, std::ptr::null()) } == 0;
    // SAFETY: getppid has no preconditions.
    if !added || unsafe { libc::getppid() } != parent {
        // SAFETY: leaving the worker without the parent's destructors.
        unsafe { libc::_exit(137) };
    }
    std::thread::spawn(move || {
        // SAFETY: plain data.
        let mut out: libc::kevent = unsafe { std::mem::zeroed() };
        // SAFETY: waits for one event into `out`.
        unsafe { libc::kevent(kq, std::ptr::null(), 0, &mut out, 1, std::ptr::null()) };
        // SAFETY: as above.
        unsafe { libc::_exit(137) };
    });
}

/// Start worker `index` running `entry` on `region`; it ends when this
/// process dies ([`die_with`]).
///
/// # Safety
/// The calling process must be single-threaded, or `entry` must touch
/// nothing another thread may have held locked at the fork (the
/// allocator, stdio): the worker is a fork.
pub unsafe fn start_worker(region: &Region, index: usize, entry: Entry) -> std::io::Result<Worker> {
    let parent = libc::getpid();
    let pid = libc::fork();
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if pid == 0 {
        die_with(parent);
        let code = entry(region, index);
        // Leaves without running the parent's destructors.
        libc::_exit(code);
    }
    Ok(Worker { pid })
}

/// A fork runs its entry at once: no process is started as a worker.
pub fn run_if_worker(_entry: Entry) -> Option<i32> {
    None
}
