//! `bwscope regs`: register and stack transfer rates (suite `regs`).
//!
//! Each `reg_` kernel repeats a block of independent moves (see
//! `kernels::x86_regs`); the common sampler calibrates repetitions so a
//! sample lasts at least `--min-sample-ms`, and bytes per sample = reps ×
//! the block's bytes (the bytes arriving in the destinations). There is no
//! working set, so the records have `size_bytes: null` and no regime;
//! bytes per cycle (from the measured clock) make the figures comparable
//! across machines.

use super::estimate::Estimate;
use super::{Ctx, Descriptor, Flow, Plan, Sampling};
use crate::error::UserError;
use crate::kernels::{self, Kernel, Pattern};
use crate::measure::regs::Regs;
use crate::measure::{team, SampleOpts};
use crate::model::detail::RegsDetail;
use crate::model::{Host, Record, SuiteId};
use crate::plan::sizes::names;
use crate::stats;

/// What a regs run is asked for.
#[derive(Debug, Clone, Default)]
pub struct RegsOptions {
    /// Kernel names or prefixes (default: every `reg_` kernel).
    pub kernel: Option<String>,
    pub cpu: Option<u32>,
    pub sampling: Sampling,
}

/// Resolved options.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RegsPlan {
    #[serde(serialize_with = "names")]
    pub kernels: Vec<&'static Kernel>,
    pub cpu: u32,
    pub samples: usize,
    pub min_sample_ms: f64,
}

pub fn plan(o: &RegsOptions, host: &Host) -> Result<RegsPlan, UserError> {
    let selected = kernels::select(o.kernel.as_deref().unwrap_or("reg_"))
        .map_err(|m| UserError::flag("--kernel", m))?;
    let kernels: Vec<&'static Kernel> = selected
        .into_iter()
        .filter(|k| k.pattern == Pattern::Register)
        .collect();
    if kernels.is_empty() {
        return Err(UserError::flag(
            "--kernel",
            "no register kernel named: `bwscope regs` runs reg_ kernels (see `bwscope kernels reg_`); memory kernels run with `bwscope cache`",
        ));
    }
    let cpu = crate::plan::cpus::resolve_cpu(host, o.cpu)?;
    let s = o.sampling.resolve(SampleOpts::default())?;
    Ok(RegsPlan {
        kernels,
        cpu,
        samples: s.samples,
        min_sample_ms: s.min_sample.as_secs_f64() * 1000.0,
    })
}

pub const DESCRIPTOR: Descriptor = Descriptor {
    id: SuiteId::Regs,
    about: "register and stack transfer rates (reg→reg, push/pop, GPR↔vector)",
    reads_clock: true,
    quick: None,
    key: None,
};

/// How long the plan will take (see `suites::estimate` for the rule).
fn estimate(p: &RegsPlan) -> Estimate {
    Estimate::sampled(p.kernels.len(), p.samples, p.min_sample_ms)
}

impl Plan for RegsPlan {
    const ID: SuiteId = SuiteId::Regs;

    fn estimate(&self) -> Estimate {
        estimate(self)
    }

    fn execute(&self, cx: &mut Ctx) -> anyhow::Result<Flow> {
        team::on_cpu(self.cpu, || run(self, cx)).map_err(|e| UserError::flag("--cpu", e))?
    }
}

/// Measure every kernel on the calling (pinned) thread.
fn run(plan: &RegsPlan, cx: &mut Ctx) -> anyhow::Result<Flow> {
    let sampler = cx.sampler(SampleOpts::new(plan.samples, plan.min_sample_ms));
    cx.plan_steps(plan.kernels.len() as u64);
    for &k in &plan.kernels {
        cx.step(k.name);
        if let Some(reason) = k.skip_reason(&cx.host.features) {
            cx.push(Record::skipped(SuiteId::Regs, k.name, reason))?;
            continue;
        }
        // SAFETY: a register kernel whose ISA was just checked.
        let mut w = unsafe { Regs::new(k) };
        let host = cx.host;
        let measured = sampler.measure(&mut w, None);
        let flow = cx.finish_case(SuiteId::Regs, k.name, measured, |m| {
            (record(k, &m, host, plan.cpu), m.cut_short)
        })?;
        if flow == Flow::Stopped {
            return Ok(Flow::Stopped);
        }
    }
    Ok(Flow::Done)
}

fn record(k: &'static Kernel, m: &crate::measure::Measured, host: &Host, cpu: u32) -> Record {
    let g = stats::summarize(&m.rates(1e9), true);
    let per_instr = (k.width_bits / 8).max(1) as u64;
    let instrs = k.granule as u64 / per_instr;
    let bpc = host.clock_hz.zip(g).map(|(hz, s)| s.best * 1e9 / hz);
    let detail = RegsDetail {
        bytes_per_instruction: Some(per_instr),
        instructions_per_iteration: Some(instrs),
        checksum: Some(m.checksums.first().copied().unwrap_or(0)),
        bytes_per_cycle: bpc,
        instructions_per_cycle: bpc.map(|b| b / per_instr as f64),
    };
    let mut r = Record {
        kernel: k.name.into(),
        op: k.op.clone(),
        width_bits: Some(k.width_bits),
        nontemporal: None,
        pattern: None,
        size_bytes: None,
        threads: 1,
        cpus: vec![cpu],
        regime: None,
        payload_bytes_per_pass: Some(k.granule as u64),
        reps_per_sample: Some(m.reps),
        samples: m.model_samples(),
        gbps: g,
        payload_gbps: g,
        noise: m.noise,
        ..Record::new(detail)
    };
    super::record::label(&mut r, k, host);
    r.warnings
        .extend(super::record::spread_warnings(r.gbps.as_ref(), true));
    r.warnings.extend(super::record::noise_warnings(&r));
    super::record::sampled(&mut r, m);
    r
}
