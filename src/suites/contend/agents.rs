//! The agents at run time: each one a thread of its own (a CPU team's
//! driver, a device's host thread, a flow's receiver; CPU teams and the
//! probe start in `team.rs`, devices and flows in their own files),
//! prepared once,
//! then run phase by phase. In a phase an agent says it is ready, waits
//! for the gate, and counts what it moves with timestamps of the one
//! monotonic clock until it is told to stop.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;

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
}

impl Counted {
    pub fn one(log: Log, ended: Option<String>) -> Counted {
        Counted {
            logs: vec![log],
            ended,
            placed: None,
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
}
