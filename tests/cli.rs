//! CLI behaviour: JSON fields, bad-input errors and exit codes, SIGINT
//! keeping records, and a physical sanity bound on every kernel.

// Unix: signals, /proc, namespaces, guests, device nodes or Unix-only
// tools (the Windows build runs tests/windows.rs instead).
#![cfg(unix)]

mod common;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn bw() -> Command {
    let mut c = Command::cargo_bin("bwscope").unwrap();
    c.env("BWSCOPE_HISTORY", common::test_history());
    c
}

/// A short cache run whose JSON goes to stdout.
fn quick_json(args: &[&str]) -> Value {
    let out = bw()
        .args([
            "cache",
            "--samples",
            "3",
            "--min-sample-ms",
            "1",
            "--json",
            "-",
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is exactly one JSON document")
}

#[test]
fn json_has_the_documented_fields() {
    let v = quick_json(&[
        "--kernel",
        "seq_read_64_scalar,seq_copy_128_sse2",
        "--sizes",
        "16KiB,2MiB",
    ]);
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["tool"]["name"], "bwscope");
    assert!(v["tool"]["version"].is_string());
    assert!(v["command_line"].is_array());
    assert_eq!(v["options"]["sizes"][0], 16384);
    assert_eq!(v["complete"], true);
    let caches = v["host"]["caches"].as_array().unwrap();
    assert!(!caches.is_empty());
    for c in caches {
        for f in ["level", "type", "size_bytes", "line_bytes", "shared_cpus"] {
            assert!(!c[f].is_null(), "cache field {f} missing");
        }
    }
    assert!(v["host"]["clock_hz"].as_f64().unwrap() > 1e8);
    let recs = v["records"].as_array().unwrap();
    assert_eq!(recs.len(), 4);
    for r in recs {
        for f in [
            "suite",
            "kernel",
            "op",
            "width_bits",
            "nontemporal",
            "pattern",
            "size_bytes",
            "threads",
            "cpus",
            "regime",
            "bytes_read_per_pass",
            "bytes_written_per_pass",
            "samples",
            "gbps",
            "status",
            "warnings",
        ] {
            assert!(r.get(f).is_some(), "record field {f} missing");
        }
        assert_eq!(r["status"], "ok");
        assert!(r["reason"].is_null());
        let g = &r["gbps"];
        for f in ["best", "median", "min", "cv"] {
            assert!(g[f].is_number(), "gbps.{f} must be a number");
        }
        assert!(g["best"].as_f64().unwrap() >= g["median"].as_f64().unwrap());
        assert_eq!(r["samples"].as_array().unwrap().len(), 3);
        let s = &r["samples"][0];
        assert!(s["seconds"].as_f64().unwrap() > 0.0 && s["bytes"].as_u64().unwrap() > 0);
    }
    let copy = recs
        .iter()
        .find(|r| r["kernel"] == "seq_copy_128_sse2")
        .unwrap();
    assert_eq!(copy["bytes_read_per_pass"], copy["bytes_written_per_pass"]);
    assert_eq!(recs[0]["regime"], "L1");
}

#[test]
fn missing_isa_is_a_skipped_record() {
    let out = bw()
        .env("BWSCOPE_DISABLE_ISA", "avx512f")
        .args([
            "cache",
            "--kernel",
            "seq_read_512,seq_read_64_scalar",
            "--sizes",
            "16KiB",
        ])
        .args(["--samples", "2", "--min-sample-ms", "1", "--json", "-"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let recs = v["records"].as_array().unwrap();
    let sk = recs
        .iter()
        .find(|r| r["kernel"] == "seq_read_512_avx512f")
        .unwrap();
    assert_eq!(sk["status"], "skipped");
    assert_eq!(sk["reason"], "needs avx512f");
    assert!(sk["gbps"].is_null());
    let ok = recs
        .iter()
        .find(|r| r["kernel"] == "seq_read_64_scalar" && r["status"] == "ok")
        .expect("the scalar kernel ran");
    // The clock read next to the record, and the bound it was checked by.
    assert!(ok["extra"]["clock_hz"].as_f64().unwrap() > 1e8, "{ok}");
    assert!(ok["extra"].get("ceiling_gbps").is_some(), "{ok}");
    // Hiding a feature hides its ceilings, not which core this is.
    let host = &v["host"];
    assert_eq!(host["features"]["avx512f"], false);
    assert!(host["ceilings"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["width_bits"].as_u64().unwrap() <= 256));
    let plain = bw().args(["info", "--json", "-"]).output().unwrap();
    let plain: Value = serde_json::from_slice(&plain.stdout).unwrap();
    assert_eq!(host["uarch"], plain["uarch"]);
    bw().env("BWSCOPE_DISABLE_ISA", "avx512f")
        .args(["kernels", "seq_read_512"])
        .assert()
        .success()
        .stdout(predicate::str::contains("skipped: needs avx512f"));
}

#[test]
fn csv_to_stdout_is_only_csv() {
    let out = bw()
        .args([
            "cache",
            "--kernel",
            "seq_read_64",
            "--sizes",
            "64KiB",
            "--samples",
            "2",
            "--min-sample-ms",
            "1",
        ])
        .args(["--csv", "-"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    assert!(lines.next().unwrap().starts_with("suite,kernel,op,"));
    assert_eq!(lines.count(), 1, "only CSV on stdout: {text}");
}

fn fails_with(args: &[&str], needle: &str) {
    let out = bw().args(args).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "args {:?}: {}",
        args,
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains(needle),
        "args {:?}: expected '{}' in: {}",
        args,
        needle,
        err
    );
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(!err.contains("panicked"));
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    fails_with(&["cache", "--sizes", "0"], "--sizes");
    fails_with(&["cache", "--sizes", "1e99"], "too large");
    fails_with(&["cache", "--sizes", "abc"], "not a size");
    fails_with(&["cache", "--sizes", "16K"], "ambiguous");
    fails_with(&["cache", "--sizes", "900GiB"], "MemAvailable");
    fails_with(&["cache", "--kernel", "nope"], "unknown kernel 'nope'");
    fails_with(&["cache", "--threads", "0"], "--threads");
    fails_with(&["cache", "--threads", "100000"], "--threads");
    fails_with(&["cache", "--cpus", "99999"], "--cpus");
    fails_with(&["cache", "--samples", "0"], "--samples");
    fails_with(
        &[
            "cache",
            "--sizes",
            "16KiB",
            "--json",
            "/nonexistent/dir/x.json",
        ],
        "cannot write",
    );
}

#[test]
fn sigint_keeps_every_finished_record() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let csv = dir.path().join("run.csv");
    let bin = assert_cmd::cargo::cargo_bin("bwscope");
    let mut child = std::process::Command::new(bin)
        .env("BWSCOPE_HISTORY", common::test_history())
        .args([
            "cache",
            "--kernel",
            "seq_read_64_scalar",
            "--sizes",
            "4KiB..64MiB:x2",
            "--samples",
            "50",
        ])
        .args([
            "--json",
            json.to_str().unwrap(),
            "--csv",
            csv.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for at least two finished records (CSV rows), bounded in time.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let rows = std::fs::read_to_string(&csv)
            .map(|t| t.lines().count())
            .unwrap_or(0);
        if rows >= 3 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no records within 60 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["interrupted"], true);
    assert_eq!(v["complete"], false);
    let n = v["records"].as_array().unwrap().len();
    assert!((2..15).contains(&n), "records kept: {n}");
    let rows = std::fs::read_to_string(&csv).unwrap().lines().count() - 1;
    assert_eq!(rows, n, "CSV and JSON hold the same records");
}

#[test]
fn no_kernel_beats_physics() {
    // A deleted or short-circuited loop reports absurd rates; nothing real
    // exceeds 512 B per core cycle (8 × 64-byte accesses per cycle, twice
    // any x86 core's L1 bandwidth).
    let v = quick_json(&["--sizes", "16KiB,4MiB"]);
    let hz = v["host"]["clock_hz"].as_f64().unwrap();
    let bound = 512.0 * hz / 1e9;
    let mut checked = 0;
    for r in v["records"].as_array().unwrap() {
        if r["status"] != "ok" {
            continue;
        }
        let best = r["gbps"]["best"].as_f64().unwrap();
        assert!(
            best > 0.05 && best < bound,
            "{} at {}: {} GB/s",
            r["kernel"],
            r["size_bytes"],
            best
        );
        checked += 1;
    }
    assert!(checked >= 40, "checked {checked}");
}

#[test]
fn info_and_kernels() {
    let out = bw().args(["info", "--json", "-"]).output().unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["features"]["sse2"].as_bool().unwrap());
    assert!(!v["caches"].as_array().unwrap().is_empty());
    // Which row of the microarchitecture table matched (any CPU: a row or
    // null), always with a reason; the clock probe's two chains.
    assert!(!v["uarch"]["reason"].as_str().unwrap().is_empty());
    let row = &v["uarch"]["row"];
    assert!(row.is_null() || !row["l1"].as_array().unwrap().is_empty());
    for c in v["ceilings"].as_array().unwrap() {
        assert_eq!(c["gbps"].is_null(), row.is_null(), "{c}");
    }
    assert!(v["clock"]["add_hz"].as_f64().unwrap() > 0.0);
    assert!(v["clock"]["imul_hz"].as_f64().unwrap() > 0.0);
    bw().arg("info").assert().success().stdout(
        predicate::str::contains("core clock").and(predicate::str::contains("L1 ceilings")),
    );
    bw().args(["kernels", "seq_write_256"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("seq_write_256_nt_avx2")
                .and(predicate::str::contains("libc_memcpy").not()),
        );
    bw().args(["kernels", "bogus"]).assert().code(2);
}

#[test]
fn streaming_suites_refuse_random_order_kernels() {
    // Regression: threads/memtype ran whatever --kernel named; a random-order
    // kernel without its access order must be refused, not crash.
    fails_with(
        &[
            "threads",
            "--kernel",
            "rand_read_64_scalar",
            "--sizes",
            "1MiB",
        ],
        "--kernel",
    );
    fails_with(&["memtype", "--kernel", "rand_copy_64_scalar"], "--kernel");
}

#[test]
fn writing_to_dev_null_keeps_it_a_device() {
    // Regression: the atomic writer renamed its temp file over the target,
    // which replaced /dev/null with a regular file.
    use std::os::unix::fs::FileTypeExt;
    bw().args([
        "cache",
        "--kernel",
        "seq_read_64_scalar",
        "--sizes",
        "16KiB",
    ])
    .args([
        "--samples",
        "2",
        "--min-sample-ms",
        "1",
        "--json",
        "/dev/null",
        "--csv",
        "/dev/null",
    ])
    .assert()
    .success();
    let m = std::fs::metadata("/dev/null").unwrap();
    assert!(
        m.file_type().is_char_device(),
        "/dev/null is no longer a device"
    );
    assert!(!std::path::Path::new("/dev/null.partial").exists());
}

#[test]
fn json_through_a_symlink_replaces_the_target_not_the_link() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("real.json");
    let link = dir.path().join("link.json");
    std::fs::write(&target, b"old").unwrap();
    std::os::unix::fs::symlink(&target, &link).unwrap();
    bw().args([
        "cache",
        "--kernel",
        "seq_read_64_scalar",
        "--sizes",
        "16KiB",
    ])
    .args([
        "--samples",
        "2",
        "--min-sample-ms",
        "1",
        "--json",
        link.to_str().unwrap(),
    ])
    .assert()
    .success();
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&target).unwrap()).unwrap();
    assert_eq!(v["records"].as_array().unwrap().len(), 1);
}
