//! `bwscope watch` end to end: samples on a schedule, the metrics files
//! rewritten whole after each (the Prometheus text format, and OpenMetrics
//! read by the reference parser; node_exporter and promtool read them in
//! tests/metrics_clients.rs), a clean end
//! on SIGTERM, one watch per file, and memory that stays flat over a
//! thousand samples. Small sets and short samples keep each sample to
//! milliseconds; what a sample measures is the suites' own business,
//! tested with them.

#![cfg(unix)]

mod common;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Quick samples: a 1 MiB set, two samples of 1 ms per figure.
const QUICK: [&str; 6] = ["--size", "1MiB", "--samples", "2", "--min-sample-ms", "1"];

/// The states docs/watch.md lists, one gauge each.
const WATCH_STATES: [&str; 5] = ["ok", "core_shared", "memory_contended", "noisy", "stepped"];

fn bin() -> std::path::PathBuf {
    assert_cmd::cargo::cargo_bin("bwscope")
}

fn spawn(args: &[&str]) -> Child {
    Command::new(bin())
        .env("BWSCOPE_HISTORY", common::test_history())
        .arg("watch")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start bwscope watch")
}

/// `bwscope_watch_samples_total` in the file, once it is there.
fn samples_in(path: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines()
        .find(|l| l.starts_with("bwscope_watch_samples_total"))?
        .rsplit(' ')
        .next()?
        .parse()
        .ok()
}

/// Wait until the file says at least `n` samples, at most `limit`.
fn wait_for(path: &Path, n: u64, limit: Duration) -> u64 {
    let t = Instant::now();
    loop {
        if let Some(k) = samples_in(path).filter(|&k| k >= n) {
            return k;
        }
        assert!(t.elapsed() < limit, "no {n} samples in {limit:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn kill(child: &Child, signal: &str) {
    let ok = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
}

fn wait_exit(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let t = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if t.elapsed() > limit {
            let _ = child.kill();
            panic!("bwscope watch did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The reference OpenMetrics parser (python3-prometheus-client, which
/// `.ci/run` installs): the families it reads, or None where it is
/// missing.
fn parse_openmetrics(text: &str) -> Option<String> {
    // Debian's Python, where python3-prometheus-client installs it.
    let out = Command::new("/usr/bin/python3")
        .args([
            "-c",
            "import sys\nfrom prometheus_client.openmetrics.parser import text_string_to_metric_families as p\nfor f in p(sys.stdin.read()):\n  for s in f.samples: print(s.name, dict(s.labels).get('state', ''), s.value)",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(text.as_bytes())?;
            c.wait_with_output()
        })
        .ok()?;
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("ModuleNotFoundError") {
        return None;
    }
    assert!(
        out.status.success(),
        "the parser refused the file: {err}\n{text}"
    );
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn samples_land_in_both_grammars_and_the_reference_parser_reads_openmetrics() {
    let dir = tempfile::tempdir().unwrap();
    let prom = dir.path().join("bwscope.prom");
    let om = dir.path().join("bwscope.om");
    let (prom_s, om_s) = (prom.to_str().unwrap(), om.to_str().unwrap());
    let mut args = vec!["--every", "10ms", "--count", "3", "--prometheus", prom_s];
    args.extend(["--openmetrics", om_s]);
    args.extend(QUICK);
    let out = common::bwscope().arg("watch").args(&args).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // One line per sample, each with its state.
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert!(lines
        .iter()
        .all(|l| l.contains("DRAM read") && l.contains("latency")));
    let text = std::fs::read_to_string(&prom).unwrap();
    assert!(!text.contains("# EOF"), "{text}");
    assert!(
        text.contains("# TYPE bwscope_watch_samples_total counter\n"),
        "{text}"
    );
    assert_eq!(samples_in(&prom), Some(3));
    // Exactly one state is 1.
    let states: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("bwscope_watch_state{"))
        .collect();
    assert_eq!(states.len(), WATCH_STATES.len(), "{text}");
    for s in WATCH_STATES {
        assert!(
            states.iter().any(|l| l.contains(&format!("state=\"{s}\""))),
            "{s}: {text}"
        );
    }
    assert_eq!(
        states.iter().filter(|l| l.ends_with(" 1")).count(),
        1,
        "{text}"
    );
    // The last sample's figures in the families every run's land in, in
    // base units: a DRAM read of a few to a few hundred GB/s, a latency
    // of tens to hundreds of ns.
    for (name, lo, hi) in [
        ("bwscope_bandwidth_bytes_per_second{", 1e8, 1e13),
        ("bwscope_latency_seconds{", 1e-10, 1e-5),
    ] {
        let line = text
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("{name} missing: {text}"));
        assert!(
            line.contains("command=\"watch\"") && line.contains("level=\"dram\""),
            "{line}"
        );
        let v: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
        assert!(v > lo && v < hi, "{name} {v}");
    }
    let text = std::fs::read_to_string(&om).unwrap();
    assert!(text.ends_with("# EOF\n"), "{text}");
    assert!(
        text.contains("# TYPE bwscope_watch_samples counter\n"),
        "{text}"
    );
    assert_eq!(samples_in(&om), Some(3));
    match parse_openmetrics(&text) {
        Some(parsed) => {
            assert!(parsed.contains("bwscope_watch_samples_total"), "{parsed}");
            assert!(parsed.contains("bwscope_watch_state ok"), "{parsed}");
        }
        None => eprintln!("SKIP the reference parser: python3-prometheus-client is not installed"),
    }
}

#[test]
fn sigterm_ends_a_watch_cleanly_with_its_file_whole() {
    let dir = tempfile::tempdir().unwrap();
    let om = dir.path().join("w.prom");
    let mut args = vec!["--every", "50ms", "--prometheus", om.to_str().unwrap()];
    args.extend(QUICK);
    let mut child = spawn(&args);
    wait_for(&om, 2, Duration::from_secs(120));
    kill(&child, "-TERM");
    let status = wait_exit(&mut child, Duration::from_secs(30));
    assert_eq!(status.code(), Some(143), "{status:?}");
    // Whole: the counter, the last family, is its last line.
    let text = std::fs::read_to_string(&om).unwrap();
    let last = text.lines().last().unwrap_or_default();
    assert!(last.starts_with("bwscope_watch_samples_total{"), "{text}");
    // The lock beside it is gone with the watch.
    assert!(!dir.path().join(".w.prom.bwscope-watch").exists());
}

#[test]
fn a_second_watch_into_one_file_is_refused_naming_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let om = dir.path().join("w.prom");
    let mut args = vec!["--every", "1s", "--prometheus", om.to_str().unwrap()];
    args.extend(QUICK);
    let mut first = spawn(&args);
    wait_for(&om, 1, Duration::from_secs(120));
    let mut second_args = args.clone();
    second_args.extend(["--count", "1"]);
    let out = common::bwscope()
        .arg("watch")
        .args(&second_args)
        .output()
        .unwrap();
    kill(&first, "-TERM");
    let _ = wait_exit(&mut first, Duration::from_secs(30));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("pid {}", first.id())),
        "the holder is not named: {err}"
    );
}

/// Resident memory of `pid`, KiB.
fn rss_kib(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    s.lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap()
}

#[test]
fn a_thousand_samples_keep_memory_and_the_file_flat() {
    if !Path::new("/proc/self/status").exists() {
        eprintln!("SKIP: no /proc to read resident memory from");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let om = dir.path().join("w.prom");
    let args = [
        "--every",
        "10ms",
        "--count",
        "1000",
        "--prometheus",
        om.to_str().unwrap(),
        "--size",
        "64KiB",
        "--samples",
        "1",
        "--min-sample-ms",
        "0.05",
    ];
    let mut child = spawn(&args);
    let limit = Duration::from_secs(600);
    wait_for(&om, 100, limit);
    let (rss_100, size_100) = (rss_kib(child.id()), std::fs::metadata(&om).unwrap().len());
    wait_for(&om, 950, limit);
    let (rss_950, size_950) = (rss_kib(child.id()), std::fs::metadata(&om).unwrap().len());
    let status = wait_exit(&mut child, limit);
    assert!(status.success(), "{status:?}");
    assert_eq!(samples_in(&om), Some(1000));
    // Flat: what 850 more samples added is noise of the allocator, not
    // a sample's worth each (a sample's records are a few KiB).
    assert!(
        rss_950 < rss_100 + 8 * 1024,
        "resident memory grew from {rss_100} KiB to {rss_950} KiB"
    );
    assert!(
        size_950.abs_diff(size_100) < 256,
        "{size_100} -> {size_950} bytes"
    );
}

#[test]
fn bad_watch_input_is_refused_with_the_flag() {
    for (args, flag) in [
        (vec!["--every", "0s"], "--every"),
        (vec!["--every", "5x"], "--every"),
        (vec!["--count", "0"], "--count"),
        (vec!["--samples", "0"], "--samples"),
        (vec!["--size", "1KiB"], "--size"),
    ] {
        let out = common::bwscope().arg("watch").args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(flag), "{args:?}: {err}");
    }
}

/// `--retain N` keeps this machine's newest N watch samples in the store
/// and forgets older ones; `history --suite watch` lists what is kept.
#[test]
fn the_store_keeps_the_newest_retained_samples() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("h.sqlite3");
    let store = store.to_str().unwrap();
    let watch = |count: &str, retain: &str| {
        let out = common::bwscope()
            .args([
                "watch", "--every", "10ms", "--count", count, "--retain", retain,
            ])
            .args(QUICK)
            .args(["--history", store])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let listed = || {
        let out = common::bwscope()
            .args(["history", "--suite", "watch", "--history", store])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        text.lines().filter(|l| l.contains(" watch ")).count()
    };
    watch("5", "100");
    assert_eq!(listed(), 5);
    watch("2", "3");
    assert_eq!(listed(), 3);
    let out = common::bwscope()
        .args(["watch", "--retain", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--retain"));
}
