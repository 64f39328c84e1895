//! `compare --headline`: only the headline figures, each judged where
//! both runs took it clean. A run against itself passes; a run whose DRAM
//! read is 30 % lower fails (exit 3) naming it; the same drop taken in
//! noise is not judged, and with nothing judged the answer is exit 4, not
//! ok. (Two surveys of one build on a cloud guest: the closing note of
//! issue 47 and docs/reports.md, measured by hand.)

mod common;

use serde_json::{json, Value};

const SURVEY: &str = "tests/fixtures/runs/2026-11-24-54fbad1/survey.json";

/// The survey, every figure clean (its warnings cleared).
fn quiet() -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(SURVEY);
    let mut run: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    run["warnings"] = json!([]);
    for r in run["records"].as_array_mut().unwrap() {
        r["warnings"] = json!([]);
        r["spells"] = Value::Null;
        if let Some(rep) = r["repeats"].as_object_mut() {
            rep.insert("contended".into(), json!(false));
        }
    }
    run
}

/// Every DRAM-sized read record of `run`, passed to `f`.
fn dram_reads(run: &mut Value, f: impl Fn(&mut Value)) {
    for r in run["records"].as_array_mut().unwrap() {
        let k = r["kernel"].as_str().unwrap_or_default();
        if r["regime"] == "DRAM" && k.starts_with("seq_read") {
            f(r);
        }
    }
}

fn compare(a: &str, b: &str, extra: &[&str]) -> (Option<i32>, String) {
    let o = common::bwscope()
        .args(["compare", "--headline", a, b])
        .args(extra)
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr),
    )
}

#[test]
fn the_headline_figures_gate_only_where_both_runs_are_clean() {
    let d = tempfile::tempdir().unwrap();
    let base = quiet();
    let a = common::write(d.path(), "a.json", &base);
    let (code, text) = compare(&a, &a, &[]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("DRAM read") && text.contains("ok: "),
        "{text}"
    );
    // Only headline figures: no kernel-by-size rows.
    assert!(!text.contains("KiB"), "{text}");

    let mut slow = base.clone();
    dram_reads(&mut slow, |r| common::scale_gbps(r, 0.7));
    let b = common::write(d.path(), "b.json", &slow);
    let (code, text) = compare(&a, &b, &[]);
    assert_eq!(code, Some(3), "{text}");
    let line = text.lines().find(|l| l.starts_with("DRAM read ")).unwrap();
    assert!(
        line.contains("SLOWER") && line.contains("-30.0 %"),
        "{line}"
    );
    // A threshold above the drop passes it.
    assert_eq!(compare(&a, &b, &["--fail-if-slower", "35"]).0, Some(0));

    // The same drop, taken on a shared core: not judged.
    let mut noisy = slow.clone();
    dram_reads(&mut noisy, |r| {
        r["warnings"] = json!([{"kind": "high_cv", "cv": 0.4}]);
    });
    let c = common::write(d.path(), "c.json", &noisy);
    let (code, text) = compare(&a, &c, &[]);
    assert_eq!(code, Some(0), "{text}");
    let line = text.lines().find(|l| l.starts_with("DRAM read ")).unwrap();
    assert!(
        line.contains("not judged: noisy in") && line.contains("high_cv"),
        "{line}"
    );

    // Nothing clean in one run: nothing judged, exit 4.
    let mut all = base.clone();
    for r in all["records"].as_array_mut().unwrap() {
        r["warnings"] = json!([{"kind": "high_cv", "cv": 0.4}]);
    }
    let e = common::write(d.path(), "e.json", &all);
    let (code, text) = compare(&a, &e, &[]);
    assert_eq!(code, Some(4), "{text}");
    assert!(text.contains("not judged: no headline figure"), "{text}");

    // The JSON says the same per figure.
    let (code, text) = compare(&a, &b, &["--format", "json"]);
    assert_eq!(code, Some(3));
    let v: Value = serde_json::from_str(&text).unwrap();
    let read = v["runs"][0]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["name"] == "DRAM read")
        .unwrap()
        .clone();
    assert_eq!(read["verdict"], "slower", "{read}");
}
