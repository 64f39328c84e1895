//! `deploy/systemd/bwscope-watch.service` as systemd would run it: its
//! `ExecStart` line, with the built binary for `/usr/local/bin/bwscope` and
//! temporary folders for the unit's state folder (`StateDirectory=`,
//! `/var/lib/bwscope`) and node_exporter's textfile folder, run twice
//! against one state folder — a restart. The history is where the unit
//! keeps it, `bwscope history --check` reads it, and the second start's
//! usual figures rest on the first start's clean samples too. Quick samples (a
//! 1 MiB set, 1 ms samples) keep each to a few seconds.

#![cfg(target_os = "linux")]

mod common;

use std::path::Path;
use std::process::Command;

/// The unit's `ExecStart` words, continuation lines joined.
fn exec_start(unit: &str) -> Vec<String> {
    let text = unit.replace("\\\n", " ");
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart="))
        .expect("the unit has an ExecStart");
    line.split_whitespace().map(String::from).collect()
}

/// The unit's `Key=` value.
fn setting<'a>(unit: &'a str, key: &str) -> Option<&'a str> {
    unit.lines()
        .find_map(|l| l.strip_prefix(&format!("{key}=")))
}

/// `bwscope_watch_usual_samples{…} N` in the file.
fn usual_samples(prom: &Path) -> u64 {
    let text = std::fs::read_to_string(prom).unwrap();
    text.lines()
        .find(|l| l.starts_with("bwscope_watch_usual_samples"))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no usual samples in {text}"))
}

/// The unit's watch, started twice (4 samples, then 1) against one state
/// folder: the store, the usual samples after the first start, and after
/// the restart, with the clean DRAM-read samples the store held before
/// it.
struct Restarted {
    _dir: tempfile::TempDir,
    history: std::path::PathBuf,
    first: u64,
    second: u64,
    clean_before_restart: u64,
}

/// Mark every stored figure clean, as a quiet machine would have taken
/// them: quick 1 ms samples on a busy test machine are mostly noisy, and
/// the restart's carry-over must be seen whatever the machine's load.
/// Returns the DRAM-read samples now clean (one per watch run).
fn all_clean(history: &Path) -> u64 {
    let db = rusqlite::Connection::open(history).unwrap();
    db.execute("UPDATE rows SET noisy = 0, flags = ''", [])
        .unwrap();
    db.query_row(
        "SELECT count(*) FROM rows w JOIN cases c ON c.id = w.case_id
         WHERE c.suite = 'cache' AND c.key NOT LIKE 'headline/%'
           AND w.status = 'ok' AND NOT w.noisy",
        [],
        |r| r.get::<_, i64>(0).map(|n| n as u64),
    )
    .unwrap()
}

fn start_twice() -> Restarted {
    let unit = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/systemd/bwscope-watch.service"),
    )
    .unwrap();
    assert_eq!(setting(&unit, "StateDirectory"), Some("bwscope"));
    let d = tempfile::tempdir().unwrap();
    let (state, textfile) = (d.path().join("state"), d.path().join("textfile"));
    // What systemd makes before it starts the unit: the state folder,
    // owner-only (StateDirectoryMode=0700); the textfile folder exists.
    std::fs::create_dir(&state).unwrap();
    std::fs::set_permissions(&state, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    std::fs::create_dir(&textfile).unwrap();
    let words: Vec<String> = exec_start(&unit)
        .into_iter()
        .map(|w| {
            w.replace("/var/lib/bwscope", state.to_str().unwrap())
                .replace(
                    "/var/lib/node_exporter/textfile_collector",
                    textfile.to_str().unwrap(),
                )
        })
        .collect();
    assert_eq!(words[0], "/usr/local/bin/bwscope", "{words:?}");
    let start = |count: &str| {
        let mut args: Vec<String> = words[1..].to_vec();
        // The unit's five minutes, made quick.
        let every = args.iter().position(|a| a == "--every").expect("--every");
        args[every + 1] = "10ms".into();
        args.extend(
            [
                "--count",
                count,
                "--size",
                "1MiB",
                "--samples",
                "2",
                "--min-sample-ms",
                "1",
            ]
            .map(String::from),
        );
        let out = Command::new(common::fleet::exe())
            .args(&args)
            .env_remove("BWSCOPE_HISTORY")
            .env("XDG_CACHE_HOME", d.path().join("cache"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let history = state.join("history.sqlite3");
    let prom = textfile.join("bwscope.prom");
    start("4");
    assert!(history.is_file(), "no history in the state folder");
    let first = usual_samples(&prom);
    let clean_before_restart = all_clean(&history);
    start("1");
    let second = usual_samples(&prom);
    Restarted {
        _dir: d,
        history,
        first,
        second,
        clean_before_restart,
    }
}

#[test]
fn the_watch_unit_keeps_its_history_across_a_restart() {
    let r = start_twice();
    let history = r.history.to_str().unwrap();
    // The history holds both starts' samples, and `history --check`
    // reads it (0: no step; 1: a step; 4: not enough clean runs to judge
    // yet; never a usage error or a store it cannot read).
    let list = common::bwscope()
        .args(["history", "--history", history])
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&list.stdout);
    assert_eq!(listed.matches(" watch ").count(), 5, "{listed}");
    // `--suite watch` finds the watch's samples.
    let watch = common::bwscope()
        .args(["history", "--suite", "watch", "--history", history])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&watch.stdout)
            .matches(" watch ")
            .count(),
        5,
        "{}",
        String::from_utf8_lossy(&watch.stderr)
    );
    let check = common::bwscope()
        .args(["history", "--check", "--history", history])
        .output()
        .unwrap();
    assert!(
        matches!(check.status.code(), Some(0 | 1 | 4)),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
}

/// The second start's usual figures rest on every clean sample the
/// store held from the first start (without the store they would rest on
/// none: the restart's own sample is the one judged).
#[test]
fn a_restarted_watch_carries_its_usual_figures_on() {
    let r = start_twice();
    assert_eq!(r.clean_before_restart, 4);
    assert_eq!(
        r.second, r.clean_before_restart,
        "usual samples after the restart (the first start's own: {})",
        r.first
    );
}
