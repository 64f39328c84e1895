//! The agents: what an agent type is ([`AgentType`]: one file each, a
//! CPU team in `team.rs`, a device copy stream in `device.rs`, a TCP
//! flow in `net.rs`), and the agents at run time: each one a thread of
//! its own (a CPU team's driver, a device's host thread, a flow's
//! receiver), prepared once, then run phase by phase. In a phase an agent
//! says it is ready, waits for the gate, and counts what it moves with
//! timestamps of the one monotonic clock until it is told to stop.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;

use crate::measure::probe::SpellProbes;
use crate::memory::PageKind;
use crate::model::{AgentKind, Host, Probe, Record};
use crate::os::time::now_ns;

/// One type of agent. The coordinator, the phases, the records and the
/// views know an agent only through this: a new type is one file that
/// implements it (and the flag that plans it).
pub trait AgentType: std::fmt::Debug + Send + Sync {
    /// What it is, in its records (`agent_kind`).
    fn kind(&self) -> AgentKind;
    /// Its name and spec.
    fn id(&self) -> &AgentId;
    /// `cpu0`, `dev0`, `net0`: its column and its phases' names.
    fn name(&self) -> &str {
        &self.id().name
    }
    /// The agent as resolved (`cpus:0-1:read`, `cuda0:h2d:pinned`, …).
    fn spec(&self) -> &str {
        &self.id().spec
    }
    /// The cpus its own threads are pinned to (none for an agent whose
    /// work runs elsewhere): no other agent or the probe may take them.
    fn cpus(&self) -> &[u32] {
        &[]
    }
    /// The memory its buffers take.
    fn footprint(&self) -> Footprint;
    /// Its plan, for the run's options (the plan adds `kind`).
    fn options(&self) -> serde_json::Value;
    /// Start its thread, prepared for the phases.
    fn start(&self, s: &Start) -> Result<Running, String>;
    /// What its record says beyond every agent's window figures: its op,
    /// threads, kernels, byte convention, where its bytes go.
    fn describe(&self, r: &mut Record, f: &Figure, host: &Host);
}

/// An agent's name and its spec as resolved, which every type has (in
/// its options beside its own fields).
#[derive(Debug, Clone, serde::Serialize)]
pub struct AgentId {
    pub name: String,
    pub spec: String,
}

/// An agent of a run.
pub type Agent = Arc<dyn AgentType>;

/// What starting an agent may use.
pub struct Start<'a> {
    pub host: &'a Host,
    pub memory: PageKind,
    /// The transponders' shared secret, for remote flows.
    pub token: Option<Vec<u8>>,
    /// Every cpu the run's agents and its probe are pinned to.
    pub run_cpus: Vec<u32>,
}

impl Start<'_> {
    /// Whether a worker on `cpus` may take the core-share probe: none of
    /// their cores' SMT siblings runs another of this run's threads. If
    /// one does, the core is shared by this run's own doing, known in
    /// advance; a reading there would only say so again, and nothing in
    /// the guest's noise would tell the judgement that it was not another
    /// tenant's.
    pub fn probes_cores(&self, cpus: &[u32]) -> bool {
        !cpus.iter().any(|&c| {
            self.host.cpus.iter().any(|h| {
                h.id == c
                    && h.siblings
                        .iter()
                        .any(|s| *s != c && self.run_cpus.contains(s))
            })
        })
    }
}

/// The memory an agent's buffers take, bytes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Footprint {
    /// Faulted on the host before the first phase (the estimate's).
    pub faulted: u64,
    /// Host memory it needs, buffers and slack (`--size`'s check).
    pub host: u64,
    /// Host memory its device copies need (`--device-size`'s check).
    pub copies: u64,
}

/// The plan's agents in the run's options: each one's fields and its
/// `kind`, as the enum they once were wrote them.
pub fn agents_json<S: serde::Serializer>(agents: &[Agent], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(agents.iter().map(|a| {
        let mut v = a.options();
        if let serde_json::Value::Object(m) = &mut v {
            m.insert("kind".into(), a.kind().as_str().into());
        }
        v
    }))
}

/// One agent's count over the window.
#[derive(Debug, Clone)]
pub struct Figure {
    /// Its counts cover the whole window.
    pub valid: bool,
    /// Bytes (the probe's latency: loads) inside the window.
    pub units: f64,
    pub gbps: f64,
    pub slice_units: Vec<f64>,
    pub slice_seconds: f64,
    pub window_seconds: f64,
    /// First count from the window's start, last count from its end, s.
    pub from: Option<f64>,
    pub to: Option<f64>,
    pub ended: Option<String>,
    /// A bound team's pages on its node after the phase (fraction).
    pub placed: Option<f64>,
    /// The agent's counts spanned the window but it moved nothing, or
    /// nothing for this long (s): it did not run there (a stalled or
    /// stopped transponder), so its figure is not valid.
    pub stalled: Option<f64>,
    /// Per slice, the spell probes' readings taken in it (a CPU-side
    /// agent's; none for the others): its workers' slowest core share,
    /// and on the last slice the memory probe taken once the window
    /// closed.
    pub slice_probes: Vec<Option<Probe>>,
}

/// One phase's meeting point: the agents count themselves ready, the
/// coordinator opens the gate, then raises `stop`.
pub struct Gate {
    pub ready: AtomicUsize,
    pub go: AtomicBool,
    pub stop: AtomicBool,
    /// How long the phase is planned to run from the gate (warm-up and
    /// window): a flow whose far end sends asks for this much.
    pub length: std::time::Duration,
    /// How often a CPU-side worker takes the core-share probe
    /// ([`Prober`]).
    pub probe_every: std::time::Duration,
    /// The run's spell probes, which every [`Prober`] reads through (the
    /// sampler's, for every suite).
    pub probes: Arc<SpellProbes>,
}

impl Gate {
    pub fn new(
        length: std::time::Duration,
        probe_every: std::time::Duration,
        probes: Arc<SpellProbes>,
    ) -> Gate {
        Gate {
            ready: AtomicUsize::new(0),
            go: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            length,
            probe_every,
            probes,
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
pub(super) const TICK_NS: u64 = 500_000;

/// Refuse slices shorter than two of the agents' count ticks: between
/// two counts a slice's figure is interpolated, so a 0.1 ms slice would
/// be a made-up sample, not a measured one.
pub(super) fn check_slices(slice: std::time::Duration) -> Result<(), crate::error::UserError> {
    let least = std::time::Duration::from_nanos(2 * TICK_NS);
    if slice < least {
        return Err(crate::error::UserError::flag(
            "--min-sample-ms",
            format!(
                "contend's slices of {} ms are shorter than {} ms, twice the {} ms at which its agents count; give at least {}",
                slice.as_secs_f64() * 1e3,
                least.as_secs_f64() * 1e3,
                TICK_NS as f64 / 1e6,
                least.as_secs_f64() * 1e3
            ),
        ));
    }
    Ok(())
}

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
    /// A team bound to a node: the fraction of its buffers' pages on it
    /// after the phase (a `move_pages` census).
    pub placed: Option<f64>,
    /// The core-share probe's readings on its workers, each stamped when
    /// the pass before it ended (CPU-side agents only: [`Prober`]).
    pub probes: Vec<(u64, Probe)>,
}

impl Counted {
    pub fn one(log: Log, ended: Option<String>) -> Counted {
        Counted {
            logs: vec![log],
            ended,
            placed: None,
            probes: Vec::new(),
        }
    }
}

/// A CPU-side worker's core-share probe (`measure::probe`, as the
/// sampler takes it after every sample), taken between two passes once
/// every [`Gate::probe_every`]: the spells of the slice it falls in. The
/// memory probe is not taken here: during a window the phase's own
/// agents load the memory on purpose (the coordinator chases once the
/// window closes and every agent has stopped).
pub struct Prober {
    every: u64,
    last: u64,
    probes: Arc<SpellProbes>,
    pub readings: Vec<(u64, Probe)>,
}

impl Prober {
    /// A worker's prober; `on`: it may probe its core
    /// ([`Start::probes_cores`]).
    pub fn new(gate: &Gate, on: bool) -> Prober {
        Prober {
            every: if on {
                gate.probe_every.as_nanos() as u64
            } else {
                u64::MAX
            },
            last: now_ns(),
            probes: gate.probes.clone(),
            readings: Vec::new(),
        }
    }

    /// After a pass: the probe, when its time has come.
    pub fn after_pass(&mut self) {
        let t = now_ns();
        if t.saturating_sub(self.last) >= self.every {
            self.readings.push((t, self.probes.read(false)));
            self.last = now_ns();
        }
    }
}

/// An agent's phase body, built on its own thread.
pub type Body = Box<dyn FnMut(&Arc<Gate>) -> Counted>;

/// An agent's thread.
pub struct Running {
    /// Its workers take the spell probes (a CPU-side agent on cores of
    /// its own): the coordinator then reads the guest's noise over the
    /// window and chases once it has closed.
    pub probes: bool,
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
                probes: false,
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
        self.rx
            .recv()
            .unwrap_or_else(|_| Counted::one(Vec::new(), Some("its thread ended".into())))
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

/// What one phase counted: each agent's (then the probe's) counts, and
/// the window's edges on the one clock.
pub struct Window {
    pub counted: Vec<Counted>,
    pub t0: u64,
    pub t1: u64,
    /// The memory probe right after the window, every agent stopped; None
    /// where no agent of the phase takes the spell probes.
    pub chase_after: Option<f64>,
    /// Other processes' CPU time and the hypervisor's steal over the
    /// window (`measure::noise`): what the guest saw of why a core was
    /// shared.
    pub noise: Option<crate::model::Noise>,
    /// The run's spell baseline once the window closed (its readings
    /// taken), which the phase's spells are judged against.
    pub baseline: Option<crate::model::SpellBaseline>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two cores of two threads each: 0 and 1 share one, 2 and 3 the
    /// other.
    fn smt_host() -> Host {
        let mut h = Host::default();
        for id in 0..4u32 {
            h.cpus.push(crate::model::Cpu {
                id,
                core: id / 2,
                package: 0,
                node: 0,
                siblings: vec![id & !1, id | 1],
            });
        }
        h
    }

    #[test]
    fn a_core_the_run_shares_itself_is_not_probed() {
        let host = smt_host();
        let start = |run: &[u32]| Start {
            host: &host,
            memory: PageKind::Thp,
            token: None,
            run_cpus: run.to_vec(),
        };
        // A team on 0 and 2, one thread per core: probed.
        assert!(start(&[0, 2]).probes_cores(&[0, 2]));
        // The probe on 1, 0's sibling: neither 0's team nor the probe.
        assert!(!start(&[0, 2, 1]).probes_cores(&[0, 2]));
        assert!(!start(&[0, 2, 1]).probes_cores(&[1]));
        // A team on both threads of one core shares it with itself.
        assert!(!start(&[2, 3]).probes_cores(&[2, 3]));
    }
}
