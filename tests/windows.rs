//! The Windows build end to end (run under wine in CI, natively on
//! Windows): the survey, the codedivine.org experiment's write-combined and uncached memory on
//! plain RAM, the process team started as programs of their own, a
//! network pair on loopback, console control events, large pages without
//! the right, and what the system says of itself. Correctness only: wine's
//! times are not Windows times (every run here says so), and wine drops
//! `PAGE_WRITECOMBINE` (its records say that too).

#![cfg(windows)]

use std::io::{BufRead, BufReader};
use std::process::{Command as Std, Stdio};
use std::time::Duration;

use serde_json::Value;

/// The binary (std's Command: assert_cmd's pipes fail under wine with
/// "invalid handle").
/// The tests' history store, under cargo's target folder (never the
/// user's data folder; tests/common is Unix-only).
const HISTORY: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/test-history/history.sqlite3");

fn bwscope() -> Std {
    let mut c = Std::new(env!("CARGO_BIN_EXE_bwscope"));
    c.env("BWSCOPE_HISTORY", HISTORY);
    c.stdin(Stdio::null());
    c
}

fn run_json(args: &[&str]) -> Value {
    let out = bwscope().args(args).args(["--json", "-"]).output().unwrap();
    assert!(
        out.status.success(),
        "bwscope {args:?} failed ({:?}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

fn under_wine(run: &Value) -> bool {
    run["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["message"].as_str().is_some_and(|m| m.contains("wine")))
}

fn records(run: &Value) -> &Vec<Value> {
    run["records"].as_array().unwrap()
}

#[test]
fn info_states_what_windows_says_of_the_machine() {
    let out = bwscope().args(["info", "--json", "-"]).output().unwrap();
    assert!(out.status.success());
    let h: Value = serde_json::from_slice(&out.stdout).unwrap();
    let h = if h.get("host").is_some() {
        &h["host"]
    } else {
        &h
    };
    assert!(
        h["env"]["kernel"].as_str().unwrap().starts_with("Windows"),
        "{}",
        h["env"]
    );
    assert!(h["env"]["mem_total_bytes"].as_u64().unwrap() > 1 << 28);
    // Linux knobs are not stated as if they existed.
    assert!(h["env"]["thp_enabled"].is_null());
    let caches = h["caches"].as_array().unwrap();
    assert!(!caches.is_empty());
    assert!(
        caches.iter().any(|c| c["source"]
            .as_str()
            .unwrap()
            .contains("GetLogicalProcessorInformationEx")),
        "{caches:?}"
    );
    assert!(!h["allowed_cpus"].as_array().unwrap().is_empty());
}

#[test]
fn the_survey_runs_end_to_end_and_says_wine_is_no_measurement() {
    let run = run_json(&["--no-save"]);
    assert_eq!(run["complete"], true);
    let suites: std::collections::BTreeSet<&str> = records(&run)
        .iter()
        .filter_map(|r| r["suite"].as_str())
        .collect();
    for s in ["cache", "latency", "threads", "memtype"] {
        assert!(suites.contains(s), "{s} missing: {suites:?}");
    }
    // Read records prove every byte was read.
    for r in records(&run)
        .iter()
        .filter(|r| r["status"] == "ok" && r["op"] == "read")
    {
        if let Some(v) = r["extra"].get("verified") {
            assert_ne!(v, false, "{r}");
        }
    }
    // No transparent huge pages here: no THP record and no THP warning.
    assert!(!records(&run).iter().any(|r| r["memory"]["kind"] == "thp"));
    let text = serde_json::to_string(&run["warnings"]).unwrap();
    assert!(!text.contains("transparent huge pages"), "{text}");
    if under_wine(&run) {
        eprintln!("under wine: the run is marked as an emulator's");
    }
}

#[test]
fn write_combined_and_uncached_plain_ram_copy_and_read_back() {
    let run = run_json(&[
        "memtype",
        "--kinds",
        "wc,uc",
        "--size",
        "4MiB",
        "--passes",
        "3",
        "--read-passes",
        "2",
    ]);
    let recs = records(&run);
    let kinds: Vec<&str> = recs
        .iter()
        .map(|r| r["memory"]["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["regular", "wc", "uc"]);
    for r in recs {
        assert_eq!(r["status"], "ok", "{r}");
        let e = &r["extra"];
        assert_eq!(e["data_verified"], true, "{r}");
        // A copy of N counts 2N in gbps and N in the payload.
        let g = r["gbps"]["best"].as_f64().unwrap();
        let p = r["payload_gbps"]["best"].as_f64().unwrap();
        assert!((g / p - 2.0).abs() < 1e-6);
    }
    let wc = &recs[1];
    assert_eq!(
        wc["extra"]["protection_asked"],
        "PAGE_READWRITE | PAGE_WRITECOMBINE"
    );
    let got = wc["extra"]["protection_got"].as_str().unwrap();
    let warned = wc["warnings"].as_array().is_some_and(|w| {
        w.iter().any(|w| {
            w["message"]
                .as_str()
                .is_some_and(|m| m.contains("did not apply"))
        })
    });
    // Windows applies the flag; wine drops it, and the record says so.
    assert!(got.contains("PAGE_WRITECOMBINE") || warned, "{wc}");
    assert_eq!(
        recs[2]["extra"]["protection_asked"],
        "PAGE_READWRITE | PAGE_NOCACHE"
    );
    assert!(recs[2]["extra"]["protection_got"]
        .as_str()
        .unwrap()
        .contains("PAGE_NOCACHE"));
}

#[test]
fn large_pages_without_the_right_name_it() {
    let run = run_json(&[
        "memtype",
        "--size",
        "4MiB",
        "--passes",
        "2",
        "--read-passes",
        "1",
    ]);
    let r = records(&run)
        .iter()
        .find(|r| r["memory"]["kind"] == "hugetlb-2M")
        .expect("a hugetlb-2M record");
    if r["status"] == "ok" {
        eprintln!("this account holds \"Lock pages in memory\": large pages measured");
        return;
    }
    assert_eq!(r["status"], "skipped");
    assert!(
        r["reason"]
            .as_str()
            .unwrap()
            .contains("Lock pages in memory"),
        "{r}"
    );
    let out = bwscope()
        .args(["memtype", "--kinds", "hugetlb-2M", "--size", "4MiB"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("Lock pages in memory"));
}

#[test]
fn the_process_team_runs_as_programs_of_their_own() {
    let run = run_json(&[
        "threads",
        "--processes",
        "--sizes",
        "256KiB",
        "--kernel",
        "seq_read_64_scalar",
        "--samples",
        "3",
    ]);
    let recs: Vec<&Value> = records(&run)
        .iter()
        .filter(|r| r["status"] == "ok")
        .collect();
    assert!(!recs.is_empty());
    let max = recs
        .iter()
        .map(|r| r["threads"].as_u64().unwrap())
        .max()
        .unwrap();
    let cpus = run["host"]["allowed_cpus"].as_array().unwrap().len() as u64;
    assert_eq!(max, cpus.max(1), "one worker per cpu");
    for r in recs {
        assert_ne!(r["extra"]["verified"], false, "{r}");
    }
}

#[test]
fn a_network_pair_on_loopback() {
    let mut srv = Std::new(env!("CARGO_BIN_EXE_bwscope"))
        .env("BWSCOPE_HISTORY", HISTORY)
        .args([
            "net",
            "serve",
            "--bind",
            "127.0.0.1",
            "--port",
            "0",
            "--once",
        ])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(srv.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let port: u16 = line
        .split("listening on 127.0.0.1:")
        .nth(1)
        .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {line:?}"));
    std::thread::spawn(move || for _ in err.lines() {});
    let run = run_json(&[
        "net",
        "run",
        &format!("127.0.0.1:{port}"),
        "-m",
        "stream",
        "-d",
        "bidir",
        "-t",
        "0.5",
        "-O",
        "0.1",
    ]);
    let ops: Vec<&str> = records(&run)
        .iter()
        .map(|r| r["op"].as_str().unwrap())
        .collect();
    assert_eq!(ops, ["send", "recv"]);
    for r in records(&run) {
        assert_eq!(r["status"], "ok", "{r}");
        assert!(r["gbps"]["best"].as_f64().unwrap() > 0.0);
    }
    let _ = srv.kill();
    let _ = srv.wait();
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    for (args, needle) in [
        (vec!["cache", "--cpus", "4096"], "--cpus"),
        (
            vec![
                "memtype",
                "--device-mem",
                r"\\.\PhysicalMemory",
                "--allow-device-writes",
            ],
            "Linux",
        ),
        (
            vec!["memtype", "--kinds", "thp"],
            "does not exist on this system",
        ),
    ] {
        let out = bwscope().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(e.contains(needle), "{args:?}: {e}");
        assert_eq!(e.trim().lines().count(), 1, "{args:?}: {e}");
    }
}

/// Ctrl-Break to a run in its own process group stops it after the
/// current sample with every finished record kept, exit 143 (SIGTERM's).
/// Wine has no console to deliver the event on (GenerateConsoleCtrlEvent
/// fails): the test says so and skips.
#[test]
fn ctrl_break_keeps_the_records_and_exits_143() {
    use std::os::windows::process::CommandExt;
    use windows_sys::Win32::System::Console::{GenerateConsoleCtrlEvent, CTRL_BREAK_EVENT};
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let mut child = bwscope()
        .args(["cache", "--sizes", "16KiB..256MiB:x2", "--json"])
        .arg(&json)
        .creation_flags(0x0000_0200) // CREATE_NEW_PROCESS_GROUP
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(3));
    // SAFETY: an event to the child's own process group.
    if unsafe { GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, child.id()) } == 0 {
        let _ = child.kill();
        let _ = child.wait();
        eprintln!(
            "skipped: no console to deliver Ctrl-Break on ({}; wine has none)",
            std::io::Error::last_os_error()
        );
        return;
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143));
    let run: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(run["interrupted"], true);
    assert!(!records(&run).is_empty());
}

/// Issue 30 on Windows: a report never replaces the file its stdin reads
/// (the handle's file index against the path's), and a second run given
/// the same `--json` while the first writes it is refused (`LockFile` on
/// the lock file beside it) instead of interleaving with it.
#[test]
fn stdin_and_outputs_another_run_holds_are_never_overwritten() {
    let d = tempfile::tempdir().unwrap();
    let run = d.path().join("run.json");
    let made = bwscope()
        .args([
            "cache",
            "--kernel",
            "seq_read_64_scalar",
            "--sizes",
            "16KiB",
        ])
        .args(["--samples", "2", "--min-sample-ms", "1", "--json"])
        .arg(&run)
        .output()
        .unwrap();
    assert!(made.status.success(), "{made:?}");
    let before = std::fs::read(&run).unwrap();
    let out = bwscope()
        .args(["report", "-", "-f", "md", "-o", "run.json"])
        .current_dir(d.path())
        .stdin(std::fs::File::open(&run).unwrap())
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert!(e.contains("is the file being read"), "{e}");
    assert_eq!(std::fs::read(&run).unwrap(), before, "the run was replaced");
    // Two runs, one --json.
    let json = d.path().join("x.json");
    let long = |samples: &str| {
        let mut c = bwscope();
        c.args([
            "cache",
            "--kernel",
            "seq_read_64_scalar",
            "--sizes",
            "16KiB",
        ])
        .args(["--samples", samples, "--min-sample-ms", "100", "--json"])
        .arg(&json)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
        c
    };
    let mut first = long("40").spawn().unwrap();
    let lock = d.path().join(".x.json.bwscope-lock");
    let t0 = std::time::Instant::now();
    while !lock.exists() && t0.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(lock.exists(), "the first run took no claim");
    let second = long("2").output().unwrap();
    let e = String::from_utf8_lossy(&second.stderr);
    let done = first.wait().unwrap();
    assert_eq!(second.status.code(), Some(2), "{e}");
    assert!(e.contains("another bwscope run is writing it now"), "{e}");
    assert!(done.success());
    assert!(!lock.exists(), "the lock file is left behind");
}
