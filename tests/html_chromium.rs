//! The HTML report in a real browser (headless Chromium): no script
//! errors, every chart present, tables sort, a screenshot is taken. Skips
//! with a message where Chromium is not installed.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{bwscope, synthetic_run, write};

fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| {
            std::env::var_os("PATH")
                .map(|p| {
                    std::env::split_paths(&p)
                        .map(|d| d.join(name))
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
        })
        .find(|p| p.is_file())
}

/// Run headless Chromium with a fresh profile; returns (stdout, stderr).
fn headless(bin: &Path, profile: &Path, extra: &[String], url: &str) -> (String, String) {
    let child = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chromium");
    // Never hang the test suite on a stuck browser.
    let pid = child.id();
    let watchdog = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(90));
        unsafe {
            libc::kill(pid as i32, libc::SIGKILL);
        }
    });
    let out = child.wait_with_output().expect("chromium output");
    drop(watchdog);
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn attr<'a>(dom: &'a str, tag_start: &str, name: &str) -> Option<&'a str> {
    let start = dom.find(tag_start)?;
    let tag = &dom[start..start + dom[start..].find('>')?];
    let key = format!("{name}=\"");
    let i = tag.find(&key)? + key.len();
    Some(&tag[i..i + tag[i..].find('"')?])
}

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

    let (dom, log) = headless(
        &bin,
        &dir.path().join("profile-dom"),
        &["--dump-dom".into(), "--virtual-time-budget=3000".into()],
        &url,
    );
    assert!(
        dom.contains("<body"),
        "no DOM dumped; chromium said:\n{log}"
    );
    assert_eq!(attr(&dom, "<html", "data-js-errors"), None, "script errors");
    for line in log.lines() {
        assert!(
            !(line.contains("CONSOLE") && (line.contains("Uncaught") || line.contains("Error"))),
            "console error: {line}"
        );
    }
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
