//! Shared by the report tests: the recorded fixture run and synthetic runs
//! of the suites that chart differently (latency, threads, numa, net),
//! built from the fixture's real records by changing the case fields.

#![allow(dead_code)]

#[cfg(unix)]
pub mod browser;
#[cfg(unix)]
pub mod fleet;
#[cfg(unix)]
pub mod standin;

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

/// A real `bwscope cache --quick --sizes 16KiB,1MiB,64MiB --samples 3`
/// run, recorded once (command line trimmed to hide the build path).
pub fn fixture_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cache-quick.json")
}

pub fn fixture() -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixture_path()).unwrap()).unwrap()
}

/// The binary under test, through `CARGO_TARGET_<triple>_RUNNER` where one
/// is set (qemu-user for the emulated aarch64 tests), else run directly.
pub fn bwscope() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("bwscope").expect("the bwscope binary");
    c.env("BWSCOPE_HISTORY", test_history());
    c
}

/// The history store the tests' runs go to, never the user's data
/// folder: `BWSCOPE_HISTORY` where the caller set one, else one under
/// cargo's target folder. Every spawn of the binary sets it (a cargo
/// `[env]` entry would also reach `cargo run`, and so the user's runs).
pub fn test_history() -> PathBuf {
    std::env::var_os("BWSCOPE_HISTORY")
        .filter(|v| !v.is_empty() && v != "off")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("test-history/history.sqlite3")
        })
}

/// Run `cmd` with `--json -`, check it succeeded (its stderr in the
/// message otherwise) and return the run it printed.
pub fn json_of(cmd: &mut assert_cmd::Command) -> Value {
    let out = cmd.arg("--json").arg("-").output().unwrap();
    assert!(
        out.status.success(),
        "exit {:?}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("bad JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

/// A run's records, owned.
pub fn records(run: &Value) -> Vec<Value> {
    run["records"].as_array().unwrap().clone()
}

pub fn write(dir: &Path, name: &str, v: &Value) -> String {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_vec_pretty(v).unwrap()).unwrap();
    p.display().to_string()
}

/// The first ok record of the fixture, as a template.
fn template(run: &Value) -> Value {
    run["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["status"] == "ok")
        .unwrap()
        .clone()
}

/// Multiply every figure of `r.gbps` (and payload) by `f`.
pub fn scale_gbps(r: &mut Value, f: f64) {
    for key in ["gbps", "payload_gbps"] {
        if let Some(o) = r[key].as_object_mut() {
            for k in ["best", "median", "min", "max", "mean"] {
                let v = o[k].as_f64().unwrap();
                o.insert(k.into(), json!(v * f));
            }
        }
    }
}

fn stats(best: f64) -> Value {
    json!({"best": best, "median": best * 0.97, "min": best * 0.9, "max": best, "mean": best * 0.96, "cv": 0.02, "n": 5})
}

/// The fixture plus records of the latency, threads, numa and net suites.
pub fn synthetic_run() -> Value {
    let mut run = fixture();
    let t = template(&run);
    let mut extra = Vec::new();
    for (i, size) in [4u64 << 10, 64 << 10, 1 << 20, 16 << 20, 256 << 20]
        .iter()
        .enumerate()
    {
        let mut r = t.clone();
        r["suite"] = json!("latency");
        r["kernel"] = json!("chase_random");
        r["op"] = json!("latency");
        r["size_bytes"] = json!(size);
        r["gbps"] = Value::Null;
        r["payload_gbps"] = Value::Null;
        r["extra"] = json!({"latency_ns": stats(1.0 + 20.0 * i as f64)});
        extra.push(r);
    }
    for threads in [1u32, 2] {
        for kernel in ["seq_read_512_avx512f", "seq_write_512_avx512f"] {
            let mut r = t.clone();
            r["suite"] = json!("threads");
            r["kernel"] = json!(kernel);
            r["size_bytes"] = json!(256u64 << 20);
            r["threads"] = json!(threads);
            r["regime"] = json!("DRAM");
            r["gbps"] = stats(20.0 + 10.0 * threads as f64);
            extra.push(r);
        }
    }
    for cpu in [0u32, 1] {
        for mem in [0u32, 1] {
            let mut r = t.clone();
            r["suite"] = json!("numa");
            r["placement"] = json!({"cpu_node": cpu, "memory_node": mem});
            r["extra"] = json!({"case_cpu_node": cpu, "case_memory_node": mem});
            r["gbps"] = stats(if cpu == mem { 30.0 } else { 18.0 });
            extra.push(r);
        }
    }
    // A bidirectional stream test: a send and a recv flow per chunk.
    for flow in ["send", "recv"] {
        for size in [1u64 << 10, 64 << 10, 1 << 20] {
            let mut r = t.clone();
            r["suite"] = json!("net");
            r["kernel"] = json!(format!("tcp_stream_bidir_{flow}"));
            r["op"] = json!(flow);
            r["size_bytes"] = json!(size);
            r["extra"] = json!({"mode": "stream", "direction": "bidir", "flow": flow});
            r["gbps"] = stats(size as f64 / 1e5);
            extra.push(r);
        }
    }
    run["records"].as_array_mut().unwrap().extend(extra);
    run
}

/// An empty fontconfig configuration: no font directories at all.
pub fn empty_fontconfig(dir: &Path) -> PathBuf {
    let p = dir.join("fonts.conf");
    std::fs::write(&p, "<?xml version=\"1.0\"?>\n<!DOCTYPE fontconfig SYSTEM \"fonts.dtd\">\n<fontconfig></fontconfig>\n").unwrap();
    p
}

/// The SMBIOS 3.x entry point (DSP0134 §5.2.2) for a structure table of
/// `len` bytes, version `major.minor`, with the checksum that makes its 24
/// bytes sum to 0, so a table written beside it reaches the decoder.
pub fn smbios_entry_point(len: u32, major: u8, minor: u8) -> Vec<u8> {
    let mut e = vec![0u8; 0x18];
    e[0x00..0x05].copy_from_slice(b"_SM3_");
    e[0x06] = 0x18;
    e[0x07] = major;
    e[0x08] = minor;
    e[0x0A] = 0x01;
    e[0x0C..0x10].copy_from_slice(&len.to_le_bytes());
    e[0x10..0x18].copy_from_slice(&0x000F_0000u64.to_le_bytes());
    let sum = e.iter().fold(0u8, |a, b| a.wrapping_add(*b));
    e[0x05] = 0u8.wrapping_sub(sum);
    e
}
