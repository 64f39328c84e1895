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
    let run = write(dir.path(), "all.json", &synthetic_run());
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
