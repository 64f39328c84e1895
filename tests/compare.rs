//! `bwscope compare`: identical runs show no change; known differences are
//! found with the right sign and verdict; `--fail-if-slower` gates CI.

mod common;

use common::{bwscope, fixture, fixture_path, scale_gbps, write};
use predicates::prelude::*;
use serde_json::Value;

fn json_of(args: &[&str]) -> (Option<i32>, Value) {
    let out = bwscope()
        .arg("compare")
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code(), v)
}

#[test]
fn identical_runs_show_no_change() {
    let f = fixture_path();
    let f = f.to_str().unwrap();
    let (code, v) = json_of(&[f, f, "--fail-if-slower", "0"]);
    assert_eq!(code, Some(0));
    let rows = v["rows"].as_array().unwrap();
    let ok = fixture()["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] == "ok")
        .count();
    assert_eq!(rows.len(), ok);
    for r in rows {
        assert_eq!(r["runs"][1]["verdict"], "same", "{r}");
        assert_eq!(r["runs"][1]["change_pct"], 0.0);
    }
    bwscope()
        .args(["compare", f, f])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "0 slower, 0 faster, 0 within noise",
        ));
}

/// Run B: read at 16 KiB halved (slower), write at 64 MiB ×2 (faster),
/// rep movsb at 64 MiB ×1.03, inside its own 4.5 % best−median spread
/// (noise).
fn changed() -> Value {
    let mut b = fixture();
    for r in b["records"].as_array_mut().unwrap() {
        let (k, s) = (
            r["kernel"].as_str().unwrap().to_string(),
            r["size_bytes"].as_u64(),
        );
        if k == "seq_read_512_avx512f" && s == Some(16 << 10) {
            scale_gbps(r, 0.5);
        }
        if k == "seq_write_512_avx512f" && s == Some(64 << 20) {
            scale_gbps(r, 2.0);
        }
        if k == "rep_movsb" && s == Some(64 << 20) {
            scale_gbps(r, 1.03);
        }
    }
    b
}

#[test]
fn known_differences_are_found() {
    let dir = tempfile::tempdir().unwrap();
    let b = write(dir.path(), "b.json", &changed());
    let a = fixture_path();
    let a = a.to_str().unwrap();
    let (code, v) = json_of(&[a, &b]);
    assert_eq!(code, Some(0));
    let find = |label: &str| -> Value {
        v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["label"] == label)
            .unwrap_or_else(|| panic!("no row {label}"))["runs"][1]
            .clone()
    };
    let read = find("cache seq_read_512_avx512f 16 KiB ×1");
    assert_eq!(read["verdict"], "slower");
    assert!(
        (read["change_pct"].as_f64().unwrap() + 50.0).abs() < 1e-6,
        "{read}"
    );
    let write_ = find("cache seq_write_512_avx512f 64 MiB ×1");
    assert_eq!(write_["verdict"], "faster");
    assert!((write_["change_pct"].as_f64().unwrap() - 100.0).abs() < 1e-6);
    let movsb = find("cache rep_movsb 64 MiB ×1");
    assert_eq!(movsb["verdict"], "noise", "{movsb}");
    assert_eq!(find("cache rep_movsb 16 KiB ×1")["verdict"], "same");

    // The gate: -50 % fails a 10 % budget, passes a 60 % one.
    let out = bwscope()
        .args(["compare", a, &b, "--fail-if-slower", "10"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("1 cases are slower than 10%") && err.contains("seq_read_512_avx512f 16 KiB"),
        "{err}"
    );
    bwscope()
        .args(["compare", a, &b, "--fail-if-slower", "60"])
        .assert()
        .success();

    // Markdown and the table both carry the verdicts.
    bwscope()
        .args(["compare", a, &b, "--format", "md"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("| case | unit | A best |")
                .and(predicate::str::contains("| slower |")),
        );
    bwscope()
        .args(["compare", a, &b, a])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("C Δ %").and(predicate::str::contains(
                "1 slower, 1 faster, 1 within noise",
            )),
        );
}

#[test]
fn runs_sharing_no_case() {
    let dir = tempfile::tempdir().unwrap();
    let mut other = fixture();
    for r in other["records"].as_array_mut().unwrap() {
        r["suite"] = "memtype".into();
    }
    let b = write(dir.path(), "other.json", &other);
    let a = fixture_path();
    let out = bwscope()
        .args(["compare", a.to_str().unwrap(), &b])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1);
    assert!(err.contains("other.json: shares no case with"), "{err}");
}

#[test]
fn bad_compare_input() {
    let a = fixture_path();
    let a = a.to_str().unwrap();
    let out = bwscope()
        .args(["compare", a, "/nonexistent/b.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/b.json: cannot read"));
    let out = bwscope()
        .args(["compare", a, a, "--fail-if-slower", "-5"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = bwscope().args(["compare", a]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "one run is not a comparison");
}
