//! `bwscope report`: snapshots of every text format of a fixed recorded
//! run, and every kind of bad input (one-line error naming the file, exit 2).

// Unix: signals, /proc, namespaces, guests, device nodes or Unix-only
// tools (the Windows build runs tests/windows.rs instead).
#![cfg(unix)]

mod common;

use common::{bwscope, fixture, fixture_path, write};
use predicates::prelude::*;

fn report(format: &str) -> String {
    let out = bwscope()
        .args([
            "report",
            fixture_path().to_str().unwrap(),
            "--format",
            format,
            "-o",
            "-",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn table_snapshot() {
    insta::assert_snapshot!("table", report("table"));
}

#[test]
fn markdown_snapshot() {
    let md = report("md");
    assert!(md.contains("**Summary:** L1 read 208 GB/s"));
    insta::assert_snapshot!("markdown", md);
}

#[test]
fn csv_snapshot() {
    let csv = report("csv");
    // One header plus one row per record.
    assert_eq!(
        csv.lines().count(),
        1 + fixture()["records"].as_array().unwrap().len()
    );
    insta::assert_snapshot!("csv", csv);
}

#[test]
fn json_round_trips_exactly() {
    let json = report("json");
    let back: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        back,
        fixture(),
        "report --format json must reproduce the run"
    );
    insta::assert_snapshot!("json", json);
}

#[test]
fn html_is_self_contained() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.html");
    bwscope()
        .args([
            "report",
            fixture_path().to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("wrote"));
    let html = std::fs::read_to_string(&out).unwrap();
    for needle in [
        "<section id=summary>",
        "L1 read 208 GB/s",
        "<figure class=chart id=\"chart-cache-size\"",
        "<table class=sortable>",
        "STREAM/likwid convention",
        "<section id=raw>",
        "running in a virtual machine",
    ] {
        assert!(html.contains(needle), "missing {needle}");
    }
    // Nothing is fetched: no external script, style, font or image.
    for bad in ["src=\"http", "href=\"http", "@import", "url(", "<link"] {
        assert!(!html.contains(bad), "external reference {bad}");
    }
    // Every record is a table row.
    let rows = html.matches("<tr class=").count();
    assert_eq!(rows, fixture()["records"].as_array().unwrap().len());
}

#[test]
fn default_html_goes_next_to_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let run = write(dir.path(), "run.json", &fixture());
    bwscope().args(["report", &run]).assert().success();
    assert!(dir.path().join("run.html").exists());
}

/// A clap usage error: exit 2, the message names the argument (clap adds
/// a usage block after the first line).
fn usage(args: &[&str], needle: &str) {
    let out = bwscope().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.lines().next().unwrap_or("").contains(needle), "{err}");
}

fn bad(args: &[&str], needle: &str) {
    let out = bwscope().args(args).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.contains(needle), "{err} should contain {needle}");
}

#[test]
fn not_a_bwscope_run() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "other.json",
        &serde_json::json!({"tool": {"name": "stream"}, "records": []}),
    );
    bad(&["report", &p, "-f", "md"], "other.json: not a bwscope run");
}

#[test]
fn newer_schema() {
    let dir = tempfile::tempdir().unwrap();
    let mut v = fixture();
    v["schema_version"] = serde_json::json!(99);
    let p = write(dir.path(), "future.json", &v);
    bad(
        &["report", &p, "-f", "md"],
        "future.json: schema version 99 is newer",
    );
}

#[test]
fn truncated_file() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture_path()).unwrap();
    let p = dir.path().join("cut.json");
    std::fs::write(&p, &text[..text.len() / 2]).unwrap();
    bad(&["report", p.to_str().unwrap(), "-f", "md"], "truncated");
    bad(&["plot", p.to_str().unwrap(), "-o", "x.svg"], "cut.json");
}

#[test]
fn missing_file() {
    bad(
        &["report", "/nonexistent/run.json"],
        "/nonexistent/run.json: cannot read",
    );
}

#[test]
fn unwritable_output() {
    bad(
        &[
            "report",
            fixture_path().to_str().unwrap(),
            "-o",
            "/nonexistent-dir/r.html",
        ],
        "cannot write /nonexistent-dir/r.html",
    );
}

/// A run stopped by Ctrl-C keeps every finished record and loads.
#[test]
fn sigint_survivor_loads() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("cut.json");
    let bin = env!("CARGO_BIN_EXE_bwscope");
    let mut child = std::process::Command::new(bin)
        .env("BWSCOPE_HISTORY", common::test_history())
        .args([
            "cache",
            "-k",
            "seq_read",
            "--sizes",
            "4KiB..64MiB:x2",
            "--samples",
            "50",
            "--json",
        ])
        .arg(&json)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until at least one record is on disk (the JSON is rewritten
    // at most once a second), then interrupt.
    let t0 = std::time::Instant::now();
    loop {
        std::thread::sleep(std::time::Duration::from_millis(200));
        let n = std::fs::read_to_string(&json)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .map_or(0, |v| v["records"].as_array().map_or(0, |a| a.len()));
        if n > 0 || t0.elapsed().as_secs() > 60 {
            break;
        }
    }
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    if status.success() {
        eprintln!("the sweep finished before SIGINT arrived; the run is complete, still checking it loads");
    } else {
        assert_eq!(status.code(), Some(130));
    }
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    if !status.success() {
        assert_eq!(v["interrupted"], true);
        assert_eq!(v["complete"], false);
    }
    let out = dir.path().join("cut.html");
    bwscope()
        .args([
            "report",
            json.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ])
        .assert()
        .success();
    let html = std::fs::read_to_string(out).unwrap();
    assert!(html.contains("seq_read"));
    if !status.success() {
        assert!(html.contains("interrupted"));
    }
}

#[test]
fn completions_and_man_page() {
    bwscope()
        .args(["completions", "bash"])
        .assert()
        .success()
        .stdout(predicate::str::contains("_bwscope").and(predicate::str::contains("compare")));
    bwscope()
        .args(["completions", "zsh"])
        .assert()
        .success()
        .stdout(predicate::str::contains("#compdef bwscope"));
    bwscope()
        .arg("man")
        .assert()
        .success()
        .stdout(predicate::str::contains(".TH bwscope").and(predicate::str::contains("compare")));
    let dir = tempfile::tempdir().unwrap();
    bwscope()
        .args(["man", "--dir", dir.path().to_str().unwrap()])
        .assert()
        .success();
    for page in [
        "bwscope.1",
        "bwscope-compare.1",
        "bwscope-plot.1",
        "bwscope-report.1",
        "bwscope-cache.1",
    ] {
        let text = std::fs::read_to_string(dir.path().join(page)).unwrap_or_default();
        assert!(text.contains(".TH"), "{page} missing or empty");
    }
    usage(&["completions", "tcsh"], "tcsh");
}

#[test]
fn survey_flags_only_without_subcommand() {
    usage(&["cache", "--out", "x"], "--out");
    bad(&["--out", "x", "info"], "--out: only the survey");
    bad(
        &["--out", "/proc/no/such/dir"],
        "cannot write /proc/no/such/dir",
    );
}

/// `report` of 10,000 records: every row present (the time is printed
/// for the benchmark note, not asserted).
#[test]
fn report_of_ten_thousand_records() {
    let mut v = fixture();
    let t = v["records"][0].clone();
    let mut recs = Vec::with_capacity(10_000);
    for i in 0..10_000u64 {
        let mut r = t.clone();
        r["kernel"] = serde_json::json!(format!("k{}", i % 10));
        r["size_bytes"] = serde_json::json!(4096 + 64 * (i / 10));
        recs.push(r);
    }
    v["records"] = serde_json::Value::Array(recs);
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "big.json", &v);
    let out = dir.path().join("big.html");
    let t0 = std::time::Instant::now();
    bwscope()
        .args(["report", &p, "-o", out.to_str().unwrap()])
        .assert()
        .success();
    eprintln!(
        "report of 10000 records: {:.2} s",
        t0.elapsed().as_secs_f64()
    );
    let html = std::fs::read_to_string(out).unwrap();
    assert_eq!(html.matches("<tr class=ok>").count(), 10_000);
}
