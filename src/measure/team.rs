//! A team of pinned worker threads, each owning a first-touched buffer,
//! released together by a spin barrier around every timed region.
//!
//! Timing follows likwid's `EXECUTE` and McCalpin's advice: barrier →
//! start → work → stop, each thread stamping its own start and end with the
//! system-wide monotonic clock (see `sampler` for how stamps become a
//! sample). A job runs on each worker's own buffer, or — for the
//! shared-buffer team — on the worker's chunk of one buffer the caller
//! owns.

use super::sampler::timed;
use super::Stamp;
use crate::error::UserError;
use crate::kernels::{Kernel, KernelArgs, Op};
use crate::memory::{Buffer, PageKind};
use crate::model::MemoryInfo;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// A sense-counting spin barrier. Spinning (not a futex) keeps the wake-up
/// skew between threads in the sub-microsecond range; after a long spin it
/// yields, so an oversubscribed team still makes progress.
pub struct SpinBarrier {
    n: usize,
    count: AtomicUsize,
    generation: AtomicUsize,
}

impl SpinBarrier {
    pub fn new(n: usize) -> SpinBarrier {
        SpinBarrier {
            n: n.max(1),
            count: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
        }
    }

    pub fn wait(&self) {
        let gen = self.generation.load(Ordering::Acquire);
        if self.count.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.count.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
            return;
        }
        let mut spins = 0u32;
        while self.generation.load(Ordering::Acquire) == gen {
            spins = spins.wrapping_add(1);
            if spins % (1 << 16) == 0 {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
    }
}

/// One timed kernel call on every thread.
#[derive(Clone)]
pub struct Job {
    pub kernel: &'static Kernel,
    /// Bytes per stream.
    pub stream_len: usize,
    pub reps: u64,
    pub pattern: u64,
    /// Optional access order (random-pattern kernels): one order per
    /// worker laid end to end, each `index.len() / workers` entries long;
    /// worker `i` gets the `i`-th (so each buffer has its own permutation,
    /// see `kernels::perm::index_for`).
    pub index: Option<Arc<Vec<u32>>>,
    /// Worker `i` works at address `shared[i]` (its chunk of a buffer the
    /// caller owns and keeps alive, `stream_len + BUFFER_SLACK` bytes,
    /// 4 KiB aligned) instead of its own buffer.
    pub shared: Option<Arc<Vec<usize>>>,
}

/// What every worker of one call returns, handed to the caller at once.
///
/// Why not a message per worker: the caller blocks on a channel, and each
/// message wakes it while the other workers may still be inside their
/// timed regions. Where every cpu runs a worker (2 workers on a 2-vCPU
/// guest) the scheduler ran the woken caller on one of their cpus, an
/// involuntary switch inside that worker's timed region, and the sampler
/// retook the sample as descheduled (on a quiet Zen 4 guest, half of the
/// 2-thread records of `threads --sizes 8GiB` found no clean sample in 21
/// tries). The last worker to finish wakes the caller, once. Each worker
/// holds its own [`Sender`] of the wake-up, so a worker that died drops
/// its sender and the caller's wait ends in an error, not a hang.
struct Gather<T> {
    slots: Mutex<Vec<Option<T>>>,
    left: AtomicUsize,
}

impl<T> Gather<T> {
    /// A gather for `n` workers, the sender each worker takes a clone of,
    /// and the receiver the last arrival wakes.
    fn new(n: usize) -> (Arc<Gather<T>>, Sender<()>, Receiver<()>) {
        let (tx, rx) = channel();
        let g = Gather {
            slots: Mutex::new((0..n).map(|_| None).collect()),
            left: AtomicUsize::new(n),
        };
        (Arc::new(g), tx, rx)
    }

    /// Worker `i`'s result; the last of the `n` to arrive wakes the caller
    /// through `wake`. Returns whether this arrival was the last.
    fn put(&self, i: usize, v: T, wake: &Sender<()>) -> bool {
        lock(&self.slots)[i] = Some(v);
        let last = self.left.fetch_sub(1, Ordering::AcqRel) == 1;
        if last {
            let _ = wake.send(());
        }
        last
    }

    /// Wait for every worker, then their results in worker order. The
    /// caller drops its own sender first, so only workers can wake it.
    fn wait(&self, wake: Sender<()>, woken: &Receiver<()>) -> Vec<T> {
        drop(wake);
        woken.recv().expect("worker alive");
        lock(&self.slots)
            .iter_mut()
            .map(|r| r.take().expect("every worker reported"))
            .collect()
    }
}

/// A lock that a panicked holder cannot poison for the rest (the slots
/// hold plain values).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

enum Cmd {
    Run(Job, Arc<Gather<Stamp>>, Sender<()>),
    Inspect(Box<dyn FnOnce(&mut Buffer) + Send>),
    Stop,
}

struct Worker {
    tx: Sender<Cmd>,
    handle: Option<JoinHandle<()>>,
}

/// Pinned workers with their buffers. Dropping the team stops them.
pub struct Team {
    workers: Vec<Worker>,
    pub cpus: Vec<u32>,
    pub buffer_bytes: usize,
    memory: Vec<MemoryInfo>,
}

pub use crate::os::cpu::{current_cpu, on_cpu, pin_current};

/// Offset of the write stream in a copy: past the read stream, rounded to
/// a cache line so every stream starts aligned.
pub fn dst_offset(k: &Kernel, stream_len: usize) -> usize {
    if k.op == Op::Copy {
        stream_len.next_multiple_of(64.max(k.align)) + COPY_STREAM_SKEW
    } else {
        0
    }
}

/// Extra distance between a copy's read and write streams: 257 pages.
///
/// Why: with the write stream exactly a power of two past the read stream
/// (any power-of-two working set), both streams map onto the same DRAM
/// banks and every other access is a row conflict; a 1 GiB scalar copy ran
/// at 15 GB/s instead of 31 here (STREAM's OFFSET addresses the same
/// thing). It stays a whole number of 4 KiB pages so loads never alias
/// recent stores in the low 12 address bits (4K aliasing), which a skew of
/// a few lines would cause in L1-resident copies.
pub const COPY_STREAM_SKEW: usize = 257 * 4096;

/// Buffer bytes a team needs beyond the largest working set so any copy's
/// skewed write stream fits.
pub const BUFFER_SLACK: usize = COPY_STREAM_SKEW + (1 << 20);

impl Team {
    /// Start one worker per cpu; each pins itself, then maps, first-touches
    /// and fills its own buffer of `buffer_bytes`.
    pub fn spawn(cpus: &[u32], buffer_bytes: usize, page: PageKind) -> Result<Team, UserError> {
        Team::spawn_bound(cpus, buffer_bytes, page, None)
    }

    /// Like [`Team::spawn`], but worker `i`'s buffer is bound to NUMA node
    /// `nodes[i]` (see `memory::numa`): the worker faults it under a
    /// thread-wide `MPOL_BIND`, then binds the range itself (so automatic
    /// NUMA balancing cannot move it) and restores its default policy.
    /// A refused binding is an error naming `--memory-nodes`.
    pub fn spawn_bound(
        cpus: &[u32],
        buffer_bytes: usize,
        page: PageKind,
        nodes: Option<&[u32]>,
    ) -> Result<Team, UserError> {
        if let Some(n) = nodes {
            assert_eq!(n.len(), cpus.len(), "one memory node per worker");
        }
        let barrier = Arc::new(SpinBarrier::new(cpus.len()));
        let (ready_tx, ready_rx) = channel::<(usize, Result<MemoryInfo, UserError>)>();
        let mut workers = Vec::new();
        let n_workers = cpus.len();
        for (i, &cpu) in cpus.iter().enumerate() {
            let (tx, rx) = channel::<Cmd>();
            let barrier = barrier.clone();
            let ready_tx = ready_tx.clone();
            let node = nodes.map(|n| n[i]);
            let handle = std::thread::Builder::new()
                .name(format!("bwscope-w{}", i))
                .spawn(move || {
                    if let Err(e) = pin_current(cpu) {
                        let _ = ready_tx.send((i, Err(UserError::flag("--cpus", e))));
                        return;
                    }
                    let mut buf = match alloc_bound(buffer_bytes, page, 0x1234 + i as u64, node) {
                        Ok(b) => b,
                        Err(e) => {
                            let _ = ready_tx.send((i, Err(e)));
                            return;
                        }
                    };
                    let _ = ready_tx.send((i, Ok(buf.memory_info())));
                    drop(ready_tx);
                    while let Ok(cmd) = rx.recv() {
                        match cmd {
                            Cmd::Run(job, gather, wake) => {
                                let t = run_one(&mut buf, &job, &barrier, i, n_workers);
                                gather.put(i, t, &wake);
                            }
                            Cmd::Inspect(f) => f(&mut buf),
                            Cmd::Stop => return,
                        }
                    }
                })
                .map_err(|e| UserError::flag("--threads", format!("cannot start a thread: {e}")))?;
            workers.push(Worker {
                tx,
                handle: Some(handle),
            });
        }
        drop(ready_tx);
        let mut memory = vec![MemoryInfo::default(); cpus.len()];
        let mut team = Team {
            workers,
            cpus: cpus.to_vec(),
            buffer_bytes,
            memory: Vec::new(),
        };
        for _ in 0..cpus.len() {
            match ready_rx.recv() {
                Ok((i, Ok(m))) => memory[i] = m,
                Ok((_, Err(e))) => return Err(e),
                Err(_) => {
                    return Err(UserError::flag(
                        "--threads",
                        "a worker thread died while starting",
                    ))
                }
            }
        }
        team.memory = memory;
        Ok(team)
    }

    pub fn threads(&self) -> usize {
        self.workers.len()
    }

    /// Memory info of each worker's buffer as allocated.
    pub fn memory(&self) -> &[MemoryInfo] {
        &self.memory
    }

    /// Run `job` on every worker at once; stamps in worker order.
    pub fn run(&self, job: &Job) -> Vec<Stamp> {
        let (gather, wake, woken) = Gather::new(self.workers.len());
        for w in &self.workers {
            w.tx.send(Cmd::Run(job.clone(), gather.clone(), wake.clone()))
                .expect("worker alive");
        }
        gather.wait(wake, &woken)
    }

    /// Prove on every worker that `job`'s timed loop reads every byte of
    /// its stream: one pass of the kernel's verification variant with the
    /// same arguments, checked against the stream's contents
    /// (`Kernel::verify`). `Ok(false)` for kernels without a variant (their
    /// own function is the proof).
    pub fn verify(&self, job: &Job) -> Result<bool, String> {
        if job.kernel.checksum.is_none() {
            return Ok(false);
        }
        let mut job = job.clone();
        job.reps = 1;
        let n = self.threads();
        let job = Arc::new(job);
        for r in self.run_each(move |i, buf| {
            let args = job.args(buf, i, n);
            // SAFETY: the same arguments the timed samples ran with.
            unsafe { job.kernel.verify(&args) }
        }) {
            r?;
        }
        Ok(true)
    }

    /// Run `f(i, buffer)` on every worker at once, on the workers' own
    /// threads, and collect the results in worker order. For suites whose
    /// threads do different things (read/write roles, timed windows,
    /// background load); `f` synchronises its own timed region (e.g. with
    /// a [`SpinBarrier`] it captures).
    pub fn run_each<R, F>(&self, f: F) -> Vec<R>
    where
        R: Send + 'static,
        F: Fn(usize, &mut Buffer) -> R + Send + Sync + 'static,
    {
        let f = Arc::new(f);
        let (gather, wake, woken) = Gather::new(self.workers.len());
        for (i, w) in self.workers.iter().enumerate() {
            let f = f.clone();
            let (gather, wake) = (gather.clone(), wake.clone());
            w.tx.send(Cmd::Inspect(Box::new(move |b| {
                gather.put(i, f(i, b), &wake);
            })))
            .expect("worker alive");
        }
        gather.wait(wake, &woken)
    }

    /// Where the first `ws` bytes of every worker's buffer are (a
    /// `move_pages` census): the fraction of all their pages on worker
    /// `i`'s `intended[i]` node, and each worker's own fraction.
    pub fn placed_on(&self, intended: &[u32], ws: usize) -> Result<(f64, Vec<f64>), String> {
        let mut on = 0u64;
        let mut total = 0u64;
        let mut each = Vec::new();
        for (i, &node) in intended.iter().enumerate() {
            let c = self.inspect(i, move |b| {
                crate::memory::numa::census(b.as_ptr(), ws.min(b.len()))
            })?;
            on += c.on_node(node);
            total += c.pages;
            each.push(c.fraction_on(node));
        }
        let all = if total > 0 {
            on as f64 / total as f64
        } else {
            0.0
        };
        Ok((all, each))
    }

    /// Run `f` on worker `i`'s buffer, on that worker's thread (tests read
    /// back what a kernel wrote; suites refill).
    pub fn inspect<R: Send + 'static>(
        &self,
        i: usize,
        f: impl FnOnce(&mut Buffer) -> R + Send + 'static,
    ) -> R {
        let (tx, rx) = channel();
        self.workers[i]
            .tx
            .send(Cmd::Inspect(Box::new(move |b| {
                let _ = tx.send(f(b));
            })))
            .expect("worker alive");
        rx.recv().expect("worker alive")
    }
}

/// Allocate a worker's buffer, on `node` when given.
fn alloc_bound(
    len: usize,
    page: PageKind,
    seed: u64,
    node: Option<u32>,
) -> Result<Buffer, UserError> {
    let Some(node) = node else {
        return Buffer::new(len, page, seed);
    };
    let refused = |m: String| UserError::flag("--memory-nodes", m);
    crate::memory::numa::set_thread_policy(Some(node)).map_err(refused)?;
    let buf = Buffer::new(len, page, seed);
    let reset = crate::memory::numa::set_thread_policy(None);
    let mut buf = buf?;
    reset.map_err(refused)?;
    // SAFETY: the buffer's own mapping, 2 MiB aligned, length a multiple
    // of 4 KiB.
    unsafe { crate::memory::numa::bind_range(buf.as_mut_ptr(), buf.len(), node) }
        .map_err(refused)?;
    Ok(buf)
}

impl Job {
    /// The kernel arguments of worker `i` of `workers`, over `buf` (its own
    /// buffer) or its chunk of the shared one.
    pub fn args(&self, buf: &mut Buffer, worker: usize, workers: usize) -> KernelArgs {
        let k = self.kernel;
        let off = dst_offset(k, self.stream_len);
        let base = match &self.shared {
            // The caller sized each chunk for both streams (see `Job::shared`).
            Some(bases) => bases[worker] as *mut u8,
            None => {
                assert!(off + self.stream_len <= buf.len(), "job larger than buffer");
                buf.as_mut_ptr()
            }
        };
        let mut args = KernelArgs::new(base, base, self.stream_len, self.reps.max(1));
        // SAFETY: off + stream_len ≤ buffer (or chunk) length, checked above.
        args.dst = unsafe { base.add(off) };
        args.pattern = self.pattern;
        if let Some(ix) = &self.index {
            let per = ix.len() / workers.max(1);
            // SAFETY: worker < workers, so the chunk lies inside the vector.
            args.index = unsafe { ix.as_ptr().add(per * worker) };
            args.index_len = per;
        }
        args
    }
}

fn run_one(
    buf: &mut Buffer,
    job: &Job,
    barrier: &SpinBarrier,
    worker: usize,
    workers: usize,
) -> Stamp {
    let k = job.kernel;
    let args = job.args(buf, worker, workers);
    barrier.wait();
    // SAFETY: streams lie inside the buffer, aligned (2 MiB base, offsets
    // multiples of the kernel's alignment); the suite only runs kernels the
    // CPU supports.
    timed(|| unsafe { (k.func)(&args) })
}

impl Drop for Team {
    fn drop(&mut self) {
        for w in &self.workers {
            let _ = w.tx.send(Cmd::Stop);
        }
        for w in &mut self.workers {
            if let Some(h) = w.handle.take() {
                let _ = h.join();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_last_arrival_wakes_the_caller_with_every_result_in_order() {
        let (g, wake, woken) = Gather::new(3);
        assert!(!g.put(2, "c", &wake));
        assert!(!g.put(0, "a", &wake));
        // Nothing to wake on before the last worker arrives.
        assert!(woken.try_recv().is_err());
        assert!(g.put(1, "b", &wake));
        assert_eq!(g.wait(wake, &woken), vec!["a", "b", "c"]);
    }

    #[test]
    fn a_worker_that_died_ends_the_wait_instead_of_hanging_it() {
        let (g, wake, woken) = Gather::<u8>::new(2);
        let w0 = wake.clone();
        let w1 = wake.clone();
        g.put(0, 1, &w0);
        drop((w0, w1)); // worker 1 never arrives
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| g.wait(wake, &woken)));
        assert!(r.is_err());
    }

    #[test]
    fn barrier_releases_all() {
        let b = Arc::new(SpinBarrier::new(3));
        let hs: Vec<_> = (0..3)
            .map(|_| {
                let b = b.clone();
                std::thread::spawn(move || {
                    for _ in 0..100 {
                        b.wait();
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
    }

    #[test]
    fn team_runs_on_its_cpus() {
        let cpus = crate::platform::topology::allowed_cpus();
        let cpu = *cpus.last().unwrap();
        let team = Team::spawn(&[cpu], 1 << 20, PageKind::Regular).unwrap();
        let seen = team.inspect(0, |_| current_cpu());
        assert_eq!(seen, Some(cpu));
    }
}
