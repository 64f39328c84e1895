//! Every run file earlier versions of bwscope wrote is still read. The
//! files in `tests/fixtures/runs/<date>-<commit>/` were written by the
//! binary built at that commit (schema version 1 throughout; see the
//! README there): every suite, a survey, and a fleet. Each is rendered by
//! `report` in every text format, read back and written again as the same
//! JSON, compared with itself by `compare`, listed by `plot`, and the
//! same suite's files of two versions are lined up case by case.

mod common;

use std::path::{Path, PathBuf};

use common::bwscope;
use serde_json::Value;

fn eras() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs");
    let mut v: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    assert!(v.len() >= 2, "{v:?}");
    v
}

/// The run files of an era (its fleet file aside), and the oldest
/// fixture of all: the foundation's `cache --quick`.
fn runs() -> Vec<PathBuf> {
    let mut v = vec![common::fixture_path()];
    for era in eras() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&era)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .filter(|p| !p.ends_with("fleet.json"))
            .collect();
        files.sort();
        v.extend(files);
    }
    v
}

fn stdout(args: &[&str]) -> String {
    let out = bwscope().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn json_of(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `a` and `b` hold the same keys and values; floats may differ in their
/// last bit (serde_json's default float parser is not always correctly
/// rounded, so a number read and written again can move by one ulp).
fn same(a: &Value, b: &Value, at: &str) -> Result<(), String> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            if (x - y).abs() <= 1e-14 * x.abs().max(y.abs()) {
                Ok(())
            } else {
                Err(format!("{at}: {x} became {y}"))
            }
        }
        (Value::Object(x), Value::Object(y)) => {
            let keys = |m: &serde_json::Map<String, Value>| {
                let mut k: Vec<String> = m.keys().cloned().collect();
                k.sort();
                k
            };
            if keys(x) != keys(y) {
                return Err(format!("{at}: keys {:?} became {:?}", keys(x), keys(y)));
            }
            x.iter()
                .try_for_each(|(k, v)| same(v, &y[k], &format!("{at}.{k}")))
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .try_for_each(|(i, (v, w))| same(v, w, &format!("{at}[{i}]"))),
        _ if a == b => Ok(()),
        _ => Err(format!("{at}: {a} became {b}")),
    }
}

#[test]
fn every_old_run_renders_in_every_format() {
    for run in runs() {
        let p = run.to_str().unwrap();
        let suites: Vec<String> = json_of(&run)["records"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["status"] == "ok")
            .map(|r| r["suite"].as_str().unwrap().to_string())
            .collect();
        let table = stdout(&["report", p, "--format", "table", "-o", "-"]);
        if !suites.is_empty() {
            assert!(table.lines().count() > 2, "{p}: {table}");
        }
        let md = stdout(&["report", p, "--format", "md", "-o", "-"]);
        for s in &suites {
            assert!(md.contains(&format!("## {s}")), "{p}: no {s} section");
        }
        let csv = stdout(&["report", p, "--format", "csv", "-o", "-"]);
        let records = json_of(&run)["records"].as_array().unwrap().len();
        assert_eq!(csv.lines().count(), records + 1, "{p}");
        stdout(&["plot", p, "--list"]);
    }
}

#[test]
fn every_old_run_is_written_back_as_it_was_read() {
    for run in runs() {
        let p = run.to_str().unwrap();
        let back: Value =
            serde_json::from_str(&stdout(&["report", p, "--format", "json", "-o", "-"])).unwrap();
        let orig = json_of(&run);
        // The records and everything about the run; `host` gains the
        // fields later versions detect (null in an old run).
        for key in ["records", "options", "warnings", "command", "complete"] {
            if let Err(e) = same(&orig[key], &back[key], key) {
                panic!("{p}: {e}");
            }
        }
    }
}

#[test]
fn every_old_run_compares_with_itself() {
    for run in runs() {
        let p = run.to_str().unwrap();
        let measured = json_of(&run)["records"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["status"] == "ok");
        if !measured {
            // Nothing to compare: refused with its reason (a skipped run).
            let out = bwscope().args(["compare", p, p]).output().unwrap();
            assert_eq!(out.status.code(), Some(2), "{p}");
            continue;
        }
        let c: Value =
            serde_json::from_str(&stdout(&["compare", p, p, "--format", "json"])).unwrap();
        let rows = c["rows"].as_array().unwrap();
        assert!(!rows.is_empty(), "{p}: no rows");
        for r in rows {
            assert_eq!(r["runs"][1]["verdict"], "same", "{p}: {r}");
        }
    }
}

#[test]
fn the_same_suite_of_two_versions_lines_up_case_by_case() {
    let eras = eras();
    let (old, new) = (&eras[0], &eras[eras.len() - 1]);
    // The same commands, so the same cases (threads: the processes run of
    // the newer version has one count more).
    for (name, all) in [
        ("cache", true),
        ("latency", true),
        ("regs", true),
        ("numa", true),
        ("net-stream", true),
        ("transfer", true),
        ("threads", false),
    ] {
        let (a, b) = (
            old.join(format!("{name}.json")),
            new.join(format!("{name}.json")),
        );
        let c: Value = serde_json::from_str(&stdout(&[
            "compare",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--format",
            "json",
        ]))
        .unwrap();
        let rows = c["rows"].as_array().unwrap().len();
        assert!(rows > 0, "{name}: nothing matched");
        if all {
            assert_eq!(c["unmatched"], serde_json::json!([0, 0]), "{name}: {c}");
        }
    }
}

#[test]
fn an_old_fleet_file_renders_and_compares() {
    let fleet = eras().last().unwrap().join("fleet.json");
    let p = fleet.to_str().unwrap();
    let table = stdout(&["report", p, "--format", "table", "-o", "-"]);
    assert!(table.contains("2 nodes"), "{table}");
    let node = json_of(&fleet)["nodes"][0]["label"]
        .as_str()
        .unwrap()
        .to_string();
    let one = stdout(&["report", p, "--node", &node, "--format", "table", "-o", "-"]);
    assert!(one.contains("bandwidth"), "{one}");
    stdout(&["compare", p, p]);
}
