//! A phase's figures and records: per agent its rate over the window,
//! slowdown against alone and share of the aggregate; per phase the
//! aggregate against the sum of the alones and the DRAM peak, and the
//! probe's latency.

use super::agents::{AgentType, Figure, Window};
use super::{ContendPlan, Phase, BystanderKind};
use crate::measure::mix::MixKernels;
use crate::model::detail::ContendDetail;
use crate::model::{
    AgentKind, Host, Noise, Nullable, Placement, Probe, Record, Sample, Status, Warning,
};
use crate::stats;

/// Every figure of a phase.
pub struct PhaseFigures {
    pub agents: Vec<Figure>,
    pub bystander: Option<Figure>,
    /// `alone` rates of the members, in member order.
    pub alone: Vec<Option<f64>>,
    /// The guest's noise over the window.
    pub noise: Option<Noise>,
    /// The run's spell baseline after the window.
    pub baseline: Option<crate::model::SpellBaseline>,
}

impl PhaseFigures {
    pub fn of(
        plan: &ContendPlan,
        _phase: &Phase,
        members: &[usize],
        w: &Window,
        alone: &[Option<f64>],
        probe_ran: bool,
    ) -> PhaseFigures {
        let figs: Vec<Figure> = w
            .counted
            .iter()
            .map(|c| Figure::of(c, w, plan.slices))
            .collect();
        // The probe's counts are last only when it started: with a probe
        // planned but not started, taking the last figure as the probe's
        // left the agents one short of the members (a panic, exit 101).
        let (agents, probe) = if probe_ran {
            let mut a = figs;
            let p = a.pop();
            (a, p)
        } else {
            (figs, None)
        };
        PhaseFigures {
            agents,
            bystander: probe,
            alone: members.iter().map(|&i| alone[i]).collect(),
            noise: w.noise,
            baseline: w.baseline,
        }
    }

    /// Sum of the valid agents' rates; None when any agent is invalid.
    fn aggregate(&self) -> Option<f64> {
        self.agents.iter().map(|f| f.valid.then_some(f.gbps)).sum()
    }

    /// The probe's ns per load, when it is a valid latency probe.
    fn probe_ns(&self, plan: &ContendPlan) -> Option<f64> {
        let p = self.bystander.as_ref().filter(|p| p.valid && p.units > 0.0)?;
        (plan.bystander.as_ref()?.kind == BystanderKind::Latency).then(|| p.window_seconds * 1e9 / p.units)
    }
}

/// Name a record as an agent of the run.
pub fn label(r: &mut Record, name: &str, kind: AgentKind, spec: &str) {
    let d = detail_of(r);
    d.case_agent = Some(name.into());
    d.agent_kind = Some(kind);
    d.agent = Some(spec.into());
}

pub(super) fn detail_of(r: &mut Record) -> &mut ContendDetail {
    if r.detail.get::<ContendDetail>().is_none() {
        r.detail = ContendDetail::default().into();
    }
    r.detail.get_mut().expect("a contend record")
}

/// Why a figure is not valid, in words.
fn why_invalid(name: &str, f: &Figure) -> String {
    let when = match (f.from, f.to) {
        _ if f.stalled.is_some() => format!(
            "moved nothing for {:.3} s of the {:.3} s window (stalled: its far end or its thread stopped)",
            f.stalled.unwrap_or(0.0).min(f.window_seconds),
            f.window_seconds
        ),
        (Some(a), _) if a > 0.0 => format!("started {a:.3} s after the window opened"),
        (_, Some(b)) if b < 0.0 => format!("stopped {:.3} s before the window closed", -b),
        _ => "counted nothing in the window".into(),
    };
    match &f.ended {
        Some(e) => format!("{name} ended: {e} ({when})"),
        None => format!("{name} {when}"),
    }
}

/// The records of one phase: its agents', the probe's, the aggregate.
pub fn phase_records(
    plan: &ContendPlan,
    phase: &Phase,
    members: &[usize],
    figs: &PhaseFigures,
    host: &Host,
) -> Vec<Record> {
    let names: Vec<String> = members
        .iter()
        .map(|&i| plan.agents[i].name().to_string())
        .collect();
    let aggregate = figs.aggregate();
    let probe_ns = figs.probe_ns(plan);
    let failed: Vec<String> = members
        .iter()
        .zip(&figs.agents)
        .filter(|(_, f)| !f.valid)
        .map(|(&i, f)| why_invalid(plan.agents[i].name(), f))
        .collect();
    let mut out = Vec::new();
    for (k, &i) in members.iter().enumerate() {
        let a = &plan.agents[i];
        let f = &figs.agents[k];
        let mut r = agent_record(a.as_ref(), f, host, figs);
        let alone = figs.alone[k];
        let d = detail_of(&mut r);
        d.alone_gbps = alone.into();
        if f.valid {
            d.slowdown = alone.filter(|_| f.gbps > 0.0).map(|a| a / f.gbps).into();
            d.share = aggregate.filter(|&s| s > 0.0).map(|s| f.gbps / s).into();
        }
        common(&mut r, phase, &names, f, plan);
        if !f.valid {
            r.status = Status::Error;
            r.reason = Some(why_invalid(a.name(), f));
        } else if !failed.is_empty() {
            r.warnings.push(Warning::Other {
                message: format!("another agent did not run through this window: {}", failed.join("; ")),
                hint: "this agent's figure is real, but it competed with fewer agents for part of the window".into(),
            });
        }
        out.push(r);
    }
    if let (Some(p), Some(pp)) = (&figs.bystander, &plan.bystander) {
        let mut r = bystander_record(pp, p, host);
        spells(&mut r, figs);
        common(&mut r, phase, &names, p, plan);
        detail_of(&mut r).bystander_latency_ns = probe_ns.into();
        out.push(r);
    }
    if !members.is_empty() {
        out.push(aggregate_record(
            plan, phase, &names, figs, aggregate, probe_ns, failed,
        ));
    }
    // Other processes' load and steal over the window, on every record of
    // the phase (the spells set it already on the probed ones), warned of
    // as every suite does: the run's own agents are threads of this
    // process, so what it counts is the guest's own load beside them.
    for r in &mut out {
        r.noise = r.noise.or(figs.noise);
        let w = crate::suites::record::noise_warnings(r);
        r.warnings.extend(w);
    }
    out
}

/// The fields every record of a phase shares.
fn common(r: &mut Record, phase: &Phase, names: &[String], f: &Figure, plan: &ContendPlan) {
    let d = detail_of(r);
    d.case_phase = Some(phase.name.clone());
    d.phase_agents = Some(names.to_vec());
    d.window_seconds = Some(f.window_seconds);
    d.dram_peak_gbps = plan.dram_peak_gbps.into();
    if f.valid || f.from.is_some() {
        d.covered_from_seconds = f.from.into();
        d.covered_to_seconds = f.to.into();
    }
    d.valid = Some(f.valid);
    d.ended = f.ended.clone();
}

/// Slices as samples (with the spell probes' readings taken in them),
/// and their rates.
fn sampled(r: &mut Record, f: &Figure) {
    if !f.valid {
        return;
    }
    r.samples = f
        .slice_units
        .iter()
        .enumerate()
        .map(|(k, &u)| Sample {
            seconds: f.slice_seconds,
            bytes: u.max(0.0) as u64,
            probe: f.slice_probes.get(k).copied().flatten(),
        })
        .collect();
    let rates: Vec<f64> = f
        .slice_units
        .iter()
        .map(|u| u / f.slice_seconds / 1e9)
        .collect();
    r.gbps = stats::summarize(&rates, true);
    let d = detail_of(r);
    d.window_bytes = Some(f.units.max(0.0) as u64);
    d.window_gbps = Nullable::Value(f.gbps);
}

fn agent_record(a: &dyn AgentType, f: &Figure, host: &Host, figs: &PhaseFigures) -> Record {
    let mut r = Record::new(ContendDetail::default());
    label(&mut r, a.name(), a.kind(), a.spec());
    r.kernel = a.spec().to_string();
    sampled(&mut r, f);
    a.describe(&mut r, f, host);
    // After `describe`: the judgement reads the record's own words.
    spells(&mut r, figs);
    r
}

/// The spells of a record whose samples carry the probes' readings,
/// judged against the run's baseline with the guest's noise over the
/// window (what it saw of why a core was shared), as every suite's are
/// (`suites::spells`); a record without readings is left as it is.
fn spells(r: &mut Record, figs: &PhaseFigures) {
    if r.samples.iter().any(|s| s.probe.is_some()) {
        r.noise = figs.noise;
        super::super::spells::judge(r, figs.baseline.as_ref());
    }
}

/// Where a team ran and where its memory is: its cpus' node when they
/// share one; a bound team's node and the fraction of its pages found
/// there, warned about when some are elsewhere.
pub(super) fn placement(r: &mut Record, cpus: &[u32], node: Option<u32>, placed: Option<f64>, host: &Host) {
    let nodes: Vec<u32> = cpus.iter().filter_map(|&c| host.node_of(c)).collect();
    let cpu_node = nodes
        .first()
        .copied()
        .filter(|n| nodes.len() == cpus.len() && nodes.iter().all(|m| m == n));
    if cpu_node.is_none() && node.is_none() {
        return;
    }
    r.placement = Some(Placement {
        cpu_node,
        memory_node: node,
        verified_fraction: placed,
        ..Placement::default()
    });
    if let (Some(n), Some(f)) = (node, placed.filter(|f| *f < 0.99)) {
        r.warnings.push(Warning::Other {
            message: format!(
                "only {:.1} % of the team's pages are on node {n}",
                f * 100.0
            ),
            hint: "the node ran short of free memory, or something moved the pages: check numastat"
                .into(),
        });
    }
}

fn bystander_record(p: &super::BystanderPlan, f: &Figure, host: &Host) -> Record {
    let mut r = Record::new(ContendDetail::default());
    label(
        &mut r,
        "bystander",
        AgentKind::Bystander,
        &format!("bystander:{:?}@cpu{}", p.kind, p.cpu).to_lowercase(),
    );
    r.threads = 1;
    r.cpus = vec![p.cpu];
    r.size_bytes = Some(p.bytes);
    match p.kind {
        BystanderKind::Bandwidth => {
            r.kernel = "bystander-read".into();
            r.op = crate::model::Op::Read;
            sampled(&mut r, f);
            detail_of(&mut r).kernels = Some(vec![MixKernels::widest(host).read.name.into()]);
        }
        BystanderKind::Latency => {
            r.kernel = "bystander-chase".into();
            r.op = crate::model::Op::Latency;
            r.pattern = Some(crate::model::Pattern::Chase);
            if f.valid {
                let ns: Vec<f64> = f
                    .slice_units
                    .iter()
                    .filter(|&&u| u > 0.0)
                    .map(|u| f.slice_seconds * 1e9 / u)
                    .collect();
                detail_of(&mut r).latency_ns = stats::summarize(&ns, false).into();
            }
        }
    }
    if !f.valid {
        r.status = Status::Error;
        r.reason = Some(why_invalid("bystander", f));
    }
    r
}

fn aggregate_record(
    plan: &ContendPlan,
    phase: &Phase,
    names: &[String],
    figs: &PhaseFigures,
    aggregate: Option<f64>,
    probe_ns: Option<f64>,
    failed: Vec<String>,
) -> Record {
    let mut r = Record::new(ContendDetail::default());
    label(&mut r, "aggregate", AgentKind::Aggregate, &phase.name);
    r.kernel = "aggregate".into();
    r.op = crate::model::Op::Aggregate;
    r.threads = names.len() as u32;
    let window = figs.agents.first().map_or(0.0, |f| f.window_seconds);
    if let Some(agg) = aggregate {
        // Per slice: every agent's bytes in it together.
        let slices = plan.slices;
        let per: Vec<f64> = (0..slices)
            .map(|s| {
                figs.agents
                    .iter()
                    .filter_map(|f| f.slice_units.get(s))
                    .sum()
            })
            .collect();
        // Per slice: the probed agents' readings together (the slowest
        // core's share: the aggregate waits for it).
        let probes = (0..slices)
            .map(|s| {
                let each: Vec<Probe> = figs
                    .agents
                    .iter()
                    .filter_map(|f| f.slice_probes.get(s).copied().flatten())
                    .collect();
                crate::measure::probe::combine(&each)
            })
            .collect();
        let f = Figure {
            valid: true,
            units: figs.agents.iter().map(|f| f.units).sum(),
            gbps: agg,
            slice_units: per,
            slice_seconds: window / slices as f64,
            window_seconds: window,
            from: None,
            to: None,
            ended: None,
            placed: None,
            stalled: None,
            slice_probes: probes,
        };
        sampled(&mut r, &f);
        spells(&mut r, figs);
    } else {
        r.status = Status::Error;
        r.reason = Some(format!("phase incomplete: {}", failed.join("; ")));
    }
    let sum_alone: Option<f64> = figs.alone.iter().copied().sum();
    let d = detail_of(&mut r);
    d.case_phase = Some(phase.name.clone());
    d.phase_agents = Some(names.to_vec());
    d.window_seconds = Some(window);
    d.valid = Some(aggregate.is_some());
    d.ended = (!failed.is_empty()).then(|| failed.join("; "));
    d.aggregate_gbps = aggregate.into();
    d.sum_alone_gbps = sum_alone.into();
    d.loss_percent = aggregate
        .zip(sum_alone)
        .filter(|(_, s)| *s > 0.0)
        .map(|(a, s)| (1.0 - a / s) * 100.0)
        .into();
    d.dram_peak_gbps = plan.dram_peak_gbps.into();
    d.percent_of_dram_peak = aggregate
        .zip(plan.dram_peak_gbps)
        .map(|(a, p)| a / p * 100.0)
        .into();
    d.bystander_latency_ns = probe_ns.into();
    r
}
