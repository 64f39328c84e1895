//! `bwscope compare OLD-fleet.json NEW-fleet.json`: which nodes got slower.
//! Nodes are matched by host label, figures by metric
//! ([`super::metrics`]); the first fleet is the baseline. A figure is
//! `slower` when it is worse by more than the threshold (`--fail-if-slower
//! PCT`, default [`DEFAULT_PCT`] %), `faster` when better by as much, else
//! `same`.

use std::fmt::Write as _;

use serde::Serialize;

use super::metrics;
use crate::model::fleet::FleetRun;
use crate::report::grid::grid;

/// Change below which a figure counts as unchanged when no
/// `--fail-if-slower` is given: the spread of repeated runs on a quiet
/// node is a few percent.
pub const DEFAULT_PCT: f64 = 5.0;

#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub node: String,
    pub metric: String,
    pub unit: String,
    pub baseline: Option<f64>,
    pub value: Option<f64>,
    /// Percent worse than the baseline (negative: better).
    pub worse_pct: Option<f64>,
    /// `slower`, `faster`, `same`, `only in baseline`, `only in new`.
    pub verdict: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct FleetComparison {
    pub files: [String; 2],
    pub threshold_pct: f64,
    pub rows: Vec<Row>,
}

pub fn compare(a: (&str, &FleetRun), b: (&str, &FleetRun), pct: Option<f64>) -> FleetComparison {
    let t = pct.unwrap_or(DEFAULT_PCT);
    let fa = metrics::fleet_figures(a.1);
    let fb = metrics::fleet_figures(b.1);
    let mut rows = Vec::new();
    let mut labels: Vec<String> = a.1.nodes.iter().map(|n| n.label.clone()).collect();
    for n in &b.1.nodes {
        if !labels.contains(&n.label) {
            labels.push(n.label.clone());
        }
    }
    let figs_of = |f: &FleetRun, figs: &[(u32, Vec<metrics::Figure>)], label: &str| {
        f.nodes
            .iter()
            .find(|n| n.label == label)
            .and_then(|n| figs.iter().find(|(r, _)| *r == n.rank))
            .map(|(_, v)| v.clone())
    };
    for label in labels {
        let (ga, gb) = (figs_of(a.1, &fa, &label), figs_of(b.1, &fb, &label));
        let mut names: Vec<&metrics::Figure> = ga.iter().flatten().collect();
        for g in gb.iter().flatten() {
            if !names.iter().any(|x| x.metric == g.metric) {
                names.push(g);
            }
        }
        for g in names {
            let pick = |v: &Option<Vec<metrics::Figure>>| {
                v.as_ref()
                    .and_then(|v| v.iter().find(|x| x.metric == g.metric).map(|x| x.value))
            };
            let (x, y) = (pick(&ga), pick(&gb));
            let worse = match (x, y) {
                (Some(x), Some(y)) if x != 0.0 => Some(
                    if g.higher_is_better {
                        (x - y) / x
                    } else {
                        (y - x) / x
                    } * 100.0,
                ),
                _ => None,
            };
            let verdict = match (x, y, worse) {
                (Some(_), None, _) => "only in baseline",
                (None, Some(_), _) => "only in new",
                (_, _, Some(w)) if w > t => "slower",
                (_, _, Some(w)) if w < -t => "faster",
                _ => "same",
            };
            rows.push(Row {
                node: label.clone(),
                metric: g.metric.clone(),
                unit: g.unit().into(),
                baseline: x,
                value: y,
                worse_pct: worse,
                verdict: verdict.into(),
            });
        }
    }
    rows.extend(tier_rows(a.1, b.1, t));
    rows.sort_by(|p, q| {
        q.worse_pct
            .unwrap_or(f64::MIN)
            .total_cmp(&p.worse_pct.unwrap_or(f64::MIN))
    });
    FleetComparison {
        files: [a.0.to_string(), b.0.to_string()],
        threshold_pct: t,
        rows,
    }
}

/// Each node's HBM, CXL and device memory (`host.tiers`) in both fleets,
/// GiB, where either has some: a node that lost a tier, or part of it, is
/// `slower` (issue 32).
fn tier_rows(a: &FleetRun, b: &FleetRun, t: f64) -> Vec<Row> {
    use super::verdict::tiers::{gib, KINDS};
    let mut rows = Vec::new();
    for na in &a.nodes {
        let (Some(ra), Some(rb)) = (
            na.run.as_ref(),
            b.nodes
                .iter()
                .find(|n| n.label == na.label)
                .and_then(|n| n.run.as_ref()),
        ) else {
            continue;
        };
        for kind in KINDS {
            let (Some(x), Some(y)) = (gib(ra, kind), gib(rb, kind)) else {
                continue;
            };
            if x == 0.0 && y == 0.0 {
                continue;
            }
            let worse = (x > 0.0).then(|| (x - y) / x * 100.0);
            let verdict = match worse {
                Some(w) if w > t => "slower",
                None => "faster",
                Some(w) if w < -t => "faster",
                _ => "same",
            };
            rows.push(Row {
                node: na.label.clone(),
                metric: format!("tier_{}_capacity", kind.name()),
                unit: "GiB".into(),
                baseline: Some(x),
                value: Some(y),
                worse_pct: worse,
                verdict: verdict.into(),
            });
        }
    }
    rows
}

/// The distinct items, in the order they first come.
fn unique<'a>(it: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for x in it {
        if !out.contains(&x) {
            out.push(x);
        }
    }
    out
}

fn cell(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{x:.3}"))
}

impl FleetComparison {
    /// Rows whose figure got worse by more than the threshold.
    pub fn slower(&self) -> Vec<&Row> {
        self.rows.iter().filter(|r| r.verdict == "slower").collect()
    }

    /// Every node compared, once each, in the order rows first name it.
    pub fn nodes(&self) -> Vec<&str> {
        unique(self.rows.iter().map(|r| r.node.as_str()))
    }

    /// Nodes with at least one slower figure, once each, worst first.
    pub fn slower_nodes(&self) -> Vec<&str> {
        unique(self.slower().into_iter().map(|r| r.node.as_str()))
    }

    fn grid(&self) -> Vec<Vec<String>> {
        let mut g = vec![vec![
            "node".to_string(),
            "metric".into(),
            "unit".into(),
            "baseline".into(),
            "new".into(),
            "worse %".into(),
            "verdict".into(),
        ]];
        for r in &self.rows {
            g.push(vec![
                r.node.clone(),
                r.metric.clone(),
                r.unit.clone(),
                cell(r.baseline),
                cell(r.value),
                r.worse_pct.map_or("-".into(), |w| format!("{w:+.1}")),
                r.verdict.clone(),
            ]);
        }
        g
    }

    pub fn render_table(&self) -> String {
        let mut s = format!(
            "baseline {}, new {}; a figure worse by more than {} % is slower\n",
            self.files[0], self.files[1], self.threshold_pct
        );
        s.push_str(&grid(&self.grid()));
        let slow = self.slower_nodes();
        let _ = writeln!(
            s,
            "{} of {} nodes got slower{}",
            slow.len(),
            self.nodes().len(),
            if slow.is_empty() {
                String::new()
            } else {
                format!(": {}", slow.join(", "))
            }
        );
        s
    }

    pub fn render_markdown(&self) -> String {
        let g = self.grid();
        let mut s = String::new();
        for (i, row) in g.iter().enumerate() {
            let _ = writeln!(s, "| {} |", row.join(" | "));
            if i == 0 {
                let _ = writeln!(s, "|{}", "---|".repeat(row.len()));
            }
        }
        s
    }

    pub fn render_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Five nodes, shift over TCP; every flow from rank r goes at
    /// `base + step * r` GB/s.
    fn fleet(base: f64, step: f64) -> FleetRun {
        FleetRun::test_shift(5, |src, _| Some(base + step * src as f64))
    }

    #[test]
    fn each_slower_node_is_counted_and_named_once() {
        // Every node slower both ways, by different amounts: sorted by how
        // much worse, one node's two rows are not next to each other.
        let c = compare(("a", &fleet(1.0, 0.0)), ("b", &fleet(0.5, 0.05)), None);
        assert_eq!(c.slower().len(), 10, "{:?}", c.rows);
        assert_eq!(c.nodes().len(), 5);
        assert_eq!(c.slower_nodes().len(), 5);
        let t = c.render_table();
        let last = t.lines().last().unwrap();
        assert!(last.starts_with("5 of 5 nodes got slower: "), "{last}");
        for r in 0..5 {
            assert_eq!(last.matches(&format!("n{r}")).count(), 1, "{last}");
        }
    }

    /// Issue 32: a node whose HBM tier is gone in the new fleet is slower
    /// on it; nodes that kept theirs are the same.
    #[test]
    fn a_node_that_lost_its_hbm_tier_is_slower() {
        use crate::model::{MemoryTiers, NodeKind, Run, TierNode, Units};
        let with = |hbm: bool| {
            let mut f = fleet(1.0, 0.0);
            for n in f.nodes.iter_mut() {
                let mut host = crate::model::Host::default();
                let mut nodes = vec![TierNode {
                    kind: NodeKind::Dram,
                    capacity_bytes: Some(256 << 30),
                    ..TierNode::default()
                }];
                if hbm || n.rank != 2 {
                    nodes.push(TierNode {
                        node: 1,
                        kind: NodeKind::Hbm,
                        capacity_bytes: Some(64 << 30),
                        ..TierNode::default()
                    });
                }
                host.tiers = Some(MemoryTiers {
                    nodes,
                    ..MemoryTiers::default()
                });
                n.run = Some(Run::new(
                    "fleet-node",
                    serde_json::json!({}),
                    host,
                    Units::GB,
                ));
            }
            f
        };
        let c = compare(("a", &with(true)), ("b", &with(false)), None);
        let tier: Vec<&Row> = c
            .rows
            .iter()
            .filter(|r| r.metric == "tier_hbm_capacity")
            .collect();
        assert_eq!(tier.len(), 5, "{tier:?}");
        assert_eq!(c.slower_nodes(), vec!["n2"], "{:?}", c.rows);
        let n2 = tier.iter().find(|r| r.node == "n2").unwrap();
        assert_eq!((n2.baseline, n2.value), (Some(64.0), Some(0.0)));
        assert!(tier
            .iter()
            .filter(|r| r.node != "n2")
            .all(|r| r.verdict == "same"));
    }
}
