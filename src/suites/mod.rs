//! What is measured. A suite turns typed options into a plan, measures it
//! with `measure` (one [`Sampler`] for every suite), and pushes one
//! `Record` per case through the [`Ctx`] the runner gives it. Suites never
//! print and never see the command line: the app converts flags into
//! options and renders the finished run.
//!
//! Adding a suite: a module here with its options, plan and `Suite` impl,
//! one entry in [`REGISTRY`] (how the survey and fleet run it), and a view
//! in `report::views`.

pub mod cache;
pub mod cpus;
pub mod estimate;
pub mod first_use;
pub mod knees;
pub mod latency;
pub mod memtype;
pub mod net;
pub mod numa;
pub mod record;
pub mod regs;
pub mod threads;
pub mod transfer;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::error::UserError;
use crate::kernels::Kernel;
use crate::measure::{SampleOpts, Sampler};
use crate::model::{Host, Record, Warning};

pub use cpus::{check_memory, default_cpu_order, resolve_cpus};

/// Where a suite's results go; the app implements it (the run's sink, the
/// progress display).
pub trait Out {
    /// A finished record.
    fn record(&mut self, r: Record) -> Result<(), UserError>;
    /// A warning about the whole run (THP not obtained, …).
    fn run_warning(&mut self, w: Warning);
    /// `total` steps of work lie ahead (replaces any earlier total).
    fn plan_steps(&mut self, total: u64);
    /// One step is starting; `label` says what it measures.
    fn step(&mut self, label: &str);
    /// A line for the person watching (what device was opened, where the
    /// host thread runs); not part of the results.
    fn note(&mut self, text: &str);
}

/// What a running suite gets: the machine, the stop flag (set by SIGINT,
/// SIGTERM, SIGHUP), and where its records go.
pub struct Ctx<'a> {
    pub host: &'a Host,
    /// `'static` so measurements that run on worker threads can take it.
    pub stop: &'static AtomicBool,
    out: &'a mut dyn Out,
}

impl<'a> Ctx<'a> {
    pub fn new(host: &'a Host, stop: &'static AtomicBool, out: &'a mut dyn Out) -> Ctx<'a> {
        Ctx { host, stop, out }
    }

    /// Hand a finished record to the run. Every bandwidth record carries a
    /// limit: one no suite bounded (a network or device path) says
    /// `unknown`.
    pub fn push(&mut self, mut r: Record) -> Result<(), UserError> {
        if r.gbps.is_some() && r.bound_by.is_none() {
            r.set_limit(crate::model::Limit {
                gbps: None,
                bound_by: crate::model::BoundBy::Unknown,
            });
        }
        self.out.record(r)
    }

    pub fn run_warning(&mut self, w: Warning) {
        self.out.run_warning(w)
    }

    pub fn plan_steps(&mut self, total: u64) {
        self.out.plan_steps(total)
    }

    pub fn step(&mut self, label: &str) {
        self.out.step(label)
    }

    pub fn note(&mut self, text: &str) {
        self.out.note(text)
    }

    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// `kernels` this CPU runs; each of the others becomes a `skipped`
    /// record of `suite` with its reason.
    pub fn runnable(
        &mut self,
        suite: &str,
        kernels: &[&'static Kernel],
    ) -> Result<Vec<&'static Kernel>, UserError> {
        let mut out = Vec::new();
        for &k in kernels {
            match k.skip_reason(&self.host.features) {
                Some(reason) => self.push(Record::skipped(suite, k.name, reason))?,
                None => out.push(k),
            }
        }
        Ok(out)
    }

    /// The measurement protocol with `opts`, honouring this run's stop flag.
    pub fn sampler(&self, opts: SampleOpts) -> Sampler<'static> {
        Sampler::new(opts, self.stop)
    }
}

/// How a suite's run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Done,
    /// A stop request ended it; every finished record was pushed.
    Stopped,
}

/// A planned suite, ready to run.
pub trait Suite {
    /// The suite's name, as in `Record::suite`.
    fn name(&self) -> &'static str;
    /// The resolved plan, stored as the run's `options`.
    fn options(&self) -> serde_json::Value;
    /// Measure, pushing every record through `cx` as it completes.
    fn run(&self, cx: &mut Ctx) -> anyhow::Result<Flow>;
    /// How long the plan will take, before it starts (see `estimate`);
    /// None where the suite has no estimate.
    fn estimate(&self) -> Option<estimate::Estimate> {
        None
    }
}

/// A resolved plan that is its own options (most suites): it serializes
/// as the run's `options` and runs itself.
pub trait Plan: serde::Serialize {
    /// The suite's name, as in `Record::suite`.
    const NAME: &'static str;
    /// Measure, pushing every record through `cx` as it completes.
    fn execute(&self, cx: &mut Ctx) -> anyhow::Result<Flow>;
    /// See [`Suite::estimate`].
    fn estimate(&self) -> Option<estimate::Estimate> {
        None
    }
}

impl<P: Plan> Suite for P {
    fn name(&self) -> &'static str {
        P::NAME
    }

    fn options(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("plans are plain data")
    }

    fn run(&self, cx: &mut Ctx) -> anyhow::Result<Flow> {
        self.execute(cx)
    }

    fn estimate(&self) -> Option<estimate::Estimate> {
        Plan::estimate(self)
    }
}

/// A suite as the survey and fleet compose it: a name, what it measures,
/// and its short configuration for this machine.
pub struct Entry {
    pub name: &'static str,
    pub what: &'static str,
    pub quick: fn(&Host) -> Result<Box<dyn Suite>, UserError>,
}

/// Every suite the survey (and `fleet --suites`) can run without a device
/// or a peer, in the survey's order. Transfers and the network need a
/// device or a peer and run only when asked.
pub const REGISTRY: &[Entry] = &[
    Entry {
        name: "cache",
        what: "cache → DRAM sweep of the key kernels (read/write/copy at the widest ISA, NT write and copy, rep movsb, libc memcpy), one size per octave",
        quick: cache::quick,
    },
    Entry {
        name: "latency",
        what: "load-to-use latency by pointer chase, one size per octave from L1 to DRAM",
        quick: latency::quick,
    },
    Entry {
        name: "threads",
        what: "read bandwidth over 1..N pinned threads (one per physical core) at a DRAM-sized set",
        quick: threads::quick,
    },
    Entry {
        name: "memtype",
        what: "memory kinds available here: first-use cost, copy and read bandwidth, break-even",
        quick: memtype::quick,
    },
];

/// The registry entry named `name`.
pub fn entry(name: &str) -> Option<&'static Entry> {
    REGISTRY.iter().find(|e| e.name == name)
}

/// `--samples` and `--min-sample-ms` as given (None: the suite's default).
#[derive(Debug, Clone, Copy, Default)]
pub struct Sampling {
    pub samples: Option<usize>,
    pub min_sample_ms: Option<f64>,
}

impl Sampling {
    /// Validated options, with a suite's defaults.
    pub fn resolve(&self, default: SampleOpts) -> Result<SampleOpts, UserError> {
        let samples = self.samples.unwrap_or(default.samples);
        if samples == 0 || samples > 100_000 {
            return Err(UserError::flag("--samples", "must be between 1 and 100000"));
        }
        let min_sample = match self.min_sample_ms {
            Some(ms) if !(ms > 0.0 && ms <= 60_000.0) => {
                return Err(UserError::flag(
                    "--min-sample-ms",
                    "must be above 0 and at most 60000",
                ))
            }
            Some(ms) => Duration::from_secs_f64(ms / 1000.0),
            None => default.min_sample,
        };
        // Samples asked for by name are taken, every one; a suite's
        // default may settle early.
        let settle = if self.samples.is_some() {
            None
        } else {
            default.settle
        };
        Ok(SampleOpts {
            samples,
            min_sample,
            settle,
        })
    }
}

/// Run-level warnings about the machine itself.
pub fn host_warnings(host: &Host) -> Vec<Warning> {
    let mut w = Vec::new();
    if let Some(h) = &host.cpu.hypervisor {
        w.push(Warning::VirtualMachine {
            hypervisor: h.clone(),
        });
    }
    match crate::platform::emulation() {
        Some(why) => w.push(Warning::Other {
            message: format!(
                "running under an emulator: every time in this run is the emulator's and says nothing about the hardware ({why})"
            ),
            hint: "results here prove the kernels correct, not fast: run on the hardware itself to measure".into(),
        }),
        None => {
            if let Some(c) = &host.clock {
                w.extend(c.warnings());
            }
        }
    }
    if let Some(arm) = host.arm.as_ref().filter(|a| a.heterogeneous()) {
        w.push(Warning::Other {
            message: format!(
                "this CPU has {} kinds of core ({}): a record is labelled with the kind it ran on (`core_kind`)",
                arm.core_kinds.len(),
                arm.core_kinds
                    .iter()
                    .map(|k| format!("{} on cpus {}", k.id, crate::util::cpulist::format_cpu_list(&k.cpus)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            hint: "pick one kind with `--cpus kind:ID` (ids in `bwscope info`)".into(),
        });
    }
    w.extend(host.cache_warnings());
    w
}
