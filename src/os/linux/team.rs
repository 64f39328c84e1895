//! `fork`, `PR_SET_PDEATHSIG`, `_exit`, `waitpid`, a shared anonymous
//! mapping, and futexes on it.
//!
//! Forking is safe for the callers here because the parent is
//! single-threaded when it forks (bwscope starts no background threads:
//! no progress ticker, no pool), and a worker never returns into the
//! parent's code: it leaves with `_exit`, so no destructor or buffered
//! output of the parent runs twice.

use std::sync::atomic::AtomicU32;
use std::time::Duration;

use crate::os::mem::Mapping;
use crate::os::team::Entry;

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
        let ts = libc::timespec {
            tv_sec: timeout.as_secs() as libc::time_t,
            tv_nsec: timeout.subsec_nanos() as libc::c_long,
        };
        // SAFETY: `word` is a live aligned u32; FUTEX_WAIT only reads it.
        // Not FUTEX_PRIVATE_FLAG: the word is shared between processes.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                word.as_ptr(),
                libc::FUTEX_WAIT,
                seen,
                &ts as *const libc::timespec,
                std::ptr::null::<u32>(),
                0u32,
            )
        };
    }

    /// Wake one process sleeping in [`Region::wait`] on `word`.
    pub fn wake(&self, word: &AtomicU32) {
        // SAFETY: as in `wait`; waking with nobody waiting is a no-op.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                word.as_ptr(),
                libc::FUTEX_WAKE,
                1u32,
                std::ptr::null::<libc::timespec>(),
                std::ptr::null::<u32>(),
                0u32,
            )
        };
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

/// Start worker `index` running `entry` on `region`; it is killed when
/// this process dies (`PR_SET_PDEATHSIG`).
///
/// # Safety
/// The calling process must be single-threaded, or `entry` must touch
/// nothing another thread may have held locked at the fork (the
/// allocator, stdio): the worker is a fork.
pub unsafe fn start_worker(region: &Region, index: usize, entry: Entry) -> std::io::Result<Worker> {
    let pid = libc::fork();
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if pid == 0 {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
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
