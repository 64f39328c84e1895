//! Round 3 of the bad-input matrix (issue 23): a fleet that cannot be
//! hijacked, no run called complete that is not, no file clobbered by its
//! own reader, bounded secrets, flags that do nothing refused, checks that
//! pass too early and misleading messages. One test per item, each named
//! after what it guards; the hostile-hour cases found while writing them
//! sit beside the item they belong to.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use super::{stderr_of, usage_error};
use crate::common::bwscope;

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

// ---- item 5: secrets with bounds ------------------------------------------

#[test]
fn token_files_are_bounded_regular_private_and_not_zero() {
    let d = tempfile::tempdir().unwrap();
    let tok = d.path().join("tok");
    // (case, contents (None: a sparse gigabyte), mode, what the error says)
    let cases: [(&str, Option<&[u8]>, u32, &str); 5] = [
        ("sparse 1 GiB", None, 0o600, "larger than the 4096 bytes"),
        ("all zero", Some(&[0u8; 32]), 0o600, "only zero bytes"),
        ("empty", Some(b"\n\n"), 0o600, "is empty"),
        ("mode 0644", Some(b"s3cret\n"), 0o644, "chmod 600"),
        ("mode 0666", Some(b"s3cret\n"), 0o666, "chmod 600"),
    ];
    let t = tok.to_str().unwrap().to_string();
    for (name, contents, mode, needle) in cases {
        let _ = std::fs::remove_file(&tok);
        match contents {
            Some(b) => std::fs::write(&tok, b).unwrap(),
            None => std::fs::File::create(&tok)
                .unwrap()
                .set_len(1 << 30)
                .unwrap(),
        }
        chmod(&tok, mode);
        for args in [
            vec!["net", "run", "127.0.0.1:1", "--token-file", &t],
            vec!["net", "serve", "--port", "0", "--token-file", &t],
            vec!["fleet", "--dry-run", "--nodes", "2", "--token-file", &t],
        ] {
            let t0 = Instant::now();
            let o = bwscope()
                .args(&args)
                .timeout(Duration::from_secs(20))
                .output()
                .unwrap();
            usage_error(&o, needle);
            assert!(
                stderr_of(&o).contains("--token-file"),
                "{name}: {}",
                stderr_of(&o)
            );
            assert!(t0.elapsed() < Duration::from_secs(10), "{name}: {args:?}");
        }
    }
    // Files that are not files: refused without waiting or reading on.
    let fifo = d.path().join("fifo");
    mkfifo(&fifo);
    for f in [
        "/dev/zero",
        fifo.to_str().unwrap(),
        d.path().to_str().unwrap(),
    ] {
        let t0 = Instant::now();
        let o = bwscope()
            .args(["net", "run", "127.0.0.1:1", "--token-file", f])
            .timeout(Duration::from_secs(20))
            .output()
            .unwrap();
        usage_error(&o, "--token-file");
        assert!(t0.elapsed() < Duration::from_secs(10), "{f}");
    }
}

// ---- item 6: flags that do nothing, silently ------------------------------

#[test]
fn a_misspelt_reference_metric_is_an_error_naming_it() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path().join("ref.json");
    let dry = |file: &Path| {
        bwscope()
            .args(["fleet", "--dry-run", "--nodes", "4", "--reference"])
            .arg(file)
            .timeout(Duration::from_secs(20))
            .output()
            .unwrap()
    };
    let body = |metric: &str| {
        format!(r#"{{"bwscope_reference":1,"classes":[{{"cpu":"*","bounds":{{"{metric}":99}}}}]}}"#)
    };
    std::fs::write(&r, body("clock_gz")).unwrap();
    usage_error(&dry(&r), "'clock_gz' is not a metric bwscope measures");
    // With a byte-order mark and a known metric it is accepted.
    std::fs::write(&r, format!("\u{feff}{}", body("clock_ghz"))).unwrap();
    let o = dry(&r);
    assert!(o.status.success(), "{}", stderr_of(&o));
    // A FIFO is refused without waiting for a writer.
    let fifo = d.path().join("fifo");
    mkfifo(&fifo);
    usage_error(&dry(&fifo), "not a regular file");
}

// ---- item 8: messages that mislead ----------------------------------------

#[test]
fn a_byte_order_mark_is_accepted_and_only_a_cut_file_is_called_truncated() {
    let d = tempfile::tempdir().unwrap();
    let text = std::fs::read(crate::common::fixture_path()).unwrap();
    let bom = d.path().join("bom.json");
    let mut b = b"\xEF\xBB\xBF".to_vec();
    b.extend(&text);
    std::fs::write(&bom, &b).unwrap();
    let o = bwscope()
        .args(["report", "-f", "table"])
        .arg(&bom)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr_of(&o));
    // A stray comma inside is a damaged file, not a truncated one.
    let bad = d.path().join("bad.json");
    std::fs::write(&bad, b"{\"schema_version\": 1,, }").unwrap();
    let o = bwscope().args(["report"]).arg(&bad).output().unwrap();
    usage_error(&o, "not valid JSON");
    assert!(!stderr_of(&o).contains("truncated"), "{}", stderr_of(&o));
    let cut = d.path().join("cut.json");
    std::fs::write(&cut, &text[..text.len() / 2]).unwrap();
    let o = bwscope().args(["report"]).arg(&cut).output().unwrap();
    usage_error(&o, "is the file truncated?");
}

// ---- item 4: no file clobbered by its own reader ---------------------------

#[test]
fn a_report_never_replaces_the_run_it_reads() {
    let d = tempfile::tempdir().unwrap();
    let run = d.path().join("RUN.json");
    std::fs::copy(crate::common::fixture_path(), &run).unwrap();
    let before = super::hash(&run);
    std::fs::hard_link(&run, d.path().join("link.json")).unwrap();
    std::os::unix::fs::symlink(&run, d.path().join("sym.md")).unwrap();
    // A run saved under an .html name: the default output is beside it,
    // with the same name.
    std::fs::copy(&run, d.path().join("saved.html")).unwrap();
    let html_before = super::hash(&d.path().join("saved.html"));
    for args in [
        vec!["report", "RUN.json", "-f", "md", "-o", "RUN.json"],
        vec!["report", "RUN.json", "-f", "csv", "-o", "./RUN.json"],
        vec!["report", "RUN.json", "-o", "link.json"],
        vec!["report", "RUN.json", "-o", "sym.md"],
        vec!["report", "saved.html"],
    ] {
        let o = bwscope()
            .current_dir(d.path())
            .args(&args)
            .output()
            .unwrap();
        usage_error(&o, "is the file being read");
    }
    assert_eq!(super::hash(&run), before);
    assert_eq!(super::hash(&d.path().join("saved.html")), html_before);
    // Output files of one run: no two the same, and --openmetrics is
    // checked before measuring (it once failed after, losing the run).
    for (extra, needle) in [
        (
            vec!["--openmetrics", "x", "--json", "x"],
            "names the same file as --json",
        ),
        (
            vec!["--openmetrics", "x", "--csv", "./x"],
            "names the same file as --csv",
        ),
        (
            vec!["--openmetrics", "-", "--json", "-"],
            "both write to stdout",
        ),
        (
            vec!["--openmetrics", "/nonexistent-dir/m.prom"],
            "does not exist",
        ),
    ] {
        let t0 = Instant::now();
        let o = bwscope()
            .current_dir(d.path())
            .args(["cache", "--kernel", "seq_read_64_scalar", "--samples", "2"])
            .args([
                "--sizes",
                "16KiB,32KiB,64KiB,128KiB",
                "--min-sample-ms",
                "2000",
            ])
            .args(&extra)
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        usage_error(&o, needle);
        // Refused before the 16 s or more of measuring.
        assert!(t0.elapsed() < Duration::from_secs(10), "{extra:?}");
    }
    // `--openmetrics -` is stdout, as `-` is everywhere else (it used to
    // write a file named '-').
    let o = bwscope()
        .current_dir(d.path())
        .args(super::TINY)
        .args(["--openmetrics", "-"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr_of(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("# TYPE bwscope_"));
    assert!(!d.path().join("-").exists());
}

// ---- item 6: fleet-only flags on a run of one machine ----------------------

#[test]
fn fleet_only_flags_on_a_plain_run_are_refused() {
    let f = crate::common::fixture_path();
    let q = f.to_str().unwrap();
    for args in [
        vec!["report", q, "--node", "x"],
        vec!["report", q, "--scale-max", "5", "-f", "table"],
        vec!["compare", q, q, "--node", "x"],
        vec!["plot", q, "--node", "x", "--list"],
    ] {
        let o = bwscope().args(&args).output().unwrap();
        usage_error(&o, "is a run of one machine, not a fleet file");
    }
}

// ---- hostile hour: a shared results folder ---------------------------------

#[test]
fn the_fleet_write_probe_does_not_follow_a_planted_link() {
    let d = tempfile::tempdir().unwrap();
    chmod(d.path(), 0o1777);
    let victim = d.path().join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    let out = d.path().join("shared");
    std::fs::create_dir(&out).unwrap();
    chmod(&out, 0o777);
    std::os::unix::fs::symlink(&victim, out.join(".bwscope-write-test")).unwrap();
    let o = super::bin_cmd()
        .args(["fleet", "--suites", "none", "--schedule", "none", "--out"])
        .arg(&out)
        .env("PMI_RANK", "0")
        .env("PMI_SIZE", "1")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr_of(&o));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
}

// ---- item 2: --json into a FIFO or /dev/stdout -----------------------------

/// A short cache run of three sizes.
const THREE: &[&str] = &[
    "cache",
    "--kernel",
    "seq_read_64_scalar",
    "--sizes",
    "16KiB,32KiB,64KiB",
    "--samples",
    "2",
    "--min-sample-ms",
    "1",
];

#[test]
fn a_fifo_gets_one_whole_run_and_never_holds_a_signal_up() {
    use std::io::Read;
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("ff");
    mkfifo(&fifo);
    // A one-shot reader that opens before the run ends: one document,
    // every record (it used to get a 1-record snapshot, and bwscope then
    // blocked in open() for the next rewrite).
    let child = super::bin_cmd()
        .args(THREE)
        .arg("--json")
        .arg(&fifo)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut text = String::new();
    std::fs::File::open(&fifo)
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr_of(&o));
    let run: serde_json::Value = serde_json::from_str(&text).expect("one JSON document");
    assert_eq!(run["records"].as_array().unwrap().len(), 3);
    // Nobody reads: the wait is said, and SIGTERM ends it at once, while
    // the CSV beside it keeps every record.
    let csv = d.path().join("r.csv");
    let mut child = super::bin_cmd()
        .args(THREE)
        .arg("--json")
        .arg(&fifo)
        .arg("--csv")
        .arg(&csv)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while super::csv_rows(&csv) < 3 {
        assert!(t0.elapsed() < Duration::from_secs(60), "no records came");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(500));
    assert!(child.try_wait().unwrap().is_none(), "it waits for a reader");
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    let t1 = Instant::now();
    let o = child.wait_with_output().unwrap();
    assert!(t1.elapsed() < Duration::from_secs(3), "{:?}", t1.elapsed());
    let e = stderr_of(&o);
    assert!(e.contains("waiting for a reader of the FIFO"), "{e}");
    assert!(e.contains("no reader opened the FIFO"), "{e}");
    assert_eq!(super::csv_rows(&csv), 3);
}

#[test]
fn dev_stdout_means_stdout_into_a_pipe_or_a_file() {
    // Into a pipe (it was "a symlink whose target cannot be resolved").
    let o = bwscope()
        .args(THREE)
        .args(["--json", "/dev/stdout"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr_of(&o));
    let run: serde_json::Value = serde_json::from_slice(&o.stdout).expect("only the JSON");
    assert_eq!(run["records"].as_array().unwrap().len(), 3);
    // Into a file (it replaced the file after the first record, then
    // failed on the deleted descriptor).
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("out.json");
    let o = super::bin_cmd()
        .args(THREE)
        .args(["--json", "/dev/stdout"])
        .stdout(std::fs::File::create(&f).unwrap())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr_of(&o));
    let run: serde_json::Value = serde_json::from_slice(&std::fs::read(&f).unwrap()).unwrap();
    assert_eq!(run["records"].as_array().unwrap().len(), 3);
    // With --csv - it is two writers on stdout.
    let o = bwscope()
        .args(THREE)
        .args(["--json", "/dev/stdout", "--csv", "-"])
        .output()
        .unwrap();
    usage_error(&o, "both write to stdout");
}

// ---- item 7: checks that pass too early -------------------------------------

#[test]
fn a_folder_path_that_does_not_exist_fails_before_measuring() {
    let d = tempfile::tempdir().unwrap();
    let o = bwscope()
        .current_dir(d.path())
        .args(THREE)
        .args(["--json", "results/"])
        .output()
        .unwrap();
    usage_error(&o, "it ends in '/', so it names a directory");
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
}

// ---- item 3: no run called complete that is not ---------------------------

/// Run `bwscope args` in `dir` with `resource` (`ulimit -f`: FSIZE, `-v`:
/// AS) limited to `bytes`.
fn with_limit(
    resource: libc::__rlimit_resource_t,
    bytes: u64,
    args: &[&str],
    dir: &Path,
) -> std::process::Output {
    use std::os::unix::process::CommandExt;
    let mut c = super::bin_cmd();
    c.args(args).current_dir(dir);
    // SAFETY: only setrlimit between fork and exec.
    unsafe {
        c.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            libc::setrlimit(resource, &lim);
            Ok(())
        });
    }
    c.output().unwrap()
}

#[test]
fn a_run_cut_by_a_write_error_says_so_and_keeps_whole_rows() {
    // `ulimit -f` stands for a full disk: the CSV stops growing mid-run.
    // It used to kill the process (SIGXFSZ) with a row cut in half; on a
    // full disk the run ended with the JSON beside it saying complete.
    let d = tempfile::tempdir().unwrap();
    let o = with_limit(
        libc::RLIMIT_FSIZE,
        16 << 10,
        &[
            "cache",
            "--kernel",
            "seq_read_64_scalar",
            "--sizes",
            "1KiB..400KiB:+1KiB",
            "--samples",
            "2",
            "--min-sample-ms",
            "1",
            "--csv",
            "r.csv",
            "--json",
            "-",
        ],
        d.path(),
    );
    let e = stderr_of(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("File too large"), "{e}");
    let run: serde_json::Value = serde_json::from_slice(&o.stdout).expect("the JSON on stdout");
    assert_eq!(run["complete"], false);
    assert_eq!(run["interrupted"], false);
    let why = run["incomplete_reason"].as_str().unwrap();
    assert!(
        why.contains("r.csv") && why.contains("File too large"),
        "{why}"
    );
    let n = run["records"].as_array().unwrap().len();
    assert!((1..400).contains(&n), "{n}");
    let csv = std::fs::read_to_string(d.path().join("r.csv")).unwrap();
    assert!(csv.ends_with('\n'), "the last row is whole");
    assert_eq!(super::csv_rows(&d.path().join("r.csv")), n, "CSV = JSON");
    // And the readers mark it, with the reason.
    let f = d.path().join("r.json");
    std::fs::write(&f, &o.stdout).unwrap();
    let o = bwscope()
        .args(["report", "-f", "table"])
        .arg(&f)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("incomplete run: it ended early (cannot write")
    );
}

#[test]
fn a_net_run_that_loses_its_server_is_not_complete() {
    let d = tempfile::tempdir().unwrap();
    let mut srv = super::bin_cmd()
        .args(["net", "serve", "--port", "0"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(srv.stderr.as_mut().unwrap()),
        &mut line,
    )
    .unwrap();
    let port = line
        .split("127.0.0.1:")
        .nth(1)
        .and_then(|t| t.split(|c: char| !c.is_ascii_digit()).next())
        .unwrap()
        .to_string();
    let json = d.path().join("net.json");
    let leader = super::bin_cmd()
        .args(["net", "run", &format!("127.0.0.1:{port}"), "-m", "stream"])
        .args([
            "-t",
            "1",
            "-O",
            "0.1",
            "-s",
            "64KiB,128KiB,256KiB",
            "--json",
        ])
        .arg(&json)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The first point done, the server goes away.
    let t0 = Instant::now();
    while !json.exists() {
        assert!(t0.elapsed() < Duration::from_secs(30), "no first point");
        std::thread::sleep(Duration::from_millis(20));
    }
    srv.kill().unwrap();
    srv.wait().unwrap();
    let o = leader.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr_of(&o));
    let run: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(run["complete"], false, "{run}");
    let reason = run["incomplete_reason"].as_str().unwrap_or_default();
    assert!(reason.contains("127.0.0.1"), "{reason}");
    assert!(run["records"].as_array().unwrap().len() < 3);
}

#[test]
fn the_survey_under_an_address_space_limit_says_which_and_leaves_no_folder() {
    let d = tempfile::tempdir().unwrap();
    let o = with_limit(libc::RLIMIT_AS, 64 << 20, &[], d.path());
    // The survey's knee probe and DRAM sizes need at least 64 MiB at once.
    usage_error(&o, "`ulimit -v`");
    let e = stderr_of(&o);
    assert!(e.contains("survey") && !e.contains("fewer threads"), "{e}");
    assert_eq!(
        std::fs::read_dir(d.path()).unwrap().count(),
        0,
        "no empty results folder"
    );
}

// ---- fleets -----------------------------------------------------------------

static JOBS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// A job name no other test uses.
fn job() -> String {
    format!(
        "r3-{}-{}",
        std::process::id(),
        JOBS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    )
}

/// Rank `r` of `n` as Open MPI's `mpirun` would start it in job `job`.
fn rank(r: u32, n: u32, job: &str, dir: &Path, args: &[&str]) -> std::process::Command {
    let mut c = super::bin_cmd();
    c.arg("fleet")
        .args(args)
        .args(["--control", "tcp", "--timeout", "20"])
        .current_dir(dir)
        .env("OMPI_COMM_WORLD_RANK", r.to_string())
        .env("OMPI_COMM_WORLD_SIZE", n.to_string())
        .env("OMPI_MCA_ess_base_jobid", job)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    c
}

#[test]
fn ranks_started_with_other_flags_are_refused_naming_them() {
    let d = tempfile::tempdir().unwrap();
    let j = job();
    let quiet = [
        "--schedule",
        "none",
        "--samples",
        "2",
        "--min-sample-ms",
        "1",
    ];
    let r0 = rank(0, 2, &j, d.path(), &quiet)
        .args(["--suites", "none", "--out", "res"])
        .spawn()
        .unwrap();
    let r1 = rank(1, 2, &j, d.path(), &quiet)
        .args(["--suites", "cache"])
        .spawn()
        .unwrap();
    let (o0, o1) = (
        r0.wait_with_output().unwrap(),
        r1.wait_with_output().unwrap(),
    );
    let e0 = stderr_of(&o0);
    assert_eq!(o0.status.code(), Some(2), "{e0}");
    assert!(
        e0.contains("other flags than rank 0") && e0.contains("node.suites"),
        "{e0}"
    );
    assert_eq!(o1.status.code(), Some(2), "{}", stderr_of(&o1));
    assert!(stderr_of(&o1).contains("node.suites"));
}

#[test]
fn a_dry_run_for_zero_nodes_says_so() {
    let o = bwscope()
        .args(["fleet", "--dry-run", "--nodes", "0"])
        .output()
        .unwrap();
    usage_error(&o, "--nodes: 0 nodes is no fleet");
}

// ---- item 1: a fleet that cannot be hijacked ---------------------------------

/// Wait for `p` to exist.
fn wait_for_file(p: &Path, within: Duration) {
    let t0 = Instant::now();
    while !p.exists() {
        assert!(t0.elapsed() < within, "{} never appeared", p.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The rendezvous note of job `j` in `dir`.
fn note(dir: &Path, j: &str) -> std::path::PathBuf {
    bwscope::cluster::rendezvous::path(dir, Some(j))
}

#[test]
fn a_rank_refuses_a_rendezvous_file_it_cannot_trust() {
    let d = tempfile::tempdir().unwrap();
    let shared = d.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    chmod(&shared, 0o1777);
    let j = job();
    let quick = ["--suites", "none", "--schedule", "none"];
    // What a victim's rank 1 says when it finds `planted` at its note's name.
    let victim = |why: &str| {
        let t0 = Instant::now();
        let o = rank(1, 2, &j, d.path(), &quick)
            .args(["--rendezvous", shared.to_str().unwrap()])
            .output()
            .unwrap();
        let e = stderr_of(&o);
        assert_eq!(o.status.code(), Some(2), "{why}: {e}");
        assert!(
            e.contains(note(&shared, &j).to_str().unwrap()),
            "{why}: {e}"
        );
        assert!(t0.elapsed() < Duration::from_secs(10), "{why}: not at once");
        e
    };
    // A real rank 0 of the same job name elsewhere (an attacker's), whose
    // note is copied into the shared folder.
    let att = d.path().join("att");
    std::fs::create_dir(&att).unwrap();
    let mut attacker = rank(0, 2, &j, d.path(), &quick)
        .args(["--rendezvous", att.to_str().unwrap(), "--out", "att-res"])
        .spawn()
        .unwrap();
    wait_for_file(&note(&att, &j), Duration::from_secs(30));
    std::fs::copy(note(&att, &j), note(&shared, &j)).unwrap();
    chmod(&note(&shared, &j), 0o644);
    assert!(victim("mode 0644").contains("has mode 0644"));
    chmod(&note(&shared, &j), 0o600);
    if super::is_root() {
        // Another user's file: the hijack of issue 23.
        let c = std::ffi::CString::new(note(&shared, &j).to_str().unwrap()).unwrap();
        // SAFETY: a valid path.
        assert_eq!(unsafe { libc::chown(c.as_ptr(), 1000, 1000) }, 0);
        assert!(victim("another user's").contains("belongs to uid 1000"));
    }
    let _ = attacker.kill();
    let _ = attacker.wait();
    // A link, and a FIFO (which used to hang the reader).
    std::fs::remove_file(note(&shared, &j)).unwrap();
    std::os::unix::fs::symlink(note(&att, &j), note(&shared, &j)).unwrap();
    assert!(victim("a link").contains("symbolic link"));
    std::fs::remove_file(note(&shared, &j)).unwrap();
    mkfifo(&note(&shared, &j));
    assert!(victim("a FIFO").contains("not a regular file"));
}

/// A listener on a free loopback port, and the port.
fn listener() -> (std::net::TcpListener, u16) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let p = l.local_addr().unwrap().port();
    (l, p)
}

#[test]
fn a_rank_with_a_token_joins_only_a_rank_0_that_proves_it_holds_it() {
    let d = tempfile::tempdir().unwrap();
    let (mine, theirs) = (d.path().join("mine"), d.path().join("theirs"));
    std::fs::write(&mine, "the fleet's secret\n").unwrap();
    std::fs::write(&theirs, "another fleet's secret\n").unwrap();
    chmod(&mine, 0o600);
    chmod(&theirs, 0o600);
    let quick = ["--suites", "none", "--schedule", "none"];
    // An impostor rank 0 squats the coordinator port with another token.
    let (l, port) = listener();
    drop(l);
    let coord = format!("127.0.0.1:{port}");
    let j = job();
    let mut impostor = rank(0, 2, &j, d.path(), &quick)
        .args(["--coordinator", &coord, "--out", "imp-res", "--token-file"])
        .arg(&theirs)
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    // Rank 1 of the victim's fleet, with its token, at `coord`: refused.
    let victim = |coord: &str, needle: &str| {
        let o = rank(1, 2, &j, d.path(), &quick)
            .args(["--coordinator", coord, "--token-file"])
            .arg(&mine)
            .output()
            .unwrap();
        let e = stderr_of(&o);
        assert_eq!(o.status.code(), Some(2), "{e}");
        assert!(e.contains(needle), "{e}");
    };
    victim(&coord, "could not prove it holds the token");
    let _ = impostor.kill();
    let _ = impostor.wait();
    // One that asks for no token at all (a downgrade): refused too.
    let (l, port) = listener();
    let coord = format!("127.0.0.1:{port}");
    let fake = std::thread::spawn(move || {
        use bwscope::cluster::wire::{read_msg, write_msg, Wire};
        let (mut s, _) = l.accept().unwrap();
        while let Ok(m) = read_msg(&mut s, 1 << 16, Some(Duration::from_secs(10))) {
            if matches!(m, Wire::Join { .. }) {
                let _ = write_msg(&mut s, &Wire::Challenge { nonce: None });
                let _ = write_msg(&mut s, &Wire::Accepted);
            }
        }
    });
    victim(&coord, "asks for no token while this rank has one");
    fake.join().unwrap();
}

#[test]
fn a_coordinator_without_a_token_says_it_is_unauthenticated() {
    let d = tempfile::tempdir().unwrap();
    let (l, port) = listener();
    drop(l);
    let o = rank(
        0,
        1,
        &job(),
        d.path(),
        &["--suites", "none", "--schedule", "none"],
    )
    .args([
        "--coordinator",
        &format!("127.0.0.1:{port}"),
        "--out",
        "res",
    ])
    .output()
    .unwrap();
    let e = stderr_of(&o);
    assert!(o.status.success(), "{e}");
    assert!(
        e.contains("--coordinator without --token-file") && e.contains("not authenticated"),
        "{e}"
    );
}

/// Rank `r` of `n` as MPICH's Hydra would start it, without its process
/// manager: `PMI_RANK`/`PMI_SIZE` and no job name.
fn bare_rank(r: u32, n: u32, dir: &Path, args: &[&str]) -> std::process::Command {
    let mut c = super::bin_cmd();
    c.arg("fleet")
        .args(args)
        .args(["--control", "tcp", "--timeout", "20"])
        .current_dir(dir)
        .env("PMI_RANK", r.to_string())
        .env("PMI_SIZE", n.to_string())
        .env_remove("PMI_FD")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    c
}

#[test]
fn a_second_job_without_a_job_name_is_refused_not_mixed_in() {
    let d = tempfile::tempdir().unwrap();
    let quick = ["--suites", "none", "--schedule", "none"];
    let first = bare_rank(0, 2, d.path(), &quick)
        .args(["--out", "a"])
        .spawn()
        .unwrap();
    wait_for_file(
        &bwscope::cluster::rendezvous::path(d.path(), None),
        Duration::from_secs(30),
    );
    let o = bare_rank(0, 2, d.path(), &quick)
        .args(["--out", "b"])
        .output()
        .unwrap();
    usage_error(
        &o,
        "another fleet is starting with the same rendezvous file",
    );
    // The first job is untouched: its rank 1 joins it.
    let r1 = bare_rank(1, 2, d.path(), &quick).output().unwrap();
    assert!(r1.status.success(), "{}", stderr_of(&r1));
    let o = first.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr_of(&o));
}

#[test]
fn hydra_jobs_started_at_once_in_one_folder_keep_their_own_ranks() {
    let hydra = ["mpiexec.hydra", "mpiexec.mpich"].into_iter().find(|m| {
        std::process::Command::new(m)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    let Some(hydra) = hydra else {
        eprintln!("skipping: no MPICH Hydra (mpiexec.hydra) here");
        return;
    };
    let d = tempfile::tempdir().unwrap();
    for trial in 0..2 {
        let jobs: Vec<std::process::Child> = (0..2)
            .map(|i| {
                super::with_history(std::process::Command::new(hydra))
                    .args(["-np", "2", super::BIN, "fleet", "--control", "tcp"])
                    .args(["--suites", "none", "--schedule", "none", "--timeout", "30"])
                    .args(["--out", &format!("res{trial}-{i}")])
                    .current_dir(d.path())
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let mut names = Vec::new();
        for (i, j) in jobs.into_iter().enumerate() {
            let o = j.wait_with_output().unwrap();
            assert!(
                o.status.success(),
                "trial {trial} job {i}: {}",
                stderr_of(&o)
            );
            let f: serde_json::Value = serde_json::from_slice(
                &std::fs::read(d.path().join(format!("res{trial}-{i}/fleet.json"))).unwrap(),
            )
            .unwrap();
            assert!(f["nodes"]
                .as_array()
                .unwrap()
                .iter()
                .all(|n| n["status"] == "ok"));
            names.push(f["launch"]["job"].as_str().unwrap().to_string());
        }
        assert!(
            names[0].starts_with("kvs_") && names[0] != names[1],
            "{names:?}"
        );
    }
}

// ---- item 8: net serve under a low open-file limit, and --max-bytes --------

/// A running `bwscope net serve`: the child, its port, its first line and
/// the lines after it.
pub(super) struct Served {
    child: std::process::Child,
    pub(super) port: u16,
    pub(super) first: String,
    pub(super) lines: std::sync::mpsc::Receiver<String>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `bwscope net serve --port 0 ARGS` with `ulimit -n` at `nofile` (None:
/// unchanged).
pub(super) fn serve(nofile: Option<u64>, args: &[&str]) -> Served {
    use std::io::BufRead;
    use std::os::unix::process::CommandExt;
    let mut c = super::bin_cmd();
    c.args(["net", "serve", "--port", "0"])
        .args(args)
        .stderr(std::process::Stdio::piped());
    if let Some(n) = nofile {
        // SAFETY: only setrlimit between fork and exec.
        unsafe {
            c.pre_exec(move || {
                let lim = libc::rlimit {
                    rlim_cur: n,
                    rlim_max: n,
                };
                libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
                Ok(())
            });
        }
    }
    let mut child = c.spawn().unwrap();
    let (tx, lines) = std::sync::mpsc::channel();
    let err = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for l in std::io::BufReader::new(err).lines().map_while(Result::ok) {
            let _ = tx.send(l);
        }
    });
    let first = lines.recv_timeout(Duration::from_secs(20)).unwrap();
    let port = first
        .split("127.0.0.1:")
        .nth(1)
        .and_then(|t| t.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {first}"));
    Served {
        child,
        port,
        first,
        lines,
    }
}

#[test]
fn a_server_short_of_open_files_says_so_at_start_at_setup_and_once_a_second() {
    let srv = serve(Some(20), &["--timeout", "3"]);
    assert!(
        srv.first.contains("room for") && srv.first.contains("ulimit -n 20"),
        "{}",
        srv.first
    );
    // A 16-stream leader is refused at setup, naming the limit (it used
    // to be told "only 13 of 16 streams joined").
    let addr = format!("127.0.0.1:{}", srv.port);
    let o = bwscope()
        .args([
            "net", "run", &addr, "-m", "stream", "-P", "16", "-t", "0.5", "-O", "0.1",
        ])
        .args(["-s", "64KiB"])
        .output()
        .unwrap();
    usage_error(&o, "open-file limit (ulimit -n 20)");
    // Connections from ten addresses (past the per-address cap) run it out
    // of descriptors: the log says so about once a second, naming EMFILE,
    // where it used to print about a hundred lines a second.
    let dst: std::net::SocketAddr = addr.parse().unwrap();
    let held: Vec<_> = (0..40u8)
        .filter_map(|i| {
            super::connect_from(std::net::Ipv4Addr::new(127, 0, 1, 2 + i / 4), dst).ok()
        })
        .collect();
    std::thread::sleep(Duration::from_secs(3));
    drop(held);
    let mut failed = Vec::new();
    while let Ok(l) = srv.lines.recv_timeout(Duration::from_millis(500)) {
        if l.contains("accept failed") {
            failed.push(l);
        }
    }
    assert!(!failed.is_empty(), "the server ran out of descriptors");
    assert!(failed.len() <= 8, "{} lines: {failed:?}", failed.len());
    assert!(
        failed[0].contains("out of open files") && failed[0].contains("ulimit -n"),
        "{}",
        failed[0]
    );
}

#[test]
fn a_test_cut_by_the_servers_max_bytes_says_so() {
    let srv = serve(None, &["--max-bytes", "1MiB"]);
    let d = tempfile::tempdir().unwrap();
    let j = d.path().join("r.json");
    let addr = format!("127.0.0.1:{}", srv.port);
    let o = bwscope()
        .args([
            "net", "run", &addr, "-m", "stream", "-d", "recv", "-t", "2", "-O", "0.5",
        ])
        .args(["-s", "64KiB", "--json"])
        .arg(&j)
        .output()
        .unwrap();
    let _ = o;
    let run: serde_json::Value = serde_json::from_slice(&std::fs::read(&j).unwrap()).unwrap();
    let why = run["records"][0]["reason"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        why.contains("--max-bytes") && !why.contains("lengthen --time"),
        "{why}"
    );
}

// ---- item 9: the transfer progress bar's total --------------------------------

#[test]
fn the_transfer_progress_bar_counts_to_its_total() {
    let args = [
        "transfer",
        "--backend",
        "opencl",
        "--sizes",
        "64KiB,256KiB",
        "--samples",
        "2",
        "--min-sample-ms",
        "5",
    ];
    // No device: a loader without a platform (wine's ocl-icd) exits 0
    // with a skipped record, which has no bar to count.
    let o = bwscope().args(args).args(["--json", "-"]).output().unwrap();
    let why = match serde_json::from_slice::<serde_json::Value>(&o.stdout) {
        Ok(run) if o.status.success() => match &run["records"][0] {
            r if r["status"] == "skipped" => Some(r["reason"].to_string()),
            _ => None,
        },
        _ => Some(format!("exit {:?}: {}", o.status, stderr_of(&o))),
    };
    if let Some(why) = why {
        eprintln!("skipping: no OpenCL device here: {why}");
        return;
    }
    let Some(tty) = super::on_a_terminal(&args) else {
        return;
    };
    // Every "N/T" the bar drew: T is the plan's, never 0 (it read 24/0,
    // 132/0, full from the start), and N never passes it.
    let positions: Vec<(u64, u64)> = tty
        .split(|c: char| !(c.is_ascii_digit() || c == '/'))
        .filter_map(|w| w.split_once('/'))
        .filter_map(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
        .filter(|&(n, _)| n > 0)
        .collect();
    assert!(!positions.is_empty(), "{tty}");
    for (n, t) in positions {
        assert!(t > 0 && n <= t, "{n}/{t} in {tty}");
    }
}

#[test]
fn an_opencl_loader_without_a_platform_draws_no_bar() {
    // An ICD loader whose vendor folder is empty (a desktop with wine's
    // ocl-icd and no GPU driver): one skipped record, exit 0, and on a
    // terminal the reason, never a full bar reading 0/0.
    let empty = tempfile::tempdir().unwrap();
    let env = [
        ("OCL_ICD_VENDORS", empty.path()),
        ("OPENCL_VENDOR_PATH", empty.path()),
    ];
    let args = ["transfer", "--backend", "opencl", "--sizes", "64KiB"];
    let o = bwscope()
        .envs(env)
        .args(args)
        .args(["--json", "-"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr_of(&o));
    let run: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(run["records"][0]["status"], "skipped", "{run}");
    let Some(tty) = super::on_a_terminal_with(&env, &args) else {
        return;
    };
    assert!(tty.contains("transfer: skipped"), "{tty}");
    assert!(!tty.contains("0/0"), "a bar with nothing to count: {tty}");
    assert!(!tty.contains('\u{2588}'), "a drawn bar: {tty}");
}
