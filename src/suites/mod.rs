//! What is measured. A suite turns typed options into a plan, measures it
//! with `measure` (one [`Sampler`] for every suite), and pushes one
//! `Record` per case through the [`Ctx`] the runner gives it. Suites never
//! print and never see the command line: the app converts flags into
//! options and renders the finished run.
//!
//! Each suite declares itself once, in a [`Descriptor`] beside its plan:
//! its name, what it measures, whether it reads the clock, the survey's
//! short plan and fleet's per-node plan. The survey, fleet and the
//! command dispatch read the descriptors. Every suite's module here and
//! its arm in [`descriptor`] come from its row in the model's list of
//! suites (`model::detail::each_suite!`), so a suite in the model without
//! a module and a `DESCRIPTOR` does not build.

pub mod estimate;
pub mod knees;
pub mod record;
pub mod spells;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::error::UserError;
use crate::kernels::Kernel;
use crate::measure::probe::SpellProbes;
use crate::measure::{Failure, SampleOpts, Sampler};
use crate::model::{Host, Record, SuiteId, Warning};

pub use crate::plan::cpus::{check_memory, default_cpu_order, resolve_cpus};

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
/// SIGTERM, SIGHUP), the run's spell probes, and where its records go.
pub struct Ctx<'a> {
    pub host: &'a Host,
    /// `'static` so measurements that run on worker threads can take it.
    pub stop: &'static AtomicBool,
    /// The run's spell probes and their baseline (`measure::probe`): a
    /// value of the run, handed to its sampler.
    pub probes: &'a Arc<SpellProbes>,
    out: &'a mut dyn Out,
}

impl<'a> Ctx<'a> {
    pub fn new(
        host: &'a Host,
        stop: &'static AtomicBool,
        probes: &'a Arc<SpellProbes>,
        out: &'a mut dyn Out,
    ) -> Ctx<'a> {
        Ctx {
            host,
            stop,
            probes,
            out,
        }
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
        suite: SuiteId,
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

    /// One case's end, the same in every suite: a measurement becomes its
    /// record (by `record`, which also says whether a stop request cut its
    /// samples short) and is pushed; a stop request before the first
    /// sample, or one that cut the samples short, ends the suite
    /// ([`Flow::Stopped`]); a failed measurement is an error record of
    /// `suite` for `kernel`, and the suite goes on ([`Flow::Done`]).
    pub fn finish_case<T>(
        &mut self,
        suite: SuiteId,
        kernel: &str,
        measured: Result<T, Failure>,
        record: impl FnOnce(T) -> (Record, bool),
    ) -> Result<Flow, UserError> {
        match measured {
            Ok(x) => {
                let (r, cut_short) = record(x);
                self.push(r)?;
                Ok(if cut_short { Flow::Stopped } else { Flow::Done })
            }
            Err(Failure::Stopped) => Ok(Flow::Stopped),
            Err(Failure::Failed(e)) => {
                self.push(Record::error(suite, kernel, e))?;
                Ok(Flow::Done)
            }
        }
    }

    /// The measurement protocol with `opts`, honouring this run's stop
    /// flag and taking its spell probes.
    pub fn sampler(&self, opts: SampleOpts) -> Sampler<'static> {
        Sampler::new(opts, self.stop).with_probes(self.probes.clone())
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
    /// Which suite this is (`Record::suite`).
    fn id(&self) -> SuiteId;
    /// The resolved plan, stored as the run's `options`.
    fn options(&self) -> serde_json::Value;
    /// Measure, pushing every record through `cx` as it completes.
    fn run(&self, cx: &mut Ctx) -> anyhow::Result<Flow>;
    /// How long the plan will take, before it starts (see `estimate`).
    fn estimate(&self) -> estimate::Estimate;
}

/// A resolved plan that is its own options (most suites): it serializes
/// as the run's `options` and runs itself.
pub trait Plan: serde::Serialize {
    /// Which suite this is (`Record::suite`).
    const ID: SuiteId;
    /// Measure, pushing every record through `cx` as it completes.
    fn execute(&self, cx: &mut Ctx) -> anyhow::Result<Flow>;
    /// See [`Suite::estimate`].
    fn estimate(&self) -> estimate::Estimate;
}

impl<P: Plan> Suite for P {
    fn id(&self) -> SuiteId {
        P::ID
    }

    fn options(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("plans are plain data")
    }

    fn run(&self, cx: &mut Ctx) -> anyhow::Result<Flow> {
        self.execute(cx)
    }

    fn estimate(&self) -> estimate::Estimate {
        Plan::estimate(self)
    }
}

/// A plan built for this machine, boxed for whoever runs it.
pub type Planned = Result<Box<dyn Suite>, UserError>;

/// Everything the app needs to know about a suite, declared once beside
/// its plan (`DESCRIPTOR` in each suite's module).
pub struct Descriptor {
    pub id: SuiteId,
    /// What it measures, in one line (the survey's step list).
    pub about: &'static str,
    /// Its records need the measured core clock (cycles, L1 ceilings), so
    /// the host is detected with the clock probe.
    pub reads_clock: bool,
    /// The survey's short configuration for this machine; None for the
    /// suites that need a device or a peer and run only when asked.
    pub quick: Option<fn(&Host) -> Planned>,
    /// What a fleet node runs of it, when the fleet runs it.
    pub key: Option<Key>,
}

/// A fleet node's configuration of a suite: its key points only, so a
/// node takes seconds.
pub struct Key {
    /// What it measures there, in one line (`fleet --suites`).
    pub about: &'static str,
    pub plan: fn(&Host, Sampling) -> Planned,
}

/// Declares each suite's module (`pub mod <module>;`, its plan and its
/// `DESCRIPTOR`) and [`descriptor`], from the model's list of suites.
macro_rules! suite_modules {
    ($( $(#[$doc:meta])* $module:ident: $id:ident($detail:ident) = $name:literal, )*) => {
        $( pub mod $module; )*

        /// The descriptor of `id`.
        pub fn descriptor(id: SuiteId) -> &'static Descriptor {
            match id {
                $( SuiteId::$id => &$module::DESCRIPTOR, )*
            }
        }
    };
}

crate::model::detail::each_suite!(suite_modules);

/// Every suite's descriptor, in [`SuiteId::ALL`] order.
pub fn descriptors() -> impl Iterator<Item = &'static Descriptor> {
    SuiteId::ALL.iter().copied().map(descriptor)
}

/// The suites the survey runs (those with a short configuration), in
/// order; transfers and the network need a device or a peer.
pub fn survey() -> impl Iterator<Item = (&'static Descriptor, fn(&Host) -> Planned)> {
    descriptors().filter_map(|d| d.quick.map(|q| (d, q)))
}

/// The suites a fleet node can run, in order.
pub fn fleet() -> impl Iterator<Item = (&'static Descriptor, &'static Key)> {
    descriptors().filter_map(|d| d.key.as_ref().map(|k| (d, k)))
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
    if let Some(why) = crate::os::cpu::PLACEMENT_ADVISORY {
        w.push(Warning::Other {
            message: format!("placement is advisory: {why}"),
            hint: "a record's cpus and core_kind name the kind of core asked for, not where the threads ran".into(),
        });
    }
    w.extend(host.cache_warnings());
    w.extend(crate::platform::knee_store::ignored());
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one row in the model's list gives every suite a module and an
    /// arm here; this checks that each `DESCRIPTOR` says it is that suite
    /// (a copied descriptor would otherwise run another suite's plans).
    #[test]
    fn every_suite_has_its_own_descriptor() {
        for &s in SuiteId::ALL {
            assert_eq!(descriptor(s).id, s, "{s}");
        }
        assert_eq!(descriptors().count(), SuiteId::ALL.len());
    }
}
