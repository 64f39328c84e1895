//! The fleet against its own past: findings about the whole fleet, which
//! no test of one node against the others can make. When every node's
//! DRAM read is 30 % down (a firmware update, a changed BIOS setting, a
//! busy neighbour on every host), no node is an outlier; the fleet's
//! median beside the medians of the same fleet's recent runs shows it.
//!
//! Pure: this run's verdicts and the earlier runs' figures (which the app
//! reads from the history store) in, findings out.
//!
//! - **fleet drop**: per metric, the one rule of the judgement room
//!   (`judge::step`, [`rule`]) over the fleet's medians: the median now
//!   more than `--past-pct` worse than the median of the earlier runs'
//!   fleet medians (the median, so one odd run among them moves nothing),
//!   at least [`MIN_RUNS`] of which must have the metric.
//! - **usually slowest**: a node that was the slowest of the fleet on a
//!   figure in this run and in at least two thirds of the recent runs
//!   (this one included, at least [`MIN_SLOWEST_RUNS`] runs of 3 or more
//!   nodes). In a fleet of 5 equal nodes one node is the slowest by chance
//!   in a fifth of the runs: 4 of 5 by chance is about 1 in 180 per node
//!   and figure.
//! - **fleet below reference**: every node with a figure (2 or more) is
//!   worse than its class bound: the fleet, not a node (each node also
//!   fails on its own).

use super::text::num;
use crate::judge::{stepped, Point, StepRule, Verdict};
use crate::model::fleet::Verdicts;
use crate::model::fleet_past::{
    Finding, FindingKind, NodeFigures, PastFleetRun, PastMetric, PastVerdict,
};
use crate::stats::median;
use crate::stats::robust::pct_worse;

/// Earlier runs asked of the store.
pub const WINDOW: u32 = 10;
/// Fewest earlier runs with a metric for the fleet's median to be judged
/// against them (with 3, their median is the middle one: one loaded run
/// among them does not move it).
pub const MIN_RUNS: u32 = 3;
/// Fewest runs (this one included) before a node is called the usual
/// slowest.
pub const MIN_SLOWEST_RUNS: usize = 5;
/// Fewest nodes in a run for its slowest one to count (of two, one is the
/// slowest half the time by chance).
const MIN_SLOWEST_NODES: usize = 3;

/// The one rule (`judge::step`) as a fleet applies it: its median now
/// (one held point) more than `--past-pct` worse than the median of its
/// last [`WINDOW`] runs' medians, at least [`MIN_RUNS`] of them.
pub fn rule(pct: f64, higher_is_better: bool) -> StepRule {
    StepRule {
        held: 1,
        threshold: pct / 100.0,
        min_usual: MIN_RUNS as usize,
        window: WINDOW as usize,
        higher_is_better,
    }
}

/// How the fleet is judged against its past.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The fleet's identity in the store.
    pub fleet: String,
    /// `--past-pct`.
    pub pct: f64,
}

/// A node of this run: its label (for the findings) and its figures as
/// the store keeps them (its host name hash and its checks' values).
#[derive(Debug, Clone)]
pub struct NodeNow {
    pub rank: u32,
    pub label: String,
    pub figures: NodeFigures,
}

/// This run's figures per node, from the verdicts' checks: what the store
/// keeps of the run and what later runs are judged against. `ids[rank]`
/// is the node's store identity (None: the node is not kept, e.g. it has
/// no run).
pub fn figures_now(v: &Verdicts, ids: &[Option<String>]) -> Vec<NodeNow> {
    v.nodes
        .iter()
        .filter_map(|n| {
            let id = ids.get(n.rank as usize)?.clone()?;
            let figures: Vec<(String, f64)> = n
                .checks
                .iter()
                .filter(|c| c.value.is_finite() && c.value > 0.0)
                .map(|c| (c.metric.clone(), c.value))
                .collect();
            (!figures.is_empty()).then(|| NodeNow {
                rank: n.rank,
                label: n.label.clone(),
                figures: NodeFigures { node: id, figures },
            })
        })
        .collect()
}

fn value(n: &NodeFigures, metric: &str) -> Option<f64> {
    n.figures.iter().find(|(m, _)| m == metric).map(|&(_, v)| v)
}

fn run_median(nodes: &[NodeFigures], metric: &str) -> Option<f64> {
    let values: Vec<f64> = nodes.iter().filter_map(|n| value(n, metric)).collect();
    median(&values)
}

/// Judge `v`'s fleet medians against `past` (the same fleet's earlier
/// runs, newest first, at most [`WINDOW`]): fill `v.past` and append the
/// findings.
pub fn judge(v: &mut Verdicts, now: &[NodeNow], past: &[PastFleetRun], s: &Settings) {
    let past = &past[..past.len().min(WINDOW as usize)];
    let mut metrics = Vec::new();
    let mut findings = Vec::new();
    for m in v.metrics.iter().filter(|m| m.nodes > 0) {
        // Newest first from the store; the rule reads oldest first, the
        // fleet's median now last.
        let meds: Vec<f64> = past
            .iter()
            .filter_map(|r| run_median(&r.nodes, &m.metric))
            .collect();
        let mut series: Vec<Point> = meds.iter().rev().copied().map(Point::clean).collect();
        series.push(Point::clean(m.median));
        let verdict = stepped(&series, &rule(s.pct, m.higher_is_better));
        let judged = !matches!(verdict, Verdict::NotEnough { .. });
        // Shown where the fleet has any past, judged or not.
        let past_median = verdict.usual().or_else(|| median(&meds));
        let pct = past_median.map(|p| pct_worse(m.median, p, m.higher_is_better));
        let drop = verdict.stepped_down();
        if let (true, Some(p), Some(pm)) = (drop, pct, past_median) {
            let worse = now
                .iter()
                .filter_map(|n| value(&n.figures, &m.metric))
                .filter(|&x| pct_worse(x, pm, m.higher_is_better) > 0.0)
                .count();
            findings.push(Finding {
                kind: FindingKind::FleetDrop,
                metric: m.metric.clone(),
                message: format!(
                    "{}: the fleet's median of {} node{} is {:.0} % {} this fleet's median of its last {} runs ({} {u} now, {} {u} then; {worse} of {} nodes {} it)",
                    m.metric,
                    m.nodes,
                    if m.nodes == 1 { "" } else { "s" },
                    p,
                    if m.higher_is_better { "below" } else { "above" },
                    meds.len(),
                    num(m.median),
                    num(pm),
                    m.nodes,
                    if m.higher_is_better { "below" } else { "above" },
                    u = m.unit,
                ),
                nodes: m.nodes,
                median: Some(m.median),
                past_median: Some(pm),
                pct_worse: Some(p),
                runs: meds.len() as u32,
                ..Finding::default()
            });
        }
        metrics.push(PastMetric {
            metric: m.metric.clone(),
            unit: m.unit.clone(),
            higher_is_better: m.higher_is_better,
            nodes: m.nodes,
            median: m.median,
            past_runs: meds.len() as u32,
            past_median,
            pct_worse: pct,
            judged,
            drop,
        });
        findings.extend(usually_slowest(
            &m.metric,
            m.higher_is_better,
            m.nodes,
            now,
            past,
        ));
    }
    v.past = Some(PastVerdict {
        fleet: s.fleet.clone(),
        runs: past.len() as u32,
        window: WINDOW,
        min_runs: MIN_RUNS,
        pct_worse: s.pct,
        metrics,
    });
    v.findings.extend(findings);
}

/// The node that is the slowest on `metric` now and in most recent runs.
fn usually_slowest(
    metric: &str,
    higher_is_better: bool,
    nodes: u32,
    now: &[NodeNow],
    past: &[PastFleetRun],
) -> Option<Finding> {
    let slowest = |run: &[&NodeFigures]| -> Option<String> {
        let mut v: Vec<(&str, f64)> = run
            .iter()
            .filter_map(|n| value(n, metric).map(|x| (n.node.as_str(), x)))
            .collect();
        if v.len() < MIN_SLOWEST_NODES {
            return None;
        }
        // Worst first; a tie for the worst names nobody.
        v.sort_by(|a, b| {
            let o = a.1.total_cmp(&b.1);
            if higher_is_better {
                o
            } else {
                o.reverse()
            }
        });
        (v[0].1 != v[1].1).then(|| v[0].0.to_string())
    };
    let this: Vec<&NodeFigures> = now.iter().map(|n| &n.figures).collect();
    let who = slowest(&this)?;
    let mut runs = 1usize;
    let mut count = 1usize;
    for r in past {
        let nodes: Vec<&NodeFigures> = r.nodes.iter().collect();
        if nodes.iter().filter(|n| value(n, metric).is_some()).count() < MIN_SLOWEST_NODES {
            continue;
        }
        runs += 1;
        if slowest(&nodes).as_deref() == Some(who.as_str()) {
            count += 1;
        }
    }
    if runs < MIN_SLOWEST_RUNS || count * 3 < runs * 2 {
        return None;
    }
    let label = now
        .iter()
        .find(|n| n.figures.node == who)
        .map_or_else(|| who.clone(), |n| n.label.clone());
    Some(Finding {
        kind: FindingKind::UsuallySlowest,
        metric: metric.to_string(),
        message: format!(
            "{label} has been the slowest node on {metric} in {count} of the fleet's last {runs} runs (this one included)"
        ),
        nodes,
        runs: runs as u32,
        node: Some(label),
        slowest_in: Some(count as u32),
        ..Finding::default()
    })
}

/// Every node with a figure (2 or more) worse than its class bound.
pub fn below_reference(v: &Verdicts) -> Vec<Finding> {
    v.metrics
        .iter()
        .filter_map(|m| {
            let checks: Vec<_> = v
                .nodes
                .iter()
                .flat_map(|n| n.checks.iter().filter(|c| c.metric == m.metric))
                .collect();
            let bounded = checks.iter().filter(|c| c.reference.is_some()).count();
            let below = checks.iter().filter(|c| c.below_reference).count();
            (bounded >= 2 && below == bounded && below == checks.len()).then(|| Finding {
                kind: FindingKind::FleetBelowReference,
                metric: m.metric.clone(),
                message: format!(
                    "{}: all {below} nodes are worse than their class bound (fleet median {} {})",
                    m.metric,
                    num(m.median),
                    m.unit
                ),
                nodes: below as u32,
                median: Some(m.median),
                ..Finding::default()
            })
        })
        .collect()
}

#[cfg(test)]
mod tests;
