//! The default survey: runs every step, prints the summary, and saves the
//! JSON and the HTML report into the folder it names.

mod common;

use common::bwscope;

#[test]
fn survey_saves_json_and_report() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("results");
    let t0 = std::time::Instant::now();
    let out = bwscope()
        .env("XDG_CACHE_HOME", dir.path().join("xdg"))
        .args(["--out", out_dir.to_str().unwrap()])
        .output()
        .unwrap();
    eprintln!("survey took {:.1} s", t0.elapsed().as_secs_f64());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("core clock"), "info step printed");
    // Under an emulator (the aarch64 tests in CI run under qemu-user) no
    // cache size is known and no knee is probed: the files describe the
    // emulator's host, so nothing gets a regime; the run says why.
    let emulated = bwscope::platform::emulation().is_some();
    if !emulated {
        assert!(stdout.contains("summary   L1 read "), "{stdout}");
        assert!(stdout.contains("DRAM read "), "{stdout}");
    } else {
        assert!(stdout.contains("summary"), "{stdout}");
        assert!(stdout.contains("running under an emulator"), "{stdout}");
    }
    assert!(
        stdout.contains(&format!("saved     {}/", out_dir.display())),
        "{stdout}"
    );
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("run.json")).unwrap()).unwrap();
    assert_eq!(run["command"], "survey");
    assert_eq!(run["complete"], true);
    assert_eq!(run["options"]["steps"][1]["name"], "knees");
    assert_eq!(run["options"]["steps"][2]["name"], "cache");
    let recs = run["records"].as_array().unwrap();
    let html = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    assert!(html.contains("chart-cache-size"));
    if emulated {
        assert!(run["host"]["knees"].is_null());
        assert!(!dir.path().join("xdg/bwscope").exists(), "nothing stored");
        // Every suite ran and its kernels proved themselves (reads verified).
        for suite in ["cache", "latency", "threads", "memtype"] {
            assert!(
                recs.iter()
                    .any(|r| r["suite"] == suite && r["status"] == "ok" && r["regime"].is_null()),
                "{suite}"
            );
        }
        assert!(recs
            .iter()
            .any(|r| r["op"] == "read" && r["extra"]["verified"] == true));
        return;
    }
    // The knee probe ran, went on the host and into the store.
    assert_eq!(run["host"]["knees"]["source"], "this run");
    assert!(dir.path().join("xdg/bwscope").read_dir().unwrap().count() == 1);
    assert!(recs
        .iter()
        .any(|r| r["suite"] == "cache" && r["regime"] == "DRAM" && r["status"] == "ok"));
    // The DRAM reads were measured once more at the end (issue 29).
    let again: Vec<&serde_json::Value> = recs
        .iter()
        .filter(|r| {
            r["repeats"]["turns"]
                .as_array()
                .is_some_and(|t| t.iter().any(|t| t["at"] == "again"))
        })
        .collect();
    assert!(
        again
            .iter()
            .any(|r| r["suite"] == "cache" && r["threads"] == 1),
        "the single-thread DRAM read has its turns"
    );
    assert!(
        stdout.contains(" measurements)"),
        "the summary gives the range: {stdout}"
    );
    assert!(html.contains("L1 read "));
}
