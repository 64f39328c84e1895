//! The run history (issue 40, docs/history.md) through the real binary:
//! runs recorded and listed, imports idempotent, two writers at once,
//! every hostile store the run survives with one warning, `--check`.

// Unix: modes, owners, FIFOs and links are what the hostile stores are.
#![cfg(unix)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{bwscope, fixture, write};
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_bwscope");

/// A bwscope command writing to the store at `store`.
fn at(store: &Path) -> Command {
    let mut c = Command::new(BIN);
    c.env("BWSCOPE_HISTORY", store);
    c
}

/// The quickest measuring run: one size in L1, two samples.
fn quick_run(store: &Path, json: &Path) -> Output {
    at(store)
        .args(["cache", "--quick", "--sizes", "16KiB", "--samples", "2"])
        .arg("--json")
        .arg(json)
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The runs the store lists, as JSON.
fn listed(store: &Path) -> Vec<Value> {
    let o = at(store).args(["history", "--json", "-"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

/// The fixture as a quiet run started at `t`, every figure times `k`.
fn synthetic(t: &str, k: f64) -> Value {
    let mut run = fixture();
    run["started_at"] = json!(t);
    run["warnings"] = json!([]);
    for r in run["records"].as_array_mut().unwrap() {
        r["warnings"] = json!([]);
        common::scale_gbps(r, k);
    }
    run
}

#[test]
fn two_runs_are_listed_with_a_series_per_headline_and_the_json_parses() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("data/bwscope/history.sqlite3");
    for i in 0..2 {
        let o = at(&store)
            .args([
                "cache",
                "--quick",
                "--sizes",
                "16KiB,64MiB",
                "--samples",
                "2",
            ])
            .args(["--json", "-"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(!stderr(&o).contains("history store"), "{}", stderr(&o));
        let run: Value = serde_json::from_slice(&o.stdout).unwrap();
        let h = &run["history"];
        assert_eq!(h["earlier_runs"], i, "{h}");
        let l1 = h["standings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == "L1 read")
            .unwrap_or_else(|| panic!("{h}"));
        assert_eq!(l1["case"], "headline/L1 read");
        assert_eq!(
            l1["earlier"].as_u64().unwrap() + l1["left_out_noisy"].as_u64().unwrap(),
            i
        );
        // `plot` draws a trend for each headline with an earlier figure
        // counted, and none for the others.
        let saved = tmp.path().join(format!("run{i}.json"));
        std::fs::write(&saved, &o.stdout).unwrap();
        let o = at(&store)
            .args(["plot", saved.to_str().unwrap(), "--list"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let list = stdout(&o);
        for s in h["standings"].as_array().unwrap() {
            let id = format!(
                "history-{}",
                s["name"].as_str().unwrap().to_lowercase().replace(' ', "-")
            );
            let drawn = s["recent"].as_array().is_some_and(|r| !r.is_empty());
            assert_eq!(list.contains(&id), drawn, "{id}: {list}");
            assert!(!drawn || i == 1, "a first run has no trend: {s}");
        }
    }
    // Made private: 0600 in a 0700 folder.
    assert_eq!(mode(&store), 0o600);
    assert_eq!(mode(store.parent().unwrap()), 0o700);
    let runs = listed(&store);
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["machine"], runs[1]["machine"]);
    let o = at(&store).args(["history", "show"]).output().unwrap();
    let cases = stdout(&o);
    // 64 MiB is DRAM on most hosts and L3 on some (a Granite or Emerald
    // Rapids guest's CPUID states 260-480 MiB): its read is one of them.
    assert!(cases.contains("2 runs  headline/L1 read"), "{cases}");
    assert!(
        ["L3", "DRAM"]
            .iter()
            .any(|l| cases.contains(&format!("2 runs  headline/{l} read"))),
        "{cases}"
    );
    let o = at(&store)
        .args(["history", "show", "headline/L1 read"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("trend"), "{}", stdout(&o));
    let o = at(&store)
        .args(["history", "show", "headline/L1 read", "--csv", "-"])
        .output()
        .unwrap();
    assert_eq!(stdout(&o).lines().count(), 3, "{}", stdout(&o));
    // The host name is kept only as a hash unless asked.
    let conn = rusqlite::Connection::open(&store).unwrap();
    let (name, hash): (Option<String>, Option<String>) = conn
        .query_row(
            "SELECT hostname, hostname_hash FROM runs LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(name, None);
    assert_eq!(hash.map(|h| h.len()), Some(16));
}

#[test]
fn no_history_writes_no_store() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("h.sqlite3");
    let o = at(&store)
        .args(["--no-history", "cache", "--quick", "--sizes", "16KiB"])
        .args(["--samples", "2", "--json", "-"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!store.exists());
    let run: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(run.get("history").is_none());
    let o = at(&store)
        .env("BWSCOPE_HISTORY", "off")
        .args(["history"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn an_import_is_idempotent_and_reads_results_folders() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("h.sqlite3");
    let results = tmp.path().join("bwscope-results");
    for (i, t) in ["2026-11-01T10:00:00Z", "2026-11-02T10:00:00Z"]
        .iter()
        .enumerate()
    {
        let d = results.join(format!("run{i}"));
        std::fs::create_dir_all(&d).unwrap();
        write(&d, "run.json", &synthetic(t, 1.0));
    }
    let one = write(
        tmp.path(),
        "one.json",
        &synthetic("2026-11-03T10:00:00Z", 1.0),
    );
    let import = |args: &[&str]| {
        let o = at(&store)
            .args(["history", "import"])
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    let dir = results.display().to_string();
    assert!(import(&[&dir, &one]).contains("imported 3 runs, 0 already"));
    assert!(import(&[&dir, &one]).contains("imported 0 runs, 3 already"));
    assert_eq!(listed(&store).len(), 3);
    // A named file that is not a run: one line, exit 2.
    let bad = tmp.path().join("bad.json");
    std::fs::write(&bad, b"{").unwrap();
    let o = at(&store)
        .args(["history", "import"])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
    // Forget by id, then by age; a bad date is a one-line error.
    let id = listed(&store)[0]["id"].to_string();
    let o = at(&store)
        .args(["history", "forget", "--run", &id])
        .output()
        .unwrap();
    assert!(stdout(&o).contains("forgot 1 run"), "{}", stdout(&o));
    let o = at(&store)
        .args(["history", "forget", "--before", "yesterday"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let o = at(&store)
        .args(["history", "forget", "--before", "2026-11-03"])
        .output()
        .unwrap();
    assert!(stdout(&o).contains("forgot 1 run"), "{}", stdout(&o));
    assert_eq!(listed(&store).len(), 1);
}

#[test]
fn concurrent_writers_all_land() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("h.sqlite3");
    // Real measuring runs finishing at about the same moment…
    let runs: Vec<_> = (0..3)
        .map(|i| {
            at(&store)
                .args(["cache", "--quick", "--sizes", "16KiB", "--samples", "2"])
                .arg("--json")
                .arg(tmp.path().join(format!("r{i}.json")))
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        // …and imports, which do nothing but write.
        .chain((0..6).map(|i| {
            let f = write(
                tmp.path(),
                &format!("i{i}.json"),
                &synthetic(&format!("2026-10-0{}T10:00:00Z", i + 1), 1.0),
            );
            at(&store)
                .args(["history", "import", &f])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        }))
        .collect();
    for c in runs {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(!stderr(&o).contains("history store"), "{}", stderr(&o));
    }
    assert_eq!(listed(&store).len(), 9);
}

/// A measuring run with a store that cannot be used: it completes, saves
/// its JSON, and says once which store and why.
fn survives(store: &Path, env: &[(&str, &str)], reason: &str) {
    let json = store.with_file_name("run.json");
    let mut c = at(store);
    c.envs(env.iter().copied());
    let o = c
        .args(["cache", "--quick", "--sizes", "16KiB", "--samples", "2"])
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    let run: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert!(!run["records"].as_array().unwrap().is_empty());
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("history store"))
        .collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains(&store.display().to_string()), "{err}");
    assert!(lines[0].contains(reason), "want {reason:?}: {err}");
    assert!(lines[0].contains("hint:"), "{err}");
}

fn fresh(name: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join(name);
    (tmp, p)
}

#[test]
fn a_corrupt_locked_or_newer_store_costs_the_run_nothing() {
    let (_t, store) = fresh("corrupt.sqlite3");
    std::fs::write(&store, vec![0x5a; 8192]).unwrap();
    std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o600)).unwrap();
    survives(&store, &[], "corrupt");
    assert_eq!(std::fs::read(&store).unwrap(), vec![0x5a; 8192]);

    let (_t, store) = fresh("locked.sqlite3");
    let o = quick_run(&store, &store.with_file_name("first.json"));
    assert!(o.status.success());
    let conn = rusqlite::Connection::open(&store).unwrap();
    conn.execute_batch("BEGIN EXCLUSIVE").unwrap();
    survives(&store, &[("BWSCOPE_HISTORY_TIMEOUT_MS", "200")], "locked");
    conn.execute_batch("COMMIT").unwrap();

    let (_t, store) = fresh("newer.sqlite3");
    let o = quick_run(&store, &store.with_file_name("first.json"));
    assert!(o.status.success());
    rusqlite::Connection::open(&store)
        .unwrap()
        .pragma_update(None, "user_version", 99)
        .unwrap();
    survives(&store, &[], "newer bwscope");
}

#[test]
fn planted_stores_are_refused_and_left_alone() {
    // A FIFO: refused at once, never waited on.
    let (_t, store) = fresh("fifo.sqlite3");
    assert!(Command::new("mkfifo")
        .arg(&store)
        .status()
        .unwrap()
        .success());
    survives(&store, &[], "not a regular file");

    // A link, even to a good store: SQLite would follow it.
    let (tmp, store) = fresh("link.sqlite3");
    let real = tmp.path().join("real.sqlite3");
    assert!(quick_run(&real, &tmp.path().join("r.json"))
        .status
        .success());
    let before = std::fs::read(&real).unwrap();
    std::os::unix::fs::symlink(&real, &store).unwrap();
    survives(&store, &[], "symbolic link");
    assert_eq!(std::fs::read(&real).unwrap(), before);

    // Others may write it.
    let (_t, store) = fresh("shared.sqlite3");
    assert!(quick_run(&store, &store.with_file_name("r.json"))
        .status
        .success());
    std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o664)).unwrap();
    survives(&store, &[], "others may change it");
}

/// Root's tests: a store another user owns, and one this user cannot
/// write (as `nobody`: root writes any file).
#[test]
fn another_users_or_a_read_only_store_is_not_used() {
    let root = Command::new("id").arg("-u").output().unwrap().stdout == b"0\n";
    let setpriv = Command::new("setpriv").arg("--version").output().is_ok();
    if !root || !setpriv {
        eprintln!("skipped: needs root and setpriv to fake another owner");
        return;
    }
    let (tmp, store) = fresh("theirs.sqlite3");
    assert!(quick_run(&store, &tmp.path().join("r.json"))
        .status
        .success());
    let chown = |p: &Path| {
        assert!(Command::new("chown")
            .arg("65534:65534")
            .arg(p)
            .status()
            .unwrap()
            .success())
    };
    chown(&store);
    survives(&store, &[], "belongs to uid 65534");

    // Read-only to its owner, who runs bwscope as `nobody`.
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let store = dir.path().join("ro.sqlite3");
    assert!(quick_run(&store, &dir.path().join("r.json"))
        .status
        .success());
    for f in std::fs::read_dir(dir.path()).unwrap() {
        chown(&f.unwrap().path());
    }
    chown(dir.path());
    std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o400)).unwrap();
    let out = dir.path().join("nobody.json");
    let o = Command::new("setpriv")
        .args([
            "--reuid",
            "65534",
            "--regid",
            "65534",
            "--clear-groups",
            BIN,
        ])
        .env("BWSCOPE_HISTORY", &store)
        .args([
            "cache",
            "--quick",
            "--sizes",
            "16KiB",
            "--samples",
            "2",
            "--json",
        ])
        .arg(&out)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.exists());
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("history store"))
        .collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains("cannot be written"), "{err}");
    drop(tmp);
}

#[test]
fn check_flags_a_step_down_held_for_min_runs_and_not_noise() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("h.sqlite3");
    // 50 runs a day apart with 1 % of noise, 10 % slower from run 30.
    let mut files = Vec::new();
    for i in 0..50u32 {
        let wiggle = 1.0 + 0.01 * (((i * 7919) % 13) as f64 / 6.0 - 1.0);
        let step = if i >= 30 { 0.85 } else { 1.0 };
        let t = format!("2026-0{}-{:02}T10:00:00Z", 1 + i / 28, 1 + i % 28);
        files.push(write(
            tmp.path(),
            &format!("{i}.json"),
            &synthetic(&t, wiggle * step),
        ));
    }
    let o = at(&store)
        .args(["history", "import"])
        .args(&files[..30])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let check = || at(&store).args(["history", "--check"]).output().unwrap();
    let o = check();
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).starts_with("ok:"), "{}", stdout(&o));
    // Two runs at the new level: not yet held for --min-runs 3.
    let o = at(&store)
        .args(["history", "import"])
        .args(&files[30..32])
        .output()
        .unwrap();
    assert!(o.status.success());
    assert_eq!(check().status.code(), Some(0), "{}", stdout(&check()));
    let o = at(&store)
        .args(["history", "import"])
        .args(&files[32..])
        .output()
        .unwrap();
    assert!(o.status.success());
    let o = check();
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let out = stdout(&o);
    assert!(out.contains("STEP DOWN L1 read"), "{out}");
    assert!(out.contains("2026-02-03"), "the step is at run 30: {out}");
    // A higher threshold lets it pass.
    let o = at(&store)
        .args(["history", "--check", "--threshold", "20"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let o = at(&store)
        .args(["history", "--check", "--threshold", "0"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}

/// The harness keeps tests' runs out of the user's data folder.
#[test]
fn the_tests_own_store_is_not_the_users() {
    let p = common::test_history();
    assert!(!p.starts_with(std::env::var("HOME").unwrap_or_default() + "/.local"));
    let o = bwscope().args(["history", "--json", "-"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

/// What the store costs a run: `BWSCOPE_OVERHEAD_RUN=run.json cargo test
/// --test history_store -- --ignored --nocapture store_overhead` appends
/// that run 50 times (a new start time each) to a fresh store the way a
/// measuring run does (open, judge, record) and prints the wall time per
/// run and the store's bytes per run. The fixture when no run is named.
#[test]
#[ignore]
fn store_overhead() {
    use bwscope::history::{Mode, Provenance, Store};
    let path = std::env::var("BWSCOPE_OVERHEAD_RUN")
        .unwrap_or_else(|_| common::fixture_path().display().to_string());
    let mut run: bwscope::model::Run =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("h.sqlite3");
    let figures = bwscope::app::history::figures(&run);
    let how = Provenance {
        source: "local",
        imported_from: None,
        hostname: false,
        node: None,
    };
    let mut times = Vec::new();
    for i in 0..50 {
        run.started_at = format!("2026-10-{:02}T{:02}:00:00Z", 1 + i / 24, i % 24);
        let t0 = std::time::Instant::now();
        let mut s = Store::open(&store, Mode::Create).unwrap().unwrap();
        let h = s.standing(&run, &figures).unwrap();
        s.record(&run, &figures, &how).unwrap();
        drop(s);
        times.push(t0.elapsed().as_secs_f64() * 1e3);
        assert_eq!(h.earlier_runs, i);
    }
    times.sort_by(f64::total_cmp);
    let bytes = std::fs::metadata(&store).unwrap().len();
    println!(
        "{} records + {} headlines per run: open+judge+record median {:.1} ms, max {:.1} ms; store {} bytes after 50 runs = {} bytes per run",
        run.records.len(),
        figures.len(),
        times[25],
        times[49],
        bytes,
        bytes / 50
    );
}

/// A run recorded as it finished and then imported from its own file is
/// one run: its id is the same in both (issue 47: two surveys recorded
/// live, then `history import bwscope-results/`, counted twice).
#[test]
fn a_live_recorded_run_imported_again_is_already_there() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("h.sqlite3");
    let json = tmp.path().join("run.json");
    let o = quick_run(&store, &json);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(listed(&store).len(), 1);
    let run: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let id = run["id"].as_str().expect("the run file has its id");
    assert_eq!(id.len(), 32, "{id}");
    let o = at(&store)
        .args(["history", "import"])
        .arg(&json)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("imported 0 runs, 1 already"),
        "{}",
        stdout(&o)
    );
    assert_eq!(listed(&store).len(), 1);
    // A second live run is another run.
    let o = quick_run(&store, &tmp.path().join("run2.json"));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(listed(&store).len(), 2);
}
