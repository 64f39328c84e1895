//! Which node or link is slow.
//!
//! For every headline figure ([`crate::report::fleet::metrics`]) the fleet
//! median and the median absolute deviation (MAD) are taken over the nodes
//! that have it, on the logarithm of the figure (see [`crate::stats::robust`]). A node's
//! distance is a robust z-score, (ln median − ln value) / (1.4826 · MAD),
//! signed so that positive is worse (for latency the other way round), and
//! its "% worse than the median".
//! A value is an **outlier when both** reach their thresholds (defaults
//! z ≥ 3.5, the Iglewicz–Hoaglin cut-off for modified z-scores, and ≥ 7 %,
//! ClusterKit's "below 93 % of the best"): a tight fleet makes a 2 % dip a
//! large z, a noisy fleet makes a large dip a small z, and neither alone
//! is a fault worth draining a node for.
//!
//! MAD of zero (more than half the nodes identical) falls back to
//! 1.2533 × the mean absolute deviation; when that is zero too every node
//! has the same value and nothing is an outlier. With fewer than
//! [`MIN_NODES`] nodes the fleet cannot say which one is off (of three,
//! the MAD is the smaller of two distances, and one noisy node looks like
//! an outlier), so only the reference file judges.
//!
//! A reference file (`--reference`, [`super::reference`]) gives per-class
//! bounds: a node worse than its class's bound fails even when the whole
//! fleet is slow.

use super::reference::Reference;
use crate::model::fleet::{
    Check, CheckTurn, FleetNode, FleetRun, Flow, LinkVerdict, MetricSummary, NodeStatus,
    NodeVerdict, TierGap, Transport, Verdicts,
};
use crate::report::fleet::metrics::{self, Figure};
use crate::stats::robust::{pct_worse, robust, z_worse, Robust};

/// Fewest nodes with a figure for the fleet to judge it.
pub const MIN_NODES: u32 = 4;
/// Foreign load, in CPUs' worth of other processes as read, from which a
/// bad figure may be put down to noise: half a
/// CPU of other work streams enough memory to move a DRAM or cache figure
/// by more than the 7 % an outlier needs (a fleet of 5 ranks on 2 vCPUs
/// read 1.3–1.7 CPUs of other load and failed healthy nodes on memory
/// figures). Noise never explains more than the load can cause
/// ([`within_noise`]): a node 10× below its class bound fails however
/// busy it was.
pub const NOISY_CPUS: f64 = 0.5;

#[derive(Debug, Clone)]
pub struct Settings {
    pub z: f64,
    pub pct: f64,
    /// (path, contents) of `--reference`.
    pub reference: Option<(String, Reference)>,
}

/// Judge every node and every flow of `f`.
pub fn judge(f: &FleetRun, s: &Settings) -> Verdicts {
    let figures = metrics::fleet_figures(f);
    let summaries = summarise(&figures);
    let mut gaps = tiers::gaps(f).into_iter();
    let nodes: Vec<NodeVerdict> = f
        .nodes
        .iter()
        .zip(&figures)
        .map(|(n, (_, figs))| node_verdict(n, figs, &summaries, gaps.next().unwrap_or_default(), s))
        .collect();
    let uncertain_by_noise = nodes
        .iter()
        .filter(|v| !v.drain && v.checks.iter().any(|c| c.noisy))
        .count() as u32;
    let mut v = Verdicts {
        robust_z: s.z,
        pct_worse: s.pct,
        min_nodes: MIN_NODES,
        noisy_cpus: NOISY_CPUS,
        uncertain_by_noise,
        reference: s.reference.as_ref().map(|(p, _)| p.clone()),
        metrics: summaries.into_iter().map(|(m, _)| m).collect(),
        nodes,
        links: Vec::new(),
        past: None,
        findings: Vec::new(),
    };
    v.links = links(f, &v, s);
    unreachable_nodes(f, &mut v);
    v.findings = super::past::below_reference(&v);
    v
}

/// Per metric: its summary over the nodes that are ok, and its robust
/// centre and spread where enough nodes have it to be judged.
fn summarise(figures: &[(u32, Vec<Figure>)]) -> Vec<(MetricSummary, Option<Robust>)> {
    metrics::definitions(figures)
        .iter()
        .map(|d| {
            let values: Vec<f64> = figures
                .iter()
                .flat_map(|(_, v)| v.iter().filter(|g| g.metric == d.metric).map(|g| g.value))
                .collect();
            let r = robust(&values);
            let judged = values.len() as u32 >= MIN_NODES;
            (
                MetricSummary {
                    metric: d.metric.clone(),
                    unit: d.unit().into(),
                    higher_is_better: d.higher_is_better,
                    nodes: values.len() as u32,
                    median: r.map_or(0.0, |r| r.median),
                    log_mad: r.map_or(0.0, |r| r.log_mad),
                    log_scale: r.map_or(0.0, |r| r.log_scale),
                    judged,
                },
                r.filter(|_| judged),
            )
        })
        .collect()
}

/// One node's verdict: each of its figures checked against the fleet (and
/// its class bounds), its state, and its tier gaps.
fn node_verdict(
    n: &FleetNode,
    figs: &[Figure],
    summaries: &[(MetricSummary, Option<Robust>)],
    tier_gaps: Vec<TierGap>,
    s: &Settings,
) -> NodeVerdict {
    let turns = turn_values(n);
    let class = n.run.as_ref().and_then(|run| {
        s.reference
            .as_ref()
            .and_then(|(_, r)| r.classes.iter().find(|c| c.matches(&run.host)))
    });
    let checks: Vec<Check> = figs
        .iter()
        .map(|g| {
            let (sum, r) = summaries
                .iter()
                .find(|(m, _)| m.metric == g.metric)
                .expect("every figure has a summary");
            let seen = turns
                .iter()
                .find(|(m, _)| *m == g.metric)
                .map_or(&[][..], |(_, v)| v.as_slice());
            check(
                g,
                sum,
                r.as_ref(),
                class.and_then(|c| c.bounds.get(&g.metric)).copied(),
                s,
                seen,
            )
        })
        .collect();
    let distance = checks
        .iter()
        .filter_map(|c| c.robust_z)
        .fold(0.0f64, f64::max);
    let (ok, reason, drain) = node_state(n, &checks);
    // A missing or smaller tier is a failure of its own.
    let short = !tier_gaps.is_empty();
    NodeVerdict {
        rank: n.rank,
        label: n.label.clone(),
        ok: ok && !short,
        distance,
        checks,
        reason,
        drain: drain || short,
        tier_gaps,
    }
}

/// The figures a node measures in its own turns: memory bandwidth and
/// latency (network figures come from the network phase, the clock from
/// start-up).
pub fn is_memory_metric(metric: &str) -> bool {
    !(metric.starts_with("tcp_") || metric.starts_with("mpi_") || metric.starts_with("clock"))
}

/// Each memory figure of `n` in each of its turns (`FleetNode::turns`),
/// earliest first; empty where the node was measured once.
fn turn_values(n: &FleetNode) -> Vec<(String, Vec<f64>)> {
    let (Some(run), false) = (&n.run, n.turns.is_empty()) else {
        return Vec::new();
    };
    let mut shell = run.clone();
    let mut out: Vec<(String, Vec<f64>)> = Vec::new();
    for t in &n.turns {
        shell.records.clone_from(&t.records);
        for g in metrics::node_figures(&shell) {
            if !is_memory_metric(&g.metric) {
                continue;
            }
            match out.iter_mut().find(|(m, _)| *m == g.metric) {
                Some((_, v)) => v.push(g.value),
                None => out.push((g.metric, vec![g.value])),
            }
        }
    }
    out
}

/// (outlier, below the bound) of `value` against the fleet `r` and the
/// class bound.
fn worse(
    value: f64,
    hib: bool,
    r: Option<&Robust>,
    bound: Option<f64>,
    s: &Settings,
) -> (bool, bool) {
    let outlier = r
        .is_some_and(|r| z_worse(value, r, hib) >= s.z && pct_worse(value, r.median, hib) >= s.pct);
    let below = bound.is_some_and(|b| if hib { value < b } else { value > b });
    (outlier, below)
}

/// Judge figure `g`; `turns` are its values in each of the node's turns
/// (empty where it was measured once): a figure bad in some turn and not
/// in another is `transient`, a dip the node did not repeat.
fn check(
    g: &Figure,
    sum: &MetricSummary,
    r: Option<&Robust>,
    bound: Option<f64>,
    s: &Settings,
    turns: &[f64],
) -> Check {
    let hib = g.higher_is_better;
    let z = r.map(|r| z_worse(g.value, r, hib));
    let pct = r.map(|r| pct_worse(g.value, r.median, hib));
    let (outlier, below_reference) = worse(g.value, hib, r, bound, s);
    let turns: Vec<CheckTurn> = turns
        .iter()
        .map(|&value| {
            let (o, b) = worse(value, hib, r, bound, s);
            CheckTurn { value, bad: o || b }
        })
        .collect();
    let bad_turns = turns.iter().filter(|t| t.bad).count();
    let transient = bad_turns > 0 && bad_turns < turns.len();
    // What a healthy node reaches: the tighter of the fleet's threshold
    // and the class bound.
    let fleet = r.map(|_| {
        if hib {
            sum.median * (1.0 - s.pct / 100.0)
        } else {
            sum.median * (1.0 + s.pct / 100.0)
        }
    });
    let expected = match (fleet, bound) {
        (Some(a), Some(b)) => Some(if hib { a.max(b) } else { a.min(b) }),
        (a, b) => a.or(b),
    };
    // The points a healthy figure reaches: the fleet median (outliers) and
    // the class bound; noise must explain the shortfall from each.
    let points = [
        r.map(|r| r.median).filter(|_| outlier),
        bound.filter(|_| below_reference),
    ];
    // A figure whose memory was contended from outside (it moved between
    // turns by more than the node's load explains) is not the node's.
    let noisy = (outlier || below_reference)
        && (g.contended
            || g.foreign_cpus.is_some_and(|f| f >= NOISY_CPUS)
                && g.noise_slowdown.is_some_and(|k| {
                    points
                        .iter()
                        .flatten()
                        .all(|&p| within_noise(g.value, p, hib, k))
                }));
    Check {
        metric: g.metric.clone(),
        unit: g.unit().into(),
        value: g.value,
        robust_z: z,
        pct_worse: pct,
        reference: bound,
        outlier,
        below_reference,
        expected,
        foreign_cpus: g.foreign_cpus,
        noise_slowdown: g.noise_slowdown,
        noisy,
        contended: g.contended,
        turns,
        transient,
    }
}

/// Whether a load that can slow a figure `slowdown` times
/// (`metrics::noise_slowdown`) explains `value` falling short of `point`:
/// a rate may drop to 1 / slowdown of it, a latency grow by slowdown, no
/// further.
fn within_noise(value: f64, point: f64, higher_is_better: bool, slowdown: f64) -> bool {
    if higher_is_better {
        value * slowdown >= point
    } else {
        value <= point * slowdown
    }
}

/// (ok, reason, drain) of one node from its status and its checks.
///
/// OK needs evidence: at least one judged figure (against the fleet or a
/// class bound), none failing, and a node that finished measuring. A
/// failing figure fails the node whatever else happened; a bad figure
/// measured under heavy foreign load ([`NOISY_CPUS`]) makes it UNKNOWN
/// (`noisy: …`), as do an interrupted measurement, no figure at all
/// (`--suites none` without a network phase) and figures nobody could
/// judge (fewer than [`MIN_NODES`] nodes and no class bound).
fn node_state(n: &FleetNode, checks: &[Check]) -> (bool, Option<String>, bool) {
    let failed = checks.iter().any(Check::fails);
    let unknown = |why: String| (false, Some(why), false);
    match n.status {
        NodeStatus::Lost => {
            return (
                false,
                Some(format!(
                    "lost in the {} phase: {}",
                    n.lost_in.as_deref().unwrap_or("?"),
                    n.reason.as_deref().unwrap_or("no answer")
                )),
                true,
            )
        }
        NodeStatus::Error => return (false, n.reason.clone(), failed),
        _ if failed => return (false, None, true),
        NodeStatus::Interrupted if checks.is_empty() => {
            return unknown("interrupted before it was measured".into())
        }
        NodeStatus::Interrupted => {
            let kept = n.run.as_ref().map_or(0, |r| r.records.len());
            return unknown(format!(
                "interrupted while measuring ({kept} records kept): not every figure was measured"
            ));
        }
        NodeStatus::Ok => {}
    }
    let noisy: Vec<String> = checks
        .iter()
        .filter(|c| c.noisy)
        .map(|c| {
            let num = crate::report::fleet::text::num(c.value);
            if c.contended {
                format!(
                    "{} {num} {} moved between measurements by more than this node's load explains (its memory was contended from outside)",
                    c.metric, c.unit
                )
            } else {
                format!(
                    "{} {num} {} measured while other processes used {:.1} CPUs",
                    c.metric,
                    c.unit,
                    c.foreign_cpus.unwrap_or(0.0)
                )
            }
        })
        .collect();
    if !noisy.is_empty() {
        return unknown(format!(
            "noisy: {}; re-measure it on a quiet node",
            noisy.join("; ")
        ));
    }
    if checks.is_empty() {
        return unknown("nothing measured: no suite ran and no flow reached it".into());
    }
    if !checks.iter().any(Check::judged) {
        return unknown(format!(
            "not judged: fewer than {MIN_NODES} nodes have its figures and no reference bound applies"
        ));
    }
    (true, None, false)
}

/// Slow and failed flows. A node whose own in or out figure is an outlier
/// (or that was lost) explains its flows; where both ends would, the one
/// further from the fleet does: a lost node first, then a figure measured
/// quietly before one the node's own load may explain (`noisy`), then the
/// larger share below the fleet median. The share, not the robust z: a
/// z scales with how much that one metric spreads, so a NIC at 1 % of the
/// median (whose out figures spread widely) could score below a
/// neighbour whose in figure came 40 % low on a busy host. Flows at least
/// `pct` worse than the healthy flows' median are listed under its name.
/// The healthy flows (neither end explains them) are then judged among
/// themselves, so a slow path between two healthy nodes stands out even
/// where one bad link touches 40 % of a small fleet's flows.
fn links(f: &FleetRun, v: &Verdicts, s: &Settings) -> Vec<LinkVerdict> {
    let mut out = Vec::new();
    for m in &f.network {
        // Flows are judged against flows of the same size that ran under
        // the same load (`concurrent`): after a rank is lost its steps run
        // fewer flows at once, and on a shared machine those are faster,
        // which would make the full steps' flows look like slow paths.
        let mut groups: Vec<(u64, u32)> = m
            .flows
            .iter()
            .map(|x| (x.size_bytes, x.concurrent))
            .collect();
        groups.sort_unstable();
        groups.dedup();
        for (size, load) in groups {
            let flows: Vec<_> = m
                .flows
                .iter()
                .filter(|x| x.size_bytes == size && x.concurrent == load)
                .collect();
            link_group(f, v, s, m.transport, &flows, &mut out);
        }
    }
    out
}

/// The node a flow's slowness is put down to: the end that [`blame`]s
/// more strongly, if either does.
fn explained_by(f: &FleetRun, v: &Verdicts, transport: Transport, x: &Flow) -> Option<String> {
    let measured = x.recv_gbps.is_some();
    let src = blame(f, v, x.src, &format!("{transport}_out_gbps"), measured);
    let dst = blame(f, v, x.dst, &format!("{transport}_in_gbps"), measured);
    match (src, dst) {
        (Some(a), Some(b)) if b > a => Some(f.label(x.dst)),
        (Some(_), _) => Some(f.label(x.src)),
        (None, Some(_)) => Some(f.label(x.dst)),
        (None, None) => None,
    }
}

/// How strongly `rank` explains a flow through `metric`, compared as a
/// tuple (lost, quiet, percent worse); None if it does not. A slow node
/// explains slow flows; a flow that could not be measured at all
/// (unreachable, refused) is explained only by a lost end.
fn blame(
    f: &FleetRun,
    v: &Verdicts,
    rank: u32,
    metric: &str,
    measured: bool,
) -> Option<(bool, bool, f64)> {
    if f.node(rank).is_some_and(|n| n.status == NodeStatus::Lost) {
        return Some((true, true, f64::INFINITY));
    }
    if !measured {
        return None;
    }
    v.nodes
        .iter()
        .find(|n| n.rank == rank)?
        .checks
        .iter()
        .find(|c| c.metric == metric && c.outlier)
        .map(|c| (false, !c.noisy, c.pct_worse.unwrap_or(0.0)))
}

/// Judges one group of flows (same size, same load) against the group's
/// flows between healthy nodes; pushes the slow and the unmeasured ones.
fn link_group(
    f: &FleetRun,
    v: &Verdicts,
    s: &Settings,
    transport: Transport,
    flows: &[&Flow],
    out: &mut Vec<LinkVerdict>,
) {
    let healthy: Vec<f64> = flows
        .iter()
        .filter(|x| explained_by(f, v, transport, x).is_none())
        .filter_map(|x| x.recv_gbps)
        .collect();
    let r = robust(&healthy).filter(|_| healthy.len() as u32 >= MIN_NODES);
    for x in flows {
        let explained_by = explained_by(f, v, transport, x);
        let base = LinkVerdict {
            transport,
            src: x.src,
            dst: x.dst,
            size_bytes: x.size_bytes,
            gbps: x.recv_gbps,
            median_gbps: r.map(|r| r.median),
            ..LinkVerdict::default()
        };
        let (Some(g), Some(r)) = (x.recv_gbps, r) else {
            if x.recv_gbps.is_none() {
                out.push(LinkVerdict {
                    reason: Some(x.reason.clone().unwrap_or_else(|| "not measured".into())),
                    explained_by,
                    ..base
                });
            }
            continue;
        };
        let z = z_worse(g, &r, true);
        let p = pct_worse(g, r.median, true);
        let slow = p >= s.pct && (explained_by.is_some() || z >= s.z);
        // A path claimed between two healthy nodes must be slower
        // than the load on the measuring machine explains.
        let noisy = explained_by.is_none()
            && x.foreign_cpus.is_some_and(|f| f >= NOISY_CPUS)
            && x.noise_slowdown
                .is_some_and(|k| within_noise(g, r.median, true, k));
        if slow {
            out.push(LinkVerdict {
                robust_z: Some(z),
                pct_worse: Some(p),
                explained_by,
                noisy,
                ..base
            });
        }
    }
}

/// A node none of whose flows could be measured, while others' were, has
/// a network problem of its own (firewall, wrong address, dead link).
fn unreachable_nodes(f: &FleetRun, v: &mut Verdicts) {
    for m in &f.network {
        if !m.flows.iter().any(|x| x.recv_gbps.is_some()) {
            continue; // nothing measured anywhere: not one node's fault
        }
        for n in v.nodes.iter_mut() {
            let mine: Vec<_> = m
                .flows
                .iter()
                .filter(|x| x.src == n.rank || x.dst == n.rank)
                .collect();
            let lost = f.node(n.rank).is_some_and(|x| x.status == NodeStatus::Lost);
            if !lost && !mine.is_empty() && mine.iter().all(|x| x.recv_gbps.is_none()) {
                // This failure outranks a reason for not judging it.
                if !n.drain || n.reason.is_none() {
                    n.reason = Some(format!(
                        "no {} flow to or from it could be measured: {}",
                        m.transport,
                        mine[0].reason.as_deref().unwrap_or("no reason given")
                    ));
                }
                n.ok = false;
                n.drain = true;
            }
        }
    }
}

pub mod tiers;

#[cfg(test)]
mod tests;
