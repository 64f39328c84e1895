//! `bwscope cores`: what it costs to hand a cache line from one core to
//! another (suite `cores`), for pairs of every class the system states,
//! and what those pairs say about the machine's real topology.
//!
//! Per pair (two threads pinned through `os::cpu`, the lines on the first
//! one's node), three exchanges (`measure::c2c`):
//! - **CAS**: a compare-and-swap ping-pong on one line, one-way = round
//!   trip / 2 (nviennot/core-to-core-latency, multichase `pingpong`);
//! - **HIT**: a clean line of the holder's read by the other core, and
//!   **HITM**: a modified one (Intel MLC `--c2c_latency`), each a
//!   dependent chase over 256 lines the holder prepared.
//!
//! Each figure is best and median of calibrated samples, in ns and core
//! cycles, from two repeats that must agree and clear a floor, or it is
//! refused (`measure`). The pairs come from the planner (`plan::pairs`):
//! a few per class, then random pairs checking every cpu within a time
//! budget, or `--all-pairs`. At the end each class gets a record of its
//! pairs together and the verdict (`verdict`) holds them against the
//! stated topology. `--fairness N`: N threads incrementing one line, their
//! total rate and each one's share (multichase `fairness`).

pub mod measure;
mod records;
pub mod verdict;

use std::time::Duration;

use serde::Serialize;

use super::estimate::Estimate;
use super::{Ctx, Descriptor, Flow, Plan, Planned, Sampling};
use crate::error::UserError;
use crate::measure::c2c::{Fairness, Pair};
use crate::measure::{Failure, SampleOpts};
use crate::model::detail::Exchange;
use crate::model::{Host, Record, SuiteId, Topology};
use crate::plan::classes::class_of;
use crate::plan::pairs::{self, Cost, PairOpts, PairPlan, PlannedClass, PlannedPair, Role};
use crate::util::cpulist::format_cpu_list;

pub use records::{same_core, Shared};

/// What a cores run is asked for; `None` is this machine's default.
#[derive(Debug, Clone, Default)]
pub struct CoresOptions {
    /// The cpus to pair (a `--cpus` spec), default every allowed one.
    pub cpus: Option<String>,
    /// One pair only, holder first.
    pub pair: Option<[u32; 2]>,
    pub all_pairs: bool,
    pub exchanges: Option<Vec<Exchange>>,
    pub per_class: Option<usize>,
    pub budget_s: Option<f64>,
    /// Threads of the fairness view (0: none).
    pub fairness: Option<usize>,
    pub seed: Option<u64>,
    pub quick: bool,
    pub sampling: Sampling,
}

/// The resolved plan (the run's `options`; `options.cores` in the survey).
#[derive(Debug, Clone, Serialize)]
pub struct CoresPlan {
    pub cpus: Vec<u32>,
    pub exchanges: Vec<Exchange>,
    /// Samples per repeat, repeats per figure.
    pub samples: usize,
    pub repeats: usize,
    pub min_sample_ms: f64,
    pub chase_sample_ms: f64,
    pub seed: u64,
    pub quick: bool,
    pub pairs: PairPlan,
    pub fairness_cpus: Vec<u32>,
    /// Why nothing can be measured here (a system without pinning, one
    /// cpu), said as a skipped record.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skip: Option<String>,
    #[serde(skip)]
    pub topology: Topology,
}

/// Samples per repeat and the CAS sample's minimum by default.
const SAMPLES: usize = 5;
const MIN_SAMPLE: Duration = Duration::from_millis(1);
/// A HIT/HITM sample's timed reads last a quarter of a CAS sample: their
/// preparation (untimed) costs as much again or, for HIT, a DRAM round
/// per line more.
const CHASE_SHARE: f64 = 0.25;
/// Check pairs: fewer samples per repeat (CAS only).
const CHECK_SAMPLES: usize = 3;
const REPEATS: usize = 2;
/// Threads of the fairness view by default.
const FAIRNESS_THREADS: usize = 16;

pub fn plan(o: &CoresOptions, host: &Host) -> Result<CoresPlan, UserError> {
    let cpus = match (&o.pair, &o.cpus) {
        // Checked with the pair below.
        (Some(p), _) => p.to_vec(),
        (None, Some(spec)) => super::resolve_cpus(host, None, Some(spec))?,
        (None, None) => host.allowed_cpus.clone(),
    };
    let exchanges = match &o.exchanges {
        Some(e) if e.is_empty() => {
            return Err(UserError::flag("--exchange", "empty list: use cas, hit, hitm or a list"))
        }
        Some(e) => {
            let mut v = e.clone();
            v.dedup();
            v
        }
        None => Exchange::ALL.to_vec(),
    };
    if let Some(b) = o.budget_s.filter(|&b| !(b > 0.0 && b <= 86_400.0)) {
        return Err(UserError::flag(
            "--budget",
            format!("{b} s: give seconds above 0 and at most 86400, e.g. 10 or 60"),
        ));
    }
    if o.per_class == Some(0) {
        return Err(UserError::flag("--per-class", "must be at least 1"));
    }
    let default = SampleOpts {
        samples: if o.quick { 3 } else { SAMPLES },
        min_sample: MIN_SAMPLE,
        settle: None,
    };
    let s = o.sampling.resolve(default)?;
    let min_sample_ms = s.min_sample.as_secs_f64() * 1e3;
    let topology = crate::os::cpu::topology();
    let skip = skip_reason(&cpus);
    let cost = Cost {
        samples: s.samples,
        repeats: REPEATS,
        check_samples: CHECK_SAMPLES,
        cas_sample_s: min_sample_ms / 1e3,
        chase_sample_s: min_sample_ms * CHASE_SHARE / 1e3,
        lines: crate::measure::c2c::LINES,
    };
    let seed = o.seed.unwrap_or(0xc2c);
    let pairs = match o.pair {
        Some(p) => one_pair(host, &topology, p, &exchanges)?,
        None => pairs::plan(
            &topology,
            &cpus,
            &PairOpts {
                per_class: o.per_class.unwrap_or(if o.quick { 1 } else { 3 }),
                budget_s: match (o.quick, o.budget_s) {
                    (_, Some(b)) => b,
                    // The survey: one pair per class, no checks.
                    (true, None) => 0.0,
                    (false, None) => pairs::default_budget_s(cpus.len()),
                },
                all_pairs: o.all_pairs,
                seed,
                exchanges: exchanges.clone(),
                cost,
            },
        ),
    };
    let fairness_cpus = fairness_cpus(o, host, &cpus)?;
    Ok(CoresPlan {
        cpus,
        exchanges,
        samples: s.samples,
        repeats: REPEATS,
        min_sample_ms,
        chase_sample_ms: min_sample_ms * CHASE_SHARE,
        seed,
        quick: o.quick,
        pairs,
        fairness_cpus,
        skip,
        topology,
    })
}

/// Why no pair can be measured here, or None.
fn skip_reason(cpus: &[u32]) -> Option<String> {
    if let Some(why) = crate::os::cpu::PLACEMENT_ADVISORY {
        return Some(format!(
            "core-to-core latency needs each thread on a cpu of its choosing, and this system cannot pin threads ({why})"
        ));
    }
    (cpus.len() < 2).then(|| {
        format!(
            "core-to-core latency needs two cpus; this process may use only cpu {}",
            format_cpu_list(cpus)
        )
    })
}

/// `--pair A,B`: that pair alone, every exchange asked for.
fn one_pair(
    host: &Host,
    t: &Topology,
    [a, b]: [u32; 2],
    exchanges: &[Exchange],
) -> Result<PairPlan, UserError> {
    if a == b {
        return Err(UserError::flag(
            "--pair",
            format!("{a},{b} names one cpu twice: give two cpus, e.g. 0,1"),
        ));
    }
    super::resolve_cpus(host, None, Some(&format!("{a},{b}")))
        .map_err(|e| UserError::flag("--pair", e.to_string()))?;
    let (pa, pb) = t.place(a).zip(t.place(b)).ok_or_else(|| {
        UserError::flag("--pair", format!("the system lists no topology for cpu {a} or {b}"))
    })?;
    let key = class_of(t, pa, pb);
    Ok(PairPlan {
        classes: vec![PlannedClass {
            name: key.name(),
            what: key.near.what().to_string(),
            key,
            pairs_total: 1,
            pairs_measured: 1,
        }],
        pairs: vec![PlannedPair {
            a,
            b,
            class: 0,
            role: Role::Class,
            exchanges: exchanges.to_vec(),
        }],
        estimate_s: 0.0,
        budget_s: 0.0,
        cpus: 2,
        cpus_covered: 2,
    })
}

/// The fairness view's cpus: `--fairness N` of the default order (one per
/// core first), 16 at most by default, none in the survey.
fn fairness_cpus(o: &CoresOptions, host: &Host, cpus: &[u32]) -> Result<Vec<u32>, UserError> {
    let n = match (o.fairness, o.quick) {
        (Some(n), _) => n,
        (None, true) => 0,
        (None, false) => cpus.len().min(FAIRNESS_THREADS),
    };
    if n == 1 {
        return Err(UserError::flag(
            "--fairness",
            "1 thread shares the line with nobody: give 2 or more, or 0 for none",
        ));
    }
    if n == 0 || cpus.len() < 2 {
        return Ok(Vec::new());
    }
    if n > cpus.len() {
        return Err(UserError::flag(
            "--fairness",
            format!(
                "{n} threads: give 2 to {} (the cpus this run pairs), or 0 for none",
                cpus.len()
            ),
        ));
    }
    let order: Vec<u32> = super::default_cpu_order(host)
        .into_iter()
        .filter(|c| cpus.contains(c))
        .collect();
    Ok(order.into_iter().take(n).collect())
}

pub const DESCRIPTOR: Descriptor = Descriptor {
    id: SuiteId::Cores,
    about: "a cache line handed from core to core: CAS, HIT, HITM one-way latency per class of cpu pairs",
    reads_clock: true,
    quick: Some(quick),
    key: None,
};

/// The survey's run: one pair per class, no checks, no fairness view.
fn quick(host: &Host) -> Planned {
    let o = CoresOptions {
        quick: true,
        ..CoresOptions::default()
    };
    Ok(Box::new(plan(&o, host)?))
}

impl Plan for CoresPlan {
    const ID: SuiteId = SuiteId::Cores;

    fn estimate(&self) -> Estimate {
        if self.skip.is_some() {
            return Estimate::nothing("nothing to measure here");
        }
        let fairness = if self.fairness_cpus.is_empty() {
            0.0
        } else {
            (self.samples as f64 + 4.0) * 10e-3
        };
        Estimate {
            seconds: self.pairs.estimate_s + fairness,
            rule: format!(
                "{} pairs of {} classes: per figure {} repeats × ({} samples + ~5 calibration calls) of at least {} ms (CAS) or {} ms of reads (HIT, HITM: their preparation costs more by the class's latency)",
                self.pairs.pairs.len(),
                self.pairs.classes.len(),
                self.repeats,
                self.samples,
                self.min_sample_ms,
                self.chase_sample_ms
            ),
        }
    }

    fn execute(&self, cx: &mut Ctx) -> anyhow::Result<Flow> {
        run(self, cx)
    }
}

/// Measure the plan: every pair's exchanges, the classes' records and
/// verdict, then the fairness view.
fn run(plan: &CoresPlan, cx: &mut Ctx) -> anyhow::Result<Flow> {
    if let Some(why) = &plan.skip {
        cx.push(Record::skipped(SuiteId::Cores, Exchange::Cas.kernel(), why.clone()))?;
        return Ok(Flow::Done);
    }
    let steps = plan.pairs.pairs.len() + usize::from(!plan.fairness_cpus.is_empty());
    cx.plan_steps(steps as u64);
    let setting = measure::Setting {
        samples: plan.samples,
        repeats: plan.repeats,
        cas_sample: Duration::from_secs_f64(plan.min_sample_ms / 1e3),
        chase_sample: Duration::from_secs_f64(plan.chase_sample_ms / 1e3),
        clock_hz: cx.host.clock_hz,
    };
    let mut measured: Vec<Record> = Vec::new();
    let mut flow = Flow::Done;
    'pairs: for (i, p) in plan.pairs.pairs.iter().enumerate() {
        let class = &plan.pairs.classes[p.class];
        cx.step(&format!("{}-{} {}", p.a, p.b, class.name));
        let mut s = setting;
        if p.role == Role::Check {
            s.samples = s.samples.min(CHECK_SAMPLES);
        }
        let pair = match Pair::new(p.a, p.b) {
            Ok(pair) => pair,
            Err(e) => {
                for &x in &p.exchanges {
                    let mut r = Record::error(SuiteId::Cores, x.kernel(), e.to_string());
                    r.cpus = vec![p.a, p.b];
                    cx.push(r)?;
                }
                continue;
            }
        };
        for &x in &p.exchanges {
            let case = measure::Case {
                exchange: x,
                pair: [p.a, p.b],
                class: &class.name,
                what: &class.what,
                role: role_name(p.role),
            };
            match measure::pair_record(&pair, &case, &s, cx.stop, plan.seed ^ i as u64) {
                Ok(r) => {
                    measured.push(r.clone());
                    cx.push(r)?;
                }
                Err(Failure::Stopped) => {
                    flow = Flow::Stopped;
                    break 'pairs;
                }
                Err(Failure::Failed(e)) => {
                    cx.push(Record::error(SuiteId::Cores, x.kernel(), e))?;
                }
            }
        }
    }
    // What was measured is judged even after a stop request: the classes'
    // records cost no time and keep what the pairs said.
    for r in records::classes(plan, &measured, cx.host.clock_hz) {
        cx.push(r)?;
    }
    if flow == Flow::Stopped || plan.fairness_cpus.is_empty() {
        return Ok(flow);
    }
    cx.step(&format!(
        "fairness on {}",
        format_cpu_list(&plan.fairness_cpus)
    ));
    let sampler = cx.sampler(SampleOpts {
        samples: plan.samples,
        min_sample: Duration::from_millis(10),
        settle: None,
    });
    let measured = Fairness::new(&plan.fairness_cpus)
        .map_err(|e| Failure::Failed(e.to_string()))
        .and_then(|mut w| {
            let m = sampler.measure(&mut w, None)?;
            Ok((m, w.counts))
        });
    Ok(
        cx.finish_case(SuiteId::Cores, records::FAIRNESS, measured, |(m, counts)| {
            let cut = m.cut_short;
            (records::fairness(&plan.fairness_cpus, &m, &counts), cut)
        })?,
    )
}

fn role_name(r: Role) -> &'static str {
    match r {
        Role::Class => "class",
        Role::Check => "check",
        Role::Matrix => "matrix",
    }
}
