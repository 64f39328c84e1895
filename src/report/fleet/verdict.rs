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
    Check, FleetRun, LinkVerdict, MetricSummary, NodeStatus, NodeVerdict, Verdicts,
};
use crate::report::fleet::metrics::{self, Figure};
use crate::stats::robust::{pct_worse, robust, z_worse, Robust};

/// Fewest nodes with a figure for the fleet to judge it.
pub const MIN_NODES: u32 = 4;
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
    // Per metric: its definition and the values of the nodes that are ok.
    let defs = metrics::definitions(&figures);
    let summaries: Vec<(MetricSummary, Option<Robust>)> = defs
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
                    unit: d.unit.into(),
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
        .collect();
    let nodes: Vec<NodeVerdict> = f
        .nodes
        .iter()
        .zip(&figures)
        .map(|(n, (_, figs))| {
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
                    check(
                        g,
                        sum,
                        r.as_ref(),
                        class.and_then(|c| c.bounds.get(&g.metric)).copied(),
                        s,
                    )
                })
                .collect();
            let failed = checks.iter().any(|c| c.outlier || c.below_reference);
            let distance = checks
                .iter()
                .filter_map(|c| c.robust_z)
                .fold(0.0f64, f64::max);
            let (ok, reason, drain) = match n.status {
                NodeStatus::Lost => (
                    false,
                    Some(format!(
                        "lost in the {} phase: {}",
                        n.lost_in.as_deref().unwrap_or("?"),
                        n.reason.as_deref().unwrap_or("no answer")
                    )),
                    true,
                ),
                NodeStatus::Error => (false, n.reason.clone(), failed),
                NodeStatus::Interrupted if checks.is_empty() => (
                    false,
                    Some("interrupted before it was measured".into()),
                    false,
                ),
                _ => (!failed, None, failed),
            };
            NodeVerdict {
                rank: n.rank,
                label: n.label.clone(),
                ok,
                distance,
                checks,
                reason,
                drain,
            }
        })
        .collect();
    let mut v = Verdicts {
        robust_z: s.z,
        pct_worse: s.pct,
        min_nodes: MIN_NODES,
        reference: s.reference.as_ref().map(|(p, _)| p.clone()),
        metrics: summaries.into_iter().map(|(m, _)| m).collect(),
        nodes,
        links: Vec::new(),
    };
    v.links = links(f, &v, s);
    unreachable_nodes(f, &mut v);
    v
}

fn check(
    g: &Figure,
    sum: &MetricSummary,
    r: Option<&Robust>,
    bound: Option<f64>,
    s: &Settings,
) -> Check {
    let hib = g.higher_is_better;
    let z = r.map(|r| z_worse(g.value, r, hib));
    let pct = r.map(|r| pct_worse(g.value, r.median, hib));
    let outlier = matches!((z, pct), (Some(z), Some(p)) if z >= s.z && p >= s.pct);
    let below_reference = bound.is_some_and(|b| if hib { g.value < b } else { g.value > b });
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
    Check {
        metric: g.metric.clone(),
        unit: g.unit.into(),
        value: g.value,
        robust_z: z,
        pct_worse: pct,
        reference: bound,
        outlier,
        below_reference,
        expected,
    }
}

/// Slow and failed flows. A node whose own in or out figure is an outlier
/// (or that was lost) explains its flows; where both ends would, the one
/// further from the fleet does (a lost node first, then the larger robust
/// z), so a NIC at 1 % of the median is not blamed on a neighbour whose
/// out figure came 30 % low on a busy host. Flows at least `pct` worse than
/// the healthy flows' median are listed under its name. The healthy flows
/// (neither end explains them) are then judged among themselves, so a
/// slow path between two healthy nodes stands out even where one bad link
/// touches 40 % of a small fleet's flows.
fn links(f: &FleetRun, v: &Verdicts, s: &Settings) -> Vec<LinkVerdict> {
    // How strongly `rank` explains a flow through `metric`: lost beats any
    // outlier, a larger robust z beats a smaller; None if it does not.
    let blame = |rank: u32, metric: &str| -> Option<f64> {
        if f.node(rank).is_some_and(|n| n.status == NodeStatus::Lost) {
            return Some(f64::INFINITY);
        }
        v.nodes
            .iter()
            .find(|n| n.rank == rank)?
            .checks
            .iter()
            .find(|c| c.metric == metric && c.outlier)
            .map(|c| c.robust_z.unwrap_or(0.0))
    };
    let mut out = Vec::new();
    for m in &f.network {
        let by = |x: &crate::model::fleet::Flow| {
            let src = blame(x.src, &format!("{}_out_gbps", m.transport));
            let dst = blame(x.dst, &format!("{}_in_gbps", m.transport));
            match (src, dst) {
                (Some(a), Some(b)) if b > a => Some(f.label(x.dst)),
                (Some(_), _) => Some(f.label(x.src)),
                (None, Some(_)) => Some(f.label(x.dst)),
                (None, None) => None,
            }
        };
        for &size in &m.sizes {
            let flows: Vec<_> = m.flows.iter().filter(|x| x.size_bytes == size).collect();
            let healthy: Vec<f64> = flows
                .iter()
                .filter(|x| by(x).is_none())
                .filter_map(|x| x.recv_gbps)
                .collect();
            let r = robust(&healthy).filter(|_| healthy.len() as u32 >= MIN_NODES);
            for x in flows {
                let explained_by = by(x);
                let base = LinkVerdict {
                    transport: m.transport.clone(),
                    src: x.src,
                    dst: x.dst,
                    size_bytes: size,
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
                if slow {
                    out.push(LinkVerdict {
                        robust_z: Some(z),
                        pct_worse: Some(p),
                        explained_by,
                        ..base
                    });
                }
            }
        }
    }
    out
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
                n.ok = false;
                n.drain = true;
                n.reason.get_or_insert_with(|| {
                    format!(
                        "no {} flow to or from it could be measured: {}",
                        m.transport,
                        mine[0].reason.as_deref().unwrap_or("no reason given")
                    )
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Six nodes, shift over TCP: node 5's link is slow both ways, the
    /// path 1 → 2 is slow on its own, 0 → 3 failed to connect.
    fn fleet() -> FleetRun {
        use crate::model::fleet::{FleetNode, Flow, NetMatrix};
        let n = 6u32;
        let mut flows = Vec::new();
        for d in 1..n {
            for r in 0..n {
                let (src, dst) = (r, (r + d) % n);
                // Healthy flows vary by ±20 % around 1 GB/s.
                let healthy = 1.0 + 0.2 * (((src * 7 + dst * 3) % 5) as f64 - 2.0) / 2.0;
                let g = match (src, dst) {
                    (5, _) | (_, 5) => Some(0.012),
                    (1, 2) => Some(0.3),
                    (0, 3) => None,
                    _ => Some(healthy),
                };
                flows.push(Flow {
                    src,
                    dst,
                    size_bytes: 1 << 20,
                    step: d - 1,
                    recv_gbps: g,
                    send_gbps: g,
                    reason: g.is_none().then(|| "refused".into()),
                    ..Flow::default()
                });
            }
        }
        FleetRun {
            nodes: (0..n)
                .map(|r| FleetNode {
                    rank: r,
                    label: format!("n{r}"),
                    hostname: format!("n{r}"),
                    ..FleetNode::default()
                })
                .collect(),
            network: vec![NetMatrix {
                transport: "tcp".into(),
                schedule: "shift".into(),
                sizes: vec![1 << 20],
                steps: n - 1,
                flows,
                ..NetMatrix::default()
            }],
            kind: crate::model::fleet::FLEET_KIND.into(),
            fleet_schema_version: 1,
            schema_version: 1,
            tool: crate::model::Tool::this(),
            command_line: Vec::new(),
            options: serde_json::Value::Null,
            launch: Default::default(),
            started_at: String::new(),
            finished_at: None,
            complete: true,
            interrupted: false,
            verdicts: None,
            timings: Default::default(),
            warnings: Vec::new(),
        }
    }

    #[test]
    fn the_slow_link_and_the_slow_path_are_told_apart() {
        let f = fleet();
        let s = Settings {
            z: 3.5,
            pct: 7.0,
            reference: None,
        };
        let v = judge(&f, &s);
        let failed = |r: usize| -> Vec<&str> {
            v.nodes[r]
                .checks
                .iter()
                .filter(|c| c.outlier)
                .map(|c| c.metric.as_str())
                .collect()
        };
        assert_eq!(failed(5), vec!["tcp_out_gbps", "tcp_in_gbps"]);
        assert!(v.nodes[5].drain && !v.nodes[5].ok);
        for r in 0..5 {
            assert!(failed(r).is_empty(), "node {r}: {:?}", failed(r));
            assert!(v.nodes[r].ok, "node {r}");
        }
        // Every slow flow of node 5 is put down to it.
        let of5: Vec<&LinkVerdict> = v
            .links
            .iter()
            .filter(|l| l.src == 5 || l.dst == 5)
            .collect();
        assert_eq!(of5.len(), 10);
        assert!(of5.iter().all(|l| l.explained_by.as_deref() == Some("n5")));
        // The path between two healthy nodes stands out on its own.
        let path: Vec<&LinkVerdict> = v
            .links
            .iter()
            .filter(|l| l.explained_by.is_none())
            .collect();
        assert_eq!(path.len(), 2, "{path:?}");
        let slow = path.iter().find(|l| (l.src, l.dst) == (1, 2)).unwrap();
        assert!(slow.robust_z.unwrap() > 3.5 && slow.pct_worse.unwrap() > 60.0);
        let failed_flow = path.iter().find(|l| (l.src, l.dst) == (0, 3)).unwrap();
        assert_eq!(failed_flow.reason.as_deref(), Some("refused"));
        // Nodes without a run give a written reference no class.
        let r = super::super::reference::make(&f, &v, 7.0);
        assert!(r.classes.is_empty(), "no node has a run to make a class of");
    }

    /// Where both ends of a flow are outliers, the one further from the
    /// fleet explains it: node 1 sends at 60 % of the others (a busy
    /// host), node 5's link is at 1 %, and 1 → 5 is put down to node 5.
    #[test]
    fn a_flow_between_two_outliers_is_put_down_to_the_worse() {
        let mut f = fleet();
        for x in f.network[0].flows.iter_mut() {
            if x.src == 1 && x.dst != 5 {
                x.recv_gbps = Some(0.6);
                x.send_gbps = Some(0.6);
            }
        }
        let s = Settings {
            z: 3.5,
            pct: 7.0,
            reference: None,
        };
        let v = judge(&f, &s);
        let out_z = |r: usize| {
            v.nodes[r]
                .checks
                .iter()
                .find(|c| c.metric == "tcp_out_gbps" && c.outlier)
                .and_then(|c| c.robust_z)
        };
        let (z1, z5) = (out_z(1), out_z(5));
        assert!(z1.is_some() && z5.is_some(), "both outliers: {z1:?} {z5:?}");
        let by = |src: u32, dst: u32| {
            v.links
                .iter()
                .find(|l| (l.src, l.dst) == (src, dst))
                .and_then(|l| l.explained_by.clone())
        };
        assert_eq!(by(1, 5).as_deref(), Some("n5"), "{:?}", v.links);
        assert_eq!(by(5, 1).as_deref(), Some("n5"));
        assert_eq!(by(1, 0).as_deref(), Some("n1"));
    }
}
