//! Round 5 of the bad-input matrix (issue 30, items 1, 2, 4, 5 and 6, and
//! the hostile hour): files bwscope keeps between runs (the knee store),
//! reads from others (firmware tables, fixtures) or writes for a run
//! (result folders, `--json`/`--csv`), aimed at by a second user or a
//! second run. One test per item, each named after what it guards.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{hash, is_root, stderr_of, usage_error, TINY};
use crate::common::fixture_path;

/// `bwscope ARGS` with its cache folder in `cache`.
fn with_cache(cache: &Path, args: &[&str]) -> Command {
    let mut c = super::bin_cmd();
    c.args(args)
        .env("XDG_CACHE_HOME", cache)
        .env_remove("BWSCOPE_SMBIOS_DIR");
    c
}

/// Probe the knees with the store in `cache`; the store's path.
fn probe(cache: &Path) -> PathBuf {
    let o = with_cache(cache, &["info", "--probe-knees", "--no-clock"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
    let dir = cache.join("bwscope");
    std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with("knees-") && n.ends_with(".json")
        })
        .expect("a stored probe")
}

/// The process id the next child will probably get.
fn next_pid() -> u32 {
    Command::new("true").spawn().unwrap().id() + 1
}

/// Wait for `child` up to `limit`; kill it and return None past that.
fn wait_bounded(mut child: std::process::Child, limit: Duration) -> Option<std::process::Output> {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        if child.try_wait().unwrap().is_some() {
            return Some(child.wait_with_output().unwrap());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

// ---- item 1: the store's temporary file ------------------------------------

#[test]
fn the_knee_store_is_never_written_through_a_planted_link() {
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("shared");
    let store = probe(&cache);
    let victim = d.path().join("victim");
    std::fs::write(&victim, "do not touch\n").unwrap();
    let before = hash(&victim);
    // The old writer's name, `<store>.json.<pid>`, for the next pids.
    let next = next_pid();
    for pid in next..next + 2000 {
        let link = store.with_extension(format!("json.{pid}"));
        std::os::unix::fs::symlink(&victim, link).unwrap();
    }
    let o = with_cache(&cache, &["info", "--probe-knees", "--no-clock"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
    assert_eq!(hash(&victim), before, "the victim was overwritten");
    // The store was still written (mode 0600), and no temporary is left.
    assert_eq!(super::mode(&store), 0o600);
    let temps = std::fs::read_dir(store.parent().unwrap())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".tmp")
        })
        .count();
    assert_eq!(temps, 0);
}

// ---- item 2: whose store is trusted ------------------------------------------

/// A run's warnings of kind `knee_store_ignored`, and whether the run used
/// a stored probe.
fn store_use(cache: &Path) -> (Vec<String>, bool, String) {
    let mut args = TINY.to_vec();
    args.extend(["--json", "-"]);
    let o = with_cache(cache, &args).output().unwrap();
    let e = stderr_of(&o);
    assert_eq!(o.status.code(), Some(0), "{e}");
    let run: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let ignored = run["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["kind"] == "knee_store_ignored")
        .map(|w| format!("{} {}", w["path"], w["reason"]))
        .collect();
    (ignored, !run["host"]["knees"].is_null(), e)
}

#[test]
fn a_knee_store_someone_else_can_change_is_ignored_with_a_warning() {
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("c");
    let store = probe(&cache);
    let (w, used, _) = store_use(&cache);
    assert!(w.is_empty() && used, "{w:?}");
    // Writable by others: absent, and said so, naming the file.
    std::fs::set_permissions(&store, std::os::unix::fs::PermissionsExt::from_mode(0o666)).unwrap();
    let (w, used, e) = store_use(&cache);
    assert!(!used, "an others-writable store was used");
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains(&store.display().to_string()) && w[0].contains("mode 0666"),
        "{w:?}"
    );
    assert!(e.contains("was ignored"), "{e}");
    // Another user's (as root: give it away).
    if is_root() {
        std::fs::set_permissions(&store, std::os::unix::fs::PermissionsExt::from_mode(0o644))
            .unwrap();
        std::os::unix::fs::chown(&store, Some(65534), Some(65534)).unwrap();
        let (w, used, _) = store_use(&cache);
        assert!(!used, "another user's store was used");
        assert!(
            w.len() == 1 && w[0].contains("belongs to uid 65534"),
            "{w:?}"
        );
    } else {
        eprintln!("another user's store is tested as root only");
    }
}

// ---- item 4: files bwscope did not write, read bounded ----------------------

#[test]
fn a_fifo_or_an_endless_file_as_store_or_firmware_table_never_hangs_or_grows() {
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("c");
    let store = probe(&cache);
    // A FIFO where the store was: `info` used to wait for a writer.
    std::fs::remove_file(&store).unwrap();
    let c = std::ffi::CString::new(store.to_str().unwrap()).unwrap();
    // SAFETY: a valid path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let child = with_cache(&cache, &["info", "--no-clock"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let o = wait_bounded(child, Duration::from_secs(30)).expect("info hung on a FIFO store");
    let e = stderr_of(&o);
    assert_eq!(o.status.code(), Some(0), "{e}");
    assert!(e.contains("not a regular file"), "{e}");
    std::fs::remove_file(&store).unwrap();
    // /dev/zero behind the store's name: refused as a link, not read.
    std::os::unix::fs::symlink("/dev/zero", &store).unwrap();
    let o = with_cache(&cache, &["info", "--no-clock"])
        .output()
        .unwrap();
    let e = stderr_of(&o);
    assert_eq!(o.status.code(), Some(0), "{e}");
    assert!(e.contains("symbolic link"), "{e}");
    // Firmware tables: a FIFO and /dev/zero as DMI.
    let smbios = d.path().join("smbios");
    std::fs::create_dir(&smbios).unwrap();
    std::fs::write(
        smbios.join("smbios_entry_point"),
        crate::common::smbios_entry_point(64, 3, 3),
    )
    .unwrap();
    let dmi = smbios.join("DMI");
    let c = std::ffi::CString::new(dmi.to_str().unwrap()).unwrap();
    // SAFETY: a valid path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    for what in ["a FIFO", "/dev/zero"] {
        if what == "/dev/zero" {
            std::fs::remove_file(&dmi).unwrap();
            std::os::unix::fs::symlink("/dev/zero", &dmi).unwrap();
        }
        let child = with_cache(&cache, &["info", "--no-clock"])
            .env("BWSCOPE_SMBIOS_DIR", &smbios)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let o = wait_bounded(child, Duration::from_secs(30))
            .unwrap_or_else(|| panic!("info hung on {what} as DMI"));
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(0), "{what}: {}", stderr_of(&o));
        assert!(
            out.contains("DRAM peak unknown") && out.contains("not a regular file"),
            "{what}: {out}"
        );
    }
}

// ---- item 5: report from stdin into the file stdin reads --------------------

#[test]
fn a_report_never_overwrites_the_file_its_stdin_reads() {
    let d = tempfile::tempdir().unwrap();
    let run = d.path().join("run.json");
    std::fs::copy(fixture_path(), &run).unwrap();
    let before = hash(&run);
    for (fmt, out) in [
        ("md", "run.json"),
        ("csv", "./run.json"),
        ("html", "link.json"),
    ] {
        if out == "link.json" {
            std::os::unix::fs::symlink("run.json", d.path().join(out)).unwrap();
        }
        let o = super::bin_cmd()
            .args(["report", "-", "-f", fmt, "-o", out])
            .current_dir(d.path())
            .stdin(std::fs::File::open(&run).unwrap())
            .output()
            .unwrap();
        usage_error(&o, "is the file being read");
        assert_eq!(hash(&run), before, "{fmt} -o {out} replaced the run");
    }
    // Stdin from elsewhere still writes there.
    let o = super::bin_cmd()
        .args(["report", "-", "-f", "md", "-o", "r.md"])
        .current_dir(d.path())
        .stdin(std::fs::File::open(&run).unwrap())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
    assert!(d.path().join("r.md").exists());
}

// ---- item 6: two runs, one folder or file ------------------------------------

/// `bwscope-fleet/<UTC time>` as the fleet names it, `s` seconds from now.
fn stamp_in(s: u64) -> String {
    let t = std::time::SystemTime::now() + Duration::from_secs(s);
    let secs = t.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let (days, rem) = (secs / 86400, secs % 86400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}-{:02}-{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

#[test]
fn a_default_results_folder_is_never_shared() {
    let d = tempfile::tempdir().unwrap();
    // Another fleet's folders for every second the run may start in.
    let base = d.path().join("bwscope-fleet");
    std::fs::create_dir(&base).unwrap();
    let taken: Vec<PathBuf> = (0..20).map(|s| base.join(stamp_in(s))).collect();
    for t in &taken {
        std::fs::create_dir_all(t).unwrap();
        std::fs::write(t.join("theirs"), "x").unwrap();
    }
    let o = super::bin_cmd()
        .args(["fleet", "--control", "tcp", "--schedule", "none"])
        .args(["--suites", "none", "--timeout", "10"])
        .current_dir(d.path())
        .env("OMPI_COMM_WORLD_RANK", "0")
        .env("OMPI_COMM_WORLD_SIZE", "1")
        .env(
            "OMPI_MCA_ess_base_jobid",
            format!("r5-{}", std::process::id()),
        )
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
    for t in &taken {
        let names: Vec<String> = std::fs::read_dir(t)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["theirs"], "a fleet wrote into {t:?}");
    }
    let ours: Vec<PathBuf> = std::fs::read_dir(&base)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("fleet.json").exists())
        .collect();
    assert_eq!(ours.len(), 1, "{ours:?}");
    assert!(ours[0].to_string_lossy().ends_with("Z-2"), "{ours:?}");
}

#[test]
fn two_runs_given_the_same_outputs_never_interleave() {
    let d = tempfile::tempdir().unwrap();
    let (json, csv) = (d.path().join("x.json"), d.path().join("x.csv"));
    let args = |csv_path: &Path, samples: &str| {
        let mut c = super::bin_cmd();
        c.args([
            "cache",
            "--kernel",
            "seq_read_64_scalar",
            "--sizes",
            "16KiB",
        ])
        .args(["--samples", samples, "--min-sample-ms", "100"])
        .arg("--json")
        .arg(&json)
        .arg("--csv")
        .arg(csv_path)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
        c
    };
    let first = args(&csv, "40").spawn().unwrap();
    let lock = d.path().join(".x.json.bwscope-lock");
    let t0 = Instant::now();
    while !lock.exists() && t0.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(lock.exists(), "the first run took no claim");
    // The same --json, another --csv: refused before measuring anything.
    let other_csv = d.path().join("y.csv");
    let o = args(&other_csv, "40").output().unwrap();
    usage_error(&o, "another bwscope run is writing it now");
    assert!(!other_csv.exists(), "the refused run wrote its CSV");
    let o = wait_bounded(first, Duration::from_secs(60)).expect("the first run ended");
    assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
    assert!(!lock.exists(), "the lock file is left behind");
    // One run's records in both files.
    let run: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let rows = std::fs::read_to_string(&csv).unwrap().lines().count();
    assert_eq!(run["records"].as_array().unwrap().len() + 1, rows);
    // Once it ended, the same outputs are free again.
    let o = args(&csv, "2").output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
}

// ---- the hostile hour: what a second user plants beside our files ---------

#[test]
fn planted_lock_files_and_store_folders_are_refused_never_followed() {
    let d = tempfile::tempdir().unwrap();
    let victim = d.path().join("victim");
    std::fs::write(&victim, "do not touch\n").unwrap();
    let before = hash(&victim);
    let json = d.path().join("r.json");
    let lock = d.path().join(".r.json.bwscope-lock");
    // A link at the lock file's name: refused, not followed.
    std::os::unix::fs::symlink(&victim, &lock).unwrap();
    let mut args = TINY.to_vec();
    args.extend(["--json", json.to_str().unwrap()]);
    let o = super::bin_cmd().args(&args).output().unwrap();
    usage_error(&o, "cannot take its lock file");
    assert_eq!(hash(&victim), before);
    assert!(!json.exists());
    // A FIFO there: refused at once.
    std::fs::remove_file(&lock).unwrap();
    let c = std::ffi::CString::new(lock.to_str().unwrap()).unwrap();
    // SAFETY: a valid path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let child = super::bin_cmd()
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let o = wait_bounded(child, Duration::from_secs(30)).expect("a FIFO lock file hung the run");
    usage_error(&o, "is not a regular file");
    std::fs::remove_file(&lock).unwrap();
    // A stale lock file (its run was killed): taken over, and removed.
    std::fs::write(&lock, "").unwrap();
    let o = super::bin_cmd().args(&args).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
    assert!(json.exists() && !lock.exists());
    // The store's folder owned by someone else (as root: give it away):
    // nothing is stored there, and the warning says why.
    if !is_root() {
        eprintln!("another user's store folder is tested as root only");
        return;
    }
    let cache = d.path().join("c");
    let dir = cache.join("bwscope");
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).unwrap();
    let o = with_cache(&cache, &["info", "--probe-knees", "--no-clock"])
        .output()
        .unwrap();
    let e = stderr_of(&o);
    assert_eq!(o.status.code(), Some(0), "{e}");
    assert!(
        e.contains("could not store the knee probe") && e.contains("belongs to uid 65534"),
        "{e}"
    );
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    // …nor through a link to a folder of ours that someone else planted.
    std::fs::remove_dir(&dir).unwrap();
    let ours = d.path().join("ours");
    std::fs::create_dir(&ours).unwrap();
    std::os::unix::fs::symlink(&ours, &dir).unwrap();
    std::os::unix::fs::lchown(&dir, Some(65534), Some(65534)).unwrap();
    let o = with_cache(&cache, &["info", "--probe-knees", "--no-clock"])
        .output()
        .unwrap();
    let e = stderr_of(&o);
    assert!(e.contains("belongs to uid 65534"), "{e}");
    assert_eq!(std::fs::read_dir(&ours).unwrap().count(), 0);
}

#[test]
fn a_results_folder_through_a_link_another_user_planted_is_refused() {
    if !is_root() {
        eprintln!("skipped: giving a link to another user needs root");
        return;
    }
    // A shared sticky working folder (as /tmp), where another user made
    // `bwscope-fleet` a link to a folder of their choosing. Systems with
    // fs.protected_symlinks=0 (this guest) let root follow it.
    let d = tempfile::tempdir().unwrap();
    let shared = d.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(
        &shared,
        std::os::unix::fs::PermissionsExt::from_mode(0o1777),
    )
    .unwrap();
    let elsewhere = d.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let link = shared.join("bwscope-fleet");
    std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
    std::os::unix::fs::lchown(&link, Some(65534), Some(65534)).unwrap();
    let o = super::bin_cmd()
        .args(["fleet", "--control", "tcp", "--schedule", "none"])
        .args(["--suites", "none", "--timeout", "10"])
        .current_dir(&shared)
        .env("OMPI_COMM_WORLD_RANK", "0")
        .env("OMPI_COMM_WORLD_SIZE", "1")
        .env(
            "OMPI_MCA_ess_base_jobid",
            format!("r5l-{}", std::process::id()),
        )
        .output()
        .unwrap();
    usage_error(&o, "fs.protected_symlinks");
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
}
