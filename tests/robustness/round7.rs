//! Round 7 of the bad-input matrix (issue 49, "hardening, round 6"): the
//! history store planted, clobbered or read in part, its text and figures
//! on the way out, and the smaller items (dates, a closed pipe, advice per
//! cause, literal machine keys, watch's flags, an early Ctrl-C, a rank
//! whose rank 0 stops, the data folder). One test per item, each named
//! after what it guards; each failed on main at 981db68. The store's
//! tests build their stores by importing the fixture (no measuring): the
//! whole file costs about 15 s, most of it the fleet pair of the K9 test
//! in round 6 and the early signals (W7).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{hash, is_root, stderr_of, usage_error, BIN, TINY};
use crate::common::{fixture, write};

/// A bwscope command on the store at `store` (never the user's).
fn at(store: &Path) -> Command {
    let mut c = Command::new(BIN);
    c.env("BWSCOPE_HISTORY", store)
        .env_remove("BWSCOPE_HISTORY_TIMEOUT_MS");
    c
}

fn run(c: &mut Command) -> Output {
    c.output().unwrap()
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The fixture as a quiet run started at `t`, every figure times `k`,
/// its CPU named `cpu`.
fn synthetic(t: &str, k: f64, cpu: &str) -> Value {
    let mut run = fixture();
    run["started_at"] = json!(t);
    run["warnings"] = json!([]);
    run["host"]["cpu"]["model_name"] = json!(cpu);
    for r in run["records"].as_array_mut().unwrap() {
        r["warnings"] = json!([]);
        crate::common::scale_gbps(r, k);
    }
    run
}

/// A store at `store` holding `n` imported runs, a day apart from
/// 2026-01-01 (`cpu` their CPU's name).
fn store_of(store: &Path, n: usize, cpu: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let files: Vec<String> = (0..n)
        .map(|i| {
            let t = format!("2026-01-{:02}T10:00:00Z", i + 1);
            write(
                dir,
                &format!("{i}.json"),
                &synthetic(&t, 1.0 + i as f64 / 100.0, cpu),
            )
        })
        .collect();
    let o = run(at(store).args(["history", "import"]).args(&files));
    assert!(o.status.success(), "{}", stderr_of(&o));
}

/// One line of error, exit 2, naming the store, with advice, and never
/// the words of a measuring run.
fn store_error(o: &Output, store: &Path, needle: &str) -> String {
    let e = stderr_of(o);
    usage_error(o, needle);
    assert!(e.contains(&store.display().to_string()), "{e}");
    assert!(!e.contains("this run is not in the history"), "{e}");
    e
}

/// Characters no text from a store may bring to a terminal: controls
/// but newline and tab, bidirectional and zero-width characters, line
/// and paragraph separators.
fn hostile(s: &str) -> Option<char> {
    s.chars().find(|&c| {
        (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{061c}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
    })
}

fn can_setpriv() -> bool {
    is_root() && Command::new("setpriv").arg("--version").output().is_ok()
}

/// `argv` run as uid/gid 65534 (a real process of another user).
fn as_nobody(argv: &[&str]) {
    let o = Command::new("setpriv")
        .args(["--reuid", "65534", "--regid", "65534", "--clear-groups"])
        .args(argv)
        .output()
        .unwrap();
    assert!(o.status.success(), "{argv:?}: {}", stderr_of(&o));
}

/// The `-wal` of a database of the attacker's own making that holds its
/// every page (written with VACUUM under a WAL that is never checkpointed)
/// and a CPU called `EVIL planted CPU`.
fn attackers_wal(d: &Path) -> PathBuf {
    let att = d.join("att");
    std::fs::create_dir_all(&att).unwrap();
    let db = att.join("h.sqlite3");
    store_of(&db, 1, "EVIL planted CPU");
    let c = rusqlite::Connection::open(&db).unwrap();
    c.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
    let _: String = c
        .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        .unwrap();
    c.execute_batch("VACUUM").unwrap();
    let wal = att.join("wal");
    std::fs::copy(att.join("h.sqlite3-wal"), &wal).unwrap();
    drop(c);
    std::fs::set_permissions(&wal, std::fs::Permissions::from_mode(0o644)).unwrap();
    wal
}

// ---- S5: a planted -wal, -shm or -journal ------------------------------------

#[test]
fn s5_a_file_planted_beside_the_store_by_another_user_is_refused() {
    if !can_setpriv() {
        eprintln!("skipped: needs root and setpriv to plant files as another user");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let shared = d.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let store = shared.join("h.sqlite3");
    // Root's store in a shared sticky folder: made, used and closed
    // cleanly, leaving no file of its set behind.
    store_of(&store, 2, "root's own CPU");
    let left: Vec<_> = std::fs::read_dir(&shared)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["h.sqlite3"], "{left:?}");
    let before = hash(&store);
    let wal = attackers_wal(d.path());
    let planted = shared.join("h.sqlite3-wal");
    as_nobody(&["cp", wal.to_str().unwrap(), planted.to_str().unwrap()]);
    // `bwscope history` refuses, naming the file; the store is untouched
    // and the attacker's runs are never shown.
    let o = run(at(&store).arg("history"));
    let e = store_error(&o, &store, "h.sqlite3-wal belongs to uid 65534");
    assert!(e.contains("bwscope did not make that file"), "{e}");
    assert!(!out(&o).contains("EVIL"), "{}", out(&o));
    assert_eq!(hash(&store), before);
    // A measuring run completes and says so once; nothing is checkpointed
    // into the store.
    let json = d.path().join("r.json");
    let o = run(at(&store).args(TINY).arg("--json").arg(&json));
    let e = stderr_of(&o);
    assert!(o.status.success(), "{e}");
    assert_eq!(e.matches("history store").count(), 1, "{e}");
    assert!(e.contains("h.sqlite3-wal belongs to uid 65534"), "{e}");
    assert_eq!(hash(&store), before);
    std::fs::remove_file(&planted).unwrap();
    // A -shm and a -journal of another user's are refused the same way.
    for side in ["h.sqlite3-shm", "h.sqlite3-journal"] {
        let p = shared.join(side);
        as_nobody(&["sh", "-c", &format!("printf 'planted' > {}", p.display())]);
        let o = run(at(&store).arg("history"));
        store_error(&o, &store, &format!("{side} belongs to uid 65534"));
        assert_eq!(hash(&store), before);
        std::fs::remove_file(&p).unwrap();
    }
    // With the folder clean again the store is root's as before.
    let o = run(at(&store).args(["history", "--json", "-"]));
    assert!(o.status.success(), "{}", stderr_of(&o));
    let runs: Vec<Value> = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        runs.len(),
        2,
        "the two imported (the run was refused the store)"
    );
    // A folder others may write without the sticky bit is refused.
    let open = d.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let o = run(at(&open.join("h.sqlite3"))
        .args(["history", "import"])
        .arg(&json));
    store_error(&o, &open.join("h.sqlite3"), "it is not sticky");
    assert!(!open.join("h.sqlite3").exists());
}

// ---- S20: an output that is the store ---------------------------------------

#[test]
fn s20_no_output_of_any_command_replaces_the_store() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("h.sqlite3");
    store_of(&store, 2, "a CPU");
    let before = hash(&store);
    let run_file = write(d.path(), "run.json", &fixture());
    let link = d.path().join("link.json");
    std::os::unix::fs::symlink(&store, &link).unwrap();
    let s = store.to_str().unwrap();
    let wal = format!("{s}-wal");
    let cases: Vec<Vec<&str>> = vec![
        vec!["history", "--json", s],
        vec!["history", "--csv", s],
        vec!["history", "--json", &wal],
        vec!["history", "show", "headline/DRAM read", "--json", s],
        vec!["history", "show", "headline/DRAM read", "--csv", s],
        vec!["report", &run_file, "-o", s],
        vec!["report", &run_file, "-o", link.to_str().unwrap()],
    ];
    for args in cases {
        let o = run(at(&store).args(&args));
        let e = stderr_of(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(e.contains("history store"), "{args:?}: {e}");
        assert_eq!(hash(&store), before, "{args:?}");
    }
    let o = run(at(&store).args(TINY).args(["--json", s]));
    usage_error(&o, "it is the history store");
    assert_eq!(hash(&store), before);
    // Still a store, with its runs.
    let o = run(at(&store).args(["history", "--json", "-"]));
    assert!(o.status.success(), "{}", stderr_of(&o));
    assert_eq!(
        serde_json::from_slice::<Vec<Value>>(&o.stdout)
            .unwrap()
            .len(),
        2
    );
}

// ---- S10: a store read in part ------------------------------------------------

#[test]
fn s10_a_damaged_store_is_never_answered_from_in_part() {
    let d = tempfile::tempdir().unwrap();
    let good = d.path().join("good.sqlite3");
    store_of(&good, 17, "a CPU");
    let pages = std::fs::metadata(&good).unwrap().len() / 4096;
    let headlines = {
        let o = run(at(&good).args(["history", "show"]));
        out(&o).lines().filter(|l| l.contains("headline/")).count()
    };
    assert!(headlines >= 2, "{headlines}");
    // Each page in turn overwritten past its header: every answer is the
    // whole store's, or an error naming it (never 14 of 17 runs, never
    // "ok" over half the headline cases).
    let store = d.path().join("h.sqlite3");
    let mut refused = 0;
    for page in 1..pages {
        std::fs::copy(&good, &store).unwrap();
        let mut bytes = std::fs::read(&store).unwrap();
        let at_ = (page * 4096 + 8) as usize;
        for (i, b) in bytes[at_..at_ + 3000].iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(151).wrapping_add(page as u8);
        }
        std::fs::write(&store, &bytes).unwrap();
        let show = run(at(&store).args(["history", "show", "headline/DRAM read"]));
        let check = run(at(&store).args(["history", "--check"]));
        let page_ = page + 1;
        for o in [&show, &check] {
            if o.status.code() == Some(2) {
                store_error(o, &store, "");
                refused += 1;
            }
        }
        if show.status.success() {
            assert!(
                out(&show).contains("(GB/s, 17 runs)"),
                "page {page_}: {}",
                out(&show)
            );
        }
        if check.status.code() == Some(0) {
            assert!(
                out(&check).contains(&format!("ok: {headlines} headline cases judged")),
                "page {page_}: {}",
                out(&check)
            );
        }
        let _ = std::fs::remove_file(store.with_extension("sqlite3-wal"));
        let _ = std::fs::remove_file(store.with_extension("sqlite3-shm"));
    }
    assert!(refused > 0, "no damaged page was noticed");
}

// ---- S8, S9: text and figures from the store ----------------------------------

#[test]
fn s8_text_from_the_store_reaches_no_output_raw() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("h.sqlite3");
    store_of(&store, 2, "a CPU");
    let evil = "\u{1b}]0;pwned\u{7}\r\n\u{202e}\u{2066}\u{2028}\u{9b}x";
    let long = format!("CPU{evil}{}", "y".repeat(1 << 20));
    let c = rusqlite::Connection::open(&store).unwrap();
    c.execute(
        "UPDATE runs SET cpu_model_name = ?1, command = ?2, kernel = ?2, machine = ?2 || machine",
        [&long, &format!("cache{evil}")],
    )
    .unwrap();
    c.execute(
        "UPDATE cases SET key = key || ?1, unit = unit || ?1 WHERE key = 'headline/DRAM read'",
        [evil],
    )
    .unwrap();
    drop(c);
    let key = format!("headline/DRAM read{evil}");
    let cases: Vec<Vec<&str>> = vec![
        vec!["history"],
        vec!["history", "show"],
        vec!["history", "show", &key],
        vec!["history", "show", &key, "--csv", "-"],
        vec!["history", "show", &key, "--json", "-"],
        vec!["history", "--csv", "-"],
        vec!["history", "--json", "-"],
    ];
    for args in cases {
        let o = run(at(&store).args(&args));
        let (text, e) = (out(&o), stderr_of(&o));
        assert!(o.status.success(), "{args:?}: {e}");
        assert_eq!(hostile(&text), None, "{args:?}: {text:.300}");
        let longest = text.lines().map(|l| l.chars().count()).max().unwrap_or(0);
        assert!(longest < 3000, "{args:?}: a line of {longest} characters");
        assert!(text.contains('\u{fffd}'), "{args:?}: {text:.300}");
    }
}

#[test]
fn s9_impossible_figures_in_the_store_fail_the_read_naming_it() {
    let d = tempfile::tempdir().unwrap();
    let good = d.path().join("good.sqlite3");
    store_of(&good, 3, "a CPU");
    let store = d.path().join("h.sqlite3");
    for (v, shown) in [
        ("1e999", "best = inf"),
        ("-1e999", "best = -inf"),
        ("-5", "best = -5"),
        ("1e308", "best = 1e308"),
        ("NULL", "best is NULL"),
    ] {
        std::fs::copy(&good, &store).unwrap();
        let c = rusqlite::Connection::open(&store).unwrap();
        c.execute_batch(&format!(
            "UPDATE rows SET best = {v} WHERE rowid = (SELECT w.rowid FROM rows w
             JOIN cases c ON c.id = w.case_id WHERE c.key = 'headline/DRAM read' LIMIT 1)"
        ))
        .unwrap();
        drop(c);
        for args in [
            vec!["history", "show", "headline/DRAM read"],
            vec!["history", "--check"],
        ] {
            let o = run(at(&store).args(&args));
            let e = store_error(&o, &store, shown);
            assert!(e.contains("the store was edited or corrupted"), "{e}");
            assert!(!out(&o).contains("inf"), "{}", out(&o));
        }
    }
}

#[test]
fn l9_a_fleet_files_node_runs_pass_the_plausibility_check() {
    let d = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/runs/2026-11-24-54fbad1/fleet.json");
    let mut f: Value = serde_json::from_slice(&std::fs::read(src).unwrap()).unwrap();
    f["nodes"][0]["run"]["records"][0]["gbps"]["best"] = json!(1e308);
    let p = write(d.path(), "fleet.json", &f);
    for args in [
        vec!["report", &p, "--node", "vm:0", "-f", "table"],
        vec!["report", &p, "-f", "openmetrics"],
        vec!["report", &p, "-f", "table"],
    ] {
        let o = run(super::bin_cmd().args(&args));
        usage_error(&o, "node vm:0 (rank 0): record 1");
        assert!(
            stderr_of(&o).contains("gbps.best = 1e308"),
            "{}",
            stderr_of(&o)
        );
        assert!(!out(&o).contains("inf"), "{}", out(&o));
    }
}

// ---- the smaller ones ----------------------------------------------------------

#[test]
fn s16_the_history_timeout_is_a_sane_number_of_milliseconds() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("h.sqlite3");
    store_of(&store, 1, "a CPU");
    for bad in ["2147483648", "-1", "abc", "1e3", ""] {
        let o = run(at(&store)
            .env("BWSCOPE_HISTORY_TIMEOUT_MS", bad)
            .arg("history"));
        store_error(&o, &store, "BWSCOPE_HISTORY_TIMEOUT_MS");
    }
    // A run goes on, complete, and says why the store was not used.
    let json = d.path().join("r.json");
    let o = run(at(&store)
        .env("BWSCOPE_HISTORY_TIMEOUT_MS", "2147483648")
        .args(TINY)
        .arg("--json")
        .arg(&json));
    let e = stderr_of(&o);
    assert!(o.status.success(), "{e}");
    assert!(!e.contains("panicked"), "{e}");
    assert!(e.contains("BWSCOPE_HISTORY_TIMEOUT_MS"), "{e}");
    let r: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(r["complete"], true);
    let o = run(at(&store)
        .env("BWSCOPE_HISTORY_TIMEOUT_MS", "250")
        .arg("history"));
    assert!(o.status.success(), "{}", stderr_of(&o));
}

#[test]
fn s18_dates_are_parsed_and_compared_as_instants() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("h.sqlite3");
    let files: Vec<String> = ["2026-11-28T12:39:00Z", "2026-11-28T13:30:00Z"]
        .iter()
        .enumerate()
        .map(|(i, t)| write(d.path(), &format!("{i}.json"), &synthetic(t, 1.0, "a CPU")))
        .collect();
    let o = run(at(&store).args(["history", "import"]).args(&files));
    assert!(o.status.success(), "{}", stderr_of(&o));
    let count = |since: &str| {
        let o = run(at(&store).args(["history", "--json", "-", "--since", since]));
        assert!(o.status.success(), "{since}: {}", stderr_of(&o));
        serde_json::from_slice::<Vec<Value>>(&o.stdout)
            .unwrap()
            .len()
    };
    // 14:00 at +05:00 is 09:00 UTC: both runs are after it.
    assert_eq!(count("2026-11-28T14:00:00+05:00"), 2);
    assert_eq!(count("2026-11-28T13:00:00Z"), 1);
    assert_eq!(count("2026-11-28T08:00:00-05:00"), 1);
    assert_eq!(count("2026-11-29"), 0);
    for bad in [
        "9999-99-99",
        "2026-13-45",
        "2026-11-29x",
        "2026-11-28 13:00",
        "2026-02-30",
    ] {
        for args in [
            vec!["history", "--since", bad],
            vec!["history", "forget", "--before", bad],
        ] {
            let o = run(at(&store).args(&args));
            usage_error(
                &o,
                if args[1] == "forget" {
                    "--before"
                } else {
                    "--since"
                },
            );
        }
    }
    let forget = |before: &str| {
        let o = run(at(&store).args(["history", "forget", "--before", before]));
        assert!(o.status.success(), "{before}: {}", stderr_of(&o));
        out(&o)
    };
    assert_eq!(forget("2026-11-28T14:00:00+05:00"), "forgot 0 runs\n");
    assert_eq!(forget("2026-11-28T13:00:00Z"), "forgot 1 run\n");
    assert_eq!(forget("2026-11-29"), "forgot 1 run\n");
}

#[test]
fn s19_history_on_a_closed_pipe_is_quiet() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("h.sqlite3");
    store_of(&store, 2, "a CPU");
    for args in [
        vec!["history"],
        vec!["history", "show"],
        vec!["history", "show", "headline/DRAM read"],
        vec!["history", "--check"],
        vec!["history", "--csv", "-"],
    ] {
        let o = at(&store)
            .args(&args)
            .stdout(super::closed_pipe())
            .output()
            .unwrap();
        let e = stderr_of(&o);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {e}");
        assert!(!e.contains("panicked"), "{args:?}: {e}");
    }
}

#[test]
fn s21_each_store_problem_has_its_own_advice() {
    let d = tempfile::tempdir().unwrap();
    // Held by another process: wait, never move it away.
    let store = d.path().join("locked.sqlite3");
    store_of(&store, 1, "a CPU");
    let c = rusqlite::Connection::open(&store).unwrap();
    c.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let o = run(at(&store)
        .env("BWSCOPE_HISTORY_TIMEOUT_MS", "200")
        .args(["history", "import"])
        .arg(write(
            d.path(),
            "x.json",
            &synthetic("2026-02-01T00:00:00Z", 1.0, "c"),
        )));
    let e = store_error(&o, &store, "locked");
    assert!(e.contains("do not move the file away"), "{e}");
    assert!(!e.contains("bwscope starts a new one"), "{e}");
    c.execute_batch("COMMIT").unwrap();
    drop(c);
    // Not a store file at all.
    let o = run(at(Path::new("/dev/null")).arg("history"));
    let e = store_error(&o, Path::new("/dev/null"), "not a regular file");
    assert!(e.contains("--no-history"), "{e}");
    assert!(!e.contains("move"), "{e}");
    // Damaged: move it away and import the saved runs.
    let bad = d.path().join("bad.sqlite3");
    std::fs::write(&bad, vec![0x5a; 8192]).unwrap();
    std::fs::set_permissions(&bad, std::fs::Permissions::from_mode(0o600)).unwrap();
    let o = run(at(&bad).arg("history"));
    let e = store_error(&o, &bad, "corrupt");
    assert!(e.contains("bwscope starts a new one"), "{e}");
    if !is_root() || Command::new("unshare").arg("--version").output().is_err() {
        eprintln!("skipped: the read-only mount and the full disk need root and unshare");
        return;
    }
    // A read-only mount, and a full disk (a 1 MiB tmpfs, filled).
    let m = d.path().join("m");
    std::fs::create_dir(&m).unwrap();
    let one = write(
        d.path(),
        "one.json",
        &synthetic("2026-03-01T00:00:00Z", 1.0, "c"),
    );
    let two = write(
        d.path(),
        "two.json",
        &synthetic("2026-03-02T00:00:00Z", 1.1, "c"),
    );
    let script = |then: &str| {
        format!(
            "mount -t tmpfs -o size=1m tmpfs {m} && BWSCOPE_HISTORY={m}/h.sqlite3 {BIN} history import {one} >/dev/null && {then}",
            m = m.display()
        )
    };
    let ro = script(&format!(
        "mount -o remount,ro {m} && BWSCOPE_HISTORY={m}/h.sqlite3 exec {BIN} history",
        m = m.display()
    ));
    let full = script(&format!(
        "(head -c 2000000 /dev/zero > {m}/fill 2>/dev/null; true) && BWSCOPE_HISTORY={m}/h.sqlite3 exec {BIN} history import {two}",
        m = m.display()
    ));
    let o = run(Command::new("unshare").args(["-m", "sh", "-c", &ro]));
    let e = store_error(&o, &m.join("h.sqlite3"), "read-only file system");
    assert!(e.contains("mounted read-only"), "{e}");
    assert!(!e.contains("move"), "{e}");
    let o = run(Command::new("unshare").args(["-m", "sh", "-c", &full]));
    let e = store_error(&o, &m.join("h.sqlite3"), "the disk is full");
    assert!(e.contains("free space"), "{e}");
    assert!(!e.contains("move"), "{e}");
}

#[test]
fn s22_machine_keys_are_literal_and_suites_are_named() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("h.sqlite3");
    store_of(&store, 2, "a CPU");
    let listed = |args: &[&str]| {
        let o = run(at(&store).args(["history", "--json", "-"]).args(args));
        assert!(o.status.success(), "{args:?}: {}", stderr_of(&o));
        serde_json::from_slice::<Vec<Value>>(&o.stdout).unwrap()
    };
    let all = listed(&[]);
    assert_eq!(all.len(), 2);
    let key = all[0]["machine"].as_str().unwrap().to_string();
    assert_eq!(listed(&["--machine", &key[..4]]).len(), 2);
    for wild in ["%", "_", "%%", "____"] {
        assert_eq!(listed(&["--machine", wild]).len(), 0, "{wild}");
    }
    let o = run(at(&store).args(["history", "show", "--machine", "%"]));
    assert_eq!(out(&o), "", "{}", out(&o));
    let o = run(at(&store).args(["history", "--suite", "nosuch"]));
    usage_error(&o, "--suite: there is no suite \"nosuch\"");
    assert!(
        stderr_of(&o).contains("cache, latency"),
        "{}",
        stderr_of(&o)
    );
    assert_eq!(listed(&["--suite", "cache"]).len(), 2);
}

#[test]
fn w2_watch_answers_about_its_own_flags() {
    let o = run(super::bin_cmd().args(["watch", "--cpu", "99999", "--count", "1"]));
    usage_error(&o, "--cpu:");
    assert!(!stderr_of(&o).contains("--cpus"), "{}", stderr_of(&o));
    let o = run(super::bin_cmd().args(["watch", "--size", "1TiB", "--count", "1"]));
    usage_error(&o, "--size:");
    let e = stderr_of(&o);
    assert!(!e.contains("--sizes") && !e.contains("--threads"), "{e}");
}

/// `args` started as a script's background job starts it (SIGINT ignored,
/// which a program that handles it overrides), sent SIGINT after `ms`:
/// how it ended and after how long.
fn interrupted_after(args: &[&str], ms: u64, ignored: bool) -> (Option<i32>, Option<i32>, f64) {
    use std::os::unix::process::CommandExt;
    use std::os::unix::process::ExitStatusExt;
    let mut c = super::bin_cmd();
    c.args(args).stdout(Stdio::null()).stderr(Stdio::null());
    if ignored {
        // SAFETY: only signal() between fork and exec.
        unsafe {
            c.pre_exec(|| {
                libc::signal(libc::SIGINT, libc::SIG_IGN);
                Ok(())
            });
        }
    }
    let mut child = c.spawn().unwrap();
    let t0 = Instant::now();
    std::thread::sleep(Duration::from_millis(ms));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    while t0.elapsed() < Duration::from_secs(60) {
        if let Some(s) = child.try_wait().unwrap() {
            return (s.code(), s.signal(), t0.elapsed().as_secs_f64());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    (None, None, f64::INFINITY)
}

#[test]
fn w7_a_sigint_in_a_runs_first_moments_stops_it() {
    let long_cache = [
        "cache",
        "--kernel",
        "seq_read_64_scalar",
        "--sizes",
        "16KiB..4MiB:x2",
        "--samples",
        "30",
        "--min-sample-ms",
        "20",
    ];
    let long_latency = [
        "latency",
        "--sizes",
        "16KiB,32KiB,64KiB",
        "--samples",
        "30",
        "--min-sample-ms",
        "20",
    ];
    let watch = [
        "watch",
        "--every",
        "1s",
        "--samples",
        "2",
        "--min-sample-ms",
        "1",
    ];
    for args in [&long_cache[..], &long_latency[..], &watch[..]] {
        // At once: the default action or the handler, never a full run.
        let (code, sig, took) = interrupted_after(args, 0, false);
        assert!(
            code == Some(130) || sig == Some(libc::SIGINT),
            "{args:?} at 0 ms: {code:?} {sig:?} after {took:.1} s"
        );
        // Later, even when the shell left SIGINT ignored: the handler is
        // in place before the host is read.
        for ms in [20, 50, 100] {
            let (code, _, took) = interrupted_after(args, ms, true);
            assert_eq!(
                code,
                Some(130),
                "{args:?} at {ms} ms: ended after {took:.1} s"
            );
            assert!(took < 30.0, "{args:?} at {ms} ms: {took:.1} s");
        }
    }
}

#[test]
fn e3_e4_no_store_under_a_relative_data_folder_or_a_missing_home() {
    let d = tempfile::tempdir().unwrap();
    let missing = d.path().join("nohome/home");
    let run_in = |env: &[(&str, &Path)]| {
        let mut c = Command::new(BIN);
        c.env_remove("BWSCOPE_HISTORY")
            .env_remove("XDG_DATA_HOME")
            .env_remove("XDG_CACHE_HOME")
            .current_dir(d.path())
            .args(TINY)
            .args(["--json", "-"])
            .stdout(Stdio::null());
        for (k, v) in env {
            c.env(k, v);
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "{env:?}: {}", stderr_of(&o));
    };
    // A relative XDG_DATA_HOME is ignored: the store goes under HOME.
    let home = d.path().join("home");
    std::fs::create_dir(&home).unwrap();
    run_in(&[
        ("XDG_DATA_HOME", Path::new("relative/dir")),
        ("HOME", &home),
    ]);
    assert!(!d.path().join("relative").exists());
    assert!(home.join(".local/share/bwscope/history.sqlite3").exists());
    // A home that does not exist is not made (nor is the run's history).
    run_in(&[("HOME", &missing)]);
    assert!(!d.path().join("nohome").exists());
}
