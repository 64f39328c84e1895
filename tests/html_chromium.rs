//! The HTML report in a real browser (headless Chromium): no script
//! errors, every chart present, tables sort, a screenshot is taken. Skips
//! with a message where Chromium is not installed.

// Unix: signals, /proc, namespaces, guests, device nodes or Unix-only
// tools (the Windows build runs tests/windows.rs instead).
#![cfg(unix)]

mod common;

use std::path::Path;

use common::browser::{attr, chromium, dump_dom, headless};
use common::{bwscope, synthetic_run, write};

#[test]
fn report_renders_in_chromium() {
    let Some(bin) = chromium() else {
        eprintln!(
            "SKIP report_renders_in_chromium: chromium is not installed (apt-get install chromium)"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut all = synthetic_run();
    // The cache records carry their limits (a roofline in bandwidth form):
    // L1 load ports, L2→L1 fill, the DRAM peak.
    for r in all["records"].as_array_mut().unwrap() {
        if r["suite"] != "cache" {
            continue;
        }
        let (limit, bound) = match r["regime"].as_str() {
            Some("L1") => (400.0, "l1_load_ports"),
            Some("L2") => (200.0, "l2_fill"),
            _ => (76.8, "dram_channels"),
        };
        r["limit_gbps"] = serde_json::json!(limit);
        r["bound_by"] = serde_json::json!(bound);
        r["percent_of_limit"] =
            serde_json::json!(r["gbps"]["best"].as_f64().unwrap() / limit * 100.0);
    }
    let run = write(dir.path(), "all.json", &all);
    let html = dir.path().join("report.html");
    bwscope()
        .args(["report", &run, "-o", html.to_str().unwrap()])
        .assert()
        .success();
    let text = std::fs::read_to_string(&html).unwrap();
    let figures = text.matches("<figure class=chart").count();
    assert_eq!(figures, 5, "cache, latency, threads, numa, net");
    let url = format!("file://{}#selftest", html.display());

    let dom = dump_dom(&bin, &dir.path().join("profile-dom"), &url);
    assert_eq!(
        attr(&dom, "<body", "data-charts"),
        Some(figures.to_string().as_str()),
        "every chart drew an <svg>"
    );
    let selftest = attr(&dom, "<body", "data-selftest").unwrap_or("missing");
    assert!(selftest.starts_with("ok "), "sorting self-test: {selftest}");
    // Each limit is drawn as a labelled line in the cache chart, and the
    // browser kept the labels in the rendered SVG.
    for label in [
        "L1 limit: L1 load ports 400 GB/s",
        "L2 limit: L2→L1 fill 200 GB/s",
        "DRAM limit: DRAM peak 76.8 GB/s",
    ] {
        assert!(text.contains(label), "{label} not in the report");
        assert!(dom.contains(label), "{label} not in the rendered page");
    }

    let shot = dir.path().join("report.png");
    let (_, log) = headless(
        &bin,
        &dir.path().join("profile-shot"),
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1280,2400".into(),
        ],
        &format!("file://{}", html.display()),
    );
    let bytes =
        std::fs::read(&shot).unwrap_or_else(|_| panic!("no screenshot; chromium said:\n{log}"));
    let reader = png::Decoder::new(std::io::Cursor::new(bytes))
        .read_info()
        .unwrap();
    assert_eq!(reader.info().width, 1280);
    eprintln!("screenshot: {}", shot.display());
    if let Some(keep) = std::env::var_os("BWSCOPE_KEEP_SCREENSHOT") {
        std::fs::copy(&shot, keep).unwrap();
    }
}

/// `html` in headless Chromium at a window `width` px wide: the widths of
/// a table and of its container, from the page's `attribute` on `<body>`.
fn widths(bin: &Path, dir: &Path, html: &Path, width: u32, attribute: &str) -> (f64, f64) {
    let (dom, log) = headless(
        bin,
        &dir.join("profile"),
        &[
            "--dump-dom".into(),
            "--virtual-time-budget=3000".into(),
            format!("--window-size={width},1000"),
        ],
        &format!("file://{}", html.display()),
    );
    let fit = attr(&dom, "<body", attribute)
        .unwrap_or_else(|| panic!("no {attribute}; chromium said:\n{log}"));
    eprintln!("{attribute}: table and container widths {fit}");
    let (table, wrap) = fit.split_once(' ').unwrap();
    (table.parse().unwrap(), wrap.parse().unwrap())
}

/// A fleet of five nodes with every figure (the synthetic run's suites on
/// each node, TCP and MPI matrices), long host names and a long note.
fn wide_fleet() -> serde_json::Value {
    use serde_json::json;
    let run = synthetic_run();
    let n = 5u32;
    let mut flows = Vec::new();
    for d in 1..n {
        for r in 0..n {
            flows.push(json!({"src": r, "dst": (r + d) % n, "size_bytes": 1 << 20, "step": d - 1,
                "concurrent": n, "send_gbps": 1.2, "recv_gbps": 1.1 + 0.01 * r as f64, "bytes": 1000, "reason": null}));
        }
    }
    let matrix = |t: &str| {
        json!({"transport": t, "schedule": "shift", "sizes": [1 << 20], "steps": n - 1,
        "parameters": {}, "seconds": 1.0, "flows": flows})
    };
    let nodes: Vec<serde_json::Value> = (0..n)
        .map(|r| {
            json!({"rank": r, "label": format!("compute-node-{r:04}.cluster.example.org"),
                "hostname": format!("compute-node-{r:04}.cluster.example.org"), "machine": format!("m{r}"),
                "local_rank": 0, "address": format!("10.0.0.{}:4000", r + 1),
                "status": if r == 4 { "interrupted" } else { "ok" }, "lost_in": null,
                "reason": if r == 4 { Some("interrupted while measuring: the per-node phase was stopped by Ctrl-C on rank 0 before its last suite finished") } else { None },
                "node_seconds": 3.0, "run": run})
        })
        .collect();
    json!({"kind": "bwscope-fleet", "fleet_schema_version": 1, "schema_version": run["schema_version"],
        "tool": run["tool"], "command_line": ["bwscope", "fleet"], "options": {},
        "launch": {"launcher": "openmpi", "control": "tcp", "ranks": n, "machines": n, "job": null},
        "started_at": "2026-11-21T12:00:00Z", "finished_at": "2026-11-21T12:01:00Z", "complete": true,
        "interrupted": false, "nodes": nodes, "network": [matrix("tcp"), matrix("mpi")], "verdicts": null,
        "timings": {"total_seconds": 60.0, "startup_seconds": 1.0, "node_phase_seconds": 30.0,
            "node_measure_seconds": 29.0, "network_seconds": 20.0, "network_measure_seconds": 19.0,
            "overhead_fraction": 0.2},
        "warnings": []})
}

#[test]
fn the_fleet_node_table_fits_a_1400_px_window() {
    let Some(bin) = chromium() else {
        eprintln!("SKIP the_fleet_node_table_fits_a_1400_px_window: chromium is not installed (apt-get install chromium)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let fleet = write(dir.path(), "fleet.json", &wide_fleet());
    let html = dir.path().join("fleet.html");
    bwscope()
        .args(["report", &fleet, "-o", html.to_str().unwrap()])
        .assert()
        .success();
    let text = std::fs::read_to_string(&html).unwrap();
    let columns = text.matches("<th class=metric").count();
    assert!(columns >= 10, "every figure has a column: {columns}");
    let (table, wrap) = widths(&bin, dir.path(), &html, 1400, "data-nodes-fit");
    assert!(wrap > 800.0, "the container is the page's width: {wrap}");
    assert!(
        table <= wrap,
        "the node table ({table} px) is wider than its container ({wrap} px) at 1400 px"
    );
}

/// Issue 29: the record table of a survey's report was 1,793 px wide in a
/// 1,135 px container at a 1280 px window, its warnings column cut. Kernel
/// names break after an underscore and warnings between words, so it fits.
#[test]
fn the_record_table_fits_a_1280_px_window() {
    let dir = tempfile::tempdir().unwrap();
    let mut run = synthetic_run();
    let long = serde_json::json!([
        {"kind": "above_ceiling", "gbps": 236.4, "ceiling_gbps": 216.1, "bound_by": "l1_store_ports"},
        {"kind": "foreign_load", "cpus": 0.85},
        {"kind": "descheduled", "samples": 7, "retaken": 14},
        {"kind": "other", "message": "this record's threads ran on several kinds of core (mixed: cortex-a55×1+cortex-a76×1)", "hint": "pick one kind"}
    ]);
    for r in run["records"].as_array_mut().unwrap() {
        r["kernel"] = format!("{}_with_a_long_suffix_nt", r["kernel"].as_str().unwrap()).into();
        r["warnings"] = long.clone();
    }
    let path = write(dir.path(), "run.json", &run);
    let html = dir.path().join("report.html");
    bwscope()
        .args(["report", &path, "-o", html.to_str().unwrap()])
        .assert()
        .success();
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(
        text.contains("td.notes{white-space:normal"),
        "warnings wrap"
    );
    assert!(text.contains("<td class=k>seq_<wbr>read_<wbr>512_<wbr>"));
    let Some(bin) = chromium() else {
        eprintln!("SKIP the_record_table_fits_a_1280_px_window: chromium is not installed (apt-get install chromium)");
        return;
    };
    let (table, wrap) = widths(&bin, dir.path(), &html, 1280, "data-records-fit");
    assert!(wrap > 1000.0, "the container is the page's width: {wrap}");
    assert!(
        table <= wrap,
        "the record table ({table} px) is wider than its container ({wrap} px) at 1280 px"
    );
}
