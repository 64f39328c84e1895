//! The `net` subcommands as a user runs them: the built binary as child
//! processes on loopback, and every bad input ending in one line and exit 2.

// Unix: signals, /proc, namespaces, guests, device nodes or Unix-only
// tools (the Windows build runs tests/windows.rs instead).
#![cfg(unix)]

mod common;

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt;
use predicates::prelude::*;

fn bin() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("bwscope").unwrap();
    c.env("BWSCOPE_HISTORY", common::test_history());
    c
}

/// A free loopback port (bound, then released).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A `net serve` child, killed on drop.
struct ServeChild {
    child: Child,
    port: u16,
}

impl ServeChild {
    fn start(extra: &[&str]) -> ServeChild {
        let mut child = Command::cargo_bin("bwscope")
            .unwrap()
            .env("BWSCOPE_HISTORY", common::test_history())
            .args(["net", "serve", "--bind", "127.0.0.1", "--port", "0"])
            .args(extra)
            .stderr(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let mut err = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        err.read_line(&mut line).unwrap();
        // "bwscope net serve: listening on 127.0.0.1:PORT (...)"
        let port = line
            .split("listening on 127.0.0.1:")
            .nth(1)
            .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port in {:?}", line));
        // Keep draining stderr so the child never blocks on a full pipe.
        std::thread::spawn(move || for _ in err.lines() {});
        ServeChild { child, port }
    }

    /// Wait (bounded) for the child to exit on its own.
    fn wait_exit(&mut self, within: Duration) -> Option<i32> {
        let t0 = Instant::now();
        while t0.elapsed() < within {
            if let Ok(Some(st)) = self.child.try_wait() {
                return st.code();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for ServeChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn leader_and_transponder_as_processes_write_json_and_once_exits() {
    let mut srv = ServeChild::start(&["--once"]);
    let out = bin()
        .args([
            "net",
            "run",
            &format!("127.0.0.1:{}", srv.port),
            "-m",
            "stream",
            "-d",
            "bidir",
            "-P",
            "2",
        ])
        .args([
            "-t",
            "0.5",
            "-O",
            "0.1",
            "--interval-ms",
            "50",
            "--json",
            "-",
        ])
        .timeout(Duration::from_secs(30))
        .assert()
        .success();
    let run: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(run["command"], "net");
    let recs = run["records"].as_array().unwrap();
    assert_eq!(recs.len(), 2, "a send and a recv flow");
    let flows: Vec<&str> = recs.iter().map(|r| r["op"].as_str().unwrap()).collect();
    assert_eq!(flows, ["send", "recv"]);
    for r in recs {
        assert_eq!(r["suite"], "net");
        assert_eq!(r["status"], "ok");
        assert_eq!(r["threads"], 2);
        assert_eq!(r["extra"]["streams"], 2);
        assert_eq!(r["extra"]["direction"], "bidir");
        assert!(r["extra"]["receiver_gbitps"].as_f64().unwrap() > 0.0);
        assert_eq!(r["extra"]["sender_bytes"], r["extra"]["receiver_bytes"]);
        assert!(
            r["extra"]["transponder"]["received_bytes"]
                .as_u64()
                .unwrap()
                > 0
        );
        assert!(r["extra"]["leader"]["received_bytes"].as_u64().unwrap() > 0);
    }
    assert_eq!(
        srv.wait_exit(Duration::from_secs(10)),
        Some(0),
        "--once exits after the test"
    );
}

/// `net serve` runs until stopped and ends as every long-running command
/// does (README, "Exit codes"): 128 + the signal, 130 for Ctrl-C and 143
/// for SIGTERM (`systemctl stop`, `docker stop`). It used to end 0.
#[test]
fn a_stopped_transponder_exits_128_plus_the_signal() {
    for (signal, code) in [("-INT", 130), ("-TERM", 143), ("-HUP", 129)] {
        let mut srv = ServeChild::start(&[]);
        let ok = Command::new("kill")
            .args([signal, &srv.child.id().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok);
        assert_eq!(
            srv.wait_exit(Duration::from_secs(10)),
            Some(code),
            "net serve stopped by {signal}"
        );
    }
}

#[test]
fn sweep_table_shows_both_units_and_once_serves_the_whole_sweep() {
    let mut srv = ServeChild::start(&["--once"]);
    bin()
        .args([
            "net",
            "run",
            "127.0.0.1",
            "--port",
            &srv.port.to_string(),
            "--chunk",
            "1KiB,1MiB",
            "-t",
            "0.2",
            "-O",
            "0",
        ])
        .timeout(Duration::from_secs(30))
        .assert()
        .success()
        .stdout(predicate::str::contains("Gbit/s").and(predicate::str::contains("GB/s")))
        .stdout(predicate::str::contains("1 KiB").and(predicate::str::contains("1 MiB")))
        .stdout(predicate::str::contains("rr send"));
    assert_eq!(
        srv.wait_exit(Duration::from_secs(10)),
        Some(0),
        "--once exits after the sweep"
    );
}

fn fails_with(args: &[&str], needle: &str) {
    let out = bin()
        .args(args)
        .timeout(Duration::from_secs(20))
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains(needle), "stderr {:?} lacks {:?}", err, needle);
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {:?}", err);
}

#[test]
fn refused_connection_is_a_usage_error() {
    let port = free_port();
    fails_with(
        &["net", "run", &format!("127.0.0.1:{}", port)],
        "connection refused",
    );
}

#[test]
fn bad_leader_flags_are_usage_errors() {
    fails_with(&["net", "run", "127.0.0.1", "--streams", "0"], "--streams");
    fails_with(
        &["net", "run", "127.0.0.1", "--chunk", "2GiB"],
        "protocol maximum",
    );
    fails_with(&["net", "run", "127.0.0.1", "--chunk", "12Q"], "--chunk");
    fails_with(&["net", "run", "127.0.0.1:notaport"], "not a port");
    fails_with(&["net", "run", "127.0.0.1", "--time", "0"], "--time");
    fails_with(
        &[
            "net",
            "run",
            "127.0.0.1",
            "--token-file",
            "/nonexistent/token",
        ],
        "--token-file",
    );
}

#[test]
fn bad_serve_flags_are_usage_errors() {
    fails_with(&["net", "serve", "--bind", "nonsense"], "--bind");
    // Binding does not send anything; this address is on no interface here.
    fails_with(
        &[
            "net",
            "serve",
            "--bind",
            "192.0.2.77",
            "--port",
            "0",
            "--no-auth",
        ],
        "not an address of this machine",
    );
    let held = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port().to_string();
    fails_with(
        &["net", "serve", "--bind", "127.0.0.1", "--port", &port],
        "already in use",
    );
}

#[test]
fn privileged_port_is_a_usage_error() {
    // As root any port binds; drop to `nobody` with setpriv when we can.
    let unpriv_start: u32 =
        std::fs::read_to_string("/proc/sys/net/ipv4/ip_unprivileged_port_start")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(1024);
    if unpriv_start <= 80 {
        eprintln!(
            "skipped: ports below {} are not privileged on this host",
            unpriv_start
        );
        return;
    }
    let exe = assert_cmd::cargo::cargo_bin("bwscope");
    let is_root = unsafe { libc::geteuid() } == 0;
    let mut cmd = if is_root {
        if Command::new("setpriv").arg("--version").output().is_err() {
            eprintln!("skipped: root without setpriv cannot test a privileged port");
            return;
        }
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(&exe);
        c
    } else {
        Command::new(&exe)
    };
    let out = cmd
        .env("BWSCOPE_HISTORY", common::test_history())
        .args([
            "net",
            "serve",
            "--bind",
            "127.0.0.1",
            "--port",
            "80",
            "--once",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if is_root && err.contains("Permission denied") && !err.contains("--port") {
        eprintln!(
            "skipped: `nobody` cannot run the test binary here: {}",
            err.trim()
        );
        return;
    }
    assert_eq!(out.status.code(), Some(2), "{}", err);
    assert!(err.contains("privileged"), "{}", err);
}

#[test]
fn busy_server_answers_a_second_leader_through_the_cli() {
    let srv = ServeChild::start(&[]);
    let port = srv.port.to_string();
    let mut first = Command::cargo_bin("bwscope")
        .unwrap()
        .env("BWSCOPE_HISTORY", common::test_history())
        .args([
            "net",
            "run",
            &format!("127.0.0.1:{}", port),
            "-m",
            "stream",
            "-t",
            "3",
            "-O",
            "0",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Leave the first leader time to start its test even on a loaded machine.
    std::thread::sleep(Duration::from_millis(1200));
    fails_with(
        &[
            "net",
            "run",
            &format!("127.0.0.1:{}", port),
            "--chunk",
            "1KiB",
            "-t",
            "0.2",
        ],
        "busy",
    );
    let t0 = Instant::now();
    let code = loop {
        if let Some(st) = first.try_wait().unwrap() {
            break st.code();
        }
        if t0.elapsed() > Duration::from_secs(20) {
            let _ = first.kill();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(code, Some(0));
}
