//! `bwscope memtype` and `--memory KIND` on the host: kinds verified
//! through smaps, hugetlb for real when pages are reserved, locked memory,
//! first-use records, and bad input (exit 2).

// Unix: signals, /proc, namespaces, guests, device nodes or Unix-only
// tools (the Windows build runs tests/windows.rs instead).
#![cfg(unix)]

mod common;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn bwscope() -> Command {
    let mut c = Command::cargo_bin("bwscope").unwrap();
    c.env("BWSCOPE_HISTORY", common::test_history());
    c
}

fn run_json(args: &[&str]) -> Value {
    let out = bwscope().args(args).args(["--json", "-"]).output().unwrap();
    assert!(
        out.status.success(),
        "bwscope {:?} failed: {}",
        args,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

fn by_kind<'a>(run: &'a Value, kind: &str) -> &'a Value {
    run["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["memory"]["kind"] == kind)
        .unwrap_or_else(|| panic!("no record for kind {kind}"))
}

fn free_hugepages(kb: u64) -> u64 {
    std::fs::read_to_string(format!(
        "/sys/kernel/mm/hugepages/hugepages-{kb}kB/free_hugepages"
    ))
    .ok()
    .and_then(|s| s.trim().parse().ok())
    .unwrap_or(0)
}

fn is_root() -> bool {
    // SAFETY: no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// The fields every measured memtype record carries, with sanity bounds.
fn check_measured(r: &Value, passes: usize) {
    assert_eq!(r["status"], "ok", "{r}");
    assert_eq!(r["suite"], "memtype");
    assert_eq!(r["op"], "copy");
    assert_eq!(r["samples"].as_array().unwrap().len(), passes);
    let e = &r["extra"];
    assert_eq!(e["data_verified"], true);
    let setup = e["setup_seconds"].as_f64().unwrap();
    let first = e["first_pass_seconds"].as_f64().unwrap();
    let total = e["first_total_seconds"].as_f64().unwrap();
    assert!(setup >= 0.0 && first > 0.0);
    assert!(
        (total - (setup + first)).abs() < 1e-9,
        "total = setup + first pass"
    );
    let mean = e["pass_mean_seconds"].as_f64().unwrap();
    let best = e["pass_best_seconds"].as_f64().unwrap();
    assert!(best > 0.0 && best <= mean);
    // A copy of N moves N bytes in and N out: gbps counts 2N, payload N.
    let g = r["gbps"]["best"].as_f64().unwrap();
    let p = r["payload_gbps"]["best"].as_f64().unwrap();
    assert!((g / p - 2.0).abs() < 1e-6);
    assert!(p > 0.01 && p < 1000.0, "payload GB/s {p}");
    let rd = e["read_gbps"]["best"].as_f64().unwrap();
    assert!(rd > 0.01 && rd < 2000.0, "read GB/s {rd}");
    assert!(e["first_total_ms_per_mib"].as_f64().unwrap() > 0.0);
}

#[test]
fn regular_nohuge_locked_verified_by_smaps() {
    let run = run_json(&[
        "memtype",
        "--kinds",
        "nohuge,locked",
        "--size",
        "4MiB",
        "--passes",
        "3",
        "--read-passes",
        "2",
    ]);
    let recs = run["records"].as_array().unwrap();
    // regular is always measured first: it is the baseline.
    assert_eq!(recs[0]["memory"]["kind"], "regular");
    assert_eq!(recs[0]["extra"]["break_even"], "baseline");
    check_measured(&recs[0], 3);
    let nh = by_kind(&run, "nohuge");
    check_measured(nh, 3);
    assert_eq!(nh["memory"]["thp_fraction"].as_f64(), Some(0.0));
    assert_eq!(nh["memory"]["page_bytes"].as_u64(), Some(4096));
    let be = &nh["extra"]["break_even"];
    assert!(be == "passes" || be == "never", "{be}");
    if be == "passes" {
        assert!(nh["extra"]["break_even_passes"].as_u64().unwrap() >= 1);
    } else {
        assert!(nh["extra"]["break_even_passes"].is_null());
    }
    let l = by_kind(&run, "locked");
    if l["status"] == "skipped" {
        // Only without CAP_IPC_LOCK and with a small RLIMIT_MEMLOCK.
        assert!(
            l["reason"].as_str().unwrap().contains("RLIMIT_MEMLOCK"),
            "{l}"
        );
        eprintln!("locked skipped here: {}", l["reason"]);
        return;
    }
    check_measured(l, 3);
    assert!(l["memory"]["locked_fraction"].as_f64().unwrap() >= 0.999);
    assert!(l["extra"]["verified"]
        .as_str()
        .unwrap()
        .starts_with("Locked"));
}

#[test]
fn default_kinds_are_measured_or_skipped_with_the_knob() {
    let run = run_json(&[
        "memtype",
        "--size",
        "4MiB",
        "--passes",
        "2",
        "--read-passes",
        "1",
    ]);
    let recs = run["records"].as_array().unwrap();
    let kinds: Vec<&str> = recs
        .iter()
        .map(|r| r["memory"]["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "regular",
            "thp",
            "nohuge",
            "hugetlb-2M",
            "hugetlb-1G",
            "locked"
        ]
    );
    for (kind, kb, knob) in [
        ("hugetlb-2M", 2048u64, "vm.nr_hugepages"),
        ("hugetlb-1G", 1048576, "hugepages-1048576kB"),
    ] {
        let r = by_kind(&run, kind);
        if r["status"] == "ok" {
            check_measured(r, 2);
            assert_eq!(r["memory"]["page_bytes"].as_u64(), Some(kb * 1024));
        } else {
            assert_eq!(r["status"], "skipped");
            assert!(
                r["reason"].as_str().unwrap().contains(knob),
                "{kind}: {}",
                r["reason"]
            );
        }
    }
    let thp = by_kind(&run, "thp");
    if thp["status"] == "ok" {
        assert!(thp["memory"]["thp_fraction"].as_f64().unwrap() > 0.0);
    }
}

#[test]
fn hugetlb_2m_for_real_when_reserved() {
    if free_hugepages(2048) < 4 {
        eprintln!(
            "skipping: fewer than 4 free 2 MiB huge pages; as root: sysctl -w vm.nr_hugepages=64"
        );
        return;
    }
    let run = run_json(&[
        "memtype",
        "--kinds",
        "hugetlb-2M",
        "--size",
        "4MiB",
        "--passes",
        "2",
        "--read-passes",
        "1",
    ]);
    let r = by_kind(&run, "hugetlb-2M");
    check_measured(r, 2);
    assert_eq!(r["memory"]["page_bytes"].as_u64(), Some(2 << 20));
    // The sweep suite uses the same kinds.
    let run = run_json(&[
        "cache",
        "--memory",
        "hugetlb-2M",
        "--sizes",
        "1MiB",
        "-k",
        "seq_read_64_scalar",
        "--samples",
        "2",
    ]);
    let r = &run["records"][0];
    assert_eq!(r["status"], "ok");
    assert_eq!(r["memory"]["kind"], "hugetlb-2M");
    assert_eq!(r["memory"]["page_bytes"].as_u64(), Some(2 << 20));
}

#[test]
fn cache_locked_memory_is_locked() {
    let run = run_json(&[
        "cache",
        "--memory",
        "locked",
        "--sizes",
        "1MiB",
        "-k",
        "seq_read_64_scalar",
        "--samples",
        "2",
    ]);
    let r = &run["records"][0];
    assert_eq!(r["status"], "ok", "{r}");
    assert_eq!(r["memory"]["kind"], "locked");
    assert!(r["memory"]["locked_fraction"].as_f64().unwrap() >= 0.999);
}

#[test]
fn first_use_is_recorded_apart_from_the_headline() {
    let run = run_json(&[
        "cache",
        "--first-use",
        "--sizes",
        "1MiB,8MiB",
        "-k",
        "seq_read_64_scalar",
        "--samples",
        "2",
        "--memory",
        "regular",
    ]);
    let recs = run["records"].as_array().unwrap();
    let fu: Vec<&Value> = recs.iter().filter(|r| r["op"] == "first-use").collect();
    let headline: Vec<&Value> = recs.iter().filter(|r| r["op"] == "read").collect();
    assert_eq!(fu.len(), 2);
    assert_eq!(headline.len(), 2);
    for r in fu {
        assert_eq!(r["extra"]["case_first_use"], true);
        let maps = r["extra"]["map_seconds"].as_array().unwrap();
        let firsts = r["extra"]["first_pass_seconds"].as_array().unwrap();
        assert_eq!(maps.len(), 3);
        assert!(firsts.iter().all(|v| v.as_f64().unwrap() > 0.0));
        assert!(r["extra"]["first_use_ms_per_mib"].as_f64().unwrap() > 0.0);
        assert_eq!(r["memory"]["kind"], "regular");
    }
    for r in headline {
        assert!(r["extra"].get("case_first_use").is_none());
    }
}

#[test]
fn table_shows_kinds_and_break_even() {
    bwscope()
        .args([
            "memtype",
            "--kinds",
            "nohuge",
            "--size",
            "2MiB",
            "--passes",
            "2",
            "--read-passes",
            "1",
        ])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("regular")
                .and(predicate::str::contains("nohuge"))
                .and(predicate::str::contains("break-even")),
        );
}

fn bad(args: &[&str], needle: &str) {
    bwscope()
        .args(args)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(needle));
}

#[test]
fn bad_input_exits_2() {
    bad(
        &["memtype", "--kinds", "bogus"],
        "--kinds: unknown kind 'bogus'",
    );
    bad(&["memtype", "--kinds", "device-wc"], "needs --device-mem");
    bad(
        &["memtype", "--device-mem", "/proc/self/status"],
        "--allow-device-writes",
    );
    bad(
        &[
            "memtype",
            "--device-mem",
            "/proc/self/status",
            "--allow-device-writes",
        ],
        "--device-mem",
    );
    bad(
        &[
            "memtype",
            "--device-mem",
            "/dev/null",
            "--allow-device-writes",
        ],
        "neither a PCI BAR",
    );
    bad(
        &[
            "memtype",
            "--device-mem",
            "/nonexistent/resource0",
            "--allow-device-writes",
        ],
        "cannot open",
    );
    bad(&["memtype", "--size", "0"], "--size");
    bad(&["memtype", "--size", "16B"], "--size");
    bad(&["memtype", "--size", "900GiB"], "--size");
    bad(&["memtype", "--passes", "0"], "--passes");
    bad(&["memtype", "--cpu", "99999"], "--cpu");
    bad(
        &["memtype", "--kernel", "seq_read_64_scalar"],
        "copy kernel",
    );
    bad(&["cache", "--memory", "nonsense"], "nonsense");
    if free_hugepages(1048576) == 0 {
        bad(
            &["cache", "--memory", "hugetlb-1G", "--sizes", "64MiB"],
            "hugepages-1048576kB/nr_hugepages",
        );
        bad(&["memtype", "--kinds", "hugetlb-1G"], "--kinds");
    }
    if free_hugepages(2048) < 1024 {
        bad(
            &["cache", "--memory", "hugetlb-2M", "--sizes", "2GiB"],
            "sysctl -w vm.nr_hugepages=",
        );
    }
}

#[test]
fn mlock_over_the_limit_says_by_how_much() {
    if !is_root()
        || std::process::Command::new("setpriv")
            .arg("--version")
            .output()
            .is_err()
    {
        eprintln!("skipping: needs root and setpriv to drop CAP_IPC_LOCK");
        return;
    }
    let bin = assert_cmd::cargo::cargo_bin("bwscope");
    let script = format!(
        "ulimit -l 1024; exec setpriv --inh-caps=-ipc_lock --bounding-set=-ipc_lock {} memtype --kinds locked --size 8MiB",
        bin.display()
    );
    let out = std::process::Command::new("sh")
        .env("BWSCOPE_HISTORY", common::test_history())
        .args(["-c", &script])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("RLIMIT_MEMLOCK")
            && err.contains("short by 7 MiB")
            && err.contains("ulimit -l 8192"),
        "{err}"
    );
    // In the default set, the same kind is a skipped record, not an error.
    let script = format!(
        "ulimit -l 1024; exec setpriv --inh-caps=-ipc_lock --bounding-set=-ipc_lock {} memtype --size 2MiB --passes 1 --read-passes 1 --json -",
        bin.display()
    );
    let out = std::process::Command::new("sh")
        .env("BWSCOPE_HISTORY", common::test_history())
        .args(["-c", &script])
        .output()
        .unwrap();
    assert!(out.status.success());
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    let l = by_kind(&run, "locked");
    assert_eq!(l["status"], "skipped");
    assert!(
        l["reason"].as_str().unwrap().contains("short by 1 MiB"),
        "{}",
        l["reason"]
    );
}
