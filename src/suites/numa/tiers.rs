//! `bwscope numa --tiers`: every initiator node × memory node (the
//! matrix, with the read/write mixes and the chase), each cell beside what
//! ACPI HMAT claims for it and named by the memory node's kind
//! (`host.tiers`), then each cell's loaded-latency curve, then the
//! interleave sweep across tiers (`interleave.rs`).

use super::*;

/// What `--tiers` (or `--interleave` alone) adds to the matrix.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TiersPlan {
    /// The matrix, claims and loaded curves run (`--tiers`); false for
    /// `--interleave` alone.
    pub matrix: bool,
    /// The loaded curves' injection delays, ns per 4 KiB.
    pub delays_ns: Vec<u64>,
    /// Interleave sweeps: (cpu node, fast node, slow node).
    pub interleave: Vec<(u32, u32, u32)>,
}

/// The mixes of a tier matrix when `--mix` does not say: reads and MLC's
/// read/write ratios.
pub const TIER_MIXES: &str = "read,3:1,2:1,1:1";

/// The loaded curves' delays: flat out, moderate, light.
pub const TIER_DELAYS_NS: &[u64] = &[0, 500, 5000];

/// The tiers part of the plan: loaded curves and interleave pairs.
pub(super) fn plan_tiers(
    a: &NumaOptions,
    host: &Host,
    cpu_nodes: &[u32],
    memory_nodes: &[u32],
) -> Result<Option<TiersPlan>, UserError> {
    if let Some(spec) = &a.interleave {
        let pair = super::interleave::parse_pair(host, spec)?;
        let cpu = if cpu_nodes.contains(&pair.0) {
            pair.0
        } else {
            cpu_nodes[0]
        };
        return Ok(Some(TiersPlan {
            matrix: a.tiers,
            delays_ns: TIER_DELAYS_NS.to_vec(),
            interleave: vec![(cpu, pair.0, pair.1)],
        }));
    }
    if !a.tiers {
        return Ok(None);
    }
    // The first initiator, its own memory as the fast node (else the
    // first memory node), every cpu-less memory node as a slow one (else
    // the next node: a remote socket).
    let cpu = cpu_nodes[0];
    let fast = if memory_nodes.contains(&cpu) {
        cpu
    } else {
        memory_nodes[0]
    };
    let cpuless: Vec<u32> = memory_nodes
        .iter()
        .copied()
        .filter(|&m| m != fast && host.nodes.iter().any(|n| n.id == m && n.cpus.is_empty()))
        .collect();
    let slow = if cpuless.is_empty() {
        memory_nodes
            .iter()
            .copied()
            .find(|&m| m != fast)
            .into_iter()
            .collect()
    } else {
        cpuless
    };
    Ok(Some(TiersPlan {
        matrix: true,
        delays_ns: TIER_DELAYS_NS.to_vec(),
        interleave: slow.into_iter().map(|s| (cpu, fast, s)).collect(),
    }))
}

/// The survey's tier step: `numa --tiers` at a 64 MiB set per thread,
/// only where the machine has more than one tier (`MemoryTiers::
/// several`); None elsewhere, so a one-tier machine's survey is as it was.
pub fn survey_tiers(host: &Host) -> Option<super::super::Planned> {
    if !host.tiers.as_ref().is_some_and(|t| t.several()) {
        return None;
    }
    let a = NumaOptions {
        tiers: true,
        size: Some(64 << 20),
        sampling: crate::suites::Sampling {
            samples: Some(3),
            min_sample_ms: None,
        },
        ..NumaOptions::default()
    };
    Some(plan(&a, host).map(|p| Box::new(p) as Box<dyn crate::suites::Suite>))
}

/// The matrix, the loaded curves and the interleave sweeps.
pub(super) fn run_tiers(
    plan: &NumaPlan,
    t: &TiersPlan,
    cx: &mut Ctx,
    refusals: &mut Refusals,
) -> anyhow::Result<Flow> {
    if t.matrix {
        if super::matrix::run_matrix(plan, cx, refusals)? == Flow::Stopped {
            return Ok(Flow::Stopped);
        }
        for (cpu_node, cpus) in &plan.cell_cpus {
            for &mem in &plan.memory_nodes {
                if loaded_curve(plan, t, cx, *cpu_node, cpus, mem)? == Flow::Stopped {
                    return Ok(Flow::Stopped);
                }
            }
        }
    }
    for &(cpu_node, fast, slow) in &t.interleave {
        let cpus = plan
            .cell_cpus
            .iter()
            .find(|c| c.0 == cpu_node)
            .map_or_else(Vec::new, |c| c.1.clone());
        let flow = super::interleave::sweep(plan, cx, cpu_node, &cpus, (fast, slow))?;
        if flow == Flow::Stopped {
            return Ok(Flow::Stopped);
        }
    }
    Ok(Flow::Done)
}

/// One cell's loaded-latency curve: the probe on the node's first cpu,
/// the load on the others, all memory on `mem`.
fn loaded_curve(
    plan: &NumaPlan,
    t: &TiersPlan,
    cx: &mut Ctx,
    cpu_node: u32,
    cpus: &[u32],
    mem: u32,
) -> anyhow::Result<Flow> {
    let description = format!(
        "{}@node{} mem{}",
        cpus.len().saturating_sub(1),
        cpu_node,
        mem
    );
    let kernel = format!("loaded_{CHASE_KERNEL}");
    if cpus.len() < 2 {
        let mut r = cell::skipped_cell(
            &kernel,
            cpu_node,
            mem,
            format!(
                "the loaded curve needs 2 cpus on node {cpu_node} (a probe and a load); it has {}",
                cpus.len()
            ),
        );
        cell::detail_of(&mut r).case_load = Some(description);
        cx.push(r)?;
        return Ok(Flow::Done);
    }
    let sub = NumaPlan {
        mode: Mode::Load {
            cpus: cpus[1..].to_vec(),
            description: description.clone(),
            delays_ns: t.delays_ns.clone(),
            load_mix: Mix::READ,
            probe_cpu: cpus[0],
            probe: Probe::Latency,
        },
        memory_nodes: vec![mem],
        tiers: None,
        ..plan.clone()
    };
    match super::load::run_load(&sub, cx) {
        Ok(f) => Ok(f),
        // A node that cannot take the curve's memory (full, gone offline)
        // is this cell's record, not the run's end.
        Err(e) => match e.downcast::<UserError>() {
            Ok(u) => {
                let mut r = cell::skipped_cell(&kernel, cpu_node, mem, u.to_string());
                cell::detail_of(&mut r).case_load = Some(description);
                cx.push(r)?;
                Ok(Flow::Done)
            }
            Err(e) => Err(e),
        },
    }
}

/// What the tier parts add to the matrix's estimate.
pub(super) fn estimate(
    p: &NumaPlan,
    t: &TiersPlan,
    base: super::super::estimate::Estimate,
) -> super::super::estimate::Estimate {
    use super::super::estimate::Estimate;
    let cells = p.cell_cpus.len() * p.memory_nodes.len();
    let curves = if t.matrix {
        cells * (t.delays_ns.len() + 1)
    } else {
        0
    };
    let sweeps = t.interleave.len() * super::interleave::RATIOS.len() + t.interleave.len() * 2;
    let extra = Estimate::sampled(curves + sweeps, p.samples, p.min_sample_ms);
    Estimate {
        seconds: if t.matrix { base.seconds } else { 0.0 } + extra.seconds,
        rule: format!(
            "{}; + {} loaded points and interleave cases",
            base.rule,
            curves + sweeps
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{HmatClaim, MemoryTiers, NodeKind, Stats, TierNode};
    use crate::suites::numa::cell::annotate;

    fn host(claim_gbps: u64) -> Host {
        Host {
            tiers: Some(MemoryTiers {
                nodes: vec![TierNode {
                    node: 1,
                    kind: NodeKind::Cxl,
                    hmat: vec![HmatClaim {
                        access: 1,
                        initiators: vec![0],
                        read_bandwidth_mbps: Some(claim_gbps * 1000),
                        read_latency_ns: Some(200),
                        ..HmatClaim::default()
                    }],
                    ..TierNode::default()
                }],
                ..MemoryTiers::default()
            }),
            ..Host::default()
        }
    }

    fn read_cell(cpu_node: u32, gbps: f64) -> Record {
        let mut r = Record::new(NumaDetail::default());
        r.op = crate::model::Op::Read;
        r.gbps = Some(Stats::constant(gbps, 1));
        r.placement = Some(cell::placement(cpu_node, 1, None, None));
        r
    }

    #[test]
    fn a_cell_far_below_its_claim_names_both() {
        let mut r = read_cell(0, 10.0);
        annotate(&mut r, &host(20));
        let d = cell::detail_of(&mut r);
        assert_eq!(d.memory_kind.as_deref(), Some("cxl"));
        assert_eq!(d.hmat_claim, Some(20.0));
        let w = r
            .warnings
            .iter()
            .find(|w| matches!(w, Warning::BelowHmat { .. }));
        let text = w.expect("a warning").to_string();
        assert!(
            text.contains("10.0 GB/s") && text.contains("20.0 GB/s"),
            "{text}"
        );
        // Within 25 %: no warning.
        let mut ok = read_cell(0, 16.0);
        annotate(&mut ok, &host(20));
        assert!(ok.warnings.is_empty());
        // No claim for another initiator: the kind only.
        let mut other = read_cell(2, 1.0);
        annotate(&mut other, &host(20));
        assert_eq!(cell::detail_of(&mut other).hmat_claim, None);
        assert!(other.warnings.is_empty());
    }

    #[test]
    fn latency_is_worse_when_above_the_claim() {
        let mut r = read_cell(0, 0.0);
        r.op = crate::model::Op::Latency;
        r.gbps = None;
        cell::detail_of(&mut r).latency_ns = Some(Stats::constant(300.0, 1)).into();
        annotate(&mut r, &host(20));
        assert_eq!(cell::detail_of(&mut r).hmat_claim, Some(200.0));
        assert!(matches!(r.warnings[0], Warning::BelowHmat { .. }));
    }
}
