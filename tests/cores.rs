//! `bwscope cores` end to end: a pair's three exchanges and the class
//! records in the JSON, the self-checks' floor on every figure that
//! stands, the charts and `compare` of a saved run, and bad input refused
//! with exit 2 naming the flag. About 6 s on a 2-vCPU guest (three short
//! runs of one pair).
//!
//! A figure on a busy machine may be refused (its repeats moved more than
//! their noise): then the record is an error whose reason says so, never
//! a figure, and the test holds it to that.

#![cfg(unix)]

mod common;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn bwscope() -> Command {
    common::bwscope()
}

/// The first two cpus this process may use, or None (with the reason
/// printed) where it has one.
fn two_cpus() -> Option<(u32, u32)> {
    let c = bwscope::platform::topology::allowed_cpus();
    if c.len() < 2 {
        eprintln!("cores: SKIPPED: one cpu allowed, no pair to measure");
        return None;
    }
    Some((c[0], c[1]))
}

fn records<'a>(run: &'a Value, view: &str) -> Vec<&'a Value> {
    run["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["extra"]["case_view"] == view)
        .collect()
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// A pair record stands above its floor with ns and cycles that agree,
/// or is an error saying it was refused or why it failed.
fn check_pair(r: &Value, hz: Option<f64>) {
    let e = &r["extra"];
    if r["status"] == "error" {
        let why = r["reason"].as_str().unwrap();
        assert!(
            why.starts_with("refused after 3 tries"),
            "an error other than a refusal: {r:#}"
        );
        assert!(
            e.get("one_way_ns").is_none(),
            "a refused figure printed: {r:#}"
        );
        return;
    }
    assert_eq!(r["status"], "ok", "{r:#}");
    let ns = &e["one_way_ns"];
    let floor = f(&e["floor_ns"]);
    assert!(f(&ns["best"]) >= floor, "below the floor: {r:#}");
    assert!(f(&ns["median"]) >= f(&ns["best"]));
    assert!(e["repeats_ns"].as_array().unwrap().len() == 2);
    assert!(r["samples"].as_array().unwrap().len() >= 2);
    if let Some(hz) = hz {
        let cy = f(&e["cycles"]["median"]);
        assert!((cy - f(&ns["median"]) * hz / 1e9).abs() < 1e-6 * cy.max(1.0));
        assert!(cy >= 3.0, "{r:#}");
    }
}

#[test]
fn one_pair_gives_cas_hit_and_hitm_in_ns_and_cycles() {
    let Some((a, b)) = two_cpus() else { return };
    let pair = format!("{a},{b}");
    let run = common::json_of(bwscope().args([
        "cores",
        "--pair",
        &pair,
        "--samples",
        "3",
        "--min-sample-ms",
        "0.5",
    ]));
    let hz = run["host"]["clock_hz"].as_f64();
    let pairs = records(&run, "pair");
    let kernels: Vec<&str> = pairs
        .iter()
        .map(|r| r["kernel"].as_str().unwrap())
        .collect();
    assert_eq!(kernels, ["c2c_cas", "c2c_hit", "c2c_hitm"]);
    for r in &pairs {
        assert_eq!(r["extra"]["case_pair"], serde_json::json!([a, b]));
        assert_eq!(r["threads"], 2);
        check_pair(r, hz);
    }
    // One class record per exchange that stood, holding that pair.
    let classes = records(&run, "class");
    let ok = pairs.iter().filter(|r| r["status"] == "ok").count();
    assert_eq!(classes.len(), ok, "{classes:#?}");
    for c in &classes {
        assert_eq!(c["extra"]["pairs"], 1);
    }
    // The fairness view runs on the pair's cpus by default.
    let fair = records(&run, "fairness");
    assert_eq!(fair.len(), 1);
    let shares = fair[0]["extra"]["shares"].as_array().unwrap();
    let sum: f64 = shares.iter().map(f).sum();
    assert!((sum - 1.0).abs() < 1e-9, "{shares:?}");
}

#[test]
fn a_saved_run_draws_its_charts_and_compares_case_by_case() {
    let Some((a, b)) = two_cpus() else { return };
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str| {
        let p = dir.path().join(name);
        bwscope()
            .args(["cores", "--all-pairs", "--cpus", &format!("{a},{b}")])
            .args(["--exchange", "cas,hitm", "--fairness", "0"])
            .args(["--samples", "3", "--min-sample-ms", "0.5", "--json"])
            .arg(&p)
            .assert()
            .success();
        p
    };
    let (one, two) = (run("one.json"), run("two.json"));
    let svg = dir.path().join("classes.svg");
    bwscope()
        .args(["plot", "--chart", "cores-classes", "-o"])
        .arg(&svg)
        .arg(&one)
        .assert()
        .success();
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    bwscope()
        .args(["compare"])
        .arg(&one)
        .arg(&two)
        .assert()
        .success()
        .stdout(predicate::str::contains("c2c_cas"));
}

#[test]
fn bad_input_is_refused_naming_the_flag() {
    for (args, flag) in [
        (&["--pair", "0,0"][..], "--pair"),
        (&["--pair", "3"][..], "--pair"),
        (&["--pair", "0,99999"][..], "--pair"),
        (&["--exchange", "swap"][..], "--exchange"),
        (&["--budget", "0"][..], "--budget"),
        (&["--fairness", "1"][..], "--fairness"),
        (&["--per-class", "0"][..], "--per-class"),
    ] {
        bwscope()
            .arg("cores")
            .args(args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(flag))
            .stderr(predicate::str::contains("panicked").not());
    }
}
