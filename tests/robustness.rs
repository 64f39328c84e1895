//! Regression tests of the bad-input and fault matrix (`docs/robustness.md`,
//! issue 12), one group per item, each named after what it guards. They run
//! the real binary and assert exit codes, file contents (hashes before and
//! after) and modes. Only loopback addresses are contacted; every wait is
//! bounded.

// Linux: signals, /proc, namespaces, guests, device nodes or Unix-only
// tools (the Windows build runs tests/windows.rs instead; on macOS, where
// nothing runs yet, the Linux calls here — pipe2, SOCK_CLOEXEC, glibc's
// rlimit type — would not compile).
#![cfg(target_os = "linux")]

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{bwscope, fixture, write};
use serde_json::Value;
use sha2::{Digest, Sha256};

const BIN: &str = env!("CARGO_BIN_EXE_bwscope");

/// The binary, its runs kept in the tests' history store (never the
/// user's data folder).
fn bin_cmd() -> Command {
    with_history(Command::new(BIN))
}

/// `c` (a shell, `unshare`, a launcher that runs the binary) with the
/// tests' history store in its environment.
fn with_history(mut c: Command) -> Command {
    c.env("BWSCOPE_HISTORY", common::test_history());
    c
}

pub(crate) fn hash(p: &Path) -> String {
    let b = std::fs::read(p).unwrap();
    format!("{:x}", Sha256::digest(&b))
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

fn stderr_of(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A tiny cache run: one kernel, one size, two short samples.
pub(crate) const TINY: &[&str] = &[
    "cache",
    "--kernel",
    "seq_read_64_scalar",
    "--sizes",
    "16KiB",
    "--samples",
    "2",
    "--min-sample-ms",
    "1",
];

pub(crate) fn is_root() -> bool {
    // SAFETY: no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// One line of error, exit 2, no panic.
fn usage_error(o: &std::process::Output, needle: &str) {
    let e = stderr_of(o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains(needle), "expected {needle:?} in {e}");
    assert!(!e.contains("panicked"), "{e}");
    assert_eq!(
        e.lines().filter(|l| l.starts_with("error")).count(),
        1,
        "{e}"
    );
}

// ---- 1. size lists -------------------------------------------------------

#[test]
fn size_list_points_are_counted_before_allocating() {
    // Under a 1 GiB address-space limit the old parser aborted (rc 134).
    let out = {
        use std::os::unix::process::CommandExt;
        let mut c = bin_cmd();
        c.args(["cache", "--sizes", "1..1TiB:x1.00000001"]);
        // SAFETY: only setrlimit between fork and exec.
        unsafe {
            c.pre_exec(|| {
                let lim = libc::rlimit {
                    rlim_cur: 1 << 30,
                    rlim_max: 1 << 30,
                };
                libc::setrlimit(libc::RLIMIT_AS, &lim);
                Ok(())
            });
        }
        c.output().unwrap()
    };
    usage_error(&out, "too many points (2772598753 > 10000)");
    let out = bwscope()
        .args(["cache", "--sizes", "1KiB..1GiB:x1.0001"])
        .output()
        .unwrap();
    usage_error(&out, "too many points (");
}

#[test]
fn long_plan_says_so_before_starting() {
    // 6939 sizes × 100 ms samples: most of an hour even when every case
    // settles after three samples. The unwritable --json then stops it
    // before anything is measured, after the notice.
    let out = bwscope()
        .args([
            "cache",
            "--kernel",
            "seq_read_64_scalar",
            "--sizes",
            "1KiB..1GiB:x1.002",
            "--min-sample-ms",
            "100",
            "--json",
            "/nonexistent-dir/x.json",
        ])
        .output()
        .unwrap();
    let e = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert!(
        e.contains("estimated to take at least 58 min")
            && e.contains("6939 sizes × 1 kernels × (3 samples (up to 7 where they disagree)"),
        "{e}"
    );
}

// ---- 2. the atomic writer --------------------------------------------------

#[test]
fn planted_temp_symlink_cannot_redirect_the_write() {
    let d = tempfile::tempdir().unwrap();
    let secret = d.path().join("secret");
    std::fs::write(&secret, "do not touch\n").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    let before = hash(&secret);
    // The old writer's predictable name, and the new one's pattern.
    std::os::unix::fs::symlink(&secret, d.path().join("run.json.partial")).unwrap();
    std::os::unix::fs::symlink(&secret, d.path().join(".partial")).unwrap();
    let out = bwscope()
        .current_dir(d.path())
        .args(TINY)
        .args(["--json", "run.json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert_eq!(hash(&secret), before);
    assert_eq!(mode(&secret), 0o600);
    let run: Value =
        serde_json::from_slice(&std::fs::read(d.path().join("run.json")).unwrap()).unwrap();
    assert_eq!(run["records"].as_array().unwrap().len(), 1);
    // No temporary file is left behind.
    let left: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn replaced_file_keeps_its_mode_and_read_only_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("run.json");
    std::fs::write(&f, "old").unwrap();
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o640)).unwrap();
    let out = bwscope().args(TINY).arg("--json").arg(&f).output().unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert_eq!(mode(&f), 0o640);
    // Read-only (also for root): refused before measuring, untouched.
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o444)).unwrap();
    let before = hash(&f);
    let out = bwscope().args(TINY).arg("--json").arg(&f).output().unwrap();
    usage_error(&out, "read-only");
    assert_eq!(hash(&f), before);
    assert_eq!(mode(&f), 0o444);
}

#[test]
fn empty_output_path_is_refused_and_leaves_nothing() {
    let d = tempfile::tempdir().unwrap();
    for flag in ["--json", "--csv"] {
        let out = bwscope()
            .current_dir(d.path())
            .args(TINY)
            .args([flag, ""])
            .output()
            .unwrap();
        usage_error(&out, &format!("{flag}: the path is empty"));
    }
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
}

#[test]
fn foreign_symlink_in_a_sticky_directory_is_not_followed() {
    if !is_root() {
        eprintln!("skipping: needs root to plant a link owned by another user");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
    let secret = d.path().join("secret");
    std::fs::write(&secret, "root's\n").unwrap();
    let before = hash(&secret);
    let link = d.path().join("run.json");
    std::os::unix::fs::symlink(&secret, &link).unwrap();
    std::os::unix::fs::lchown(&link, Some(65534), Some(65534)).unwrap();
    let out = bwscope()
        .args(TINY)
        .arg("--json")
        .arg(&link)
        .output()
        .unwrap();
    usage_error(&out, "symlink owned by uid 65534");
    assert_eq!(hash(&secret), before);
}

// ---- 3. net serve under a slow-drip attack --------------------------------

/// A TCP connection to `dst` from the loopback address `src` (127.0.0.0/8
/// is all loopback on Linux), so one test can be two hosts.
pub(crate) fn connect_from(src: Ipv4Addr, dst: SocketAddr) -> std::io::Result<TcpStream> {
    let SocketAddr::V4(dst) = dst else {
        unreachable!("IPv4 loopback only")
    };
    let sin = |ip: Ipv4Addr, port: u16| libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(ip).to_be(),
        },
        sin_zero: [0; 8],
    };
    let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    // SAFETY: plain socket calls on a descriptor we own; the TcpStream
    // takes ownership on success, and it is closed on failure.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let s = TcpStream::from_raw_fd(fd);
        let a = sin(src, 0);
        if libc::bind(fd, &a as *const _ as *const libc::sockaddr, len) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let b = sin(*dst.ip(), dst.port());
        if libc::connect(fd, &b as *const _ as *const libc::sockaddr, len) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(s)
    }
}

/// A transponder on an ephemeral loopback port; returns its address, the
/// stop flag and the serving thread.
fn start_server(
    cfg: bwscope::net::server::ServerConfig,
    log: bwscope::net::server::Log,
) -> (SocketAddr, Arc<AtomicBool>, std::thread::JoinHandle<()>) {
    let server = bwscope::net::server::Server::bind(cfg, log).unwrap();
    let addr = server.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let s2 = stop.clone();
    (
        addr,
        stop,
        std::thread::spawn(move || server.serve(&s2).unwrap()),
    )
}

#[test]
fn server_answers_a_real_leader_while_a_slow_drip_attacker_holds_connections() {
    use bwscope::net::client::{self, Peer};
    use bwscope::net::protocol::{self, Frame, Mode, Setup, Way};
    use bwscope::net::server::ServerConfig;

    let mut cfg = ServerConfig::new("127.0.0.1:0".parse().unwrap());
    cfg.timeout = Duration::from_secs(2);
    let logs = Arc::new(Mutex::new(Vec::<String>::new()));
    let l2 = logs.clone();
    let (addr, stop, srv) = start_server(
        cfg,
        Arc::new(move |l: &str| l2.lock().unwrap().push(l.into())),
    );

    // The attacker, from 127.0.0.2: 64 connections, each a hello header
    // announcing 64 KiB, then one byte every 300 ms; reconnect when dropped.
    let attack = Arc::new(AtomicBool::new(true));
    let a2 = attack.clone();
    let attacker = std::thread::spawn(move || {
        let mut conns: Vec<Option<(TcpStream, Instant)>> = (0..64).map(|_| None).collect();
        let mut longest = Duration::ZERO;
        while a2.load(Ordering::Relaxed) {
            for c in conns.iter_mut() {
                match c {
                    None => {
                        if let Ok(mut s) = connect_from(Ipv4Addr::new(127, 0, 0, 2), addr) {
                            let _ = s.set_write_timeout(Some(Duration::from_millis(50)));
                            let mut h = (64u32 << 10).to_le_bytes().to_vec();
                            h.push(1); // hello
                            if s.write_all(&h).is_ok() {
                                *c = Some((s, Instant::now()));
                            }
                        }
                    }
                    Some((s, t0)) => {
                        if s.write_all(b"B").is_err() {
                            longest = longest.max(t0.elapsed());
                            *c = None;
                        }
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(300));
        }
        longest
    });
    std::thread::sleep(Duration::from_millis(1500));

    // Turned away with a reason, not a silent close.
    let mut extra = connect_from(Ipv4Addr::new(127, 0, 0, 2), addr).unwrap();
    extra
        .set_read_timeout(Some(Duration::from_secs(3)))
        .unwrap();
    let mut answer = Vec::new();
    let _ = extra.read_to_end(&mut answer);
    match protocol::decode(&answer) {
        Ok(Some((Frame::Error(m), _))) => assert!(m.contains("server full"), "{m}"),
        other => panic!("expected a 'server full' error frame, got {other:?}"),
    }

    // The real leader, from 127.0.0.1, is served meanwhile.
    let t0 = Instant::now();
    let peer = Peer {
        addr,
        token: None,
        timeout: Duration::from_secs(5),
    };
    let st = Setup {
        mode: Mode::Stream,
        direction: Way::Send,
        streams: 2,
        chunk_bytes: 64 << 10,
        time_ms: 300,
        omit_ms: 0,
        bytes: 0,
        interval_ms: 50,
        last: false,
    };
    static NO: AtomicBool = AtomicBool::new(false);
    let o = client::run_test(&peer, &st, &NO).expect("the leader is served under attack");
    assert!(o.server.received_bytes > 0 && o.server.received_bytes == o.sent);
    assert!(t0.elapsed() < Duration::from_secs(10));

    // Dripping does not stretch the handshake past its one deadline.
    std::thread::sleep(Duration::from_millis(1500));
    attack.store(false, Ordering::Relaxed);
    let longest = attacker.join().unwrap();
    assert!(
        longest > Duration::ZERO && longest < Duration::from_secs(5),
        "attacker connections lived up to {longest:?}"
    );
    stop.store(true, Ordering::Relaxed);
    srv.join().unwrap();
    let logs = logs.lock().unwrap();
    assert!(logs.iter().any(|l| l.contains("server full")), "{logs:?}");
    assert!(logs.iter().any(|l| l.contains("timed out")), "{logs:?}");
}

// ---- 4. net serve defaults ------------------------------------------------

#[test]
fn serve_refuses_an_open_bind_without_a_token() {
    let out = bwscope()
        .args(["net", "serve", "--bind", "0.0.0.0", "--port", "0"])
        .output()
        .unwrap();
    usage_error(&out, "--no-auth");
}

#[test]
fn serve_defaults_to_loopback_and_says_where_and_whether_auth() {
    let mut child = bin_cmd()
        .args(["net", "serve", "--port", "0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(line.contains("listening on 127.0.0.1:"), "{line}");
    assert!(line.contains("auth off (this machine only)"), "{line}");
}

// ---- 5. signals, and readers that show a cut run ---------------------------

pub(crate) fn csv_rows(p: &Path) -> usize {
    std::fs::read_to_string(p)
        .map(|t| t.lines().count().saturating_sub(1))
        .unwrap_or(0)
}

fn stop_with(sig: libc::c_int, code: i32) {
    let d = tempfile::tempdir().unwrap();
    let (json, csv) = (d.path().join("r.json"), d.path().join("r.csv"));
    let mut child = bin_cmd()
        .args([
            "cache",
            "--kernel",
            "seq_read_64_scalar",
            "--sizes",
            "4KiB..256KiB:+4KiB",
            "--samples",
            "3",
            "--min-sample-ms",
            "20",
        ])
        .arg("--json")
        .arg(&json)
        .arg("--csv")
        .arg(&csv)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while csv_rows(&csv) < 2 {
        assert!(t0.elapsed() < Duration::from_secs(30), "no records came");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as libc::pid_t, sig) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(code), "{status:?}");
    let run: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(run["interrupted"], true);
    assert_eq!(run["complete"], false);
    let n = run["records"].as_array().unwrap().len();
    assert!((2..64).contains(&n), "{n}");
    assert_eq!(n, csv_rows(&csv), "JSON and CSV hold the same records");
}

#[test]
fn sigterm_stops_after_the_sample_and_keeps_every_record() {
    stop_with(libc::SIGTERM, 143);
}

#[test]
fn sighup_stops_after_the_sample_and_keeps_every_record() {
    stop_with(libc::SIGHUP, 129);
}

#[test]
fn report_plot_and_compare_mark_interrupted_and_killed_runs() {
    let d = tempfile::tempdir().unwrap();
    let good = write(d.path(), "good.json", &fixture());
    let mut cut = fixture();
    cut["complete"] = Value::Bool(false);
    cut["interrupted"] = Value::Bool(false);
    let killed = write(d.path(), "killed.json", &cut);
    cut["interrupted"] = Value::Bool(true);
    let stopped = write(d.path(), "stopped.json", &cut);
    for (f, word) in [(&killed, "incomplete run"), (&stopped, "interrupted run")] {
        for fmt in ["table", "md", "html"] {
            let o = bwscope()
                .args(["report", f, "-f", fmt, "-o", "-"])
                .output()
                .unwrap();
            assert!(o.status.success());
            assert!(
                String::from_utf8_lossy(&o.stdout).contains(word),
                "{fmt} of {f}"
            );
        }
        let o = bwscope().args(["compare", &good, f]).output().unwrap();
        let t = String::from_utf8_lossy(&o.stdout);
        assert!(t.lines().next().unwrap().contains(word), "{t}");
        let svg = d.path().join("c.svg");
        let o = bwscope()
            .args(["plot", f, "-o"])
            .arg(&svg)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr_of(&o));
        assert!(stderr_of(&o).contains(word));
        assert!(std::fs::read_to_string(&svg)
            .unwrap()
            .contains(&format!("[{word}]")));
    }
    let o = bwscope()
        .args(["report", &good, "-f", "table"])
        .output()
        .unwrap();
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(!t.contains("incomplete run") && !t.contains("interrupted run"));
}

// ---- 6. nothing replaced before the first record ---------------------------

#[test]
fn failed_run_leaves_an_earlier_result_untouched() {
    let d = tempfile::tempdir().unwrap();
    let (json, csv) = (d.path().join("good.json"), d.path().join("good.csv"));
    std::fs::write(&json, "{\"earlier\": true}\n").unwrap();
    std::fs::write(&csv, "earlier\n").unwrap();
    let (hj, hc) = (hash(&json), hash(&csv));
    // Port 1 on loopback: nothing listens, the run fails before a record.
    let out = bwscope()
        .args(["net", "run", "127.0.0.1:1", "--timeout", "2"])
        .arg("--json")
        .arg(&json)
        .arg("--csv")
        .arg(&csv)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert_eq!((hash(&json), hash(&csv)), (hj, hc));
    // A new path is not created either.
    let fresh = d.path().join("fresh.json");
    let out = bwscope()
        .args(["net", "run", "127.0.0.1:1", "--timeout", "2", "--json"])
        .arg(&fresh)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(!fresh.exists());
}

#[test]
fn unwritable_output_fails_before_measuring() {
    let t0 = Instant::now();
    let out = bwscope()
        .args([
            "cache",
            "--sizes",
            "1KiB..64MiB:x2",
            "--json",
            "/nonexistent-dir/r.json",
        ])
        .output()
        .unwrap();
    usage_error(&out, "/nonexistent-dir");
    assert!(t0.elapsed() < Duration::from_secs(20));
}

// ---- 7. conflicting outputs -------------------------------------------------

#[test]
fn conflicting_outputs_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let out = bwscope()
        .args(TINY)
        .args(["--csv", "-", "--json", "-"])
        .output()
        .unwrap();
    usage_error(&out, "both write to stdout");
    assert!(out.stdout.is_empty());
    let out = bwscope()
        .current_dir(d.path())
        .args(TINY)
        .args(["--csv", "F", "--json", "./F"])
        .output()
        .unwrap();
    usage_error(&out, "same file as --json");
    assert!(!d.path().join("F").exists());
}

// ---- 8. closed pipes -----------------------------------------------------------

/// A stdout whose reader is already gone: every write fails with EPIPE.
fn closed_pipe() -> Stdio {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two descriptors we then own.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: both are ours; dropping the read end closes it.
    drop(unsafe { OwnedFd::from_raw_fd(fds[0]) });
    Stdio::from(unsafe { OwnedFd::from_raw_fd(fds[1]) })
}

#[test]
fn closed_pipe_exits_quietly_everywhere() {
    let d = tempfile::tempdir().unwrap();
    let run = write(d.path(), "run.json", &fixture());
    let cases: Vec<Vec<&str>> = vec![
        vec!["compare", run.as_str(), run.as_str()],
        vec!["plot", run.as_str(), "--list"],
        vec!["report", run.as_str(), "-f", "table"],
        vec!["kernels"],
        vec!["info", "--no-clock"],
        vec!["completions", "bash"],
        vec!["man"],
        TINY.to_vec(),
    ];
    for args in cases {
        let o = bin_cmd()
            .args(&args)
            .stdout(closed_pipe())
            .output()
            .unwrap();
        let e = stderr_of(&o);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {e}");
        assert!(!e.contains("panicked"), "{args:?}: {e}");
    }
    // A streaming run stops like a signal: files keep what finished, 141.
    let json = d.path().join("s.json");
    let o = bin_cmd()
        .args(["cache", "--kernel", "seq_read_64_scalar", "--samples", "2"])
        .args(["--sizes", "16KiB,32KiB,64KiB", "--csv", "-", "--json"])
        .arg(&json)
        .stdout(closed_pipe())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(141), "{}", stderr_of(&o));
    assert!(!stderr_of(&o).contains("panicked"));
    let r: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(r["records"].as_array().unwrap().len(), 1);
}

// ---- 9. noise ---------------------------------------------------------------

fn online_cpus() -> f64 {
    // SAFETY: no preconditions.
    unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) as f64 }
}

#[test]
fn noise_is_resolved_finely_never_exceeds_the_cpus_and_sees_a_busy_process() {
    // A process that runs flat out beside the measurement.
    let mut spinner = Command::new("sh")
        .args(["-c", "while :; do :; done"])
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let out = bwscope()
        .args([
            "cache",
            "--kernel",
            "seq_read_64_scalar",
            "--sizes",
            "16KiB,64KiB,256KiB",
            "--samples",
            "5",
            "--min-sample-ms",
            "20",
            "--json",
            "-",
        ])
        .output()
        .unwrap();
    let _ = spinner.kill();
    let _ = spinner.wait();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    let cpus = online_cpus();
    let mut seen = Vec::new();
    for r in run["records"].as_array().unwrap() {
        let n = &r["noise"];
        let f = n["foreign_cpus"].as_f64().unwrap();
        assert!((0.0..=cpus).contains(&f), "{n}");
        assert_eq!(n["method"], "process-clocks", "{n}");
        // 6 ticks of 10 ms over a ~120 ms window resolve only 0.5 CPU; the
        // clocks do far better even when a loaded machine slows the scans.
        assert!(n["resolution_cpus"].as_f64().unwrap() < 0.25, "{n}");
        assert!(n["steal_resolution_cpus"].as_f64().unwrap() > 0.0, "{n}");
        seen.push(f);
    }
    if cpus >= 2.0 {
        let best = seen.iter().cloned().fold(0.0, f64::max);
        assert!(best >= 0.3, "a flat-out process went unseen: {seen:?}");
    }
}

// ---- 10. readers ------------------------------------------------------------

#[test]
fn readers_refuse_devices_fifos_and_oversized_files() {
    let d = tempfile::tempdir().unwrap();
    let t0 = Instant::now();
    let o = bwscope().args(["report", "/dev/zero"]).output().unwrap();
    usage_error(&o, "not a regular file");
    let fifo = d.path().join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let o = bwscope()
        .arg("compare")
        .arg(&fifo)
        .arg(&fifo)
        .output()
        .unwrap();
    usage_error(&o, "not a regular file");
    let big = d.path().join("big.json");
    std::fs::File::create(&big)
        .unwrap()
        .set_len((256 << 20) + 1)
        .unwrap();
    let o = bwscope()
        .arg("plot")
        .arg(&big)
        .arg("--list")
        .output()
        .unwrap();
    usage_error(&o, "larger than the 256 MiB");
    assert!(t0.elapsed() < Duration::from_secs(20));
}

#[test]
fn stdin_run_pipes_into_report() {
    let mut child = bin_cmd()
        .args(["report", "-", "-f", "table"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let bytes = serde_json::to_vec(&fixture()).unwrap();
    child.stdin.take().unwrap().write_all(&bytes).unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr_of(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("GB/s"));
}

#[test]
fn absurd_values_are_refused_not_rendered() {
    let d = tempfile::tempdir().unwrap();
    for (v, shown) in [(-5.0, "= -5 "), (1e308, "= 1e308 ")] {
        let mut run = fixture();
        let r = run["records"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|r| r["status"] == "ok")
            .unwrap();
        r["gbps"]["best"] = serde_json::json!(v);
        let p = write(d.path(), "bad.json", &run);
        for cmd in [
            vec!["report", p.as_str(), "-f", "table"],
            vec!["compare", p.as_str(), p.as_str()],
            vec!["plot", p.as_str(), "--list"],
        ] {
            let o = bwscope().args(&cmd).output().unwrap();
            usage_error(&o, "gbps.best");
            assert!(stderr_of(&o).contains(shown), "{}", stderr_of(&o));
            assert!(o.stdout.is_empty());
        }
    }
}

// ---- 11. output flags only where honoured ---------------------------------

#[test]
fn output_flags_are_offered_only_where_honoured() {
    for cmd in [
        vec!["plot"],
        vec!["report"],
        vec!["compare"],
        vec!["completions"],
        vec!["man"],
        vec!["net", "serve"],
        vec!["info"],
        vec!["kernels"],
    ] {
        let o = bwscope().args(&cmd).arg("--help").output().unwrap();
        let h = String::from_utf8_lossy(&o.stdout);
        assert!(!h.contains("--csv") && !h.contains("--units"), "{cmd:?}");
        let o = bwscope()
            .args(&cmd)
            .args(["--csv", "x.csv"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{cmd:?}");
    }
    for cmd in [
        vec!["cache"],
        vec!["latency"],
        vec!["regs"],
        vec!["threads"],
        vec!["numa"],
        vec!["memtype"],
        vec!["transfer"],
        vec!["net", "run"],
    ] {
        let o = bwscope().args(&cmd).arg("--help").output().unwrap();
        let h = String::from_utf8_lossy(&o.stdout);
        assert!(
            h.contains("--json") && h.contains("--csv") && h.contains("--units"),
            "{cmd:?}"
        );
    }
    // info --json stays; before a subcommand that has none they are refused.
    let o = bwscope()
        .args(["info", "--no-clock", "--json", "-"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let _: Value = serde_json::from_slice(&o.stdout).unwrap();
    let o = bwscope().args(["--csv", "x", "kernels"]).output().unwrap();
    usage_error(&o, "takes --json only");
    // Before a measuring subcommand they still apply.
    let o = bwscope().args(["--json", "-"]).args(TINY).output().unwrap();
    assert!(o.status.success());
    let _: Value = serde_json::from_slice(&o.stdout).unwrap();
}

// ---- 12. wrong words --------------------------------------------------------

#[test]
fn latency_pages_takes_a_list_like_the_readme() {
    let o = bwscope()
        .args([
            "latency",
            "--pages",
            "4k,thp",
            "--sizes",
            "16KiB",
            "--samples",
            "2",
            "--min-sample-ms",
            "1",
            "--json",
            "-",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr_of(&o));
    let run: Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut pages: Vec<String> = run["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["extra"]["case_pages"].as_str().unwrap().to_string())
        .collect();
    pages.dedup();
    assert_eq!(pages, ["4k", "thp"]);
}

#[test]
fn memory_refusal_states_its_rule_and_the_commands_own_flags() {
    let o = bwscope()
        .args(["memtype", "--size", "1TiB"])
        .output()
        .unwrap();
    usage_error(&o, "90 % of the");
    let e = stderr_of(&o);
    assert!(
        e.contains("--size") && !e.contains("--sizes") && !e.contains("--threads"),
        "{e}"
    );
}

#[test]
fn auth_failure_is_said_once_and_zero_second_tests_are_named() {
    use bwscope::net::client::{self, Peer};
    use bwscope::net::protocol::{Mode, Setup, Way};
    use bwscope::net::server::ServerConfig;
    let mut cfg = ServerConfig::new("127.0.0.1:0".parse().unwrap());
    cfg.token = Some(b"right".to_vec());
    let (addr, stop, srv) = start_server(cfg, Arc::new(|_: &str| {}));
    static NO: AtomicBool = AtomicBool::new(false);
    let mut st = Setup {
        mode: Mode::Rr,
        direction: Way::Send,
        streams: 1,
        chunk_bytes: 1024,
        time_ms: 0,
        omit_ms: 0,
        bytes: 0,
        interval_ms: 50,
        last: false,
    };
    let mut peer = Peer {
        addr,
        token: Some(b"wrong".to_vec()),
        timeout: Duration::from_secs(5),
    };
    let e = client::run_test(&peer, &st, &NO).unwrap_err().to_string();
    assert_eq!(e.matches("authentication failed").count(), 1, "{e}");
    peer.token = Some(b"right".to_vec());
    let e = client::run_test(&peer, &st, &NO).unwrap_err().to_string();
    assert!(
        e.contains("a test of 0 s") && !e.contains("allows up to"),
        "{e}"
    );
    st.time_ms = 100;
    client::run_test(&peer, &st, &NO).unwrap();
    stop.store(true, Ordering::Relaxed);
    srv.join().unwrap();
}

#[test]
fn compare_footer_states_the_rule_the_code_applies() {
    let d = tempfile::tempdir().unwrap();
    let run = write(d.path(), "run.json", &fixture());
    for fmt in ["table", "md"] {
        let o = bwscope()
            .args(["compare", &run, &run, "--format", fmt])
            .output()
            .unwrap();
        let t = String::from_utf8_lossy(&o.stdout);
        assert!(
            t.contains("larger of the two runs' own spread, |best − median| / median"),
            "{t}"
        );
        assert!(!t.contains("[min, max]"), "{t}");
    }
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/reports.md"))
            .unwrap();
    assert!(
        doc.contains("larger of the two runs' own spread"),
        "docs/reports.md"
    );
}

// ---- 13. progress on long work -------------------------------------------

/// Run `args` with stderr on a pseudo-terminal (util-linux `script`), stdout
/// to a pipe; returns what the terminal saw. None where `script` is
/// missing.
pub(crate) fn on_a_terminal(args: &[&str]) -> Option<String> {
    on_a_terminal_with(&[], args)
}

/// [`on_a_terminal`] with `env` set for the run.
pub(crate) fn on_a_terminal_with(env: &[(&str, &Path)], args: &[&str]) -> Option<String> {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: util-linux `script` is not installed");
        return None;
    }
    let cmd = std::iter::once(BIN)
        .chain(args.iter().copied())
        .map(|a| format!("'{a}'"))
        .collect::<Vec<_>>()
        .join(" ");
    let o = with_history(Command::new("script"))
        .envs(env.iter().copied())
        .args(["-qec", &format!("{cmd} >/dev/null"), "/dev/null"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr_of(&o));
    Some(String::from_utf8_lossy(&o.stdout).into_owned())
}

#[test]
fn progress_shows_on_a_terminal_and_never_in_pipes_or_json() {
    // A sweep of several steps, drawn on the terminal: step labels and
    // the position count.
    let args = [
        "cache",
        "--kernel",
        "seq_read_64_scalar,seq_write_64_scalar",
        "--sizes",
        "16KiB,64KiB,256KiB",
        "--samples",
        "2",
        "--min-sample-ms",
        "20",
    ];
    let Some(tty) = on_a_terminal(&args) else {
        return;
    };
    assert!(tty.contains("seq_read_64_scalar 16 KiB"), "{tty}");
    assert!(tty.contains("/6"), "a position out of 6 steps: {tty}");
    // Not a terminal: stderr carries no progress.
    let o = bwscope().args(args).output().unwrap();
    assert!(!stderr_of(&o).contains("/6"), "{}", stderr_of(&o));
    // A terminal, but stdout carries JSON: silent too.
    let mut json = args.to_vec();
    json.extend(["--json", "-"]);
    let tty = on_a_terminal(&json).unwrap();
    assert!(!tty.contains("/6"), "{tty}");
}

// ---- 14. round 3 (issue 23): hijack, completeness, clobbering, secrets ----

#[path = "robustness/round3.rs"]
mod round3;

#[path = "robustness/round4.rs"]
mod round4;
#[path = "robustness/round5.rs"]
mod round5;
#[path = "robustness/round6.rs"]
mod round6;
#[path = "robustness/round7.rs"]
mod round7;
