//! The judgement against the past on made-up figures (the netns fleet
//! test in `tests/fleet_netns.rs` runs the real thing).

use super::*;
use crate::model::fleet::{Check, MetricSummary, NodeVerdict};

const DRAM: &str = "dram_read_gbps";
const LAT: &str = "dram_latency_ns";

/// Verdicts of a fleet whose node `i` measured `values[i]` of each
/// (metric, higher_is_better), with the fleet median filled in.
fn verdicts(metrics: &[(&str, bool, Vec<f64>)]) -> (Verdicts, Vec<NodeNow>) {
    let n = metrics[0].2.len();
    let mut v = Verdicts::default();
    for (m, hib, vals) in metrics {
        v.metrics.push(MetricSummary {
            metric: m.to_string(),
            unit: if *hib { "GB/s" } else { "ns" }.into(),
            higher_is_better: *hib,
            nodes: vals.len() as u32,
            median: median(vals).unwrap(),
            ..MetricSummary::default()
        });
    }
    for i in 0..n {
        v.nodes.push(NodeVerdict {
            rank: i as u32,
            label: format!("n{i}"),
            checks: metrics
                .iter()
                .map(|(m, _, vals)| Check {
                    metric: m.to_string(),
                    value: vals[i],
                    ..Check::default()
                })
                .collect(),
            ..NodeVerdict::default()
        });
    }
    let ids: Vec<Option<String>> = (0..n).map(|i| Some(format!("h{i}"))).collect();
    let now = figures_now(&v, &ids);
    (v, now)
}

fn past_run(metric: &str, values: &[f64]) -> PastFleetRun {
    PastFleetRun {
        started_at: String::new(),
        nodes: values
            .iter()
            .enumerate()
            .map(|(i, &x)| NodeFigures {
                node: format!("h{i}"),
                figures: vec![(metric.to_string(), x)],
            })
            .collect(),
    }
}

fn settings() -> Settings {
    Settings {
        fleet: "f".into(),
        pct: 15.0,
    }
}

fn kinds(v: &Verdicts) -> Vec<(FindingKind, String)> {
    v.findings
        .iter()
        .map(|f| (f.kind, f.metric.clone()))
        .collect()
}

#[test]
fn a_fleet_wide_drop_with_no_outlier_is_one_finding() {
    // Every node 31 % down, none apart from the others.
    let (mut v, now) = verdicts(&[(DRAM, true, vec![6.9, 7.0, 6.8, 7.1, 6.9])]);
    let past: Vec<PastFleetRun> = [10.0, 10.2, 9.9, 10.1]
        .iter()
        .map(|&b| past_run(DRAM, &[b, b + 0.1, b + 0.1, b, b + 0.2]))
        .collect();
    judge(&mut v, &now, &past, &settings());
    assert_eq!(kinds(&v), vec![(FindingKind::FleetDrop, DRAM.to_string())]);
    let f = &v.findings[0];
    assert_eq!(f.runs, 4);
    assert!((f.pct_worse.unwrap() - 32.0).abs() < 0.5, "{f:?}");
    assert!(
        f.message
            .contains("32 % below this fleet's median of its last 4 runs")
            && f.message.contains("5 of 5 nodes below it"),
        "{}",
        f.message
    );
    let p = v.past.as_ref().unwrap();
    assert_eq!((p.runs, p.fleet.as_str()), (4, "f"));
    assert!(p.metrics[0].drop && p.metrics[0].judged);
}

#[test]
fn one_loaded_run_in_the_past_moves_nothing_and_a_quiet_run_is_clear() {
    // The past holds one loaded run (half speed) among quiet ones: the
    // median of the medians ignores it, and a quiet run now is no drop.
    let (mut v, now) = verdicts(&[(DRAM, true, vec![9.6, 10.0, 10.3, 9.9, 10.1])]);
    let past = vec![
        past_run(DRAM, &[5.0, 5.1, 4.9, 5.2, 5.0]),
        past_run(DRAM, &[10.0, 10.1, 9.8, 10.2, 10.0]),
        past_run(DRAM, &[9.9, 10.0, 10.1, 10.0, 9.7]),
        past_run(DRAM, &[10.2, 10.0, 10.1, 9.9, 10.0]),
    ];
    judge(&mut v, &now, &past, &settings());
    assert!(v.findings.is_empty(), "{:?}", v.findings);
    let m = &v.past.as_ref().unwrap().metrics[0];
    assert!(
        m.judged && !m.drop && m.pct_worse.unwrap().abs() < 2.0,
        "{m:?}"
    );
}

#[test]
fn too_few_earlier_runs_are_not_judged_and_latency_is_worse_upward() {
    let (mut v, now) = verdicts(&[(LAT, false, vec![150.0, 151.0, 149.0, 150.0])]);
    let past = vec![
        past_run(LAT, &[100.0, 101.0, 99.0, 100.0]),
        past_run(LAT, &[100.0, 102.0, 98.0, 100.0]),
    ];
    judge(&mut v, &now, &past, &settings());
    assert!(v.findings.is_empty());
    assert!(!v.past.as_ref().unwrap().metrics[0].judged);
    // A third earlier run: 50 % higher latency is a drop, said as "above".
    let mut past = past;
    past.push(past_run(LAT, &[100.0, 100.0, 100.0, 100.0]));
    judge(&mut v, &now, &past, &settings());
    assert_eq!(kinds(&v), vec![(FindingKind::FleetDrop, LAT.to_string())]);
    assert!(
        v.findings[0].message.contains("50 % above"),
        "{}",
        v.findings[0].message
    );
}

#[test]
fn better_than_the_past_and_a_small_dip_are_no_drop() {
    for now_vals in [vec![12.0, 12.1, 11.9, 12.0], vec![9.0, 9.1, 8.9, 9.0]] {
        let (mut v, now) = verdicts(&[(DRAM, true, now_vals)]);
        let past: Vec<PastFleetRun> = (0..5)
            .map(|_| past_run(DRAM, &[10.0, 10.0, 10.0, 10.0]))
            .collect();
        judge(&mut v, &now, &past, &settings());
        assert!(v.findings.is_empty(), "{:?}", v.findings);
    }
}

#[test]
fn the_node_slowest_in_most_recent_runs_is_named() {
    // n2 (h2) is the slowest now and in 4 of 5 earlier runs.
    let (mut v, now) = verdicts(&[(DRAM, true, vec![10.0, 10.1, 9.0, 10.2, 9.9])]);
    let mut past: Vec<PastFleetRun> = (0..4)
        .map(|_| past_run(DRAM, &[10.0, 10.1, 9.1, 10.2, 9.9]))
        .collect();
    past.push(past_run(DRAM, &[9.0, 10.1, 9.5, 10.2, 9.9]));
    judge(&mut v, &now, &past, &settings());
    assert_eq!(
        kinds(&v),
        vec![(FindingKind::UsuallySlowest, DRAM.to_string())]
    );
    let f = &v.findings[0];
    assert_eq!(
        (f.node.as_deref(), f.slowest_in, f.runs),
        (Some("n2"), Some(5), 6)
    );
    assert!(f
        .message
        .starts_with("n2 has been the slowest node on dram_read_gbps in 5 of"));
}

#[test]
fn a_slowest_node_by_chance_or_in_too_few_runs_is_not_named() {
    // Slowest now and in 1 of 4 earlier runs: 2 of 5 is chance.
    let (mut v, now) = verdicts(&[(DRAM, true, vec![10.0, 10.1, 9.0, 10.2, 9.9])]);
    let rot = |k: usize| -> PastFleetRun {
        let mut x = vec![10.0, 10.1, 10.2, 10.3, 10.4];
        x[k] = 9.0;
        past_run(DRAM, &x)
    };
    let past = vec![rot(0), rot(1), rot(2), rot(3)];
    judge(&mut v, &now, &past, &settings());
    assert!(v.findings.is_empty(), "{:?}", v.findings);
    // Always the slowest, but only 3 runs in all: too few.
    let (mut v, now) = verdicts(&[(DRAM, true, vec![10.0, 10.1, 9.0, 10.2, 9.9])]);
    let past = vec![rot(2), rot(2)];
    judge(&mut v, &now, &past, &settings());
    assert!(v.findings.is_empty(), "{:?}", v.findings);
    // A tie for the slowest names nobody.
    let (mut v, now) = verdicts(&[(DRAM, true, vec![9.0, 10.1, 9.0, 10.2, 9.9])]);
    let past: Vec<PastFleetRun> = (0..5).map(|_| rot(2)).collect();
    judge(&mut v, &now, &past, &settings());
    assert!(v.findings.is_empty(), "{:?}", v.findings);
}

#[test]
fn every_node_below_its_class_bound_is_a_fleet_finding() {
    let (mut v, _) = verdicts(&[(DRAM, true, vec![5.0, 5.1, 5.2])]);
    for n in &mut v.nodes {
        n.checks[0].reference = Some(8.0);
        n.checks[0].below_reference = true;
    }
    let f = below_reference(&v);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].kind, FindingKind::FleetBelowReference);
    assert!(f[0].message.contains("all 3 nodes"), "{}", f[0].message);
    // One node above its bound: the nodes fail on their own, no fleet finding.
    v.nodes[1].checks[0].below_reference = false;
    assert!(below_reference(&v).is_empty());
}
