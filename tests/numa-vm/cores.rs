//! A real kernel's topology (`run-qemu-smp.sh`, `init-cores.sh`): QEMU
//! with `-smp sockets=2,cores=4,threads=2` and a node per socket. The
//! guest prints its sysfs slice (`scripts/topology-slice.sh`, as the
//! fixtures were recorded) and runs `bwscope cores` once. The parser must
//! read 16 cpus in 8 cores of 2 threads on 2 packages and nodes; the
//! planner must find the three classes (SMT siblings, one socket's L3,
//! across sockets at distance 20); the recorded fixture
//! `qemu-2s4c2t.sysfs` must be what this kernel states. Every time in the
//! guest is emulated (TCG): no figure is read, only what was planned and
//! that each record either stood or was refused with its reason.

use super::*;

#[test]
fn cores_guest_states_sockets_cores_and_threads() {
    let _one = GUEST.lock().unwrap_or_else(|e| e.into_inner());
    let Some((kernel, initrd, work)) =
        prepare_with("init-cores.sh", &["scripts/topology-slice.sh"])
    else {
        return;
    };
    let t0 = Instant::now();
    let log = run_guest(
        "run-qemu-smp.sh",
        &kernel,
        &initrd,
        &[],
        Duration::from_secs(300),
    );
    eprintln!(
        "numa_vm cores: guest ran {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    std::fs::write(work.join("vm-cores.log"), &log).unwrap();
    assert!(log.contains("=== DONE"), "guest did not finish:\n{log}");
    assert!(
        log.contains("=== VM cpus=0-15 nodes=0-1"),
        "not a 16-cpu 2-node guest:\n{log}"
    );

    // The kernel's own sysfs, parsed as a recorded tree is.
    let slice = section(&log, "slice");
    let files = bwscope::os::parse::topology::recorded(slice);
    let t = bwscope::os::parse::topology::from_sysfs(&|p: &str| files.get(p).cloned());
    assert_eq!(t.cpus.len(), 16, "{slice}");
    for p in &t.cpus {
        assert_eq!(p.core_cpus.len(), 2, "cpu {}: {p:?}", p.cpu);
        assert_eq!(p.package, p.cpu / 8, "{p:?}");
        assert_eq!(p.node, Some(p.cpu / 8), "{p:?}");
    }
    assert_eq!(t.distance(0, 1), Some(20));
    let recorded = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/topology/qemu-2s4c2t.sysfs"),
    )
    .unwrap();
    let mut live: Vec<&str> = slice.lines().collect();
    let mut kept: Vec<&str> = recorded.lines().collect();
    live.sort_unstable();
    kept.sort_unstable();
    assert_eq!(live, kept, "the fixture is not what this kernel states");

    // What bwscope planned from it, and each record stood or was refused.
    let run = json(&log, "cores");
    let classes: Vec<&str> = run["options"]["pairs"]["classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(classes, ["smt", "l3", "socket d20"], "{run:#}");
    let totals: Vec<u64> = run["options"]["pairs"]["classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["pairs_total"].as_u64().unwrap())
        .collect();
    // 8 sibling pairs; per socket C(8,2) − 4 = 24; 8 × 8 across.
    assert_eq!(totals, [8, 48, 64]);
    for r in run["records"].as_array().unwrap() {
        let reason = r["reason"].as_str().unwrap_or("");
        assert!(
            r["status"] == "ok" || reason.starts_with("refused after 3 tries"),
            "{r:#}"
        );
    }
}
