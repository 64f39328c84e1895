//! `bwscope threads --processes`: the seed's "one instance per core", done
//! as separate processes instead of threads. Each worker is a `fork`ed
//! child that pins itself, first-touches its own buffer and waits on a
//! control block in a shared anonymous mapping; the parent releases a job
//! by bumping a generation counter, the children meet at a spin barrier in
//! the same mapping, run the kernel, and stamp `CLOCK_MONOTONIC` (one clock
//! for the whole system, so stamps compare across processes).
//!
//! The workers are started with `os::team::start_worker` (a fork: safe
//! here because the parent is single-threaded when it starts them, and a
//! worker never returns into the parent's code); a worker whose parent
//! dies is killed.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use super::sampler::timed;
use super::team::dst_offset;
use super::Stamp;
use crate::error::UserError;
use crate::kernels::{self, Kernel, KernelArgs};
use crate::memory::{Buffer, PageKind};
use crate::model::MemoryInfo;
use crate::os::team::{Region, Worker};
use crate::os::time::ThreadRun;

/// Most worker processes one run may have.
pub const MAX_PROCESSES: usize = 1024;

const CMD_RUN: u64 = 0;
const CMD_FILL: u64 = 1;
const CMD_QUIT: u64 = 2;

#[repr(C)]
struct Slot {
    /// 0 starting, 1 ready, 2 failed.
    state: AtomicU64,
    /// The cpu the worker is to pin itself to (set by the parent).
    want_cpu: AtomicU64,
    /// The cpu it found itself on after pinning.
    cpu: AtomicU64,
    start_ns: AtomicU64,
    end_ns: AtomicU64,
    checksum: AtomicU64,
    /// What the worker had of its cpu in its last timed interval.
    cpu_ns: AtomicU64,
    thp_fraction_bits: AtomicU64,
    page_bytes: AtomicU64,
}

#[repr(C)]
struct Control {
    generation: AtomicU64,
    cmd: AtomicU64,
    kernel: AtomicU64,
    reps: AtomicU64,
    stream_len: AtomicU64,
    seed: AtomicU64,
    /// Workers finished with the current command; a futex word (32 bits),
    /// so the parent sleeps in the kernel until the last one is done.
    done: AtomicU32,
    barrier_count: AtomicU64,
    barrier_generation: AtomicU64,
    /// What every worker needs to start, set before the first starts: the
    /// team's size, each buffer's bytes, the page kind (its index in
    /// `PageKind::ALL`).
    size: AtomicU64,
    buffer_bytes: AtomicU64,
    page: AtomicU64,
    slots: [Slot; MAX_PROCESSES],
}

/// A group of pinned worker processes; dropping it ends them.
pub struct ProcTeam {
    ctrl: *mut Control,
    /// The memory `ctrl` points into (released after the workers ended).
    region: Region,
    workers: Vec<Worker>,
    pub cpus: Vec<u32>,
    memory: Option<MemoryInfo>,
}

/// The parent's wait for its children: it takes no time stamps (each
/// child stamps its own work), so it blocks on the `done` futex until the
/// last child wakes it, as the thread team's parent blocks on its channel.
///
/// Why not a sleep-poll: the parent is not pinned, and when the other cpu
/// is busy the scheduler runs it beside a child. Waking every 50 µs it
/// preempted that child ~20,000 times a second inside the timed window (a
/// switch of address space each time): with one busy loop on the other
/// cpu a 256 KiB read lost 16-22 % against `threads` and `cache`. The
/// timeout only bounds a wait on a child that died.
fn wait_done(region: &Region, done: &AtomicU32, n: u32) {
    loop {
        let seen = done.load(Ordering::Acquire);
        if seen == n {
            return;
        }
        region.wait(done, seen, std::time::Duration::from_millis(100));
    }
}

/// A child's end of a command: count itself done; the last one wakes the
/// parent (only the last, so the parent never wakes beside a child still
/// in its timed window).
fn finish(wake: impl Fn(), done: &AtomicU32, n: u32) {
    if done.fetch_add(1, Ordering::AcqRel) + 1 != n {
        return;
    }
    wake();
}

fn spin_until(mut done: impl FnMut() -> bool) {
    let mut spins = 0u32;
    while !done() {
        spins = spins.wrapping_add(1);
        if spins % (1 << 14) == 0 {
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
}

/// The sense-counting barrier of `team::SpinBarrier`, on shared memory.
fn barrier(c: &Control, n: u64) {
    let gen = c.barrier_generation.load(Ordering::Acquire);
    if c.barrier_count.fetch_add(1, Ordering::AcqRel) + 1 == n {
        c.barrier_count.store(0, Ordering::Relaxed);
        c.barrier_generation.fetch_add(1, Ordering::Release);
        return;
    }
    spin_until(|| c.barrier_generation.load(Ordering::Acquire) != gen);
}

/// A worker's entry (`os::team::Entry`): its whole life, on the team's
/// region; returns its exit code when told to quit.
pub fn worker(region: &Region, i: usize) -> i32 {
    // SAFETY: the region holds the team's Control (the parent made it so
    // before starting any worker) for the worker's whole life.
    let c = unsafe { &*(region.as_ptr() as *const Control) };
    if i >= MAX_PROCESSES {
        return 2;
    }
    let n = c.size.load(Ordering::Acquire);
    let len = c.buffer_bytes.load(Ordering::Acquire) as usize;
    let page = PageKind::ALL[c.page.load(Ordering::Acquire) as usize % PageKind::ALL.len()];
    let slot = &c.slots[i];
    let cpu = slot.want_cpu.load(Ordering::Acquire) as u32;
    let mut buf = match crate::os::cpu::pin_current(cpu)
        .ok()
        .and_then(|_| Buffer::new(len, page, 0x1234 + i as u64).ok())
    {
        Some(b) => b,
        None => {
            slot.state.store(2, Ordering::Release);
            return 1;
        }
    };
    let info = buf.memory_info();
    slot.thp_fraction_bits.store(
        info.thp_fraction.unwrap_or(-1.0).to_bits(),
        Ordering::Relaxed,
    );
    slot.page_bytes
        .store(info.page_bytes.unwrap_or(0), Ordering::Relaxed);
    slot.cpu.store(
        crate::os::cpu::current_cpu().map_or(u64::MAX, u64::from),
        Ordering::Relaxed,
    );
    slot.state.store(1, Ordering::Release);
    let mut seen = 0u64;
    loop {
        spin_until(|| c.generation.load(Ordering::Acquire) != seen);
        seen = c.generation.load(Ordering::Acquire);
        match c.cmd.load(Ordering::Acquire) {
            CMD_QUIT => return 0,
            CMD_FILL => {
                let l = c.stream_len.load(Ordering::Relaxed) as usize;
                buf.fill_random_prefix(l, c.seed.load(Ordering::Relaxed) ^ i as u64);
            }
            _ => {
                let k = &kernels::registry()[c.kernel.load(Ordering::Relaxed) as usize];
                let stream_len = c.stream_len.load(Ordering::Relaxed) as usize;
                let base = buf.as_mut_ptr();
                let mut args = KernelArgs::new(
                    base,
                    base,
                    stream_len,
                    c.reps.load(Ordering::Relaxed).max(1),
                );
                // SAFETY: the parent sized the buffer for both streams.
                args.dst = unsafe { base.add(dst_offset(k, stream_len)) };
                barrier(c, n);
                // SAFETY: streams inside the buffer; the parent only sends
                // kernels this CPU supports.
                let s = timed(|| unsafe { (k.func)(&args) });
                // u64::MAX: the system cannot tell what the thread had.
                let ran = s.on_cpu.unwrap_or(ThreadRun { cpu_ns: u64::MAX });
                slot.start_ns.store(s.start_ns, Ordering::Relaxed);
                slot.end_ns.store(s.end_ns, Ordering::Relaxed);
                slot.checksum.store(s.checksum, Ordering::Relaxed);
                slot.cpu_ns.store(ran.cpu_ns, Ordering::Relaxed);
            }
        }
        finish(|| region.wake(&c.done), &c.done, n as u32);
    }
}

impl ProcTeam {
    /// Fork one pinned worker per cpu, each owning `buffer_bytes`.
    pub fn spawn(cpus: &[u32], buffer_bytes: usize, page: PageKind) -> Result<ProcTeam, UserError> {
        if cpus.len() > MAX_PROCESSES {
            return Err(UserError::flag(
                "--threads",
                format!("--processes supports at most {} workers", MAX_PROCESSES),
            ));
        }
        let region = Region::new(std::mem::size_of::<Control>()).map_err(|e| {
            UserError::flag("--processes", format!("cannot map shared memory: {e}"))
        })?;
        // Zeroed memory is a valid Control (all atomics at 0).
        let mut team = ProcTeam {
            ctrl: region.as_ptr() as *mut Control,
            region,
            workers: Vec::new(),
            cpus: cpus.to_vec(),
            memory: None,
        };
        let c = team.ctl();
        c.size.store(cpus.len() as u64, Ordering::Release);
        c.buffer_bytes.store(buffer_bytes as u64, Ordering::Release);
        let page_index = PageKind::ALL.iter().position(|&k| k == page).unwrap_or(0);
        c.page.store(page_index as u64, Ordering::Release);
        for (i, &cpu) in cpus.iter().enumerate() {
            c.slots[i].want_cpu.store(u64::from(cpu), Ordering::Release);
        }
        for i in 0..cpus.len() {
            // SAFETY: see the module doc: single-threaded parent, and the
            // worker only runs `worker`.
            let w =
                unsafe { crate::os::team::start_worker(&team.region, i, worker) }.map_err(|e| {
                    UserError::flag("--processes", format!("cannot start a worker: {e}"))
                })?;
            team.workers.push(w);
        }
        for (i, &cpu) in cpus.iter().enumerate() {
            let s = &team.ctl().slots[i];
            spin_until(|| s.state.load(Ordering::Acquire) != 0);
            if s.state.load(Ordering::Acquire) == 2 {
                return Err(UserError::flag(
                    "--processes",
                    format!(
                        "worker on cpu {} could not pin itself or allocate {} bytes",
                        cpu, buffer_bytes
                    ),
                ));
            }
        }
        let s = &team.ctl().slots[0];
        let thp = f64::from_bits(s.thp_fraction_bits.load(Ordering::Relaxed));
        team.memory = Some(MemoryInfo {
            kind: page.name().into(),
            page_bytes: Some(s.page_bytes.load(Ordering::Relaxed)).filter(|&b| b > 0),
            thp_fraction: (thp >= 0.0).then_some(thp),
            locked_fraction: None,
        });
        Ok(team)
    }

    fn ctl(&self) -> &Control {
        // SAFETY: mapped for the team's lifetime; only atomics inside.
        unsafe { &*self.ctrl }
    }

    pub fn memory(&self) -> Option<MemoryInfo> {
        self.memory.clone()
    }

    /// The cpu each worker saw right after pinning itself.
    pub fn observed_cpus(&self) -> Vec<Option<u32>> {
        (0..self.cpus.len())
            .map(|i| u32::try_from(self.ctl().slots[i].cpu.load(Ordering::Relaxed)).ok())
            .collect()
    }

    fn command(&self, cmd: u64) {
        let c = self.ctl();
        c.done.store(0, Ordering::Release);
        c.cmd.store(cmd, Ordering::Release);
        c.generation.fetch_add(1, Ordering::AcqRel);
        wait_done(&self.region, &c.done, self.cpus.len() as u32);
    }

    /// Refill the first `len` bytes of every worker's buffer.
    pub fn fill(&self, len: usize, seed: u64) {
        let c = self.ctl();
        c.stream_len.store(len as u64, Ordering::Relaxed);
        c.seed.store(seed, Ordering::Relaxed);
        self.command(CMD_FILL);
    }

    /// Run `kernel` `reps` times over `stream_len` bytes per stream on every
    /// worker; one stamp per worker.
    pub fn run(&self, kernel: &'static Kernel, stream_len: usize, reps: u64) -> Vec<Stamp> {
        let c = self.ctl();
        let idx = kernels::registry()
            .iter()
            .position(|k| k.name == kernel.name)
            .expect("registered kernel");
        c.kernel.store(idx as u64, Ordering::Relaxed);
        c.stream_len.store(stream_len as u64, Ordering::Relaxed);
        c.reps.store(reps, Ordering::Relaxed);
        self.command(CMD_RUN);
        (0..self.cpus.len())
            .map(|i| {
                let s = &c.slots[i];
                Stamp {
                    start_ns: s.start_ns.load(Ordering::Relaxed),
                    end_ns: s.end_ns.load(Ordering::Relaxed),
                    checksum: s.checksum.load(Ordering::Relaxed),
                    on_cpu: Some(ThreadRun {
                        cpu_ns: s.cpu_ns.load(Ordering::Relaxed),
                    })
                    .filter(|r| r.cpu_ns != u64::MAX),
                }
            })
            .collect()
    }
}

impl Drop for ProcTeam {
    fn drop(&mut self) {
        let c = self.ctl();
        c.cmd.store(CMD_QUIT, Ordering::Release);
        c.generation.fetch_add(1, Ordering::AcqRel);
        for w in self.workers.drain(..) {
            w.reap();
        }
        // `region` is released after this, with no worker left to use it.
    }
}
