//! `bwscope fleet` told where rank 0 is, as a Kubernetes manifest tells it
//! (issue 41): `BWSCOPE_COORDINATOR` and `BWSCOPE_TOKEN_FILE` instead of
//! the flags, a name that does not resolve, and rank 0's figures on
//! standard output. Ranks on loopback with the variables `mpirun` sets;
//! the same fleet in private mount namespaces, with a name that resolves
//! late: fleet_netns.rs (root).

// Unix: file modes and Open MPI's variables.
#![cfg(unix)]

mod common;

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Instant;

use common::fleet::{check_openmetrics, exe, QUICK};

static JOBS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// Rank `r` of `n` as Open MPI's `mpirun` starts it, in a job of its own,
/// with none of the variables this test is about unless it sets them.
fn rank(r: u32, n: u32, job: u32, dir: &Path) -> Command {
    let mut c = Command::new(exe());
    c.env("BWSCOPE_HISTORY", common::test_history());
    c.arg("fleet")
        .args(["--control", "tcp"])
        .current_dir(dir)
        .env("OMPI_COMM_WORLD_RANK", r.to_string())
        .env("OMPI_COMM_WORLD_SIZE", n.to_string())
        .env(
            "OMPI_MCA_ess_base_jobid",
            format!("pods{}-{job}", std::process::id()),
        )
        .env_remove("BWSCOPE_COORDINATOR")
        .env_remove("BWSCOPE_TOKEN_FILE")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

fn job() -> u32 {
    JOBS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

fn stderr_of(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn token(dir: &Path, mode: u32) -> std::path::PathBuf {
    let p = dir.join(format!("token-{mode:o}"));
    std::fs::write(&p, "a secret a Secret would mount\n").unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
    p
}

#[test]
fn a_coordinator_variable_that_is_not_host_port_is_one_line_naming_it() {
    let d = tempfile::tempdir().unwrap();
    for (value, says) in [
        ("bwscope-fleet-worker-0", "is not HOST:PORT"),
        (":5290", "is not HOST:PORT"),
        ("worker-0:http", "is not HOST:PORT"),
        ("worker-0:0", "port 0"),
    ] {
        let o = rank(1, 2, job(), d.path())
            .env("BWSCOPE_COORDINATOR", value)
            .output()
            .unwrap();
        let e = stderr_of(&o);
        assert_eq!(o.status.code(), Some(2), "{value}: {e}");
        assert_eq!(e.trim().lines().count(), 1, "{e}");
        assert!(e.contains("BWSCOPE_COORDINATOR") && e.contains(says), "{e}");
    }
    // The flag wins over the variable, and its own name is in the message.
    let o = rank(1, 2, job(), d.path())
        .env("BWSCOPE_COORDINATOR", "127.0.0.1:5290")
        .args(["--coordinator", "nowhere"])
        .output()
        .unwrap();
    let e = stderr_of(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("--coordinator") && !e.contains("BWSCOPE_COORDINATOR"),
        "{e}"
    );
}

#[test]
fn a_token_file_named_by_the_variable_is_checked_as_the_flag_is() {
    let d = tempfile::tempdir().unwrap();
    let open = token(d.path(), 0o644);
    let o = Command::new(exe())
        .env("BWSCOPE_HISTORY", common::test_history())
        .args(["fleet", "--dry-run", "--nodes", "2"])
        .env("BWSCOPE_TOKEN_FILE", &open)
        .output()
        .unwrap();
    let e = stderr_of(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(
        e.contains("BWSCOPE_TOKEN_FILE") && e.contains("chmod 600"),
        "{e}"
    );
    let private = token(d.path(), 0o600);
    let o = Command::new(exe())
        .env("BWSCOPE_HISTORY", common::test_history())
        .args(["fleet", "--dry-run", "--nodes", "2"])
        .env("BWSCOPE_TOKEN_FILE", &private)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr_of(&o));
}

#[test]
fn a_coordinator_that_never_resolves_ends_the_rank_with_the_resolvers_words() {
    let d = tempfile::tempdir().unwrap();
    // RFC 6761: no name under .invalid ever resolves.
    let coord = "bwscope-fleet-worker-0.invalid:5290";
    let t0 = Instant::now();
    let o = rank(1, 2, job(), d.path())
        .env("BWSCOPE_COORDINATOR", coord)
        .args(["--suites", "none", "--schedule", "none", "--timeout", "6"])
        .output()
        .unwrap();
    let took = t0.elapsed().as_secs_f64();
    let e = stderr_of(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    // It kept trying for --timeout (a pod's name appears late), not less,
    // and not without bound.
    assert!((5.5..40.0).contains(&took), "{took} s: {e}");
    // Once while waiting (after 5 s), then one line to end with.
    let waiting: Vec<&str> = e
        .lines()
        .filter(|l| l.contains("still waiting for rank 0"))
        .collect();
    assert_eq!(waiting.len(), 1, "{e}");
    assert!(waiting[0].contains("does not resolve yet"), "{e}");
    let last = e.trim().lines().last().unwrap();
    assert!(
        last.contains("found no rank 0 at bwscope-fleet-worker-0.invalid:5290")
            && last.contains("BWSCOPE_COORDINATOR")
            && last.contains("within 6 s")
            && last.contains("does not resolve yet ("),
        "{e}"
    );
}

/// A loopback port free now.
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

#[test]
fn ranks_meet_at_the_variables_and_rank_0_writes_openmetrics_to_stdout() {
    let d = tempfile::tempdir().unwrap();
    let secret = token(d.path(), 0o600);
    let coord = format!("127.0.0.1:{}", free_port());
    let j = job();
    let start = |r: u32, extra: &[&str]| {
        rank(r, 2, j, d.path())
            .env("BWSCOPE_COORDINATOR", &coord)
            .env("BWSCOPE_TOKEN_FILE", &secret)
            .args(QUICK)
            .args(["--schedule", "none", "--timeout", "60"])
            .args(extra)
            .spawn()
            .unwrap()
    };
    let r0 = start(0, &["--out", "res", "--openmetrics", "-"]);
    let r1 = start(1, &[]);
    let (o0, o1) = (
        r0.wait_with_output().unwrap(),
        r1.wait_with_output().unwrap(),
    );
    let e0 = stderr_of(&o0);
    assert!(o0.status.success(), "{e0}");
    assert!(o1.status.success(), "{}", stderr_of(&o1));
    assert!(!e0.contains("not authenticated"), "{e0}");
    // stdout holds the OpenMetrics text alone; the summary went to stderr.
    let text = String::from_utf8(o0.stdout).unwrap();
    assert!(text.ends_with("# EOF\n"), "{text}");
    assert!(e0.contains("wrote res"), "{e0}");
    check_openmetrics(&text);
    // The rest of the results folder is there as ever, fleet.json included.
    for f in ["fleet.json", "fleet.csv", "verdicts.txt"] {
        assert!(d.path().join("res").join(f).is_file(), "{f}");
    }
    // Not two documents on one stdout.
    let o = rank(0, 2, job(), d.path())
        .args(["--json", "-", "--openmetrics", "-", "--out", "res2"])
        .output()
        .unwrap();
    let e = stderr_of(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("would both write to stdout"), "{e}");
}
