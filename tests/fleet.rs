//! `bwscope fleet` on one machine without a launcher's help: ranks are
//! started with the variables `mpirun` would set (the default build reads
//! nothing else), they meet rank 0 over TCP on loopback through the
//! rendezvous file, and everything a fleet writes is checked; then the
//! faults: a killed rank, a hung rank, a mixed release, Ctrl-C on rank 0,
//! truncated and future files. Real launchers: fleet_mpi.rs,
//! fleet_netns.rs, fleet_slurm.rs.

// Unix: signals, /proc, namespaces, guests, device nodes or Unix-only
// tools (the Windows build runs tests/windows.rs instead).
#![cfg(unix)]

mod common;

use std::net::TcpStream;
use std::time::Duration;

use common::browser::{attr, chromium, dump_dom};
use common::bwscope;
use common::fleet::{
    assert_valid, check_openmetrics, expected_seconds, failed_metrics, flows, load, Ranks, QUICK,
};
use serde_json::{json, Value};

fn args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut v: Vec<&str> = QUICK.to_vec();
    v.extend_from_slice(extra);
    v
}

#[test]
fn the_estimate_line_reads_in_seconds() {
    let l = "bwscope fleet: expect about 4 s: per-node phase 4 s (3 rounds of about 1 s), network phase 1 s";
    assert_eq!(expected_seconds(l), Some(4.0));
    assert_eq!(
        expected_seconds("bwscope fleet: expect about 12 min: x"),
        Some(720.0)
    );
    assert_eq!(
        expected_seconds("bwscope fleet: expect about 1.5 h: x"),
        Some(5400.0)
    );
    assert_eq!(expected_seconds("bwscope fleet: round 1 of 3"), None);
}

#[test]
fn outside_a_launcher_is_a_one_line_error() {
    let out = bwscope()
        .args(["fleet"])
        .env_remove("OMPI_COMM_WORLD_RANK")
        .env_remove("PMI_RANK")
        .env_remove("SLURM_PROCID")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("mpirun -np N bwscope fleet") && err.contains("srun"),
        "{err}"
    );
    // A launcher's variables that make no sense are named.
    let out = bwscope()
        .args(["fleet"])
        .env("PMI_RANK", "5")
        .env("PMI_SIZE", "2")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("PMI_RANK=5"));
}

#[test]
fn dry_run_plans_a_large_fleet() {
    let out = bwscope()
        .args([
            "fleet",
            "--dry-run",
            "--nodes",
            "1000",
            "--schedule",
            "sample",
            "--peers",
            "4",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("1000 ranks"), "{text}");
    assert!(text.contains("4 steps, 4000 flows"), "{text}");
    assert!(
        text.contains("per-node phase") && text.contains("total: about"),
        "{text}"
    );
    let out = bwscope().args(["fleet", "--dry-run"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--nodes"));
}

#[test]
fn a_loopback_fleet_writes_every_output() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    std::fs::write(
        dir.join("ref.json"),
        r#"{"bwscope_reference": 1, "classes": [{"name": "impossible", "cpu": "*", "bounds": {"l1_read_gbps": 1e9}}]}"#,
    )
    .unwrap();
    let mut ranks = Ranks::spawn(
        3,
        dir,
        &args(&[
            "--out",
            "res",
            "--reference",
            "ref.json",
            "--fail-if-outlier",
            "--write-reference",
            "written.json",
            "--prometheus",
            "fleet.prom",
            "--openmetrics",
            "fleet.om",
            "--timeout",
            "30",
        ]),
    );
    let codes = ranks.wait_all(Duration::ZERO);
    // Every node is below the impossible class bound: exit 3 everywhere.
    assert_eq!(codes, vec![3; 3], "exit codes");
    let res = dir.join("res");
    let f = load(&res.join("fleet.json"));
    assert_valid(&f, 3);
    // Each node below the reference was measured once more before it was
    // judged, and is judged on the better turn: still below, still FAIL.
    let again: Vec<&str> = f["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w["message"].as_str())
        .filter(|m| m.starts_with("measured once more"))
        .collect();
    assert_eq!(again.len(), 1, "{}", f["warnings"]);
    for r in 0..3 {
        let label = f["nodes"][r]["label"].as_str().unwrap();
        assert!(again[0].contains(label), "{label}: {}", again[0]);
        // Slow at every moment (issue 29, item 9): the node phase's turn
        // and three more, each turn's records kept, and the figure bad in
        // every one, so it fails and is not transient.
        let turns = f["nodes"][r]["turns"].as_array().unwrap();
        assert_eq!(turns.len(), 4, "{label}");
        for (i, t) in turns.iter().enumerate() {
            assert_eq!(t["turn"], i as u64);
            assert!(!t["records"].as_array().unwrap().is_empty());
        }
        let l1 = f["verdicts"]["nodes"][r]["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["metric"] == "l1_read_gbps")
            .unwrap();
        let seen = l1["turns"].as_array().unwrap();
        assert_eq!(seen.len(), 4, "{l1}");
        assert!(seen.iter().all(|t| t["bad"] == true), "{l1}");
        assert!(l1.get("transient").is_none(), "{l1}");
    }
    assert_eq!(f["complete"], true);
    assert_eq!(f["launch"]["launcher"], "openmpi");
    assert_eq!(f["launch"]["control"], "tcp");
    assert_eq!(f["launch"]["machines"], 1);
    for r in 0..3 {
        let n = &f["nodes"][r];
        assert_eq!(n["status"], "ok", "{n}");
        assert!(n["run"]["records"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["suite"] == "cache"));
        assert!(n["node_seconds"].as_f64().unwrap() > 0.0);
        // Ranks sharing a host name are told apart.
        assert!(
            n["label"].as_str().unwrap().ends_with(&format!(":{r}")),
            "{n}"
        );
        assert!(failed_metrics(&f, r).contains(&"l1_read_gbps".to_string()));
        assert_eq!(f["verdicts"]["nodes"][r]["drain"], true);
    }
    // Shift over 3 ranks: every ordered pair once, both views measured.
    let m = &f["network"][0];
    assert_eq!(
        (
            m["transport"].as_str(),
            m["schedule"].as_str(),
            m["steps"].as_u64()
        ),
        (Some("tcp"), Some("shift"), Some(2))
    );
    for (s, t) in [(0, 1), (1, 2), (2, 0), (0, 2), (1, 0), (2, 1)] {
        let x = flows(&f, s, t);
        assert_eq!(x.len(), 1, "{s}->{t}");
        assert!(x[0]["recv_gbps"].as_f64().unwrap() > 0.0, "{}", x[0]);
        assert!(x[0]["send_gbps"].as_f64().unwrap() > 0.0, "{}", x[0]);
        assert_eq!(x[0]["concurrent"], 3);
    }
    // Long-form CSV: a header and two views per flow.
    let csv = std::fs::read_to_string(res.join("fleet.csv")).unwrap();
    let mut lines = csv.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("src,dst,size,direction,gbps"));
    assert_eq!(lines.count(), 12);
    // Verdict file: one line per node; drain list: the one host.
    let verdicts = std::fs::read_to_string(res.join("verdicts.txt")).unwrap();
    let lines: Vec<&str> = verdicts.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(lines.len(), 3, "{verdicts}");
    assert!(
        lines
            .iter()
            .all(|l| l.contains(" FAIL l1_read_gbps ") && l.contains(">=1000000000")),
        "{verdicts}"
    );
    let drain = std::fs::read_to_string(res.join("drain.txt")).unwrap();
    assert_eq!(drain.lines().count(), 1, "{drain}");
    assert_eq!(drain.trim(), f["nodes"][0]["hostname"].as_str().unwrap());
    // A written reference puts its bounds below this run's medians.
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("written.json")).unwrap()).unwrap();
    assert_eq!(written["bwscope_reference"], 1);
    assert!(
        written["classes"].as_array().unwrap().is_empty(),
        "no node passed, so no class: {written}"
    );
    // The metrics: each node's verdict in the Prometheus format (the
    // real node_exporter and promtool read such files in
    // tests/metrics_clients.rs), OpenMetrics read by a parser where one
    // is installed.
    let prom = std::fs::read_to_string(dir.join("fleet.prom")).unwrap();
    assert!(
        prom.contains("# TYPE bwscope_fleet_node_verdict gauge\n")
            && prom.contains("bwscope_fleet_node_verdict{host=")
            && !prom.contains("# EOF"),
        "{prom}"
    );
    let om = std::fs::read_to_string(dir.join("fleet.om")).unwrap();
    assert!(om.ends_with("# EOF\n"), "{om}");
    check_openmetrics(&om);
    let html = std::fs::read_to_string(res.join("fleet.html")).unwrap();
    assert!(html.contains("<svg class=heatmap") && html.contains("id=nodes"));
    reports_read_fleets(dir, &res.join("fleet.json"));
    fleet_report_in_chromium(&res.join("fleet.html"));
}

/// `report`, `plot` and `compare` on a fleet file.
fn reports_read_fleets(dir: &std::path::Path, fleet: &std::path::Path) {
    let p = fleet.to_str().unwrap();
    let f = load(fleet);
    let node = f["nodes"][1]["label"].as_str().unwrap().to_string();
    let out = dir.join("again.html");
    bwscope()
        .args(["report", p, "-o", out.to_str().unwrap(), "--scale-max", "2"])
        .assert()
        .success();
    assert!(std::fs::read_to_string(&out)
        .unwrap()
        .contains("fixed with --scale-max"));
    // One node of the fleet is an ordinary run.
    let o = bwscope()
        .args(["report", p, "--node", &node, "-f", "json"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let run: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(run["command"], "fleet-node");
    let o = bwscope()
        .args(["plot", p, "--node", &node, "--list"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let o = bwscope()
        .args(["report", p, "--node", "nosuch", "-f", "json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no node 'nosuch'"));
    let o = bwscope().args(["plot", p, "--list"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "a fleet needs --node for plot");
    // compare: a fleet against itself is the same; a slowed node is named.
    let o = bwscope()
        .args(["compare", p, p, "--fail-if-slower", "5"])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let mut slow = f.clone();
    for r in slow["nodes"][1]["run"]["records"].as_array_mut().unwrap() {
        common::scale_gbps(r, 0.5);
    }
    let slow_path = dir.join("slow.json");
    std::fs::write(&slow_path, serde_json::to_vec(&slow).unwrap()).unwrap();
    let o = bwscope()
        .args([
            "compare",
            p,
            slow_path.to_str().unwrap(),
            "--fail-if-slower",
            "5",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains(&format!("got slower: {node}")), "{text}");
    let o = bwscope()
        .args(["compare", p, slow_path.to_str().unwrap(), "--node", &node])
        .output()
        .unwrap();
    assert!(o.status.success(), "node by node, case by case");
    // Truncated and future fleet files: one-line errors, exit 2.
    let text = std::fs::read_to_string(fleet).unwrap();
    let cut = dir.join("cut.json");
    std::fs::write(&cut, &text[..text.len() / 2]).unwrap();
    for cmd in [
        vec!["report", cut.to_str().unwrap()],
        vec!["compare", cut.to_str().unwrap(), p],
    ] {
        let o = bwscope().args(&cmd).output().unwrap();
        assert_eq!(o.status.code(), Some(2));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("truncated") && err.trim().lines().count() == 1,
            "{err}"
        );
    }
    let mut future = f.clone();
    future["fleet_schema_version"] = json!(99);
    let fut = dir.join("future.json");
    std::fs::write(&fut, serde_json::to_vec(&future).unwrap()).unwrap();
    let o = bwscope()
        .args(["report", fut.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("newer than this bwscope"));
}

fn fleet_report_in_chromium(html: &std::path::Path) {
    let Some(bin) = chromium() else {
        eprintln!(
            "SKIP fleet report in chromium: chromium is not installed (apt-get install chromium)"
        );
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let url = format!("file://{}#fleettest", html.display());
    let dom = dump_dom(&bin, &d.path().join("profile"), &url);
    assert_eq!(
        attr(&dom, "<body", "data-heatmaps"),
        Some("1"),
        "the heatmap drew"
    );
    let t = attr(&dom, "<body", "data-fleettest").unwrap_or("missing");
    assert!(
        t.starts_with("ok 6 cells"),
        "hovering a cell fills the read-out: {t}"
    );
}

/// A working set the summary reads as this host's DRAM: twice its last
/// cache level (`Host::well_inside`), as this process detects it (CPUID,
/// sysfs and any stored knee probe, exactly as the command will). A
/// fixed size cannot be: a guest on a Granite Rapids host sees a 480 MiB
/// L3, and 256 MiB is an L3 record there.
fn dram_size(host: &bwscope::model::Host) -> u64 {
    let llc = host
        .llc_size(bwscope::model::Curve::Bandwidth)
        .unwrap_or(128 << 20);
    let s = (2 * llc).next_power_of_two();
    assert_eq!(
        host.regime(s, 1, bwscope::model::Curve::Bandwidth),
        "DRAM",
        "{s} bytes"
    );
    s
}

#[test]
fn metrics_for_a_single_node_command() {
    let d = tempfile::tempdir().unwrap();
    let prom = d.path().join("cache.prom");
    let om = d.path().join("cache.om");
    let run = d.path().join("cache.json");
    let host = bwscope::platform::detect_host(false);
    let sizes = format!("16KiB,{}KiB", dram_size(&host) >> 10);
    bwscope()
        .args([
            "cache",
            "--quick",
            "--sizes",
            &sizes,
            "--samples",
            "3",
            "--min-sample-ms",
            "2",
        ])
        .arg("--prometheus")
        .arg(&prom)
        .arg("--openmetrics")
        .arg(&om)
        .arg("--json")
        .arg(&run)
        .assert()
        .success();
    let t = std::fs::read_to_string(&prom).unwrap();
    assert!(t.contains("bwscope_run_info{host="), "{t}");
    for (figure, level) in [("l1_read", "l1"), ("dram_read", "dram")] {
        assert!(
            t.contains(&format!(
                "command=\"cache\",figure=\"{figure}\",level=\"{level}\",op=\"read\",cores=\"1\"}}"
            )),
            "{figure}: {t}"
        );
    }
    let o = std::fs::read_to_string(&om).unwrap();
    assert!(o.ends_with("# EOF\n"), "{o}");
    check_openmetrics(&o);
    // The same from the saved run, in either grammar: the same lines,
    // each value to the last digit or two (the JSON keeps the shortest
    // decimal that reads back, 1e9 times it may round the other way).
    for (format, same) in [("prometheus", &t), ("openmetrics", &o)] {
        let out = bwscope()
            .args(["report", run.to_str().unwrap(), "-f", format])
            .output()
            .unwrap();
        assert!(out.status.success());
        let again = String::from_utf8_lossy(&out.stdout);
        assert_eq!(again.lines().count(), same.lines().count(), "{format}");
        for (a, b) in again.lines().zip(same.lines()) {
            match (a.rsplit_once(' '), b.rsplit_once(' ')) {
                (Some((la, va)), Some((lb, vb))) if !a.starts_with('#') => {
                    let (x, y): (f64, f64) = (va.parse().unwrap(), vb.parse().unwrap());
                    assert_eq!(la, lb, "{format}");
                    assert!((x - y).abs() <= 1e-12 * x.abs().max(y.abs()), "{a} vs {b}");
                }
                _ => assert_eq!(a, b, "{format}"),
            }
        }
    }
}

#[test]
fn a_killed_rank_is_lost_and_the_others_are_kept() {
    let d = tempfile::tempdir().unwrap();
    let mut ranks = Ranks::spawn(3, d.path(), &args(&["--out", "res", "--timeout", "30"]));
    ranks.wait_for("round 1 of 3", common::fleet::STARTUP);
    unsafe {
        libc::kill(ranks.pid(2), libc::SIGKILL);
    }
    let codes = ranks.wait_all(Duration::ZERO);
    assert_eq!(codes[0], 0, "rank 0 finishes: {codes:?}");
    assert_eq!(codes[1], 0);
    let f = load(&d.path().join("res/fleet.json"));
    assert_valid(&f, 3);
    let lost = &f["nodes"][2];
    assert_eq!(lost["status"], "lost");
    assert_eq!(lost["lost_in"], "node");
    assert!(
        lost["reason"].as_str().unwrap().contains("closed"),
        "{lost}"
    );
    for r in 0..2 {
        assert!(f["nodes"][r]["run"]["records"]
            .as_array()
            .is_some_and(|v| !v.is_empty()));
    }
    // The network phase went on between the two that are left.
    assert!(flows(&f, 0, 1)[0]["recv_gbps"].as_f64().unwrap() > 0.0);
    assert!(flows(&f, 0, 2).is_empty());
    let v = &f["verdicts"]["nodes"][2];
    assert_eq!(
        (v["ok"].as_bool(), v["drain"].as_bool()),
        (Some(false), Some(true))
    );
    let verdicts = std::fs::read_to_string(d.path().join("res/verdicts.txt")).unwrap();
    assert!(
        verdicts
            .lines()
            .any(|l| l.contains(" FAIL lost in the node phase")),
        "{verdicts}"
    );
    // Two nodes left, no reference: nothing judged them, so neither is OK.
    for r in 0..2 {
        let label = f["nodes"][r]["label"].as_str().unwrap();
        let line = verdicts
            .lines()
            .find(|l| l.starts_with(&format!("{label} ")))
            .unwrap();
        assert!(line.contains(" UNKNOWN not judged: "), "{line}");
    }
}

#[test]
fn a_hung_rank_is_lost_within_the_timeout() {
    let d = tempfile::tempdir().unwrap();
    let mut ranks = Ranks::spawn(
        3,
        d.path(),
        &[
            "--suites",
            "none",
            "--step-time",
            "0.3",
            "--omit",
            "0.1",
            "--out",
            "res",
            "--timeout",
            "3",
        ],
    );
    ranks.wait_for("ranks joined", common::fleet::STARTUP);
    unsafe {
        libc::kill(ranks.pid(1), libc::SIGSTOP);
    }
    // Rank 0 gives up on it after a leader's bound with a hung peer (the
    // step, two peer timeouts of 3 s) and a grace of 2 s.
    assert_eq!(ranks.wait_rank(0, Duration::from_secs(12)), 0);
    assert_eq!(ranks.wait_rank(2, Duration::from_secs(12)), 0);
    let f = load(&d.path().join("res/fleet.json"));
    assert_valid(&f, 3);
    let n = &f["nodes"][1];
    assert_eq!(
        (n["status"].as_str(), n["lost_in"].as_str()),
        (Some("lost"), Some("network"))
    );
    assert!(n["reason"].as_str().unwrap().contains("silent"), "{n}");
    // Its cells are null with a reason; the others were measured.
    for x in f["network"][0]["flows"].as_array().unwrap() {
        if x["src"] == 1 || x["dst"] == 1 {
            assert!(x["recv_gbps"].is_null() && x["reason"].is_string(), "{x}");
        }
    }
    assert!(flows(&f, 2, 0)[0]["recv_gbps"].as_f64().unwrap() > 0.0);
}

/// Rank 2 is stopped in the middle of its test with rank 1 (the only
/// test of the step: rank 0 leads none, so its patience starts at the
/// broadcast). Rank 1's test ends only after its waits for the hung peer;
/// rank 0 must wait for that and lose rank 2 alone, not its healthy
/// partner.
#[test]
fn a_rank_stopped_mid_test_is_lost_alone() {
    let d = tempfile::tempdir().unwrap();
    let mut ranks = Ranks::spawn(
        3,
        d.path(),
        &[
            "--suites",
            "none",
            "--schedule",
            "pairs",
            "--pairs-at-once",
            "half",
            "--step-time",
            "3",
            "--omit",
            "0.2",
            "--out",
            "res",
            "--timeout",
            "3",
        ],
    );
    ranks.wait_for("network phase over tcp", common::fleet::STARTUP);
    std::thread::sleep(Duration::from_millis(1500));
    unsafe {
        libc::kill(ranks.pid(2), libc::SIGSTOP);
    }
    // Rank 0 loses rank 2 after a leader's bound (the test, two peer
    // timeouts) and its grace: at most 3.2 + 6 + 2.05 s per step.
    assert_eq!(ranks.wait_rank(0, Duration::from_secs(12)), 0);
    assert_eq!(ranks.wait_rank(1, Duration::from_secs(12)), 0);
    let f = load(&d.path().join("res/fleet.json"));
    assert_valid(&f, 3);
    let (one, two) = (&f["nodes"][1], &f["nodes"][2]);
    assert_eq!(two["status"], "lost", "{two}");
    assert_eq!(two["lost_in"], "network");
    assert_eq!(one["status"], "ok", "the healthy partner is kept: {one}");
    let v = &f["verdicts"]["nodes"][1];
    assert_eq!(v["drain"], false, "{v}");
    // Its flows with rank 2 are null with a reason and put down to rank 2.
    for x in flows(&f, 1, 2).into_iter().chain(flows(&f, 2, 1)) {
        assert!(x["recv_gbps"].is_null() && x["reason"].is_string(), "{x}");
    }
    assert!(flows(&f, 0, 1)
        .into_iter()
        .chain(flows(&f, 1, 0))
        .any(|x| x["recv_gbps"].as_f64().is_some_and(|g| g > 0.0)));
}

#[test]
fn a_mixed_release_is_refused_before_measuring() {
    use bwscope::cluster::comm::Identity;
    use bwscope::cluster::rendezvous;
    use bwscope::cluster::wire::{read_msg, write_msg, Wire};
    let d = tempfile::tempdir().unwrap();
    // Only rank 0 of two is a real bwscope; this test is rank 1, an older
    // release speaking the same join.
    let mut ranks = Ranks::spawn_ranks(
        2,
        &[0],
        d.path(),
        &args(&["--out", "res", "--timeout", "30"]),
    );
    let note_path = rendezvous::path(d.path(), Some(&ranks.job));
    let t0 = std::time::Instant::now();
    let note = loop {
        if let Some(n) = rendezvous::read(&note_path) {
            break n;
        }
        assert!(t0.elapsed() < Duration::from_secs(30), "no rendezvous file");
        std::thread::sleep(Duration::from_millis(50));
    };
    let token = rendezvous::from_hex(note.token.as_deref().unwrap()).unwrap();
    let mut s = TcpStream::connect(note.addrs[0]).unwrap();
    let mut id = Identity::this(1, 2, Some(ranks.job.clone()));
    id.hostname = "old-node".into();
    id.version = "0.0.1-old".into();
    write_msg(
        &mut s,
        &Wire::Join {
            magic: "bwscope-fleet".into(),
            id,
        },
    )
    .unwrap();
    let Wire::Challenge { nonce: Some(n) } =
        read_msg(&mut s, 1 << 16, Some(Duration::from_secs(10))).unwrap()
    else {
        panic!("rank 0 challenges");
    };
    let nonce: [u8; 32] = rendezvous::from_hex(&n).unwrap().try_into().unwrap();
    let mac = bwscope::net::protocol::auth_mac(&token, &nonce);
    write_msg(
        &mut s,
        &Wire::Auth {
            mac: rendezvous::to_hex(&mac),
        },
    )
    .unwrap();
    assert!(matches!(
        read_msg(&mut s, 1 << 16, Some(Duration::from_secs(10))),
        Ok(Wire::Accepted)
    ));
    let Ok(Wire::Refused { reason }) = read_msg(&mut s, 1 << 20, Some(Duration::from_secs(30)))
    else {
        panic!("rank 0 refuses the mixed fleet");
    };
    assert!(
        reason.contains("old-node (rank 1)") && reason.contains("0.0.1-old"),
        "{reason}"
    );
    let codes = ranks.wait(Duration::from_secs(30));
    assert_eq!(codes, vec![Some(2)]);
    assert!(
        !d.path().join("res/fleet.json").exists(),
        "nothing measured, nothing written"
    );
}

#[test]
fn ctrl_c_on_rank_0_keeps_finished_records() {
    let d = tempfile::tempdir().unwrap();
    let mut args = common::fleet::INTERRUPTIBLE.to_vec();
    args.extend(["--out", "res", "--timeout", "30"]);
    let mut ranks = Ranks::spawn(3, d.path(), &args);
    let (limit, why) = ranks.limit(Duration::ZERO);
    ranks.wait_for("round 2 of 3", limit);
    std::thread::sleep(Duration::from_millis(500));
    unsafe {
        libc::kill(ranks.pid(0), libc::SIGINT);
    }
    let codes = ranks.wait(limit);
    assert_eq!(
        codes,
        vec![Some(130); 3],
        "within {limit:?} ({why}): every rank reports the interruption"
    );
    let f = load(&d.path().join("res/fleet.json"));
    assert_eq!(
        (f["interrupted"].as_bool(), f["complete"].as_bool()),
        (Some(true), Some(false))
    );
    // Round 1 finished; round 2 delivered what it had; round 3 never ran.
    assert_eq!(f["nodes"][0]["status"], "ok");
    assert!(!f["nodes"][0]["run"]["records"]
        .as_array()
        .unwrap()
        .is_empty());
    assert_eq!(f["nodes"][1]["status"], "interrupted");
    assert_eq!(f["nodes"][1]["run"]["interrupted"], true);
    assert_eq!(f["nodes"][2]["status"], "interrupted");
    assert!(f["nodes"][2]["run"].is_null());
    assert!(f["network"].as_array().unwrap().is_empty());
    let v = std::fs::read_to_string(d.path().join("res/verdicts.txt")).unwrap();
    assert!(v.lines().any(|l| l.contains("UNKNOWN interrupted")), "{v}");
}
