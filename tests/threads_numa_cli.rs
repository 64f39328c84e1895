//! `bwscope threads` and `bwscope numa` on this machine (whatever its node
//! count): records, placement checks and bad input. Speeds are never
//! asserted, only sanity and structure.

mod common;

use assert_cmd::Command;
use predicates::str::contains;
use serde_json::Value;

const QUICK: [&str; 4] = ["--samples", "2", "--min-sample-ms", "1"];

fn bw() -> Command {
    let mut c = Command::cargo_bin("bwscope").unwrap();
    c.env("BWSCOPE_HISTORY", common::test_history());
    c
}

fn run_json(args: &[&str]) -> Value {
    let out = bw()
        .args(args)
        .args(QUICK)
        .args(["--json", "-"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{:?}: {}",
        args,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

fn allowed_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[test]
fn threads_curve_records_scaling_and_placement() {
    let run = run_json(&[
        "threads",
        "--sizes",
        "8MiB",
        "--kernel",
        "seq_read_64_scalar,seq_copy_64_scalar",
        "--threads",
        "1",
    ]);
    let recs = run["records"].as_array().unwrap();
    assert_eq!(recs.len(), 2);
    for r in recs {
        assert_eq!(r["suite"], "threads");
        assert_eq!(r["status"], "ok");
        assert_eq!(r["extra"]["total_bytes"], 8 << 20);
        assert_eq!(r["size_bytes"], 8 << 20);
        assert_eq!(r["extra"]["scaling_efficiency"], 1.0);
        let cpus = r["cpus"].clone();
        assert_eq!(r["extra"]["observed_cpus"], cpus, "thread not on its cpu");
        assert!(r["gbps"]["best"].as_f64().unwrap() > 0.0);
    }
}

#[test]
fn threads_two_threads_split_the_total_and_report_skew() {
    if allowed_cpus() < 2 {
        eprintln!("skipped: needs 2 cpus");
        return;
    }
    for shared in [false, true] {
        let mut args = vec![
            "threads",
            "--sizes",
            "16MiB",
            "--kernel",
            "seq_write_64_scalar",
            "--counts",
            "2",
            "--threads",
            "2",
        ];
        if shared {
            args.push("--shared");
        }
        let run = run_json(&args);
        let r = &run["records"][0];
        assert_eq!(r["threads"], 2);
        assert_eq!(r["size_bytes"], 8 << 20, "16 MiB total over 2 threads");
        assert_eq!(r["extra"]["case_shared"], shared);
        assert_eq!(r["per_thread_gbps"].as_array().unwrap().len(), 2);
        let skew = r["placement"]["start_skew_seconds"].as_f64().unwrap();
        assert!(skew >= 0.0);
        assert!(r["extra"]["start_skew_fraction"].as_f64().unwrap() >= 0.0);
        assert_eq!(r["extra"]["observed_cpus"], r["cpus"]);
    }
}

#[test]
fn threads_as_processes() {
    let n = allowed_cpus().min(2).to_string();
    let run = run_json(&[
        "threads",
        "--processes",
        "--threads",
        &n,
        "--sizes",
        "8MiB",
        "--kernel",
        "seq_read_64_scalar,seq_write_64_scalar",
    ]);
    let recs = run["records"].as_array().unwrap();
    assert!(!recs.is_empty());
    for r in recs {
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["extra"]["case_processes"], true);
        assert_eq!(
            r["extra"]["observed_cpus"], r["cpus"],
            "worker processes not on their cpus"
        );
        assert!(r["gbps"]["best"].as_f64().unwrap() > 0.0);
        assert!(r["memory"]["kind"] == "thp");
    }
    bw().args(["threads", "--processes", "--shared"])
        .assert()
        .code(2);
}

#[test]
fn threads_table_shows_efficiency() {
    bw().args([
        "threads",
        "--sizes",
        "4MiB",
        "--kernel",
        "seq_read_64_scalar",
        "--threads",
        "1",
    ])
    .args(QUICK)
    .assert()
    .success()
    .stdout(contains("efficiency"))
    .stdout(contains("seq_read_64_scalar"));
}

#[test]
fn threads_bad_input_exits_2() {
    bw().args(["threads", "--threads", "4096"])
        .assert()
        .code(2)
        .stderr(contains("--threads").and(contains("--oversubscribe")));
    bw().args(["threads", "--cpus", "4000"])
        .assert()
        .code(2)
        .stderr(contains("--cpus"));
    bw().args(["threads", "--threads", "1", "--counts", "2"])
        .assert()
        .code(2)
        .stderr(contains("--counts"));
    bw().args(["threads", "--sizes", "1KiB"])
        .assert()
        .code(2)
        .stderr(contains("--sizes"));
}

#[test]
fn threads_oversubscribe_allows_more_threads_than_cpus() {
    let n = allowed_cpus() + 1;
    let n_s = n.to_string();
    let run = run_json(&[
        "threads",
        "--threads",
        &n_s,
        "--counts",
        &n_s,
        "--oversubscribe",
        "--sizes",
        "8MiB",
        "--kernel",
        "seq_read_64_scalar",
    ]);
    assert_eq!(run["records"][0]["threads"], n);
}

use predicates::prelude::*;

#[test]
fn numa_matrix_verifies_placement() {
    let run = run_json(&["numa", "--size", "4MiB", "--threads", "1"]);
    let nodes = run["host"]["nodes"].as_array().unwrap().len();
    let bw: Vec<&Value> = run["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["kernel"] == "mix_read")
        .collect();
    let lat: Vec<&Value> = run["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["kernel"] == "chase_64_scalar")
        .collect();
    assert_eq!(bw.len(), nodes * nodes, "an N×N matrix");
    assert_eq!(lat.len(), nodes * nodes);
    for r in bw.iter().chain(lat.iter()) {
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["placement"]["verified_fraction"], 1.0, "{r}");
        assert!(r["placement"]["memory_node"].is_u64());
    }
    let l = lat[0]["extra"]["latency_ns"]["best"].as_f64().unwrap();
    assert!(l > 0.1 && l < 100_000.0, "latency {l} ns");
}

#[test]
fn numa_one_node_prints_a_note_not_an_error() {
    let run = run_json(&["numa", "--size", "4MiB", "--threads", "1", "--no-latency"]);
    if run["host"]["nodes"].as_array().unwrap().len() != 1 {
        eprintln!("skipped: this machine has more than one node");
        return;
    }
    bw().args(["numa", "--size", "4MiB", "--threads", "1", "--no-latency"])
        .args(QUICK)
        .assert()
        .success()
        .stdout(contains("one NUMA node").and(contains("latency matrix not measured")));
}

#[test]
fn numa_mixes_and_roles() {
    let run = run_json(&[
        "numa",
        "--size",
        "4MiB",
        "--threads",
        "1",
        "--no-latency",
        "--mix",
        "read,3:1,1:1nt,write",
    ]);
    let recs = run["records"].as_array().unwrap();
    let names: Vec<&str> = recs.iter().map(|r| r["kernel"].as_str().unwrap()).collect();
    assert_eq!(names, vec!["mix_read", "mix_3:1", "mix_1:1nt", "mix_write"]);
    let r31 = &recs[1];
    let (rd, wr) = (
        r31["bytes_read_per_pass"].as_u64().unwrap(),
        r31["bytes_written_per_pass"].as_u64().unwrap(),
    );
    assert_eq!(rd, 3 * wr, "3:1 reads three bytes per byte written");
    assert_eq!(recs[2]["nontemporal"], true);
    if allowed_cpus() >= 2 {
        let run = run_json(&[
            "numa",
            "--size",
            "4MiB",
            "--threads",
            "2",
            "--no-latency",
            "--roles",
            "read,ntwrite",
        ]);
        let r = &run["records"][0];
        assert_eq!(r["kernel"], "roles_read+ntwrite");
        assert_eq!(r["per_thread_gbps"].as_array().unwrap().len(), 2);
    }
}

#[test]
fn numa_write_pair_runs_locally_and_skips_remote_on_one_node() {
    if allowed_cpus() < 2 {
        eprintln!("skipped: needs 2 cpus");
        return;
    }
    let run = run_json(&["numa", "--scenario", "write-pair", "--size", "4MiB"]);
    let recs = run["records"].as_array().unwrap();
    let local: Vec<&Value> = recs
        .iter()
        .filter(|r| r["extra"]["case_memory_nodes"] == "0/0")
        .collect();
    assert_eq!(local.len(), 2, "write and read pairs, local/local");
    for r in local {
        assert_eq!(r["status"], "ok");
        assert!(r["extra"]["total_seconds"]["best"].as_f64().unwrap() > 0.0);
        assert_eq!(r["placement"]["verified_fraction"], 1.0);
    }
    if run["host"]["nodes"].as_array().unwrap().len() == 1 {
        assert!(recs.iter().any(|r| r["status"] == "skipped"
            && r["reason"].as_str().unwrap().contains("second NUMA node")));
    }
}

#[test]
fn numa_loaded_latency_curve() {
    if allowed_cpus() < 2 {
        eprintln!("skipped: needs 2 cpus (one load, one probe)");
        return;
    }
    let run = run_json(&[
        "numa", "--load", "1@0", "--delays", "0,5000", "--size", "4MiB",
    ]);
    let recs = run["records"].as_array().unwrap();
    assert_eq!(recs.len(), 3, "unloaded + 2 delays");
    assert!(recs[0]["extra"]["injected_gbps"].is_null());
    assert_eq!(recs[1]["extra"]["case_delay_ns"], 0);
    let full = recs[1]["extra"]["injected_gbps"].as_f64().unwrap();
    let slow = recs[2]["extra"]["injected_gbps"].as_f64().unwrap();
    assert!(full > 0.0 && slow > 0.0);
    // 4 KiB per ≥ 5 µs caps one thread at 0.82 GB/s, whatever the machine.
    assert!(slow < 0.82, "delay must throttle the load: {slow} GB/s");
    for r in recs {
        assert!(r["extra"]["latency_ns"]["best"].as_f64().unwrap() > 0.0);
        assert!(r["placement"]["load"].is_string());
    }
    let run = run_json(&[
        "numa",
        "--load",
        "1@0",
        "--delays",
        "0",
        "--size",
        "4MiB",
        "--probe",
        "bandwidth",
    ]);
    assert!(run["records"][1]["gbps"]["best"].as_f64().unwrap() > 0.0);
}

#[test]
fn numa_bad_input_exits_2() {
    for (args, flag) in [
        (vec!["numa", "--memory-nodes", "9"], "--memory-nodes"),
        (vec!["numa", "--cpu-nodes", "x"], "--cpu-nodes"),
        (vec!["numa", "--mix", "5"], "--mix"),
        (vec!["numa", "--threads", "4096"], "--threads"),
        (vec!["numa", "--cpus", "4000"], "--cpus"),
        (vec!["numa", "--load", "4096@0"], "--load"),
        (vec!["numa", "--load", "1@9"], "--load"),
        (vec!["numa", "--load", "1@0", "--delays", "x"], "--delays"),
        (vec!["numa", "--size", "1KiB"], "--size"),
        (
            vec![
                "numa",
                "--roles",
                "read,write,read,write,read,write,read,write,read",
                "-t",
                "1",
            ],
            "--roles",
        ),
    ] {
        bw().args(&args).assert().code(2).stderr(contains(flag));
    }
}
