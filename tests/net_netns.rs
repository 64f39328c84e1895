//! The leader and the transponder in two network namespaces joined by a
//! veth pair shaped with `tc … tbf` (scripts/netns-pair.sh): the measured
//! receiver-side rate must be within ±10 % of the shaped rate.
//!
//! Needs root (CAP_SYS_ADMIN + CAP_NET_ADMIN) and iproute2; skips with a
//! message otherwise. The addresses (10.250.0.0/24) exist only inside the
//! test's own namespaces, which have no default route: nothing leaves them.
//! A guard deletes the namespaces (and kills what runs in them) on drop,
//! so a failing assertion still cleans up.

// Unix: signals, /proc, namespaces, guests, device nodes or Unix-only
// tools (the Windows build runs tests/windows.rs instead).
#![cfg(unix)]

mod common;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/netns-pair.sh")
}

fn exe() -> &'static str {
    env!("CARGO_BIN_EXE_bwscope")
}

/// Why these tests cannot run here, if they cannot.
fn unavailable() -> Option<String> {
    if unsafe { libc::geteuid() } != 0 {
        return Some("needs root for network namespaces and tc".into());
    }
    for tool in ["ip", "tc"] {
        if Command::new(tool).arg("-V").output().is_err() {
            return Some(format!("needs `{}` (apt-get install iproute2)", tool));
        }
    }
    None
}

static SEQ: AtomicU32 = AtomicU32::new(0);

/// Two namespaces `<prefix>-a` / `<prefix>-b`, removed on drop.
struct NsPair {
    prefix: String,
}

impl NsPair {
    /// Bring the pair up with `rate` shaping both ends; `Err` when the
    /// kernel or the sandbox refuses (the caller skips).
    fn up(rate: &str) -> Result<NsPair, String> {
        // Short and unique: interface names are limited to 15 bytes.
        let prefix = format!(
            "b7{}{}",
            std::process::id() % 100_000,
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        let pair = NsPair { prefix };
        let out = Command::new("bash")
            .arg(script())
            .arg("up")
            .env("NETNS_PREFIX", &pair.prefix)
            .env("RATE", rate)
            .output()
            .map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
        }
        Ok(pair)
    }

    fn ns(&self, side: char) -> String {
        format!("{}-{}", self.prefix, side)
    }

    fn cmd(&self, side: char) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.ns(side), exe()]);
        c.env("BWSCOPE_HISTORY", common::test_history());
        c
    }
}

impl Drop for NsPair {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(script())
            .arg("down")
            .env("NETNS_PREFIX", &self.prefix)
            .stdout(Stdio::null())
            .output();
    }
}

/// A transponder in namespace B, killed on drop; returns its port.
struct Serve(Child);

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve_in(pair: &NsPair) -> (Serve, u16) {
    let mut child = pair
        .cmd('b')
        .args([
            "net",
            "serve",
            "--bind",
            "10.250.0.2",
            "--port",
            "0",
            "--once",
            "--no-auth",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let guard = Serve(child);
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let port = line
        .split("listening on 10.250.0.2:")
        .nth(1)
        .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {:?}", line));
    std::thread::spawn(move || for _ in err.lines() {});
    (guard, port)
}

/// Run a streaming test from A to B's transponder; the records' JSON.
fn measure(pair: &NsPair, port: u16, direction: &str) -> Vec<serde_json::Value> {
    let out = pair
        .cmd('a')
        .args([
            "net",
            "run",
            &format!("10.250.0.2:{}", port),
            "-m",
            "stream",
            "-d",
            direction,
        ])
        .args(["-t", "3", "-O", "1", "--json", "-"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "leader failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    run["records"].as_array().unwrap().clone()
}

fn shaped_case(rate: &str, gbit: f64, direction: &str) {
    if let Some(why) = unavailable() {
        eprintln!("skipped: {}", why);
        return;
    }
    let pair = match NsPair::up(rate) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("skipped: cannot create network namespaces here: {}", e);
            return;
        }
    };
    let (_srv, port) = serve_in(&pair);
    let recs = measure(&pair, port, direction);
    assert_eq!(recs.len(), 1);
    let r = &recs[0];
    assert_eq!(r["status"], "ok", "{}", r);
    assert_eq!(r["op"], direction);
    let got = r["extra"]["receiver_gbitps"].as_f64().unwrap();
    eprintln!(
        "{} {}: measured {:.4} Gbit/s (receiver side)",
        rate, direction, got
    );
    assert!(
        (got - gbit).abs() <= 0.10 * gbit,
        "{} shaped, {} measured {:.4} Gbit/s: not within ±10 %",
        rate,
        direction,
        got
    );
    assert_eq!(r["extra"]["sender_bytes"], r["extra"]["receiver_bytes"]);
}

#[test]
fn shaped_1gbit_send_is_measured_within_10_percent() {
    shaped_case("1gbit", 1.0, "send");
}

#[test]
fn shaped_100mbit_recv_is_measured_within_10_percent() {
    shaped_case("100mbit", 0.1, "recv");
}

#[test]
fn unreachable_host_is_a_usage_error() {
    if let Some(why) = unavailable() {
        eprintln!("skipped: {}", why);
        return;
    }
    let pair = match NsPair::up("") {
        Ok(p) => p,
        Err(e) => {
            eprintln!("skipped: cannot create network namespaces here: {}", e);
            return;
        }
    };
    // 10.251.0.9 has no route inside namespace A: connect fails at once
    // with ENETUNREACH, and no packet is sent anywhere.
    let t0 = Instant::now();
    let out = pair
        .cmd('a')
        .args(["net", "run", "10.251.0.9", "--timeout", "3"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}", err);
    assert!(err.contains("unreachable"), "{}", err);
    assert_eq!(err.trim_end().lines().count(), 1, "{}", err);
    assert!(t0.elapsed() < Duration::from_secs(5));
}
