//! The metrics files against the programs that read them (docs/metrics.md):
//! one folder holding every kind of file bwscope writes for node_exporter —
//! a measuring command's, a survey's, `watch`'s while it runs, a fleet's,
//! `report`'s — read by Debian's `prometheus-node-exporter` (only its
//! textfile collector, on a loopback port), each file by `promtool check
//! metrics`, the OpenMetrics twins by the reference parser, and the
//! families queried in PromQL from a Prometheus server scraping that
//! node_exporter. Each program that is missing is skipped with one line
//! (`.ci/run` installs them all: `prometheus-node-exporter`, `prometheus`,
//! `python3-prometheus-client`).
//!
//! Cost: one survey (15–30 s on 2 quiet cores), a two-rank fleet of the
//! cache suite (a few seconds), a watch and a quick cache run (about a
//! second each), node_exporter and Prometheus for a few seconds: 122 s
//! on a 2-vCPU guest at load 7 beside other builds.

#![cfg(target_os = "linux")]

mod common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::bwscope;

/// A program of the system, or None with the line that says it is skipped.
fn program(name: &str, package: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(name))
            .find(|f| f.is_file())
    });
    if found.is_none() {
        eprintln!("SKIP {name}: not installed (apt-get install {package})");
    }
    found
}

/// A child process killed when dropped.
struct Kill(Child);

impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// GET `path` from 127.0.0.1:`port`: the body, or None while nothing
/// answers there.
fn get(port: u16, path: &str) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.").then(|| body.to_string())
}

/// `get` until `done` says the body will do, at most `within`: the body,
/// or the last one seen (None: nothing answered).
fn poll(
    port: u16,
    path: &str,
    within: Duration,
    done: impl Fn(&str) -> bool,
) -> Result<String, Option<String>> {
    let t = Instant::now();
    let mut last = None;
    loop {
        if let Some(b) = get(port, path) {
            if done(&b) {
                return Ok(b);
            }
            last = Some(b);
        }
        if t.elapsed() > within {
            return Err(last);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The `*.prom` files of `dir`: what node_exporter reads there (a watch's
/// lock file beside its file is not one).
fn prom_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "prom"))
        .collect();
    v.sort();
    v
}

/// Every family of a Prometheus-format file: (name, type).
fn families(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split_once(' '))
        .map(|(n, t)| (n.to_string(), t.to_string()))
        .collect()
}

/// The files, each kind once: the Prometheus format into `textfile`,
/// OpenMetrics into `om`. Returns the watch, still running.
fn write_every_kind(dir: &Path, textfile: &Path, om: &Path) -> Kill {
    let quick = ["--samples", "2", "--min-sample-ms", "1"];
    let both = |name: &str| {
        [
            "--prometheus".to_string(),
            textfile.join(format!("{name}.prom")).display().to_string(),
            "--openmetrics".to_string(),
            om.join(format!("{name}.om")).display().to_string(),
        ]
    };
    // A measuring command: an L1 set and one that reaches DRAM (twice the
    // last cache as this machine reads it, as tests/fleet.rs picks it).
    let host = bwscope::platform::detect_host(false);
    let llc = host
        .llc_size(bwscope::model::Curve::Bandwidth)
        .unwrap_or(128 << 20);
    let sizes = format!("16KiB,{}KiB", (2 * llc).next_power_of_two() >> 10);
    bwscope()
        .args(["cache", "--quick", "--sizes", &sizes])
        .args(quick)
        .args(both("cache"))
        .assert()
        .success();
    // The survey.
    bwscope()
        .env("XDG_CACHE_HOME", dir.join("xdg"))
        .arg("--no-save")
        .args(both("survey"))
        .assert()
        .success();
    // A fleet of two ranks on this machine, its network phase included.
    let fleet = {
        let mut a: Vec<String> = common::fleet::QUICK.iter().map(|s| s.to_string()).collect();
        a.extend(["--out", "res", "--timeout", "60"].map(String::from));
        a.extend(both("fleet"));
        a
    };
    let fleet: Vec<&str> = fleet.iter().map(String::as_str).collect();
    let mut ranks = common::fleet::Ranks::spawn(2, dir, &fleet);
    assert_eq!(
        ranks.wait_all(Duration::ZERO),
        vec![0, 0],
        "fleet exit codes"
    );
    // `report` of a saved run: memtype's, whose figures are their own
    // (first-use cost, kinds of memory).
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/runs/2026-11-24-54fbad1/memtype.json");
    for (format, to) in [
        ("prometheus", textfile.join("report.prom")),
        ("openmetrics", om.join("report.om")),
    ] {
        bwscope()
            .arg("report")
            .arg(&fixture)
            .args(["-f", format, "-o"])
            .arg(&to)
            .assert()
            .success();
    }
    // watch, left running: node_exporter reads its file as it is rewritten.
    let mut args = vec!["watch".to_string(), "--every".into(), "100ms".into()];
    args.extend(["--size", "1MiB", "--samples", "2", "--min-sample-ms", "1"].map(String::from));
    args.extend(both("watch"));
    let watch = Kill(
        Command::new(common::fleet::exe())
            .env("BWSCOPE_HISTORY", common::test_history())
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let prom = textfile.join("watch.prom");
    let t = Instant::now();
    while !std::fs::read_to_string(&prom).is_ok_and(|t| t.contains("bwscope_watch_samples_total")) {
        assert!(
            t.elapsed() < Duration::from_secs(120),
            "watch wrote nothing"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    watch
}

/// Every family the design has, as a file of each kind writes them.
const EXPECTED: &[(&str, &str)] = &[
    ("bwscope_run_info", "gauge"),
    ("bwscope_bandwidth_bytes_per_second", "gauge"),
    ("bwscope_latency_seconds", "gauge"),
    ("bwscope_clock_hertz", "gauge"),
    ("bwscope_memtype_first_use_seconds_per_byte", "gauge"),
    ("bwscope_memtype_copy_bytes_per_second", "gauge"),
    ("bwscope_watch_state", "gauge"),
    ("bwscope_watch_samples_total", "counter"),
    ("bwscope_watch_core_share_ratio", "gauge"),
    ("bwscope_fleet_node_verdict", "gauge"),
    ("bwscope_fleet_outlier", "gauge"),
    ("bwscope_fleet_median_bandwidth_bytes_per_second", "gauge"),
];

#[test]
fn node_exporter_promtool_and_prometheus_read_every_file() {
    let Some(exporter) = program("prometheus-node-exporter", "prometheus-node-exporter") else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let (textfile, om) = (d.path().join("textfile"), d.path().join("om"));
    std::fs::create_dir_all(&textfile).unwrap();
    std::fs::create_dir_all(&om).unwrap();
    let _watch = write_every_kind(d.path(), &textfile, &om);

    // Every family of every file, with its type.
    let mut written: Vec<(String, String)> = Vec::new();
    let files = prom_files(&textfile);
    assert_eq!(files.len(), 5, "{files:?}");
    for p in &files {
        let text = std::fs::read_to_string(p).unwrap();
        for f in families(&text) {
            if !written.contains(&f) {
                written.push(f);
            }
        }
    }
    for (name, kind) in EXPECTED {
        assert!(
            written.contains(&(name.to_string(), kind.to_string())),
            "no file has {name} ({kind}): {written:?}"
        );
    }

    // node_exporter with only the textfile collector, on loopback.
    let port = free_port();
    let _ne = Kill(
        Command::new(&exporter)
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .arg("--collector.disable-defaults")
            .arg("--collector.textfile")
            .arg(format!(
                "--collector.textfile.directory={}",
                textfile.display()
            ))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let scrape = poll(port, "/metrics", Duration::from_secs(30), |b| {
        b.contains("node_textfile_scrape_error")
    })
    .unwrap_or_else(|last| panic!("node_exporter did not answer: {last:?}"));
    assert!(
        scrape.lines().any(|l| l == "node_textfile_scrape_error 0"),
        "node_exporter could not read a file: {}",
        scrape
            .lines()
            .filter(|l| l.starts_with("node_textfile"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    eprintln!("node_exporter's families from bwscope:");
    for (name, kind) in &written {
        assert!(
            scrape.contains(&format!("\n# TYPE {name} {kind}\n")),
            "{name} is not typed {kind} in the scrape"
        );
        let help = scrape
            .lines()
            .find(|l| l.starts_with(&format!("# HELP {name} ")))
            .unwrap_or_else(|| panic!("{name} has no HELP in the scrape"));
        assert!(
            !help.contains("Metric read from"),
            "{name} lost its own help: {help}"
        );
        eprintln!("  {name} {kind}");
    }

    // promtool: no error and no lint finding in any file.
    if let Some(promtool) = program("promtool", "prometheus") {
        for p in &files {
            let out = Command::new(&promtool)
                .args(["check", "metrics"])
                .stdin(std::fs::File::open(p).unwrap())
                .output()
                .unwrap();
            let said = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(
                out.status.success() && said.trim().is_empty(),
                "promtool on {}: {said}",
                p.display()
            );
            let name = p.file_name().unwrap().to_string_lossy();
            eprintln!("promtool check metrics < {name}: nothing to say");
        }
    }

    // The OpenMetrics twins: the reference parser reads each.
    for e in std::fs::read_dir(&om).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "om") {
            openmetrics_parses(&std::fs::read_to_string(&p).unwrap(), &p);
        }
    }

    // Prometheus scraping that node_exporter, queried in PromQL.
    if let Some(prometheus) = program("prometheus", "prometheus") {
        promql(&prometheus, d.path(), port);
    }
}

/// The reference OpenMetrics parser (python3-prometheus-client) reads
/// `text`; skipped with a line where it is missing.
fn openmetrics_parses(text: &str, path: &Path) {
    // Debian's Python, where python3-prometheus-client installs it.
    let mut c = Command::new("/usr/bin/python3")
        .args([
            "-c",
            "import sys\ntry:\n  from prometheus_client.openmetrics.parser import text_string_to_metric_families as p\nexcept ImportError:\n  print('missing'); sys.exit(0)\nfor f in p(sys.stdin.read()): print(f.name, f.type)",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    c.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let o = c.wait_with_output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    if out.trim() == "missing" {
        eprintln!("SKIP the OpenMetrics parser: no python3-prometheus-client");
        return;
    }
    assert!(
        o.status.success() && out.contains("bwscope_run info"),
        "{}: {}{out}",
        path.display(),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A Prometheus server scrapes node_exporter every second; the query
/// finds the DRAM read of each file that has one, in bytes per second.
fn promql(prometheus: &Path, dir: &Path, exporter: u16) {
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: node\n    static_configs:\n      - targets: ['127.0.0.1:{exporter}']\n"
        ),
    )
    .unwrap();
    let port = free_port();
    let log = dir.join("prometheus.log");
    let _p = Kill(
        Command::new(prometheus)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("tsdb").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap(),
    );
    let query =
        "/api/v1/query?query=bwscope_bandwidth_bytes_per_second%7Bfigure%3D%22dram_read%22%7D";
    // Every command's series, once Prometheus has scraped node_exporter.
    let all = |b: &str| {
        ["survey", "cache", "watch", "fleet"]
            .iter()
            .all(|c| b.contains(&format!("\"command\":\"{c}\"")))
    };
    let body = poll(port, query, Duration::from_secs(90), all).unwrap_or_else(|last| {
        let up = get(port, "/api/v1/query?query=up");
        let log = std::fs::read_to_string(&log).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(8).collect();
        panic!("PromQL found no DRAM read of every command: {last:?}\nup: {up:?}\nprometheus: {tail:?}")
    });
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let result = v["data"]["result"].as_array().unwrap();
    eprintln!("PromQL bwscope_bandwidth_bytes_per_second{{figure=\"dram_read\"}} / 1e9:");
    for r in result {
        let m = &r["metric"];
        let value: f64 = r["value"][1].as_str().unwrap().parse().unwrap();
        eprintln!("  {} {} {:.2} GB/s", m["command"], m["host"], value / 1e9);
        assert_eq!(m["level"], "dram");
        assert!(value > 1e8 && value < 1e13, "{r}");
    }
}
