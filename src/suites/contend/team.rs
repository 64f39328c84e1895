//! A CPU team (and the probe) at run time. Each worker calls one pass of
//! its work again and again until the gate's stop, and counts after every
//! pass the bytes the kernels declare for it. A pass is what the suite
//! that measures the same work alone runs per repetition, through the
//! same code: a single kernel (read, write, ntwrite, copy) is
//! [`pass_job`], the very call `bwscope threads` times (same kernel, same
//! streams in the buffer, same bytes declared); an `R:W` ratio is one
//! [`mix::pass`], the pass `numa --load` and the mix engine run. So the
//! alone phase of a team measures what `threads` measures on the same cpus
//! at the same per-thread size.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::agents::{Body, Counted, Counter, Gate, Log, Running};
use super::{Agent, CpuWork, ProbeKind, ProbePlan};
use crate::kernels::{self, Kernel, Op, PassBytes, Pattern};
use crate::measure::kernel::{pass_job, PATTERN};
use crate::measure::mix::{self, Mix, MixKernels};
use crate::measure::team::{Job, Team, BUFFER_SLACK};
use crate::memory::{Buffer, PageKind};
use crate::model::Host;

/// One worker's pass of a team's work.
#[derive(Clone)]
pub enum TeamPass {
    /// One kernel over the worker's `ws` bytes, as `threads` runs it.
    Kernel { job: Job, bytes: PassBytes },
    /// A ratio: `chunks` chunks alternating the widest read and write
    /// kernels, as the mix engine runs it.
    Mix {
        ks: MixKernels,
        mix: Mix,
        chunks: usize,
        read: u64,
        written: u64,
    },
}

impl TeamPass {
    /// The pass of `work` over `ws` bytes per worker on a team of
    /// `workers`, with the kernels this CPU runs widest.
    pub fn of(work: CpuWork, host: &Host, ws: usize, workers: usize) -> Result<TeamPass, String> {
        let ks = MixKernels::widest(host);
        let one = |k: Option<&'static Kernel>| -> Result<TeamPass, String> {
            let k = k.ok_or("no copy kernel runs on this CPU")?;
            let (job, bytes) = pass_job(k, ws, workers)
                .ok_or_else(|| format!("{ws} bytes per thread hold no pass of {}", k.name))?;
            Ok(TeamPass::Kernel { job, bytes })
        };
        match work {
            CpuWork::Copy => one(kernels::widest(Op::Copy, Pattern::Seq, &host.features)),
            CpuWork::Mix(m) if m.writes == 0 => one(Some(ks.read)),
            CpuWork::Mix(m) if m.reads == 0 => one(Some(if m.nt { ks.ntwrite } else { ks.write })),
            CpuWork::Mix(m) => {
                let (read, written, chunks) = mix::pass_bytes(&m, ws)
                    .ok_or_else(|| format!("{ws} bytes per thread hold no pass of {}", m.name()))?;
                Ok(TeamPass::Mix {
                    ks,
                    mix: m,
                    chunks,
                    read,
                    written,
                })
            }
        }
    }

    /// The kernels a pass calls, by name.
    pub fn kernels(&self) -> Vec<&'static str> {
        match self {
            TeamPass::Kernel { job, .. } => vec![job.kernel.name],
            TeamPass::Mix { ks, mix, .. } => ks.describe(mix),
        }
    }

    /// The one kernel of a single-kernel pass.
    pub fn kernel(&self) -> Option<&'static Kernel> {
        match self {
            TeamPass::Kernel { job, .. } => Some(job.kernel),
            TeamPass::Mix { .. } => None,
        }
    }

    /// Bytes one pass reads and writes, as its kernels declare them.
    pub fn bytes(&self) -> (u64, u64) {
        match self {
            TeamPass::Kernel { bytes, .. } => (bytes.read, bytes.written),
            TeamPass::Mix { read, written, .. } => (*read, *written),
        }
    }

    /// Worker `i` of `n`'s pass over its own buffer, ready to call: it
    /// returns the kernels' sum.
    ///
    /// # Safety
    /// `buf` is the worker's own buffer of at least `ws + BUFFER_SLACK`
    /// bytes (the `ws` the pass was made for), 2 MiB aligned.
    unsafe fn prepare(&self, buf: &mut Buffer, i: usize, n: usize) -> Box<dyn FnMut() -> u64 + '_> {
        match self {
            TeamPass::Kernel { job, .. } => {
                let (f, args) = (job.kernel.func, job.args(buf, i, n));
                // SAFETY: the arguments `threads` runs with, inside the
                // buffer; the kernel runs on this CPU.
                Box::new(move || unsafe { f(&args) })
            }
            TeamPass::Mix {
                ks, mix, chunks, ..
            } => {
                let base = buf.as_mut_ptr();
                // SAFETY: chunks × CHUNK ≤ ws ≤ the buffer's length.
                Box::new(move || unsafe { mix::pass(ks, mix, base, *chunks, PATTERN) })
            }
        }
    }
}

/// Start a CPU team's thread.
pub fn start(agent: &Agent, host: &Host, page: PageKind) -> Result<Running, String> {
    let Agent::Cpu {
        name,
        cpus,
        memory_node,
        work,
        bytes_per_thread,
        ..
    } = agent
    else {
        return Err(format!("{} is not a cpu team", agent.name()));
    };
    let ws = *bytes_per_thread as usize;
    let pass = TeamPass::of(*work, host, ws, cpus.len())?;
    let (cpus, node) = (cpus.clone(), *memory_node);
    Running::spawn(name, move || {
        let nodes = node.map(|n| vec![n; cpus.len()]);
        let team = Team::spawn_bound(&cpus, ws + BUFFER_SLACK, page, nodes.as_deref())
            .map_err(|e| e.to_string())?;
        Ok(team_body(team, pass, nodes.map(|n| (n, ws))))
    })
}

/// A CPU team's phase: every worker streams its passes over its own
/// buffer and keeps its own log. A team bound to nodes (`bound`: worker
/// `i`'s node, and the bytes it streams) then counts where its pages are.
fn team_body(team: Team, pass: TeamPass, bound: Option<(Vec<u32>, usize)>) -> Body {
    let pass = Arc::new(pass);
    Box::new(move |gate: &Arc<Gate>| {
        // The workers wait for the gate themselves: the driver only
        // hands them the phase.
        let (g, pass) = (gate.clone(), pass.clone());
        let arrived = Arc::new(AtomicUsize::new(0));
        let n = team.threads();
        let logs = team.run_each(move |i, buf| {
            // SAFETY: the worker's own buffer, made for this pass's size
            // plus BUFFER_SLACK, 2 MiB aligned; the kernels run here.
            let one = unsafe { pass.prepare(buf, i, n) };
            let (r, w) = pass.bytes();
            stream(&g, &arrived, n, one, r + w)
        });
        let placed = bound
            .as_ref()
            .and_then(|(nodes, ws)| team.placed_on(nodes, *ws).ok())
            .map(|p| p.0);
        Counted {
            logs,
            ended: None,
            placed,
        }
    })
}

/// One worker's passes until the gate's stop, counted after each.
fn stream(
    gate: &Gate,
    arrived: &AtomicUsize,
    n: usize,
    mut one: impl FnMut() -> u64,
    per_pass: u64,
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
    while !gate.stopped() {
        sum = sum.wrapping_add(one());
        c.add(per_pass);
    }
    std::hint::black_box(sum);
    c.finish()
}

/// The probe's thread: a chase or a one-thread read on its own cpu.
pub fn start_probe(p: &ProbePlan, host: &Host, page: PageKind) -> Result<Running, String> {
    let (cpu, bytes, kind) = (p.cpu, p.bytes as usize, p.kind);
    let pass = TeamPass::of(CpuWork::Mix(Mix::READ), host, bytes, 1)?;
    Running::spawn("probe", move || {
        let team = Team::spawn(&[cpu], bytes + BUFFER_SLACK, page).map_err(|e| e.to_string())?;
        match kind {
            ProbeKind::Bandwidth => Ok(team_body(team, pass, None)),
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
        Counted {
            logs,
            ended: None,
            placed: None,
        }
    }))
}
