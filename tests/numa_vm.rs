//! Real NUMA: boot Debian's kernel under QEMU (TCG) as a 2-node machine
//! (2 vCPUs and 256 MiB per node, distances 10/20) with a tiny initramfs
//! that runs a static bwscope, and check what it reports: pages on the
//! nodes asked for, an N×N matrix, distances and balancing read, threads
//! on the cpus asked for, the write-pair and loaded-latency paths, and a
//! bad node refused with exit 2. Bandwidth inside the guest is meaningless
//! (every guest node is the same host memory, emulated), so it is never
//! asserted.
//!
//! Needs qemu-system-x86_64, a static busybox (busybox-static), cpio and
//! gzip, and a kernel: `BWSCOPE_VM_KERNEL=/path/vmlinuz`, or
//! `<target>/tmp/numa-vm/vmlinuz` (`tests/numa-vm/fetch-kernel.sh
//! <target>/tmp/numa-vm` puts it there; `BWSCOPE_VM_FETCH=1` makes the test
//! run that itself). Without them the test prints why and passes.
//! `BWSCOPE_STATIC_BIN` skips building the static binary.

// Unix: signals, /proc, namespaces, guests, device nodes or Unix-only
// tools (the Windows build runs tests/windows.rs instead).
#![cfg(unix)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn skip(why: &str) {
    eprintln!("numa_vm: SKIPPED: {why}");
}

fn in_path(cmd: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|d| Path::new(d).join(cmd))
        .find(|p| p.is_file())
}

/// True when the ELF file has no PT_INTERP header (statically linked).
fn is_static_elf(p: &Path) -> bool {
    let Ok(b) = std::fs::read(p) else {
        return false;
    };
    if b.len() < 64 || &b[..4] != b"\x7fELF" || b[4] != 2 {
        return false;
    }
    let u16_at = |o: usize| u16::from_le_bytes([b[o], b[o + 1]]) as usize;
    let phoff = u64::from_le_bytes(b[0x20..0x28].try_into().unwrap()) as usize;
    let (size, num) = (u16_at(0x36), u16_at(0x38));
    (0..num).all(|i| {
        let o = phoff + i * size;
        o + 4 <= b.len() && u32::from_le_bytes(b[o..o + 4].try_into().unwrap()) != 3
    })
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/numa-vm")
        .join(name)
}

fn run_ok(cmd: &mut Command, what: &str) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Run QEMU through `script` with `args` after the kernel and initrd,
/// killing it after `limit`; returns the console log.
fn run_guest(
    script_name: &str,
    kernel: &Path,
    initrd: &Path,
    args: &[&str],
    limit: Duration,
) -> String {
    let mut child = Command::new(script(script_name))
        .args([kernel.as_os_str(), initrd.as_os_str()])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start qemu");
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let t0 = Instant::now();
    loop {
        if child.try_wait().expect("wait qemu").is_some() {
            break;
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the guest did not power off within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    reader.join().unwrap().replace('\r', "")
}

/// One guest at a time: they share the static binary and two cores.
static GUEST: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// What a guest needs: the kernel and an initramfs with `init`; None
/// (with the reason printed) when something is missing here.
fn prepare(init: &str) -> Option<(PathBuf, PathBuf, PathBuf)> {
    prepare_with(init, &[])
}

/// [`prepare`] with `extras` (paths from the repository root) in the
/// guest's `/bin`.
fn prepare_with(init: &str, extras: &[&str]) -> Option<(PathBuf, PathBuf, PathBuf)> {
    if !cfg!(all(target_arch = "x86_64", target_os = "linux")) {
        skip("needs an x86_64 Linux host");
        return None;
    }
    if in_path("qemu-system-x86_64").is_none() {
        skip("qemu-system-x86_64 not found (apt-get install --no-install-recommends qemu-system-x86)");
        return None;
    }
    let busybox = std::env::var_os("BUSYBOX")
        .map(PathBuf::from)
        .unwrap_or_else(|| "/bin/busybox".into());
    if !is_static_elf(&busybox) {
        skip("no static busybox at /bin/busybox (apt-get install busybox-static)");
        return None;
    }
    if in_path("cpio").is_none() || in_path("gzip").is_none() {
        skip("cpio and gzip are needed for the initramfs (apt-get install cpio)");
        return None;
    }
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("numa-vm");
    std::fs::create_dir_all(&work).unwrap();
    let kernel = match std::env::var_os("BWSCOPE_VM_KERNEL") {
        Some(k) => PathBuf::from(k),
        None => work.join("vmlinuz"),
    };
    if !kernel.is_file() && std::env::var_os("BWSCOPE_VM_FETCH").is_some() {
        run_ok(
            Command::new(script("fetch-kernel.sh")).arg(&work),
            "fetch-kernel.sh",
        );
    }
    if !kernel.is_file() {
        skip(&format!(
            "no guest kernel at {} (set BWSCOPE_VM_KERNEL, run tests/numa-vm/fetch-kernel.sh {}, or set BWSCOPE_VM_FETCH=1)",
            kernel.display(),
            work.display()
        ));
        return None;
    }
    let bin = match std::env::var_os("BWSCOPE_STATIC_BIN") {
        Some(b) => PathBuf::from(b),
        None => {
            let out = work.join("bwscope-static");
            // A target dir of its own (the test's own cargo may still hold
            // the lock of the outer one), the one tests/memtype_vm.rs
            // builds the same static binary in: one release build of the
            // whole tree for both, not two (each minutes in CI).
            let static_dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
                .parent()
                .map_or_else(|| work.join("target"), |t| t.join("vm-static"));
            run_ok(
                Command::new(script("build-static.sh"))
                    .arg(&out)
                    .arg(static_dir)
                    .env_remove("RUSTFLAGS"),
                "build-static.sh",
            );
            out
        }
    };
    assert!(
        is_static_elf(&bin),
        "{} is not a static binary",
        bin.display()
    );
    let initrd = work.join(format!("initrd-{init}.cpio.gz"));
    run_ok(
        Command::new(script("mkinitramfs.sh"))
            .arg(&initrd)
            .arg(&bin)
            .arg(script(init))
            .args(
                extras
                    .iter()
                    .map(|e| Path::new(env!("CARGO_MANIFEST_DIR")).join(e)),
            )
            .env("BUSYBOX", &busybox),
        "mkinitramfs.sh",
    );
    Some((kernel, initrd, work))
}

fn section<'a>(log: &'a str, name: &str) -> &'a str {
    let begin = format!("=== BEGIN {name}\n");
    let end = format!("\n=== END {name}");
    let a = log
        .find(&begin)
        .unwrap_or_else(|| panic!("no {name} output in the guest log:\n{log}"))
        + begin.len();
    let b = log[a..].find(&end).expect("end marker") + a;
    &log[a..b]
}

fn json(log: &str, name: &str) -> Value {
    let rc = format!("=== RC {name} 0");
    assert!(log.contains(&rc), "guest command {name} failed:\n{log}");
    serde_json::from_str(section(log, name).trim()).unwrap_or_else(|e| panic!("{name} JSON: {e}"))
}

fn records<'a>(run: &'a Value, kernel: &str) -> Vec<&'a Value> {
    run["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["kernel"] == kernel)
        .collect()
}

fn u32s(v: &Value) -> Vec<u32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap() as u32)
        .collect()
}

#[test]
fn numa_guest_places_memory_where_asked() {
    let _one = GUEST.lock().unwrap_or_else(|e| e.into_inner());
    let Some((kernel, initrd, work)) = prepare("init.sh") else {
        return;
    };
    let t0 = Instant::now();
    let log = run_guest(
        "run-qemu.sh",
        &kernel,
        &initrd,
        &["2", "2", "256"],
        Duration::from_secs(240),
    );
    eprintln!("numa_vm: guest ran {:.1} s", t0.elapsed().as_secs_f64());
    std::fs::write(work.join("vm.log"), &log).unwrap();
    assert!(
        log.contains("=== VM nodes=0-1 cpus=0-3"),
        "guest is not a 2-node machine:\n{log}"
    );
    assert!(log.contains("=== DONE"), "guest did not finish:\n{log}");

    // Matrix: 2×2 cells, memory verified on the bound node, distances read.
    let m = json(&log, "matrix");
    let nodes = m["host"]["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 2);
    assert_eq!(u32s(&nodes[0]["distances"]), vec![10, 20]);
    assert_eq!(u32s(&nodes[1]["distances"]), vec![20, 10]);
    assert_eq!(
        m["host"]["env"]["numa_balancing"], 1,
        "the kernel enables balancing on 2 nodes"
    );
    for kernel in ["mix_read", "mix_1:1", "chase_64_scalar"] {
        let recs = records(&m, kernel);
        assert_eq!(recs.len(), 4, "{kernel}: want a 2×2 matrix");
        let mut cells: Vec<(u64, u64)> = Vec::new();
        for r in recs {
            assert_eq!(r["status"], "ok", "{r}");
            let p = &r["placement"];
            let (c, mem) = (
                p["cpu_node"].as_u64().unwrap(),
                p["memory_node"].as_u64().unwrap(),
            );
            assert_eq!(
                p["verified_fraction"], 1.0,
                "{kernel} cell {c}×{mem} not fully placed: {r}"
            );
            let node_cpus = u32s(&nodes[c as usize]["cpus"]);
            let cpus = u32s(&r["cpus"]);
            assert!(
                cpus.iter().all(|x| node_cpus.contains(x)),
                "cell {c} ran on {cpus:?}"
            );
            assert_eq!(
                u32s(&r["extra"]["observed_cpus"]),
                cpus,
                "threads not on their cpus"
            );
            cells.push((c, mem));
        }
        cells.sort_unstable();
        assert_eq!(cells, vec![(0, 0), (0, 1), (1, 0), (1, 1)]);
    }
    for r in records(&m, "chase_64_scalar") {
        assert!(r["extra"]["latency_ns"]["best"].as_f64().unwrap() > 0.0);
    }

    // Write pair: local/local and local/remote, both placed, same cpus.
    let p = json(&log, "pair");
    for pair in ["write_pair", "read_pair"] {
        let recs = records(&p, pair);
        let labels: Vec<&str> = recs
            .iter()
            .map(|r| r["extra"]["case_memory_nodes"].as_str().unwrap())
            .collect();
        assert_eq!(labels, vec!["0/0", "0/1"], "{pair}");
        for r in &recs {
            assert_eq!(r["status"], "ok");
            assert_eq!(r["placement"]["verified_fraction"], 1.0, "{r}");
            let each = r["extra"]["verified_fraction_per_thread"]
                .as_array()
                .unwrap();
            assert!(each.len() == 2 && each.iter().all(|f| f == 1.0), "{r}");
            assert_eq!(u32s(&r["extra"]["observed_cpus"]), vec![0, 1]);
            assert!(r["extra"]["total_seconds"]["median"].as_f64().unwrap() > 0.0);
        }
        assert!(recs[0]["extra"]["percent_vs_local"].is_null());
        assert!(recs[1]["extra"]["percent_vs_local"].is_f64());
    }

    // Threads follow --cpus, even across nodes.
    let t = json(&log, "threads");
    let recs = t["records"].as_array().unwrap();
    assert_eq!(recs.len(), 4);
    for r in recs {
        let cpus = u32s(&r["cpus"]);
        assert!(cpus == vec![1] || cpus == vec![1, 3], "{cpus:?}");
        assert_eq!(u32s(&r["extra"]["observed_cpus"]), cpus);
    }

    // Worker processes follow --cpus as well.
    let pr = json(&log, "procs");
    let r = &pr["records"][0];
    assert_eq!(r["extra"]["case_processes"], true);
    assert_eq!(u32s(&r["cpus"]), vec![1, 3]);
    assert_eq!(u32s(&r["extra"]["observed_cpus"]), vec![1, 3]);

    // Loaded latency: an unloaded point and one per delay, probe memory placed.
    let l = json(&log, "load");
    let recs = records(&l, "loaded_chase_64_scalar");
    assert_eq!(recs.len(), 3);
    assert!(recs[0]["extra"]["injected_gbps"].is_null());
    for r in &recs[1..] {
        assert!(r["extra"]["injected_gbps"].as_f64().unwrap() > 0.0, "{r}");
        assert_eq!(u32s(&r["extra"]["load_cpus"]), vec![2]);
    }
    for r in &recs {
        assert_eq!(r["placement"]["memory_node"], 0);
        assert_eq!(r["placement"]["verified_fraction"], 1.0);
        assert!(r["extra"]["latency_ns"]["best"].as_f64().unwrap() > 0.0);
    }

    // A node that does not exist: exit 2 naming the flag.
    assert!(
        log.contains("=== RC bad 2 error: --memory-nodes: node 7 does not exist"),
        "bad node not refused as expected:\n{log}"
    );
    contend_teams_on_two_nodes(&log, nodes);
}

/// `contend --cpu 1@0 --cpu 1@1:write`: each team on a cpu of its node
/// with its pages found there (move_pages), both running through the
/// whole window of every phase; a team asking for more cpus than its
/// node has is refused before anything runs.
fn contend_teams_on_two_nodes(log: &str, nodes: &[Value]) {
    let c = json(log, "contend");
    let recs = c["records"].as_array().unwrap();
    let find = |phase: &str, agent: &str| {
        recs.iter()
            .find(|r| r["extra"]["case_phase"] == phase && r["extra"]["case_agent"] == agent)
            .unwrap_or_else(|| panic!("no {agent} in phase {phase}: {c:#}"))
    };
    for (phase, agents) in [
        ("cpu0", &["cpu0"][..]),
        ("cpu1", &["cpu1"][..]),
        ("cpu0+cpu1", &["cpu0", "cpu1"][..]),
    ] {
        for (node, agent) in agents.iter().map(|a| (a[3..].parse::<u64>().unwrap(), a)) {
            let r = find(phase, agent);
            assert_eq!(r["status"], "ok", "{r:#}");
            let e = &r["extra"];
            assert_eq!(
                e["valid"], true,
                "{agent} in {phase} not through the window: {r:#}"
            );
            assert!(e["covered_from_seconds"].as_f64().unwrap() <= 0.0, "{r:#}");
            assert!(e["covered_to_seconds"].as_f64().unwrap() >= 0.0, "{r:#}");
            assert!(e["window_bytes"].as_u64().unwrap() > 0, "{r:#}");
            assert_eq!(e["memory_node"], node, "{r:#}");
            let p = &r["placement"];
            assert_eq!(p["memory_node"], node, "{r:#}");
            assert_eq!(p["cpu_node"], node, "{r:#}");
            assert_eq!(
                p["verified_fraction"], 1.0,
                "{agent}'s pages not all on node {node}: {r:#}"
            );
            let cpus = u32s(&r["cpus"]);
            assert_eq!(cpus.len(), 1);
            assert!(
                u32s(&nodes[node as usize]["cpus"]).contains(&cpus[0]),
                "{r:#}"
            );
        }
        assert_eq!(find(phase, "aggregate")["status"], "ok");
    }
    assert_eq!(find("cpu1", "cpu1")["op"], "write");
    assert!(
        log.contains("=== RC badteam 2 error: --cpu:"),
        "a team larger than its node not refused as expected:\n{log}"
    );
}

#[path = "numa-vm/tiers.rs"]
mod tiers;

#[path = "numa-vm/cores.rs"]
mod cores;
