//! Headless Chromium for the HTML report tests: find it, run it with a
//! fresh profile and a watchdog, read attributes off the dumped DOM.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

pub fn chromium() -> Option<PathBuf> {
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
pub fn headless(bin: &Path, profile: &Path, extra: &[String], url: &str) -> (String, String) {
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

pub fn attr<'a>(dom: &'a str, tag_start: &str, name: &str) -> Option<&'a str> {
    let start = dom.find(tag_start)?;
    let tag = &dom[start..start + dom[start..].find('>')?];
    let key = format!("{name}=\"");
    let i = tag.find(&key)? + key.len();
    Some(&tag[i..i + tag[i..].find('"')?])
}

/// Open `url`, let its scripts run, and return the DOM, failing on a
/// script error (recorded by the page in `data-js-errors` on `<html>`) or
/// an error on the console.
pub fn dump_dom(bin: &Path, profile: &Path, url: &str) -> String {
    let (dom, log) = headless(
        bin,
        profile,
        &["--dump-dom".into(), "--virtual-time-budget=3000".into()],
        url,
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
    dom
}
