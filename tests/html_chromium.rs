//! The HTML report in a real browser (headless Chromium): no script
//! errors, every chart present, tables sort, a screenshot is taken. Skips
//! with a message where Chromium is not installed.

mod common;

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
