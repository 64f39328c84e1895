//! The agents at run time: each one a thread of its own (a CPU team's
//! driver, a device's host thread, a flow's receiver), prepared once,
//! then run phase by phase. In a phase an agent says it is ready, waits
//! for the gate, and counts what it moves with timestamps of the one
//! monotonic clock until it is told to stop.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;

use super::{Agent, CpuWork, ProbeKind, ProbePlan};
use crate::kernels::{self, KernelArgs, Op, Pattern};
use crate::measure::mix::{self, MixKernels, CHUNK};
use crate::measure::team::{Team, BUFFER_SLACK, COPY_STREAM_SKEW};
use crate::memory::PageKind;
use crate::model::Host;
use crate::os::time::now_ns;

/// One phase's meeting point: the agents count themselves ready, the
/// coordinator opens the gate, then raises `stop`.
pub struct Gate {
    pub ready: AtomicUsize,
    pub go: AtomicBool,
    pub stop: AtomicBool,
    /// How long the phase is planned to run from the gate (warm-up and
    /// window): a flow whose far end sends asks for this much.
    pub length: std::time::Duration,
}

impl Gate {
    pub fn new(length: std::time::Duration) -> Gate {
        Gate {
            ready: AtomicUsize::new(0),
            go: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            length,
        }
    }

    /// Say this agent is ready and wait for the gate (or a stop).
    pub fn arrive(&self) {
        self.ready.fetch_add(1, Ordering::AcqRel);
        while !self.go.load(Ordering::Acquire) && !self.stop.load(Ordering::Acquire) {
            std::thread::yield_now();
        }
    }

    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// Timestamped running totals: (ns of `os::time::now_ns`, units so far).
pub type Log = Vec<(u64, u64)>;

/// Counts are kept at most this often (ns): edges known to 0.5 ms.
const TICK_NS: u64 = 500_000;

/// A running total with its timestamps.
pub struct Counter {
    log: Log,
    total: u64,
    last: u64,
}

impl Counter {
    /// Starts at 0 now.
    pub fn start() -> Counter {
        let t = now_ns();
        Counter {
            log: vec![(t, 0)],
            total: 0,
            last: t,
        }
    }

    /// `n` more units are done.
    pub fn add(&mut self, n: u64) {
        self.total += n;
        let t = now_ns();
        if t.saturating_sub(self.last) >= TICK_NS {
            self.log.push((t, self.total));
            self.last = t;
        }
    }

    /// The log, closed with the total now.
    pub fn finish(mut self) -> Log {
        self.log.push((now_ns(), self.total));
        self.log
    }
}

/// What an agent counted in one phase: one log per worker (summed), and
/// why it ended early, if it did.
#[derive(Debug, Default)]
pub struct Counted {
    pub logs: Vec<Log>,
    pub ended: Option<String>,
}

impl Counted {
    pub fn one(log: Log, ended: Option<String>) -> Counted {
        Counted {
            logs: vec![log],
            ended,
        }
    }
}

/// An agent's phase body, built on its own thread.
pub type Body = Box<dyn FnMut(&Arc<Gate>) -> Counted>;

/// An agent's thread.
pub struct Running {
    tx: Option<Sender<Arc<Gate>>>,
    rx: Receiver<Counted>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Running {
    /// Start the thread: `setup` prepares the agent there (a team spawned,
    /// a device opened, buffers faulted) and returns its phase body.
    pub fn spawn(
        name: &str,
        setup: impl FnOnce() -> Result<Body, String> + Send + 'static,
    ) -> Result<Running, String> {
        let (tx, cmd) = channel::<Arc<Gate>>();
        let (res_tx, rx) = channel();
        let (ready_tx, ready) = channel();
        let handle = std::thread::Builder::new()
            .name(format!("contend-{name}"))
            .spawn(move || {
                let mut body = match setup() {
                    Ok(b) => {
                        let _ = ready_tx.send(Ok(()));
                        b
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                for gate in cmd {
                    if res_tx.send(body(&gate)).is_err() {
                        return;
                    }
                }
            })
            .map_err(|e| format!("cannot start its thread: {e}"))?;
        match ready.recv() {
            Ok(Ok(())) => Ok(Running {
                tx: Some(tx),
                rx,
                handle: Some(handle),
            }),
            Ok(Err(e)) => {
                let _ = handle.join();
                Err(e)
            }
            Err(_) => {
                let _ = handle.join();
                Err("its thread ended while preparing".into())
            }
        }
    }

    /// Start a phase on `gate`.
    pub fn begin(&self, gate: &Arc<Gate>) -> bool {
        self.tx
            .as_ref()
            .is_some_and(|t| t.send(gate.clone()).is_ok())
    }

    /// The phase's counts (after `gate.stop`).
    pub fn end(&self) -> Counted {
        self.rx.recv().unwrap_or_else(|_| Counted {
            logs: Vec::new(),
            ended: Some("its thread ended".into()),
        })
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.tx = None;
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// Start `agent`'s thread.
pub fn start(agent: &Agent, host: &Host, page: PageKind) -> Result<Running, String> {
    match agent {
        Agent::Cpu {
            name,
            cpus,
            memory_node,
            work,
            bytes_per_thread,
            ..
        } => {
            let (cpus, node, work) = (cpus.clone(), *memory_node, *work);
            let ks = MixKernels::widest(host);
            let copy = kernels::widest(Op::Copy, Pattern::Seq, &host.features);
            let ws = *bytes_per_thread as usize;
            Running::spawn(name, move || {
                let nodes = node.map(|n| vec![n; cpus.len()]);
                let team = Team::spawn_bound(&cpus, ws + BUFFER_SLACK, page, nodes.as_deref())
                    .map_err(|e| e.to_string())?;
                Ok(team_body(team, ks, copy, work, ws))
            })
        }
        // Devices and flows start in their own files (phase.rs picks):
        // they build on this one, so it does not name them.
        Agent::Device { .. } | Agent::Net { .. } => {
            Err(format!("{} is not a cpu team", agent.name()))
        }
    }
}

/// A CPU team's phase: every worker streams its work over its own buffer
/// and keeps its own log.
fn team_body(
    team: Team,
    ks: MixKernels,
    copy: Option<&'static crate::kernels::Kernel>,
    work: CpuWork,
    ws: usize,
) -> Body {
    Box::new(move |gate: &Arc<Gate>| {
        // The workers wait for the gate themselves: the driver only
        // hands them the phase.
        let g = gate.clone();
        let arrived = Arc::new(AtomicUsize::new(0));
        let n = team.threads();
        let logs = team.run_each(move |_, buf| {
            let base = buf.as_mut_ptr();
            let len = buf.len().min(ws);
            // SAFETY: the worker's own buffer, `ws + BUFFER_SLACK` bytes,
            // 2 MiB aligned; the kernels run on this CPU.
            unsafe { stream(&g, &arrived, n, ks, copy, work, base, len) }
        });
        Counted { logs, ended: None }
    })
}

/// Chunks a worker streams between two readings of the clock (1 MiB):
/// a reading costs up to a few hundred ns where the clock is not in the
/// vDSO, a chunk a few µs.
const PER_STAMP: usize = 16;

/// One worker's stream until the gate's stop.
///
/// # Safety
/// `base..base + len + BUFFER_SLACK` is the worker's own buffer.
#[allow(clippy::too_many_arguments)]
unsafe fn stream(
    gate: &Gate,
    arrived: &AtomicUsize,
    n: usize,
    ks: MixKernels,
    copy: Option<&'static crate::kernels::Kernel>,
    work: CpuWork,
    base: *mut u8,
    len: usize,
) -> Log {
    // The team counts as one agent: its last worker to arrive says so.
    if arrived.fetch_add(1, Ordering::AcqRel) + 1 == n {
        gate.arrive();
    } else {
        while !gate.go.load(Ordering::Acquire) && !gate.stopped() {
            std::thread::yield_now();
        }
    }
    let mut c = Counter::start();
    let mut sum = 0u64;
    match (work, copy) {
        (CpuWork::Copy, Some(k)) => {
            let half = (len / 2 - COPY_STREAM_SKEW.min(len / 4)) / CHUNK * CHUNK;
            let chunks = (half / CHUNK).max(1);
            let dst = base.add(half.next_multiple_of(4096) + COPY_STREAM_SKEW.min(len / 4));
            let mut j = 0;
            while !gate.stopped() {
                for _ in 0..PER_STAMP {
                    let a = KernelArgs::new(base.add(j * CHUNK), dst.add(j * CHUNK), CHUNK, 1);
                    sum = sum.wrapping_add((k.func)(&a));
                    j = (j + 1) % chunks;
                }
                c.add(PER_STAMP as u64 * 2 * CHUNK as u64);
            }
        }
        (w, _) => {
            let m = match w {
                CpuWork::Mix(m) => m,
                CpuWork::Copy => mix::Mix::READ,
            };
            let chunks = mix::pass_bytes(&m, len).map_or(1, |p| p.2);
            // A mix of one op (read, write, ntwrite) streams 1 MiB per
            // call; a ratio alternates kernels chunk by chunk.
            let span = if m.reads == 0 || m.writes == 0 {
                PER_STAMP.min(chunks)
            } else {
                1
            };
            let calls = PER_STAMP.div_ceil(span);
            let mut j = 0;
            while !gate.stopped() {
                for _ in 0..calls {
                    if j + span > chunks {
                        j = 0;
                    }
                    let p = base.add(j * CHUNK);
                    let mut a = KernelArgs::new(p, p, span * CHUNK, 1);
                    a.pattern = crate::measure::kernel::PATTERN;
                    sum = sum.wrapping_add((ks.for_chunk(&m, j).func)(&a));
                    j += span;
                }
                c.add((calls * span * CHUNK) as u64);
            }
        }
    }
    std::hint::black_box(sum);
    c.finish()
}

/// The probe's thread: a chase or a one-thread read on its own cpu.
pub fn start_probe(p: &ProbePlan, host: &Host, page: PageKind) -> Result<Running, String> {
    let (cpu, bytes, kind) = (p.cpu, p.bytes as usize, p.kind);
    let ks = MixKernels::widest(host);
    Running::spawn("probe", move || {
        let team = Team::spawn(&[cpu], bytes + BUFFER_SLACK, page).map_err(|e| e.to_string())?;
        match kind {
            ProbeKind::Bandwidth => Ok(team_body(
                team,
                ks,
                None,
                CpuWork::Mix(mix::Mix::READ),
                bytes,
            )),
            ProbeKind::Latency => chase_body(team, bytes),
        }
    })
}

/// A latency probe: dependent loads counted; ns per load = window / loads.
fn chase_body(team: Team, bytes: usize) -> Result<Body, String> {
    use crate::measure::chase;
    let k = chase::kernel().ok_or("no pointer-chase kernel on this architecture")?;
    let start = team.inspect(0, move |b| {
        let lines = bytes / chase::LINE;
        let order = crate::kernels::perm::random_cycle(lines, 0xc0de);
        // SAFETY: the worker's own buffer holds `lines` lines.
        unsafe { chase::write_chain(b.as_mut_ptr(), chase::LINE, &order) as usize }
    });
    Ok(Box::new(move |gate: &Arc<Gate>| {
        let gate = gate.clone();
        let logs = team.run_each(move |_, _| {
            use crate::measure::Workload;
            gate.arrive();
            // SAFETY: the chain written above, in this worker's buffer.
            let mut w = unsafe { chase::Chase::new(k, start as *const u8, 0) };
            let mut c = Counter::start();
            let reps = 1024;
            while !gate.stopped() {
                if w.run(reps).is_err() {
                    break;
                }
                c.add(reps * chase::HOPS_PER_REP);
            }
            c.finish()
        });
        Counted { logs, ended: None }
    }))
}

/// What one phase counted: each agent's (then the probe's) counts, and
/// the window's edges on the one clock.
pub struct Window {
    pub counted: Vec<Counted>,
    pub t0: u64,
    pub t1: u64,
}
