//! `bwscope transfer` end to end.
//!
//! OpenCL runs for real on whatever ICD is installed (PoCL in CI); without
//! one those tests print why and return. The CUDA backend runs against a
//! stand-in `libcuda.so.1` compiled here from `tests/fixtures/standin_libcuda.c`
//! (host memcpy behind the driver API) to exercise flag passing, the sweep,
//! verification and the error paths; its numbers are never asserted.

// Unix: signals, /proc, namespaces, guests, device nodes or Unix-only
// tools (the Windows build runs tests/windows.rs instead).
#![cfg(unix)]

mod common;
use common::standin::{exit2, real_libcuda_present, standin};
use common::{json_of as run_json, records};

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

fn bwscope() -> Command {
    let mut c = Command::cargo_bin("bwscope").unwrap();
    c.env("BWSCOPE_HISTORY", common::test_history());
    c
}

/// A real NVIDIA driver would shadow the "absent" tests.
fn find<'a>(recs: &'a [Value], kind: Option<&str>, dir: &str) -> Vec<&'a Value> {
    recs.iter()
        .filter(|r| {
            r["extra"]["direction"] == dir && kind.is_none_or(|k| r["extra"]["host_kind"] == k)
        })
        .collect()
}

fn cuda(dir: &Path) -> Command {
    let mut c = bwscope();
    c.env("LD_LIBRARY_PATH", dir)
        .args(["transfer", "--backend", "cuda"]);
    c
}

const QUICK: &[&str] = &["--samples", "2", "--min-sample-ms", "1"];

#[test]
fn cuda_absent_is_a_skipped_record_and_exit_0() {
    if real_libcuda_present() {
        eprintln!("SKIP: a real libcuda is installed");
        return;
    }
    let empty = tempfile::tempdir().unwrap();
    let run = run_json(bwscope().env("LD_LIBRARY_PATH", empty.path()).args([
        "transfer",
        "--backend",
        "cuda",
    ]));
    let r = records(&run);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0]["status"], "skipped");
    let reason = r[0]["reason"].as_str().unwrap();
    assert!(reason.contains("libcuda"), "{reason}");
    assert_eq!(r[0]["gbps"], Value::Null);
}

#[test]
fn standin_sweep_passes_flags_verifies_and_names_the_device() {
    let Some(dir) = standin("full") else { return };
    let t = tempfile::tempdir().unwrap();
    let log = t.path().join("calls.log");
    let json = t.path().join("run.json");
    let out = cuda(&dir)
        .env("STANDIN_CUDA_LOG", &log)
        .args(["--sizes", "4KiB,64KiB", "--json"])
        .arg(&json)
        .args(QUICK)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("stand-in device 0 (host memcpy, not a GPU)"),
        "{table}"
    );
    let run: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(
        run["options"]["device"]["name"],
        "stand-in device 0 (host memcpy, not a GPU)"
    );
    assert_eq!(run["options"]["device"]["copy_engines"], 2);
    let recs = records(&run);
    for kind in ["pageable", "pinned", "pinned-wc", "registered", "mapped"] {
        for dir in ["h2d", "d2h", "bidir"] {
            let rs = find(&recs, Some(kind), dir);
            assert_eq!(rs.len(), 2, "{kind} {dir}: one record per size");
            for r in rs {
                assert_eq!(r["status"], "ok", "{r}");
                assert_eq!(r["extra"]["verified"], true, "{r}");
                assert_eq!(
                    r["extra"]["device"],
                    "stand-in device 0 (host memcpy, not a GPU)"
                );
                let g = r["gbps"]["best"].as_f64().unwrap();
                assert!(g.is_finite() && g > 0.0);
                assert!(
                    r["extra"]["event_gbps"]["best"].as_f64().is_some(),
                    "events timed: {r}"
                );
                let expect = if kind == "pageable" && dir != "bidir" {
                    "host-clock"
                } else {
                    "device-events"
                };
                assert_eq!(r["extra"]["timer"], expect, "{kind} {dir}");
            }
        }
        for op in ["cpu-read", "cpu-write"] {
            let rs = find(&recs, Some(kind), op);
            assert_eq!(rs.len(), 1, "{kind} {op}");
            assert!(rs[0]["extra"]["behaves_wc"].is_boolean());
        }
    }
    // bidir: per-direction and total.
    let b = find(&recs, Some("pinned"), "bidir")[0];
    assert!(b["extra"]["h2d_gbps"]["best"].as_f64().unwrap() > 0.0);
    assert!(b["extra"]["d2h_gbps"]["best"].as_f64().unwrap() > 0.0);
    assert_eq!(b["extra"]["bytes_counted"], "both directions");
    // d2d once per size, read + write counted: gbps = 2 × payload.
    let d = find(&recs, None, "d2d");
    assert_eq!(d.len(), 2);
    for r in d {
        assert_eq!(r["extra"]["host_kind"], Value::Null);
        let (g, p) = (
            r["gbps"]["best"].as_f64().unwrap(),
            r["payload_gbps"]["best"].as_f64().unwrap(),
        );
        assert!((g - 2.0 * p).abs() < 1e-6 * g, "{g} vs {p}");
        assert_eq!(r["extra"]["verified"], true);
    }
    // CUDA map: skipped with a reason, but the mapping itself was verified.
    let m = find(&recs, Some("mapped"), "map");
    assert_eq!(m.len(), 2);
    assert_eq!(m[0]["status"], "skipped");
    assert_eq!(m[0]["extra"]["verified"], true);
    // The flags each kind asked the driver for.
    let calls = std::fs::read_to_string(&log).unwrap();
    for line in [
        "cuMemHostAlloc bytes=65536 flags=1", // pinned: PORTABLE (not cudarc's WC default)
        "cuMemHostAlloc bytes=65536 flags=5", // pinned-wc: PORTABLE|WRITECOMBINED
        "cuMemHostAlloc bytes=65536 flags=3", // mapped: PORTABLE|DEVICEMAP
        "cuMemHostRegister_v2 bytes=65536 flags=1", // registered: PORTABLE
        "cuMemHostGetDevicePointer_v2 flags=0",
        "cuStreamCreate flags=1", // non-blocking streams
        "cuEventCreate flags=0",  // timing enabled
    ] {
        assert!(calls.contains(line), "missing '{line}' in\n{calls}");
    }
    assert!(
        !calls.contains("cuEventCreate flags=2"),
        "no DISABLE_TIMING events"
    );
    // SM copies: every device-addressable kind, verified, one launch each
    // behind the start blocker; pageable memory is skipped with the reason.
    for kind in ["pinned", "pinned-wc", "registered", "mapped"] {
        for dir in ["h2d-sm", "d2h-sm"] {
            let rs = find(&recs, Some(kind), dir);
            assert_eq!(rs.len(), 2, "{kind} {dir}");
            for r in rs {
                assert_eq!(r["status"], "ok", "{r}");
                assert_eq!(r["extra"]["verified"], true, "{r}");
                assert_eq!(r["extra"]["engine"], "sm");
                assert_eq!(r["extra"]["start_blocker"], true);
                assert_eq!(r["extra"]["bytes_counted"], "payload");
            }
        }
        // Copy-engine copies of pinned kinds queue behind the blocker too.
        assert_eq!(
            find(&recs, Some(kind), "h2d")[0]["extra"]["start_blocker"],
            true
        );
    }
    for dir in ["h2d-sm", "d2h-sm"] {
        let rs = find(&recs, Some("pageable"), dir);
        assert_eq!(rs.len(), 2);
        assert_eq!(rs[0]["status"], "skipped");
        assert!(rs[0]["reason"]
            .as_str()
            .unwrap()
            .contains("pageable memory is not in the device's address space"));
    }
    // Synchronous pageable copies cannot wait behind a blocker.
    assert_eq!(
        find(&recs, Some("pageable"), "h2d")[0]["extra"]["start_blocker"],
        false
    );
    let d = find(&recs, None, "d2d-sm");
    assert_eq!(d.len(), 2);
    for r in d {
        assert_eq!(r["extra"]["verified"], true, "{r}");
        assert_eq!(r["extra"]["engine"], "sm");
        let (g, p) = (
            r["gbps"]["best"].as_f64().unwrap(),
            r["payload_gbps"]["best"].as_f64().unwrap(),
        );
        assert!((g - 2.0 * p).abs() < 1e-6 * g, "read + write counted");
    }
    for line in [
        "cuModuleLoadData",
        "cuLaunchKernel bws_spin grid=1 block=1",
        "cuLaunchKernel bws_copy_h2d",
        "cuLaunchKernel bws_copy_d2h",
        "cuLaunchKernel bws_copy_d2d",
    ] {
        assert!(calls.contains(line), "missing '{line}' in\n{calls}");
    }
}

#[test]
fn standin_without_a_module_skips_sm_copies_and_runs_copies_unblocked() {
    let Some(dir) = standin("full") else { return };
    let run = run_json(
        cuda(&dir)
            .env("STANDIN_CUDA_NO_MODULE", "1")
            .args(["--kinds", "pinned", "--sizes", "64KiB"])
            .args(QUICK),
    );
    let recs = records(&run);
    for dir in ["h2d-sm", "d2h-sm", "d2d-sm"] {
        let kind = if dir == "d2d-sm" {
            None
        } else {
            Some("pinned")
        };
        let r = find(&recs, kind, dir)[0];
        assert_eq!(r["status"], "skipped", "{r}");
        let why = r["reason"].as_str().unwrap();
        assert!(
            why.contains("SM copy kernels could not be loaded")
                && why.contains("CUDA_ERROR_INVALID_PTX"),
            "{why}"
        );
    }
    let r = find(&recs, Some("pinned"), "h2d")[0];
    assert_eq!(r["status"], "ok");
    assert_eq!(r["extra"]["verified"], true);
    assert_eq!(r["extra"]["start_blocker"], false);
    let notes = run["options"]["device"]["notes"].to_string();
    assert!(
        notes.contains("no SM copy kernels or start blocker"),
        "{notes}"
    );
}

#[test]
fn standin_driver_error_mid_sweep_is_an_error_record_and_the_run_continues() {
    let Some(dir) = standin("full") else { return };
    let run = run_json(
        cuda(&dir)
            .env("STANDIN_CUDA_FAIL_ALLOC_ABOVE", "65536")
            .args([
                "--kinds",
                "pinned",
                "--directions",
                "h2d,d2h",
                "--sizes",
                "4KiB,1MiB,16KiB",
            ])
            .args(QUICK),
    );
    let recs = records(&run);
    let h2d = find(&recs, Some("pinned"), "h2d");
    assert_eq!(h2d.len(), 3);
    let by_size = |s: u64| h2d.iter().find(|r| r["size_bytes"] == s).unwrap();
    assert_eq!(by_size(4096)["status"], "ok");
    assert_eq!(
        by_size(16384)["status"],
        "ok",
        "the run continues after the failure"
    );
    let bad = by_size(1 << 20);
    assert_eq!(bad["status"], "error");
    assert_eq!(bad["extra"]["error_name"], "CUDA_ERROR_OUT_OF_MEMORY");
    assert!(bad["reason"].as_str().unwrap().contains("cuMemAlloc_v2"));
}

#[test]
fn standin_corruption_fails_verification() {
    let Some(dir) = standin("full") else { return };
    // The copy engine's and the SM kernel's copies to host memory are
    // checked the same way, and the measurement is kept.
    for d in ["d2h", "d2h-sm"] {
        let run = run_json(
            cuda(&dir)
                .env("STANDIN_CUDA_CORRUPT", "1")
                .args(["--kinds", "pinned", "--directions", d, "--sizes", "64KiB"])
                .args(QUICK),
        );
        let recs = records(&run);
        let r = find(&recs, Some("pinned"), d)[0];
        assert_eq!(r["extra"]["verified"], false, "{r}");
        assert_eq!(r["status"], "error", "{r}");
        assert!(
            r["reason"]
                .as_str()
                .unwrap()
                .contains("verification failed: 1 of 65536 bytes differ"),
            "{r}"
        );
        assert!(r["gbps"]["best"].as_f64().is_some());
    }
    // --no-verify: no check, verified null.
    let run = run_json(
        cuda(&dir)
            .env("STANDIN_CUDA_CORRUPT", "1")
            .args([
                "--kinds",
                "pinned",
                "--directions",
                "d2h",
                "--sizes",
                "64KiB",
                "--no-verify",
            ])
            .args(QUICK),
    );
    let recs = records(&run);
    let r = find(&recs, Some("pinned"), "d2h")[0];
    assert_eq!(r["status"], "ok");
    assert_eq!(r["extra"]["verified"], Value::Null);
}

#[test]
fn standin_without_devices_or_symbols_is_skipped() {
    let Some(dir) = standin("full") else { return };
    for (var, val, expect) in [
        ("STANDIN_CUDA_DEVICES", "0", "reports no devices"),
        ("STANDIN_CUDA_INIT_RESULT", "100", "CUDA_ERROR_NO_DEVICE"),
    ] {
        let run = run_json(cuda(&dir).env(var, val));
        let r = records(&run);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0]["status"], "skipped");
        assert!(
            r[0]["reason"].as_str().unwrap().contains(expect),
            "{}",
            r[0]["reason"]
        );
    }
    let Some(dir) = standin("only-init") else {
        return;
    };
    let out = cuda(&dir).args(["--json", "-"]).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("panicked"),
        "loader panic leaked: {stderr}"
    );
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = records(&run);
    assert_eq!(r[0]["status"], "skipped");
    assert!(
        r[0]["reason"]
            .as_str()
            .unwrap()
            .contains("cuDeviceGetCount"),
        "{}",
        r[0]["reason"]
    );
}

#[test]
fn bad_input_exits_2_naming_the_flag() {
    exit2(
        bwscope().args(["transfer", "--directions", "sideways"]),
        "--directions",
    );
    exit2(bwscope().args(["transfer", "--sizes", "12XB"]), "--sizes");
    exit2(bwscope().args(["transfer", "--samples", "0"]), "--samples");
    let out = bwscope()
        .args(["transfer", "--backend", "vulkan"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let Some(dir) = standin("full") else { return };
    exit2(cuda(&dir).args(["--device", "3"]), "--device");
    exit2(cuda(&dir).args(["--kinds", "host-ptr"]), "is a opencl kind");
    exit2(
        cuda(&dir).args(["--kinds", "pinned-uc"]),
        "unknown kind 'pinned-uc'",
    );
    // 256 MiB of stand-in device memory: 1 GiB does not fit.
    exit2(
        cuda(&dir).args(["--sizes", "1GiB", "--directions", "h2d"]),
        "free device memory",
    );
    exit2(cuda(&dir).args(["--host-node", "99"]), "--host-node");
    exit2(
        cuda(&dir).args(["--kinds", "pinned", "--directions", "map"]),
        "mapped kinds",
    );
}

/// `None` (printed) when this machine has no usable OpenCL device.
fn opencl_available() -> bool {
    let run = run_json(
        bwscope()
            .args([
                "transfer",
                "--backend",
                "opencl",
                "--sizes",
                "4KiB",
                "--directions",
                "h2d",
                "--kinds",
                "host-ptr",
            ])
            .args(QUICK),
    );
    let r = &records(&run)[0];
    if r["status"] == "skipped" {
        eprintln!("SKIP: no OpenCL device: {}", r["reason"]);
        return false;
    }
    true
}

#[test]
fn opencl_every_kind_and_direction_verifies_and_detects_zero_copy() {
    if !opencl_available() {
        return;
    }
    let run = run_json(
        bwscope()
            .args(["transfer", "--backend", "opencl", "--sizes", "64KiB,2MiB"])
            .args(QUICK),
    );
    let recs = records(&run);
    let unified = run["options"]["device"]["host_unified"] == true;
    for kind in ["host-ptr", "alloc-host-ptr", "alloc-host-ptr-ro"] {
        for dir in ["h2d", "d2h", "bidir"] {
            let rs = find(&recs, Some(kind), dir);
            assert_eq!(rs.len(), 2, "{kind} {dir}");
            for r in rs {
                assert_eq!(r["status"], "ok", "{r}");
                assert_eq!(r["extra"]["verified"], true, "{r}");
                let g = r["gbps"]["best"].as_f64().unwrap();
                assert!(g.is_finite() && g > 0.0, "{r}");
                assert!(r["extra"]["host_gbps"]["best"].as_f64().unwrap() > 0.0);
                assert!(
                    r["extra"]["event_gbps"]["best"].as_f64().unwrap() > 0.0,
                    "profiling events: {r}"
                );
            }
        }
        let probes: Vec<_> = ["cpu-read", "cpu-write"]
            .iter()
            .flat_map(|d| find(&recs, Some(kind), d))
            .collect();
        assert_eq!(probes.len(), 2, "{kind}");
        assert!(probes
            .iter()
            .all(|r| r["gbps"]["best"].as_f64().unwrap() > 0.0
                && r["extra"]["behaves_wc"].is_boolean()));
        let maps = find(&recs, Some(kind), "map");
        if kind == "host-ptr" {
            assert!(maps.is_empty(), "host-ptr has nothing to map");
            continue;
        }
        assert_eq!(maps.len(), 2);
        for m in maps {
            assert_eq!(m["status"], "ok");
            assert_eq!(m["extra"]["verified"], true, "{m}");
            if unified {
                // PoCL: host-unified, maps move no data; never a GB/s figure.
                assert_eq!(m["extra"]["zero_copy"], true, "{m}");
                assert_eq!(m["gbps"], Value::Null);
                assert!(m["samples"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|s| s["bytes"] == 0));
                assert!(m["extra"]["map_unmap_seconds"]["median"].as_f64().unwrap() > 0.0);
            }
        }
    }
    let d = find(&recs, None, "d2d");
    assert_eq!(d.len(), 2);
    assert!(d
        .iter()
        .all(|r| r["extra"]["verified"] == true && r["extra"]["bytes_counted"] == "read+write"));
}

#[test]
fn opencl_sizes_above_the_device_limit_exit_2() {
    if !opencl_available() {
        return;
    }
    exit2(
        bwscope().args(["transfer", "--backend", "opencl", "--sizes", "1TiB"]),
        "--sizes",
    );
    exit2(
        bwscope().args(["transfer", "--backend", "opencl", "--device", "99"]),
        "--device",
    );
    exit2(
        bwscope().args(["transfer", "--backend", "opencl", "--kinds", "pinned"]),
        "is a cuda kind",
    );
    // Copy kernels are CUDA's: asked of OpenCL, the flag is named.
    exit2(
        bwscope().args(["transfer", "--backend", "opencl", "--directions", "h2d-sm"]),
        "needs copy kernels",
    );
}

#[test]
fn opencl_absent_is_skipped() {
    // An ICD loader with no vendors: no platform, a skipped record, exit 0.
    let empty = tempfile::tempdir().unwrap();
    let run = run_json(
        bwscope()
            .env("OCL_ICD_VENDORS", empty.path())
            .env("OPENCL_VENDOR_PATH", empty.path())
            .args(["transfer", "--backend", "opencl"]),
    );
    let r = records(&run);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0]["status"], "skipped");
    assert!(
        r[0]["reason"].as_str().unwrap().contains("opencl"),
        "{}",
        r[0]["reason"]
    );
}

#[test]
fn csv_has_transfer_rows() {
    let Some(dir) = standin("full") else { return };
    let out = cuda(&dir)
        .args([
            "--kinds",
            "pinned",
            "--directions",
            "h2d",
            "--sizes",
            "4KiB",
            "--csv",
            "-",
        ])
        .args(QUICK)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<&str> = text.lines().collect();
    assert!(rows[0].starts_with("suite,kernel,op"));
    assert!(
        rows.iter()
            .any(|l| l.starts_with("transfer,cuda_h2d_pinned,h2d,")),
        "{text}"
    );
}

#[test]
fn auto_follows_the_kinds_and_otherwise_prefers_cuda() {
    let Some(dir) = standin("full") else { return };
    // CUDA (the stand-in) present, but only OpenCL kinds asked for.
    if opencl_available() {
        let run = run_json(
            bwscope()
                .env("LD_LIBRARY_PATH", &dir)
                .args([
                    "transfer",
                    "--kinds",
                    "host-ptr",
                    "--directions",
                    "h2d",
                    "--sizes",
                    "4KiB",
                ])
                .args(QUICK),
        );
        assert_eq!(run["options"]["backend"], "opencl");
    }
    let run = run_json(
        bwscope()
            .env("LD_LIBRARY_PATH", &dir)
            .args([
                "transfer",
                "--directions",
                "h2d",
                "--sizes",
                "4KiB",
                "--kinds",
                "pinned",
            ])
            .args(QUICK),
    );
    assert_eq!(run["options"]["backend"], "cuda");
}

/// A fixture sysfs directory for the stand-in's bus id (ffff:ff:1f.0).
fn fake_sysfs(speed: &str, width: u32, cpus: &str) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("ffff:ff:1f.0");
    std::fs::create_dir(&d).unwrap();
    for (f, v) in [
        ("current_link_speed", speed.to_string()),
        ("current_link_width", width.to_string()),
        ("max_link_speed", speed.to_string()),
        ("max_link_width", width.to_string()),
        ("numa_node", "0".into()),
        ("local_cpulist", cpus.into()),
    ] {
        std::fs::write(d.join(f), format!("{v}\n")).unwrap();
    }
    t
}

fn first_allowed_cpu() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim()
        .to_string();
    list.split([',', '-']).next().unwrap().parse().unwrap()
}

#[test]
fn standin_link_context_pins_to_local_cpus_and_flags_rates_above_the_link() {
    let Some(dir) = standin("full") else { return };
    let cpu = first_allowed_cpu();
    // A gen1 x1 link: 0.25 GB/s, which host memcpy exceeds at once.
    let sys = fake_sysfs("2.5 GT/s PCIe", 1, &cpu.to_string());
    let out = cuda(&dir)
        .env("BWSCOPE_SYSFS_PCI_ROOT", sys.path())
        .args([
            "--kinds",
            "pinned",
            "--directions",
            "h2d",
            "--sizes",
            "1MiB",
        ])
        .args(QUICK)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("link:   2.5 GT/s (gen 1) x1"));
    let run = run_json(
        cuda(&dir)
            .env("BWSCOPE_SYSFS_PCI_ROOT", sys.path())
            .args([
                "--kinds",
                "pinned",
                "--directions",
                "h2d",
                "--sizes",
                "1MiB",
            ])
            .args(QUICK),
    );
    let o = &run["options"];
    assert_eq!(o["placement_source"], "device-local");
    assert_eq!(o["host_cpus"], serde_json::json!([cpu]));
    assert_eq!(o["host_node"], 0);
    assert!((o["pci"]["theoretical_gbps"].as_f64().unwrap() - 0.25).abs() < 1e-9);
    let recs = records(&run);
    let r = find(&recs, Some("pinned"), "h2d")[0];
    assert_eq!(r["cpus"], serde_json::json!([cpu]));
    assert_eq!(r["extra"]["link_theoretical_gbps"], 0.25);
    let w = r["warnings"].as_array().unwrap();
    assert!(w.iter().any(|w| w["kind"] == "above_ceiling"), "{r}");
}

#[test]
fn host_node_binds_the_host_side() {
    let Some(dir) = standin("full") else { return };
    let run = run_json(
        cuda(&dir)
            .args([
                "--host-node",
                "0",
                "--kinds",
                "pageable",
                "--directions",
                "h2d",
                "--sizes",
                "64KiB",
            ])
            .args(QUICK),
    );
    assert_eq!(run["options"]["placement_source"], "--host-node");
    let r = &find(&records(&run), Some("pageable"), "h2d")[0].clone();
    assert_eq!(r["placement"]["memory_node"], 0);
    // move_pages found the host buffer on node 0 (the only node, or bound);
    // null only where the syscall is unavailable (e.g. a seccomp filter).
    match r["placement"]["verified_fraction"].as_f64() {
        Some(f) => assert_eq!(f, 1.0, "{r}"),
        None => eprintln!("note: move_pages unavailable, placement not verified"),
    }
    assert_eq!(r["extra"]["verified"], true);
}

/// The lookup chain from sysfs to the reference table (issue 40, item 4):
/// the fixture says the device is 10de:20f2 (an A100 80GB), the run keeps
/// the ids in `options.pci`, its d2d copy of 256 MiB becomes the headline
/// `device memory`, and the standing of that figure carries DCGM's floor
/// with its source and licence. The stand-in's copy is host memcpy, not
/// a GPU: its figure is no measurement of an A100, and nothing here
/// asserts how it compares with the floor, only that the floor is found.
#[test]
fn standin_with_an_a100_pci_id_gets_dcgms_device_memory_floor() {
    let Some(dir) = standin("full") else { return };
    let sys = fake_sysfs("16.0 GT/s PCIe", 16, &first_allowed_cpu().to_string());
    let dev = sys.path().join("ffff:ff:1f.0");
    std::fs::write(dev.join("vendor"), "0x10de\n").unwrap();
    std::fs::write(dev.join("device"), "0x20f2\n").unwrap();
    let d2d_run = || {
        run_json(
            cuda(&dir)
                .env("BWSCOPE_SYSFS_PCI_ROOT", sys.path())
                .env("STANDIN_CUDA_TOTAL_MEM", (2u64 << 30).to_string())
                .args(["--directions", "d2d", "--sizes", "256MiB"])
                .args(QUICK),
        )
    };
    let run = d2d_run();
    assert_eq!(run["options"]["pci"]["vendor_id"], "10de");
    assert_eq!(run["options"]["pci"]["device_id"], "20f2");
    let standings = run["history"]["standings"].as_array().expect("a history");
    let s = standings
        .iter()
        .find(|s| s["name"] == "device memory")
        .unwrap_or_else(|| panic!("no device memory standing: {}", run["history"]));
    let d2d = find(&records(&run), None, "d2d")[0]["gbps"]["best"].clone();
    assert_eq!(s["value"], d2d);
    let e = &s["expected"];
    assert_eq!(e["floor"], 1050.0);
    assert_eq!(e["unit"], "GB/s");
    assert_eq!(e["licence"], "Apache-2.0");
    assert!(e["source"].as_str().unwrap().contains("NVIDIA/DCGM"), "{e}");
    assert!(e["what"].as_str().unwrap().contains("10de:20f2"), "{e}");

    // Another vendor's device 20f2 matches no row.
    std::fs::write(dev.join("vendor"), "0x1002\n").unwrap();
    let run = d2d_run();
    let standings = run["history"]["standings"].as_array().expect("a history");
    let s = standings.iter().find(|s| s["name"] == "device memory");
    assert!(s.is_some_and(|s| s["expected"].is_null()), "{standings:?}");
}
