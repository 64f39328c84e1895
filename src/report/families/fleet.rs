//! A fleet's families: every node's identity and figures (labelled by
//! node, `command="fleet"`), and the verdicts: each node's, each of its
//! figures against the fleet, the fleet's medians and its past.

use super::{family_of, key, labels_of, Families};
use crate::model::fleet::{FleetRun, NodeStatus, NodeVerdict, Verdicts};
use crate::model::headline::Figure;
use crate::report::exposition::{Family, Kind};
use crate::report::fleet::metrics;

/// A node's verdict as one of three states.
fn state(n: &NodeVerdict, lost: bool) -> &'static str {
    if n.ok && !lost {
        "pass"
    } else if n.drain || lost {
        "fail"
    } else {
        "not_judged"
    }
}

const VERDICT_HELP: &str = "A fleet node's verdict: 1 for its state (pass, fail: an outlier, below its class bound or lost; not_judged: too few nodes, noise or an interrupted run), 0 for the others.";

/// The families of a fleet file.
pub fn families(fleet: &FleetRun) -> Vec<Family> {
    let mut f = Families::default();
    let figs = metrics::fleet_figures(fleet);
    for (n, (_, mine)) in fleet.nodes.iter().zip(&figs) {
        if let Some(run) = &n.run {
            f.run_info(&n.label, run);
        }
        f.figures(&n.label, "fleet", n.run.as_ref(), mine);
    }
    if let Some(v) = &fleet.verdicts {
        let defs = metrics::definitions(&figs);
        nodes(&mut f, fleet, v);
        medians(&mut f, v, &defs);
        past(&mut f, v, &defs);
    }
    f.0
}

/// The figure a fleet's metric names, as a node had it.
fn def<'a>(defs: &'a [Figure], metric: &str) -> Option<&'a Figure> {
    defs.iter().find(|d| d.metric == metric)
}

/// Each node's state and each of its figures against the fleet.
fn nodes(f: &mut Families, fleet: &FleetRun, v: &Verdicts) {
    for n in &v.nodes {
        let lost = fleet
            .node(n.rank)
            .is_some_and(|x| x.status == NodeStatus::Lost);
        let now = state(n, lost);
        for s in ["pass", "fail", "not_judged"] {
            f.gauge("fleet_node_verdict", VERDICT_HELP).push(
                vec![("host", n.label.clone()), ("verdict", s.into())],
                f64::from(u8::from(s == now)),
            );
        }
    }
    for n in &v.nodes {
        for c in &n.checks {
            let labels = vec![("host", n.label.clone()), ("figure", key(&c.metric))];
            f.gauge(
                "fleet_outlier",
                "1 when a node's figure is a fleet outlier or worse than its class bound, else 0.",
            )
            .push(
                labels.clone(),
                f64::from(u8::from(c.outlier || c.below_reference)),
            );
            if let Some(z) = c.robust_z {
                f.gauge("fleet_robust_z", "A node's figure's distance from the fleet median in robust standard deviations of the logarithm (1.4826 MAD); positive is worse.")
                    .push(labels, z);
            }
        }
    }
}

/// The fleet's median of each figure, in its family's base unit
/// (`bwscope_fleet_median_<family>_<unit>`).
fn medians(f: &mut Families, v: &Verdicts, defs: &[Figure]) {
    for m in v.metrics.iter().filter(|m| m.nodes > 0) {
        let Some(d) = def(defs, &m.metric) else {
            continue;
        };
        f.gauge(
            &format!("fleet_median_{}", family_of(d)),
            "The fleet's median of a figure over its nodes, in the figure's base unit.",
        )
        .push(labels_of(d), d.quantity.to_base(m.median));
    }
}

/// The fleet against its own recent runs (the history store) and the
/// findings about the whole fleet.
fn past(f: &mut Families, v: &Verdicts, defs: &[Figure]) {
    if let Some(p) = &v.past {
        for m in p.metrics.iter().filter(|m| m.judged) {
            let k = key(&m.metric);
            if let (Some(d), Some(x)) = (def(defs, &m.metric), m.past_median) {
                f.gauge(
                    &format!("fleet_past_median_{}", family_of(d)),
                    "The median of this fleet's medians of a figure over its recent runs (the history store), in the figure's base unit.",
                )
                .push(labels_of(d), d.quantity.to_base(x));
            }
            f.gauge(
                "fleet_drop",
                "1 when a figure's fleet median dropped against this fleet's recent runs, else 0.",
            )
            .push(vec![("figure", k.clone())], f64::from(u8::from(m.drop)));
            if let Some(x) = m.pct_worse {
                f.gauge("fleet_drop_ratio", "How much worse a figure's fleet median is than this fleet's recent runs' (0.1 = 10 % worse; negative: better).")
                    .push(vec![("figure", k)], x / 100.0);
            }
        }
    }
    for x in &v.findings {
        let mut l = vec![
            ("kind", x.kind.name().to_string()),
            ("figure", key(&x.metric)),
        ];
        l.push(("host", x.node.clone().unwrap_or_default()));
        f.get("fleet_finding", Kind::Gauge, "1 per finding about the whole fleet: kind fleet_drop, fleet_below_reference or usually_slowest (host: the node it names).")
            .push(l, 1.0);
    }
}
