//! `bwscope latency`, `bwscope regs` and `bwscope cache --pattern` end to
//! end: real runs with short samples, their JSON, and the bad-input exits.

// Unix: signals, /proc, namespaces, guests, device nodes or Unix-only
// tools (the Windows build runs tests/windows.rs instead).
#![cfg(unix)]

mod common;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

/// A sample's bytes are `per_rep` × the calibrated `reps` or, where a
/// worker was descheduled in the sample before it, a retake's half,
/// quarter or eighth of them (`measure::Sampler`; on a busy machine).
fn retake_share(bytes: u64, per_rep: u64, reps: u64) -> bool {
    [reps, reps / 2, reps / 4, (reps / 8).max(1)]
        .iter()
        .any(|r| bytes == per_rep * r)
}

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
    serde_json::from_slice(&out.stdout).expect("stdout is the JSON run")
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn latency_records_are_positive_finite_and_cycles_match_the_clock() {
    let run = run_json(&[
        "latency",
        "--sizes",
        "8KiB,512KiB",
        "--samples",
        "3",
        "--min-sample-ms",
        "2",
    ]);
    assert_eq!(run["command"], "latency");
    let clock = run["host"]["clock_hz"].as_f64();
    let recs = run["records"].as_array().unwrap();
    // Two sizes × (random, window 4 KiB).
    assert_eq!(recs.len(), 4, "{recs:#?}");
    for r in recs {
        assert_eq!(r["suite"], "latency");
        assert_eq!(r["status"], "ok", "{r:#?}");
        assert_eq!(r["op"], "latency");
        assert_eq!(r["pattern"], "chase");
        assert!(r["gbps"].is_null(), "a latency record has no bandwidth");
        let e = &r["extra"];
        let lat = &e["latency_ns"];
        for key in ["best", "median", "min", "max", "mean"] {
            let v = f(&lat[key]);
            assert!(v.is_finite() && v > 0.0, "latency_ns.{key} = {v}");
            // Sanity bound, not a speed assertion: no load takes 0.05 ns or 100 µs.
            assert!(v > 0.05 && v < 100_000.0, "latency_ns.{key} = {v}");
        }
        assert_eq!(lat["n"], 3);
        assert!(f(&lat["best"]) <= f(&lat["median"]));
        let hops = e["hops_per_sample"].as_u64().unwrap();
        assert!(hops >= 16 && hops % 16 == 0);
        assert_eq!(r["samples"].as_array().unwrap().len(), 3);
        for s in r["samples"].as_array().unwrap() {
            // The calibrated work, or a retake's share of it.
            let bytes = s["bytes"].as_u64().unwrap();
            let reps = r["reps_per_sample"].as_u64().unwrap();
            assert!(
                retake_share(bytes, hops * 8 / reps, reps),
                "{bytes} of {}",
                hops * 8
            );
            // ns per load is derivable from the raw sample.
            let ns = f(&s["seconds"]) * 1e9 / (bytes / 8) as f64;
            assert!(ns >= f(&lat["min"]) * (1.0 - 1e-9) && ns <= f(&lat["max"]) * (1.0 + 1e-9));
        }
        if let Some(hz) = clock {
            assert_eq!(f(&e["clock_hz"]), hz);
            let cyc = &e["cycles_per_load"];
            for key in ["best", "median", "min", "max"] {
                let want = f(&lat[key]) * hz / 1e9;
                let got = f(&cyc[key]);
                assert!(
                    (got - want).abs() <= want * 1e-9,
                    "cycles.{key} {got} vs ns×clock {want}"
                );
            }
        }
        assert_eq!(e["node_bytes"], 64);
        assert_eq!(f(&e["chain_nodes"]) * 64.0, f(&r["size_bytes"]));
        assert!(
            e["page_bytes"].as_u64().unwrap() >= 4096,
            "page size obtained is reported"
        );
        assert_eq!(e["case_pages"], "thp");
        assert!(["random", "window"].contains(&e["case_view"].as_str().unwrap()));
    }
}

#[test]
fn latency_stride_view_and_small_pages() {
    let run = run_json(&[
        "latency",
        "--sizes",
        "64KiB",
        "--stride",
        "256",
        "--pages",
        "4k",
        "--samples",
        "2",
        "--min-sample-ms",
        "1",
    ]);
    let recs = run["records"].as_array().unwrap();
    assert_eq!(recs.len(), 1);
    let r = &recs[0];
    assert_eq!(r["pattern"], "strided");
    assert_eq!(r["extra"]["case_view"], "stride");
    assert_eq!(r["extra"]["case_stride_bytes"], 256);
    assert_eq!(r["extra"]["chain_nodes"], 256);
    assert_eq!(r["extra"]["page_bytes"], 4096);
    assert_eq!(r["memory"]["kind"], "nohuge");
}

#[test]
fn latency_table_names_views_and_pages() {
    bwscope()
        .args([
            "latency",
            "--sizes",
            "16KiB",
            "--samples",
            "2",
            "--min-sample-ms",
            "1",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("random ns"))
        .stdout(predicate::str::contains("window 4 KiB ns"))
        .stdout(predicate::str::contains("pages: thp"));
}

#[test]
fn latency_bad_input_exits_2_naming_the_flag() {
    let cases: &[(&[&str], &str)] = &[
        (&["--stride", "0"], "--stride"),
        (&["--stride", "12"], "multiple of 8"),
        (&["--sizes", "32B"], "smaller than one cache line"),
        (&["--view", "zigzag"], "--view"),
        (&["--window", "100"], "--window"),
        (&["--cpu", "9999"], "--cpu"),
    ];
    for (args, needle) in cases {
        bwscope()
            .arg("latency")
            .args(*args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(*needle));
    }
}

#[test]
fn latency_hugetlb_without_reserved_pages_names_the_sysctl() {
    let reserved = std::fs::read_to_string("/proc/sys/vm/nr_hugepages")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok());
    if reserved != Some(0) {
        eprintln!("skipping: vm.nr_hugepages is {reserved:?}, not 0");
        return;
    }
    bwscope()
        .args(["latency", "--pages", "hugetlb", "--sizes", "1MiB"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--pages"))
        .stderr(predicate::str::contains("vm.nr_hugepages"));
}

#[test]
fn regs_records_have_no_working_set_and_correct_checksums() {
    let run = run_json(&["regs", "--samples", "2", "--min-sample-ms", "1"]);
    let recs = run["records"].as_array().unwrap();
    assert!(recs.len() >= 16);
    let p: u64 = 0x5a5a_1234_9876_a5a5;
    for r in recs {
        assert_eq!(r["suite"], "regs");
        assert!(r["kernel"].as_str().unwrap().starts_with("reg_"));
        if r["status"] == "skipped" {
            continue;
        }
        assert!(r["size_bytes"].is_null());
        assert!(r["regime"].is_null());
        let g = f(&r["gbps"]["best"]);
        assert!(g.is_finite() && g > 0.0);
        assert_eq!(
            r["extra"]["checksum"].as_u64().unwrap(),
            p.wrapping_mul(4).wrapping_add(6),
            "{}",
            r["kernel"]
        );
        let per = r["extra"]["bytes_per_instruction"].as_u64().unwrap();
        let n = r["extra"]["instructions_per_iteration"].as_u64().unwrap();
        assert_eq!(per * n, r["payload_bytes_per_pass"].as_u64().unwrap());
        let reps = r["reps_per_sample"].as_u64().unwrap();
        for s in r["samples"].as_array().unwrap() {
            let bytes = s["bytes"].as_u64().unwrap();
            assert!(
                retake_share(bytes, per * n, reps),
                "{bytes} of {}",
                per * n * reps
            );
        }
    }
}

#[test]
fn regs_refuses_memory_kernels() {
    bwscope()
        .args(["regs", "--kernel", "seq_read"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--kernel"));
}

#[test]
fn cache_pattern_puts_random_beside_sequential() {
    let run = run_json(&[
        "cache",
        "--kernel",
        "seq_read_64_scalar,seq_write_64_scalar",
        "--pattern",
        "seq,random",
        "--sizes",
        "16KiB",
        "--samples",
        "2",
        "--min-sample-ms",
        "1",
    ]);
    let names: Vec<&str> = run["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["kernel"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "seq_read_64_scalar",
            "rand_read_64_scalar",
            "seq_write_64_scalar",
            "rand_write_64_scalar"
        ]
    );
    for r in run["records"].as_array().unwrap() {
        assert_eq!(r["status"], "ok");
        let want = if r["kernel"].as_str().unwrap().starts_with("rand_") {
            "random"
        } else {
            "seq"
        };
        assert_eq!(r["pattern"], want);
        assert_eq!(r["size_bytes"], 16384);
        assert!(f(&r["gbps"]["best"]) > 0.0);
    }
    bwscope()
        .args([
            "cache",
            "--kernel",
            "seq_read_64_scalar",
            "--pattern",
            "seq,random",
            "--sizes",
            "16KiB",
        ])
        .args(["--samples", "2", "--min-sample-ms", "1"])
        .assert()
        .success()
        .stdout(predicate::str::contains("rand_64_scalar"));
}

#[test]
fn cache_random_runs_on_every_thread_with_its_own_order() {
    let cpus = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(2);
    let run = run_json(&[
        "cache",
        "--kernel",
        "rand_copy_256_avx2,rand_read_64_scalar",
        "--threads",
        &cpus.to_string(),
        "--sizes",
        "64KiB",
        "--samples",
        "2",
        "--min-sample-ms",
        "1",
    ]);
    for r in run["records"].as_array().unwrap() {
        assert!(r["status"] == "ok" || r["status"] == "skipped", "{r:#?}");
        // A kernel this CPU lacks (AVX2 hidden, or a core without it) is
        // one skipped record of no thread (issue 39).
        if r["status"] == "ok" {
            assert_eq!(r["threads"], cpus, "{r:#?}");
        }
    }
    assert!(run["records"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["status"] == "ok" && r["kernel"] == "rand_read_64_scalar"));
}

#[test]
fn cache_bad_pattern_and_non_sweep_kernels_exit_2() {
    bwscope()
        .args(["cache", "--pattern", "zigzag"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--pattern"));
    bwscope()
        .args(["cache", "--kernel", "reg_mov", "--sizes", "16KiB"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("bwscope regs"));
}

#[test]
fn kernels_lists_every_new_family() {
    let out = bwscope()
        .args(["kernels", "rand_,lods,rep_lods,chase,reg_"])
        .output()
        .unwrap();
    let s = String::from_utf8_lossy(&out.stdout);
    for n in [
        "rand_read_512_avx512f",
        "rand_copy_32_scalar",
        "lodsq",
        "rep_lodsb",
        "chase_latency_64_scalar",
        "reg_pinsrq_64_sse41",
    ] {
        assert!(s.contains(n), "{n} missing from `bwscope kernels`");
    }
}

#[test]
fn cache_random_at_odd_sizes_skips_or_runs_never_crashes() {
    let run = run_json(&[
        "cache",
        "--kernel",
        "seq_copy_64_scalar,seq_read_512_avx512f",
        "--pattern",
        "random",
        "--sizes",
        "320B,1KiB,1600B,3000B",
        "--samples",
        "1",
        "--min-sample-ms",
        "1",
    ]);
    let recs = run["records"].as_array().unwrap();
    // A kernel this CPU runs gives a record per size (ok, or skipped where
    // the size holds too little); one it lacks (AVX-512 on Zen 3 and most
    // client cores), one skipped record (issue 39).
    let kernels = run_json(&["kernels", "seq_"]);
    let runs_here = |name: &str| {
        kernels
            .as_array()
            .unwrap()
            .iter()
            .any(|k| k["name"] == name && k["runs_here"] == true)
    };
    let expected: usize = ["seq_copy_64_scalar", "seq_read_512_avx512f"]
        .iter()
        .map(|k| if runs_here(k) { 4 } else { 1 })
        .sum();
    assert_eq!(recs.len(), expected, "{recs:#?}");
    for r in recs {
        assert!(r["status"] == "ok" || r["status"] == "skipped", "{r:#?}");
        if r["status"] == "ok" {
            // Whole lines, four per iteration, per stream.
            let per_stream = r["payload_bytes_per_pass"].as_u64().unwrap();
            assert_eq!(per_stream % 256, 0, "{r:#?}");
        }
    }
}
