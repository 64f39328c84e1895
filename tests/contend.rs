//! `bwscope contend`: agents on one timeline. Two CPU teams on two cpus, a
//! CPU team beside a PoCL OpenCL copy stream and beside a loopback TCP
//! flow, the probe, an agent that dies mid-phase (the stand-in libcuda
//! built by tests/transfer.rs's recipe), Ctrl-C keeping records, the CUDA
//! path, the default agents, and bad input. Speeds are only checked
//! against sanity bounds: these run on a loaded 2-core machine.

// Unix: signals and the stand-in libcuda.so (the Windows build runs
// tests/windows.rs instead).
#![cfg(unix)]

mod common;
use common::standin::{exit2, real_libcuda_present, standin};
use common::{json_of as run_json, records};

use assert_cmd::Command;
use serde_json::Value;

fn bw() -> Command {
    let mut c = Command::cargo_bin("bwscope").unwrap();
    c.env("BWSCOPE_HISTORY", common::test_history());
    c
}

/// Short windows: 3 slices of 100 ms.
const QUICK: &[&str] = &[
    "--samples",
    "3",
    "--min-sample-ms",
    "100",
    "--size",
    "16MiB",
];

/// The record of `agent` in `phase`.
fn rec<'a>(recs: &'a [Value], phase: &str, agent: &str) -> &'a Value {
    recs.iter()
        .find(|r| r["extra"]["case_phase"] == phase && r["extra"]["case_agent"] == agent)
        .unwrap_or_else(|| panic!("no record of {agent} in phase {phase}: {recs:#?}"))
}

/// An agent's figure, checked: ok, ran through the window, a sane rate.
fn gbps(r: &Value) -> f64 {
    assert_eq!(r["status"], "ok", "{r:#}");
    let e = &r["extra"];
    assert_eq!(e["valid"], true, "{r:#}");
    assert!(e["covered_from_seconds"].as_f64().unwrap() <= 0.0, "{r:#}");
    assert!(e["covered_to_seconds"].as_f64().unwrap() >= 0.0, "{r:#}");
    let g = e["window_gbps"].as_f64().unwrap();
    assert!(g > 0.001 && g < 5000.0, "{g} GB/s: {r:#}");
    assert!(r["gbps"]["best"].as_f64().unwrap() >= g * 0.5, "{r:#}");
    g
}

fn allowed_cpus() -> Vec<u32> {
    let out = bw().args(["info", "--json", "-"]).output().unwrap();
    let host: Value = serde_json::from_slice(&out.stdout).unwrap();
    host["allowed_cpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap() as u32)
        .collect()
}

#[test]
fn two_cpu_teams_on_two_cpus() {
    let cpus = allowed_cpus();
    if cpus.len() < 2 {
        eprintln!("SKIP: one cpu allowed");
        return;
    }
    let (a, b) = (
        format!("cpus:{}", cpus[0]),
        format!("cpus:{}:copy", cpus[1]),
    );
    let run = run_json(bw().args(["contend", "--cpu", &a, "--cpu", &b]).args(QUICK));
    let recs = records(&run);
    let alone0 = gbps(rec(&recs, "cpu0", "cpu0"));
    let alone1 = gbps(rec(&recs, "cpu1", "cpu1"));
    let both0 = gbps(rec(&recs, "cpu0+cpu1", "cpu0"));
    let both1 = gbps(rec(&recs, "cpu0+cpu1", "cpu1"));
    let agg = rec(&recs, "cpu0+cpu1", "aggregate");
    assert_eq!(agg["status"], "ok");
    let e = &agg["extra"];
    let total = e["aggregate_gbps"].as_f64().unwrap();
    assert!(
        (total - both0 - both1).abs() < 1e-6 * total.max(1.0),
        "{agg:#}"
    );
    assert!(
        (e["sum_alone_gbps"].as_f64().unwrap() - alone0 - alone1).abs() < 1e-6 * total.max(1.0)
    );
    let loss = e["loss_percent"].as_f64().unwrap();
    assert!(loss < 100.0, "{agg:#}");
    // Shares add up to one; slowdowns are alone / together.
    let r0 = rec(&recs, "cpu0+cpu1", "cpu0");
    let r1 = rec(&recs, "cpu0+cpu1", "cpu1");
    let shares = r0["extra"]["share"].as_f64().unwrap() + r1["extra"]["share"].as_f64().unwrap();
    assert!((shares - 1.0).abs() < 1e-6, "{shares}");
    let s0 = r0["extra"]["slowdown"].as_f64().unwrap();
    assert!((s0 - alone0 / both0).abs() < 1e-6 * s0, "{r0:#}");
    assert_eq!(r1["op"], "copy");
    assert_eq!(r0["cpus"], serde_json::json!([cpus[0]]));
    assert_eq!(r0["extra"]["dma"], false);
    assert_eq!(
        r0["extra"]["phase_agents"],
        serde_json::json!(["cpu0", "cpu1"])
    );
    // The run's options say what was planned.
    assert_eq!(run["options"]["phases"].as_array().unwrap().len(), 3);
    // Saved, it reads back: the phase × agent chart, compare's case keys.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("run.json");
    std::fs::write(&f, run.to_string()).unwrap();
    let list = bw()
        .args(["plot", f.to_str().unwrap(), "--list"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&list.stdout).contains("contend-matrix"));
    stacked_bars_name_every_phase_and_agent(&f, &recs);
    let cmp = bw()
        .args(["compare", f.to_str().unwrap(), f.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        cmp.status.success(),
        "{}",
        String::from_utf8_lossy(&cmp.stderr)
    );
    assert!(String::from_utf8_lossy(&cmp.stdout).contains("cpu0+cpu1"));
}

/// The stacked bars of a saved two-team run, in `plot` and in the HTML
/// report: a bar per phase (its name under it, the aggregate above it),
/// one segment per agent in the agent's colour (plus its legend swatch),
/// the sum of the alones marked on the pair.
fn stacked_bars_name_every_phase_and_agent(f: &std::path::Path, recs: &[Value]) {
    let svg_path = f.with_file_name("bars.svg");
    let out = bw()
        .args(["plot", f.to_str().unwrap(), "--chart", "contend-bars", "-o"])
        .arg(&svg_path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    let doc = roxmltree::Document::parse(&svg).expect("well-formed SVG");
    let texts: Vec<String> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| n.text().unwrap_or("").trim().to_string())
        .collect();
    let fills = |c: &str| {
        doc.descendants()
            .filter(|n| n.has_tag_name("rect") && n.attribute("fill") == Some(c))
            .count()
    };
    for want in ["cpu0", "cpu1", "cpu0+cpu1", "Σ alone"] {
        assert!(texts.iter().any(|t| t == want), "no '{want}' in {texts:?}");
    }
    // Aggregates above the bars: one per phase, each a figure of the run.
    let tops: Vec<&String> = texts.iter().filter(|t| t.ends_with(" GB/s")).collect();
    assert_eq!(tops.len(), 3, "{texts:?}");
    let agg = rec(recs, "cpu0+cpu1", "aggregate")["extra"]["aggregate_gbps"]
        .as_f64()
        .unwrap();
    let shown: f64 = tops[2].trim_end_matches(" GB/s").parse().unwrap();
    assert!(
        (shown - agg).abs() <= 0.01 * agg.max(1.0),
        "{shown} vs {agg}"
    );
    let sum = texts.iter().find(|t| t.starts_with("Σ alone ")).unwrap();
    assert!(sum.len() > "Σ alone ".len(), "{texts:?}");
    // Tableau blue (cpu0) and orange (cpu1): alone, in the pair, legend.
    assert_eq!(fills("#1F77B4"), 3, "cpu0's segments + swatch");
    assert_eq!(fills("#FF7F0E"), 3, "cpu1's segments + swatch");
    let html = bw()
        .args(["report", f.to_str().unwrap(), "-o", "-"])
        .output()
        .unwrap();
    let html = String::from_utf8_lossy(&html.stdout);
    assert!(
        html.contains("id=\"chart-contend-bars\""),
        "no bars in the HTML report"
    );
}

/// Whether an OpenCL device is here (PoCL on CI); prints why not.
fn opencl() -> bool {
    let run = run_json(bw().args([
        "transfer",
        "--backend",
        "opencl",
        "--sizes",
        "4KiB",
        "--directions",
        "h2d",
        "--kinds",
        "host-ptr",
        "--samples",
        "1",
        "--min-sample-ms",
        "1",
    ]));
    let r = &records(&run)[0];
    if r["status"] == "skipped" {
        eprintln!("SKIP: no OpenCL platform: {}", r["reason"]);
        return false;
    }
    true
}

#[test]
fn a_cpu_team_beside_a_pocl_copy_stream() {
    if !opencl() {
        return;
    }
    let cpu = allowed_cpus()[0];
    let run = run_json(
        bw().args([
            "contend",
            "--cpu",
            &format!("cpus:{cpu}"),
            "--device",
            "opencl:h2d:host-ptr",
            "--device-size",
            "8MiB",
        ])
        .args(QUICK),
    );
    let recs = records(&run);
    gbps(rec(&recs, "cpu0", "cpu0"));
    let dev = rec(&recs, "cpu0+dev0", "dev0");
    gbps(dev);
    let e = &dev["extra"];
    assert_eq!(e["backend"], "opencl");
    assert_eq!(e["direction"], "h2d");
    assert_eq!(e["host_kind"], "host-ptr");
    // PoCL is the CPU: labelled so on every record, never called DMA.
    if e["device_is_cpu"] == true {
        for r in recs.iter().filter(|r| r["extra"]["case_agent"] == "dev0") {
            assert_eq!(r["extra"]["dma"], false, "{r:#}");
            assert!(
                r["extra"]["device"].as_str().unwrap().contains("not DMA"),
                "{r:#}"
            );
        }
    }
    assert_eq!(dev["payload_gbps"], dev["gbps"]);
}

#[test]
fn a_cpu_team_beside_a_loopback_tcp_flow() {
    let cpu = allowed_cpus()[0];
    let run = run_json(
        bw().args([
            "contend",
            "--cpu",
            &format!("cpus:{cpu}:3:1"),
            "--net",
            "loopback",
        ])
        .args(QUICK),
    );
    let recs = records(&run);
    gbps(rec(&recs, "net0", "net0"));
    let net = rec(&recs, "cpu0+net0", "net0");
    gbps(net);
    assert_eq!(net["extra"]["peer"], "loopback");
    assert_eq!(net["extra"]["dma"], false);
    assert_eq!(rec(&recs, "cpu0+net0", "cpu0")["op"], "3:1");
    assert_eq!(rec(&recs, "cpu0+net0", "aggregate")["status"], "ok");
    spells_only_on_the_cpu_side(&recs);
}

/// The team and the aggregate carry the spell probes' readings and their
/// `spells` (docs/noise.md); the flow, whose bytes no thread of its own
/// core moves, carries neither.
fn spells_only_on_the_cpu_side(recs: &[Value]) {
    for (phase, agent) in [
        ("cpu0", "cpu0"),
        ("cpu0+net0", "cpu0"),
        ("cpu0+net0", "aggregate"),
    ] {
        let r = rec(recs, phase, agent);
        let samples = r["samples"].as_array().unwrap();
        let probed = samples.iter().filter(|s| s["probe"].is_object()).count();
        let s = &r["spells"];
        assert!(s.is_object(), "{phase} {agent}: no spells: {r}");
        assert_eq!(s["probed"], probed as u64, "{phase} {agent}: {r}");
        // Two readings are due per slice: a worker descheduled for a
        // whole slice on a loaded machine may miss one, not all.
        assert!(probed >= 1 && probed <= samples.len(), "{r}");
        assert_eq!(
            r["extra"]["agent_kind"],
            if agent == "aggregate" {
                "aggregate"
            } else {
                "cpu"
            }
        );
    }
    for phase in ["net0", "cpu0+net0"] {
        let r = rec(recs, phase, "net0");
        assert!(r.get("spells").is_none(), "{r}");
        let samples = r["samples"].as_array().unwrap();
        assert!(samples.iter().all(|s| s.get("probe").is_none()), "{r}");
        assert_eq!(r["extra"]["agent_kind"], "net");
    }
}

#[test]
fn flows_to_a_transponder_send_and_receive() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let server = bwscope::net::server::Server::bind(
        bwscope::net::server::ServerConfig::new("127.0.0.1:0".parse().unwrap()),
        Arc::new(|_: &str| {}),
    )
    .unwrap();
    let addr = server.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let s2 = stop.clone();
    let t = std::thread::spawn(move || server.serve(&s2).unwrap());
    let run = run_json(
        bw().args([
            "contend",
            "--net",
            &format!("{addr}:send"),
            "--net",
            &format!("{addr}:recv"),
            "--phases",
            "net0,net1",
        ])
        .args(QUICK),
    );
    stop.store(true, Ordering::Relaxed);
    t.join().unwrap();
    let recs = records(&run);
    for (phase, spec) in [("net0", "send"), ("net1", "recv")] {
        let r = rec(&recs, phase, phase);
        gbps(r);
        assert_eq!(r["kernel"], format!("{addr}:{spec}"));
        assert_eq!(r["extra"]["peer"], addr.to_string());
    }
}

#[test]
fn the_probe_measures_every_phase_from_a_free_cpu() {
    let cpus = allowed_cpus();
    if cpus.len() < 2 {
        eprintln!("SKIP: the probe needs a second cpu");
        return;
    }
    let run = run_json(
        bw().args([
            "contend",
            "--cpu",
            &format!("cpus:{}", cpus[0]),
            "--bystander",
            "latency",
        ])
        .args(QUICK),
    );
    let recs = records(&run);
    for phase in ["idle", "cpu0"] {
        let p = rec(&recs, phase, "bystander");
        assert_eq!(p["status"], "ok", "{p:#}");
        assert_ne!(
            p["cpus"],
            serde_json::json!([cpus[0]]),
            "the probe has its own cpu"
        );
        let ns = p["extra"]["bystander_latency_ns"].as_f64().unwrap();
        assert!(ns > 0.5 && ns < 100_000.0, "{ns} ns");
        assert!(p["extra"]["latency_ns"]["median"].as_f64().unwrap() > 0.5);
    }
    let agg = rec(&recs, "cpu0", "aggregate");
    assert!(
        agg["extra"]["bystander_latency_ns"].as_f64().is_some(),
        "{agg:#}"
    );
    // A bandwidth probe reports its own rate.
    let run = run_json(
        bw().args([
            "contend",
            "--cpu",
            &format!("cpus:{}", cpus[0]),
            "--probe",
            "bandwidth",
            "--phases",
            "all",
        ])
        .args(QUICK),
    );
    gbps(rec(&records(&run), "cpu0", "bystander"));
}

#[test]
fn the_cuda_path_runs_copy_engines_and_sm_copies_on_the_standin() {
    let Some(dir) = standin("") else { return };
    let cpu = allowed_cpus()[0];
    let run = run_json(
        bw().env("LD_LIBRARY_PATH", &dir)
            .args([
                "contend",
                "--cpu",
                &format!("cpus:{cpu}"),
                "--device",
                "cuda:h2d",
                "--device",
                "cuda:sm-d2h",
                "--device-size",
                "4MiB",
                "--phases",
                "alone,all",
            ])
            .args(QUICK),
    );
    let recs = records(&run);
    let h2d = rec(&recs, "cpu0+dev0+dev1", "dev0");
    gbps(h2d);
    assert_eq!(h2d["extra"]["backend"], "cuda");
    assert_eq!(h2d["extra"]["host_kind"], "pinned");
    assert!(h2d["extra"]["device"]
        .as_str()
        .unwrap()
        .contains("stand-in"));
    let sm = rec(&recs, "dev1", "dev1");
    gbps(sm);
    assert_eq!(sm["extra"]["direction"], "d2h-sm");
    assert_eq!(sm["extra"]["host_kind"], "mapped");
    assert_eq!(rec(&recs, "cpu0+dev0+dev1", "aggregate")["status"], "ok");
}

#[test]
fn an_agent_that_dies_mid_phase_keeps_the_others_figures() {
    let Some(dir) = standin("") else { return };
    let cpu = allowed_cpus()[0];
    // Copies fail 350 ms after the first: inside dev0's alone window
    // (warm-up 300 ms, window 3 × 100 ms), and from the start of the pair.
    let run = run_json(
        bw().env("LD_LIBRARY_PATH", &dir)
            .env("STANDIN_CUDA_FAIL_COPIES_AFTER_MS", "350")
            .args([
                "contend",
                "--device",
                "cuda:h2d",
                "--cpu",
                &format!("cpus:{cpu}"),
                "--device-size",
                "1MiB",
                "--phases",
                "dev0,cpu0+dev0",
            ])
            .args(QUICK),
    );
    let recs = records(&run);
    let dead = rec(&recs, "dev0", "dev0");
    assert_eq!(dead["status"], "error", "{dead:#}");
    assert_eq!(dead["extra"]["valid"], false);
    let why = dead["reason"].as_str().unwrap();
    assert!(
        why.contains("dev0 ended") && why.contains("CUDA_ERROR_UNKNOWN"),
        "{why}"
    );
    assert!(dead["extra"]["covered_to_seconds"].as_f64().unwrap() < 0.0);
    // In the pair the CPU team keeps its figure and says who ended.
    let team = rec(&recs, "cpu0+dev0", "cpu0");
    gbps(team);
    assert!(
        team["warnings"].to_string().contains("dev0 ended"),
        "{team:#}"
    );
    let agg = rec(&recs, "cpu0+dev0", "aggregate");
    assert_eq!(agg["status"], "error");
    assert!(
        agg["reason"].as_str().unwrap().contains("dev0 ended"),
        "{agg:#}"
    );
    assert_eq!(agg["extra"]["aggregate_gbps"], Value::Null);
}

#[test]
fn ctrl_c_mid_run_keeps_the_finished_phases() {
    let cpus = allowed_cpus();
    let dir = tempfile::tempdir().unwrap();
    let (json, csv) = (dir.path().join("run.json"), dir.path().join("run.csv"));
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("bwscope"))
        .env("BWSCOPE_HISTORY", common::test_history())
        .args([
            "contend",
            "--cpu",
            &format!("cpus:{}", cpus[0]),
            "--net",
            "loopback",
        ])
        .args([
            "--samples",
            "4",
            "--min-sample-ms",
            "250",
            "--size",
            "16MiB",
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
    // Wait for the first phase's two records, bounded in time.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::fs::read_to_string(&csv).map_or(0, |t| t.lines().count()) < 3 {
        assert!(
            std::time::Instant::now() < deadline,
            "no records within 60 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["interrupted"], true);
    let recs = records(&v);
    assert!(recs.len() >= 2 && recs.len() < 6, "{} records", recs.len());
    gbps(rec(&recs, "cpu0", "cpu0"));
}

/// A team alone runs what `bwscope threads` runs on the same cpu at the
/// same per-thread size: the same kernel, the same bytes per pass as the
/// kernel declares them (what it runs, not how fast).
#[test]
fn a_team_alone_runs_what_threads_runs() {
    let cpu = allowed_cpus().last().unwrap().to_string();
    for work in ["read", "write", "ntwrite", "copy"] {
        let spec = format!("cpus:{cpu}:{work}");
        let run = run_json(bw().args(["contend", "--cpu", &spec]).args(QUICK));
        let r = rec(&records(&run), "cpu0", "cpu0").clone();
        gbps(&r);
        let k = r["extra"]["kernels"][0].as_str().unwrap().to_string();
        let ws = r["size_bytes"].as_u64().unwrap();
        let th = run_json(
            bw().args(["threads", "--cpus", &cpu, "--counts", "1"])
                .args([
                    "--kernel",
                    &k,
                    "--sizes",
                    &format!("{}KiB", ws >> 10),
                    "--samples",
                    "1",
                ]),
        );
        let t = records(&th)
            .into_iter()
            .find(|t| t["kernel"] == k.as_str() && t["status"] == "ok")
            .unwrap_or_else(|| panic!("threads ran no {k}: {th:#}"));
        for f in [
            "size_bytes",
            "bytes_read_per_pass",
            "bytes_written_per_pass",
            "payload_bytes_per_pass",
            "width_bits",
            "nontemporal",
        ] {
            assert_eq!(r[f], t[f], "{work}: {f} ({k})");
        }
    }
}

#[test]
fn the_default_agents_run_alone_and_together() {
    let run = run_json(bw().args([
        "contend",
        "--samples",
        "2",
        "--min-sample-ms",
        "100",
        "--size",
        "16MiB",
    ]));
    let recs = records(&run);
    let phases = run["options"]["phases"].as_array().unwrap();
    let all = phases.last().unwrap()["name"].as_str().unwrap();
    assert!(all.starts_with("cpu0+") && all.ends_with("net0"), "{all}");
    gbps(rec(&recs, "cpu0", "cpu0"));
    gbps(rec(&recs, all, "net0"));
    assert_eq!(run["options"]["agents"][0]["kind"], "cpu");
}

#[test]
fn devices_that_cannot_run_here_are_skipped_records_and_exit_0() {
    if real_libcuda_present() {
        eprintln!("SKIP: a real libcuda is installed");
        return;
    }
    // Only devices given, none of them here: a run of skipped records
    // with their reasons (as `transfer` without a device), not a usage
    // error.
    let empty = tempfile::tempdir().unwrap();
    let run = run_json(
        bw().env("LD_LIBRARY_PATH", empty.path())
            .args(["contend", "--device", "cuda:h2d", "--device", "cuda:d2h"])
            .args(QUICK),
    );
    let r = records(&run);
    assert_eq!(r.len(), 2, "{r:?}");
    for (rec, name) in r.iter().zip(["dev0", "dev1"]) {
        assert_eq!(rec["status"], "skipped");
        assert_eq!(rec["extra"]["case_agent"], name);
        let reason = rec["reason"].as_str().unwrap();
        assert!(reason.contains("libcuda"), "{reason}");
    }
}

#[test]
fn bad_input_exits_2_naming_the_flag_before_anything_runs() {
    let cpus = allowed_cpus();
    let c = |s: &str| {
        let mut b = bw();
        b.arg("contend").args(s.split(' ')).args(QUICK);
        b
    };
    let first = cpus[0];
    exit2(
        &mut c(&format!("--cpu cpus:{first} --cpu cpus:{first}:write")),
        "already used by cpu0",
    );
    exit2(&mut c("--cpu 1@7"), "--cpu");
    exit2(&mut c("--cpu cpus:0:5:5:5"), "--cpu");
    let n = cpus.len();
    exit2(&mut c(&format!("--cpu {}@0", n + 1)), "--cpu");
    // Two teams that together want more cpus than there are: how many are free.
    exit2(
        &mut c(&format!("--cpu {n}@0 --cpu 1@0")),
        "0 of them are free",
    );
    exit2(
        &mut c(&format!("--cpu {n}@0 --probe latency")),
        "--bystander: no cpu is free",
    );
    exit2(
        &mut c("--net 127.0.0.1:1"),
        "--net: cannot reach the transponder",
    );
    exit2(&mut c("--device vulkan:h2d"), "--device");
    exit2(&mut c("--device cuda:sideways"), "--device");
    exit2(&mut c("--cpu cpus:0 --phases cpu0+gpu3"), "--phases");
    exit2(
        &mut c("--cpu cpus:0 --samples 100 --min-sample-ms 1000"),
        "--samples",
    );
    if let Some(dir) = standin("") {
        exit2(
            c("--device cuda5:h2d").env("LD_LIBRARY_PATH", &dir),
            "--device: cuda device 5 does not exist",
        );
    }
    if opencl() {
        exit2(
            &mut c("--device opencl9:h2d"),
            "--device: opencl device 9 does not exist",
        );
    }
}
