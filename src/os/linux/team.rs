//! `fork`, `PR_SET_PDEATHSIG`, `_exit`, `waitpid`, and futexes on shared
//! memory.
//!
//! Forking is safe for the callers here because the parent is
//! single-threaded when it forks (bwscope starts no background threads:
//! no progress ticker, no pool), and a child never returns into the
//! parent's code: it leaves with `_exit`, so no destructor or buffered
//! output of the parent runs twice.

use std::sync::atomic::AtomicU32;
use std::time::Duration;

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

/// Start a worker process that runs `work` and exits with what it returns;
/// it is killed when this process dies (`PR_SET_PDEATHSIG`).
///
/// # Safety
/// The calling process must be single-threaded, or `work` must touch
/// nothing another thread may have held locked at the fork (the
/// allocator, stdio): the worker is a fork.
pub unsafe fn start_worker(work: impl FnOnce() -> i32) -> std::io::Result<Worker> {
    let pid = libc::fork();
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if pid == 0 {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        let code = work();
        // Leaves without running the parent's destructors.
        libc::_exit(code);
    }
    Ok(Worker { pid })
}

/// Sleep while `word` (in memory shared between processes) still holds
/// `seen`, at most `timeout`; returns early when woken, on a signal, or
/// when the word already changed.
pub fn wait_word(word: &AtomicU32, seen: u32, timeout: Duration) {
    let ts = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: `word` is a live aligned u32; FUTEX_WAIT only reads it. Not
    // FUTEX_PRIVATE_FLAG: the word is shared between processes.
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

/// Wake one process sleeping in [`wait_word`] on `word`.
pub fn wake_word(word: &AtomicU32) {
    // SAFETY: as in `wait_word`; waking with nobody waiting is a no-op.
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
