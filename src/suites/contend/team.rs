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

use super::agents::{
    AgentId,     AgentType, Body, Counted, Counter, Figure, Footprint, Gate, Log, Prober, Running, Start,
};
use super::records;
use super::{BystanderKind, BystanderPlan};
use crate::kernels::{self, Kernel, Op, PassBytes, Pattern};
use crate::measure::kernel::{pass_job, PATTERN};
use crate::measure::mix::{self, Mix, MixKernels};
use crate::measure::team::{Job, Team, BUFFER_SLACK};
use crate::memory::Buffer;
use crate::model::{AgentKind, Host, Record};

/// A CPU team's work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CpuWork {
    /// A read/write mix (`read`, `write`, `ntwrite`, `R:W`).
    Mix(Mix),
    /// The widest copy kernel, half the buffer into the other half.
    Copy,
}

impl CpuWork {
    pub fn name(&self) -> String {
        match self {
            CpuWork::Mix(m) => m.name(),
            CpuWork::Copy => "copy".into(),
        }
    }
}

/// A pinned CPU team streaming `work` over its own buffers (`--cpu`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct CpuAgent {
    #[serde(flatten)]
    pub id: AgentId,
    pub cpus: Vec<u32>,
    pub memory_node: Option<u32>,
    pub work: CpuWork,
    pub bytes_per_thread: u64,
}

impl AgentType for CpuAgent {
    fn kind(&self) -> AgentKind {
        AgentKind::Cpu
    }

    fn id(&self) -> &AgentId {
        &self.id
    }

    fn cpus(&self) -> &[u32] {
        &self.cpus
    }

    fn footprint(&self) -> Footprint {
        let n = self.cpus.len() as u64;
        Footprint {
            faulted: n * self.bytes_per_thread,
            host: n * (self.bytes_per_thread + (2 << 20)),
            copies: 0,
        }
    }

    fn options(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("plain data")
    }

    fn start(&self, s: &Start) -> Result<Running, String> {
        let ws = self.bytes_per_thread as usize;
        let pass = TeamPass::of(self.work, s.host, ws, self.cpus.len())?;
        let (cpus, node, page) = (self.cpus.clone(), self.memory_node, s.memory);
        let probes = s.probes_cores(&cpus);
        let mut r = Running::spawn(&self.id.name, move || {
            let nodes = node.map(|n| vec![n; cpus.len()]);
            let team = Team::spawn_bound(&cpus, ws + BUFFER_SLACK, page, nodes.as_deref())
                .map_err(|e| e.to_string())?;
            Ok(team_body(team, pass, nodes.map(|n| (n, ws)), probes))
        })?;
        r.probes = probes;
        Ok(r)
    }

    fn describe(&self, r: &mut Record, f: &Figure, host: &Host) {
        // What each worker runs per pass, as the team runs it.
        let n = self.cpus.len();
        let pass = TeamPass::of(self.work, host, self.bytes_per_thread as usize, n).ok();
        let used: Vec<String> = pass
            .iter()
            .flat_map(|p| p.kernels())
            .map(String::from)
            .collect();
        if let Some(p) = &pass {
            let (read, written) = p.bytes();
            r.bytes_read_per_pass = Some(read);
            r.bytes_written_per_pass = Some(written);
            if let Some(k) = p.kernel() {
                r.payload_bytes_per_pass = Some(if written > 0 { written } else { read });
                r.width_bits = (k.width_bits > 0).then_some(k.width_bits);
                r.nontemporal = Some(k.nontemporal);
            }
        }
        r.op = self.work.name().into();
        r.threads = n as u32;
        r.cpus = self.cpus.clone();
        r.size_bytes = Some(self.bytes_per_thread);
        r.pattern = Some(crate::model::Pattern::Seq);
        let d = records::detail_of(r);
        d.mix = Some(self.work.name());
        d.kernels = Some(used);
        d.memory_node = self.memory_node.into();
        d.byte_convention = Some("bytes read + written by the asm kernels".into());
        d.dma = Some(false);
        records::placement(r, &self.cpus, self.memory_node, f.placed, host);
    }
}

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

/// A CPU team's phase: every worker streams its passes over its own
/// buffer and keeps its own log. A team bound to nodes (`bound`: worker
/// `i`'s node, and the bytes it streams) then counts where its pages are.
fn team_body(
    team: Team,
    pass: TeamPass,
    bound: Option<(Vec<u32>, usize)>,
    probes: bool,
) -> Body {
    let pass = Arc::new(pass);
    Box::new(move |gate: &Arc<Gate>| {
        // The workers wait for the gate themselves: the driver only
        // hands them the phase.
        let (g, pass) = (gate.clone(), pass.clone());
        let arrived = Arc::new(AtomicUsize::new(0));
        let n = team.threads();
        let (logs, probes): (Vec<Log>, Vec<_>) = team
            .run_each(move |i, buf| {
                // SAFETY: the worker's own buffer, made for this pass's
                // size plus BUFFER_SLACK, 2 MiB aligned; the kernels run
                // here.
                let one = unsafe { pass.prepare(buf, i, n) };
                let (r, w) = pass.bytes();
                stream(&g, &arrived, n, one, r + w, probes)
            })
            .into_iter()
            .unzip();
        let placed = bound
            .as_ref()
            .and_then(|(nodes, ws)| team.placed_on(nodes, *ws).ok())
            .map(|p| p.0);
        Counted {
            logs,
            ended: None,
            placed,
            probes: probes.into_iter().flatten().collect(),
        }
    })
}

/// One worker's passes until the gate's stop, counted after each, and
/// its core-share probes between them.
fn stream(
    gate: &Gate,
    arrived: &AtomicUsize,
    n: usize,
    mut one: impl FnMut() -> u64,
    per_pass: u64,
    probes: bool,
) -> (Log, Vec<(u64, crate::model::Probe)>) {
    // The team counts as one agent: its last worker to arrive says so.
    if arrived.fetch_add(1, Ordering::AcqRel) + 1 == n {
        gate.arrive();
    } else {
        while !gate.go.load(Ordering::Acquire) && !gate.stopped() {
            std::thread::yield_now();
        }
    }
    let mut c = Counter::start();
    let mut probe = Prober::new(gate, probes);
    let mut sum = 0u64;
    while !gate.stopped() {
        sum = sum.wrapping_add(one());
        c.add(per_pass);
        probe.after_pass();
    }
    std::hint::black_box(sum);
    (c.finish(), probe.readings)
}

/// The probe's thread: a chase or a one-thread read on its own cpu.
pub fn start_bystander(p: &BystanderPlan, s: &Start) -> Result<Running, String> {
    let (cpu, bytes, kind, page) = (p.cpu, p.bytes as usize, p.kind, s.memory);
    let pass = TeamPass::of(CpuWork::Mix(Mix::READ), s.host, bytes, 1)?;
    // A latency probe's figure is its own chase: no spell probes.
    let probes = kind == BystanderKind::Bandwidth && s.probes_cores(&[cpu]);
    let mut r = Running::spawn("bystander", move || {
        let team = Team::spawn(&[cpu], bytes + BUFFER_SLACK, page).map_err(|e| e.to_string())?;
        match kind {
            BystanderKind::Bandwidth => Ok(team_body(team, pass, None, probes)),
            BystanderKind::Latency => chase_body(team, bytes),
        }
    })?;
    r.probes = probes;
    Ok(r)
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
            probes: Vec::new(),
        }
    }))
}
