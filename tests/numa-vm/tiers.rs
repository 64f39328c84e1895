//! Memory tiers in a guest (`run-qemu-tiers.sh`, `init-tiers.sh`): node 0
//! with the cpus, node 1 memory only, an ACPI HMAT claiming 100 ns and
//! 10 GiB/s for node 0 and 250 ns and 4 GiB/s for node 1 (from node 0),
//! a memory-side cache in front of node 1. bwscope must name the cpu-less
//! node, read the kernel's tier and the claims as QEMU wrote them, measure
//! the tier matrix with its pages where asked, and spread the interleave
//! sweep's pages in the stated ratios (counted with move_pages, within
//! 2 %). Bandwidth is never asserted: both nodes are the same host memory.

use super::*;

fn node(info: &Value, id: u64) -> &Value {
    info["tiers"]["nodes"]
        .as_array()
        .expect("host.tiers.nodes")
        .iter()
        .find(|n| n["node"] == id)
        .unwrap_or_else(|| panic!("no tier node {id}: {info}"))
}

fn claim(n: &Value, access: u64) -> &Value {
    n["hmat"]
        .as_array()
        .expect("hmat claims")
        .iter()
        .find(|c| c["access"] == access)
        .unwrap_or_else(|| panic!("no access{access} claim: {n}"))
}

/// The interleave records' ratios and page counts within 2 %.
fn check_sweep(run: &Value, want_cases: &[&str]) {
    let recs = records(run, "interleave_read");
    let mut seen = Vec::new();
    for r in &recs {
        let d = &r["extra"];
        let case = d["case_interleave"].as_str().unwrap().to_string();
        if r["status"] != "ok" {
            // The 6.1 guest kernel has no weighted interleave (6.9+).
            assert_eq!(
                case, "system",
                "only the kernel's weights may be missing: {r}"
            );
            assert!(
                r["reason"]
                    .as_str()
                    .unwrap()
                    .contains("weighted interleave"),
                "{r}"
            );
            continue;
        }
        assert_eq!(d["interleave_method"], "mbind ranges", "{r}");
        let want = d["interleave_expected_fast"].as_f64().unwrap();
        let pages: Vec<(u64, u64)> = d["interleave_pages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p[0].as_u64().unwrap(), p[1].as_u64().unwrap()))
            .collect();
        let total: u64 = pages.iter().map(|p| p.1).sum();
        let fast = pages.iter().find(|p| p.0 == 0).map_or(0, |p| p.1);
        let got = fast as f64 / total as f64;
        assert!(
            (got - want).abs() <= 0.02,
            "{case}: {got:.4} of the pages on node 0, meant {want:.4}: {pages:?}"
        );
        assert!(
            r["placement"]["verified_fraction"].as_f64().unwrap() >= 0.98,
            "{r}"
        );
        assert_eq!(u32s(&r["extra"]["interleave_nodes"]), vec![0, 1]);
        seen.push(case);
    }
    for c in want_cases {
        assert!(seen.iter().any(|s| s == c), "no {c} case in {seen:?}");
    }
    let best: Vec<_> = recs
        .iter()
        .filter(|r| !r["extra"]["interleave_weights_to_write"].is_null())
        .collect();
    assert_eq!(best.len(), 1, "one best case names the weights");
    let lines = best[0]["extra"]["interleave_weights_to_write"].to_string();
    assert!(
        lines.contains("weighted_interleave/node0") || lines.contains("alone is best"),
        "{lines}"
    );
}

#[test]
fn tiers_guest_names_its_nodes_and_measures_each_tier() {
    let _one = GUEST.lock().unwrap_or_else(|e| e.into_inner());
    let Some((kernel, initrd, work)) = prepare("init-tiers.sh") else {
        return;
    };
    let t0 = Instant::now();
    let log = run_guest(
        "run-qemu-tiers.sh",
        &kernel,
        &initrd,
        &[],
        Duration::from_secs(420),
    );
    eprintln!(
        "numa_vm tiers: guest ran {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    std::fs::write(work.join("vm-tiers.log"), &log).unwrap();
    assert!(log.contains("=== DONE"), "guest did not finish:\n{log}");

    // info: node 1 has memory and no cpus; one kernel tier; HMAT as given.
    let info = json(&log, "info");
    let (n0, n1) = (node(&info, 0), node(&info, 1));
    assert_eq!(u32s(&n0["cpus"]), vec![0, 1]);
    assert!(n1["cpus"].as_array().unwrap().is_empty(), "{n1}");
    assert!(n1["capacity_bytes"].as_u64().unwrap() > 128 << 20, "{n1}");
    assert_eq!(n0["tier"], n1["tier"], "6.1 puts both in the default tier");
    for (n, lat, bw) in [(n0, 100, 10240), (n1, 250, 4096)] {
        for access in [0, 1] {
            let c = claim(n, access);
            assert_eq!(u32s(&c["initiators"]), vec![0], "{c}");
            assert_eq!(c["read_latency_ns"], lat, "{c}");
            assert_eq!(c["write_latency_ns"], lat, "{c}");
            assert_eq!(c["read_bandwidth_mbps"], bw, "{c}");
        }
    }
    // No source states what the guest's memory is: unknown, with why.
    for n in [n0, n1] {
        assert_eq!(n["kind"], "unknown", "{n}");
        assert!(!n["kind_source"].as_str().unwrap().is_empty());
    }
    let text = section(&log, "info.txt");
    assert!(
        text.contains("memory tiers") && text.contains("none"),
        "no tier table:\n{text}"
    );

    // The tier matrix: 1 cpu node × 2 memory nodes, placed, with claims.
    let m = json(&log, "tiers");
    for kernel in [
        "mix_read",
        "mix_3:1",
        "mix_2:1",
        "mix_1:1",
        "chase_64_scalar",
    ] {
        let recs = records(&m, kernel);
        assert_eq!(recs.len(), 2, "{kernel}: want node 0 × nodes 0, 1");
        for r in recs {
            assert_eq!(r["status"], "ok", "{r}");
            assert_eq!(r["placement"]["verified_fraction"], 1.0, "{r}");
            assert_eq!(r["extra"]["memory_kind"], "unknown");
            let mem = r["placement"]["memory_node"].as_u64().unwrap();
            let claimed = r["extra"]["hmat_claim"].as_f64();
            match (kernel, mem) {
                ("mix_read", 0) => assert_eq!(claimed, Some(10.24)),
                ("mix_read", 1) => assert_eq!(claimed, Some(4.096)),
                ("chase_64_scalar", 0) => assert_eq!(claimed, Some(100.0)),
                ("chase_64_scalar", 1) => assert_eq!(claimed, Some(250.0)),
                _ => assert_eq!(claimed, None, "mixes carry no claim: {r}"),
            }
        }
    }
    let loaded = records(&m, "loaded_chase_64_scalar");
    assert_eq!(loaded.len(), 8, "2 cells × (unloaded + 3 delays)");
    for r in &loaded {
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["placement"]["verified_fraction"], 1.0, "{r}");
        assert_eq!(u32s(&r["extra"]["load_cpus"]), vec![1]);
    }
    check_sweep(&m, &["1:0", "4:1", "3:1", "2:1", "1:1", "0:1"]);
    check_sweep(&json(&log, "sweep"), &["1:0", "4:1", "1:1", "0:1"]);
    let text = section(&log, "tiers.txt");
    assert!(
        text.contains("beside what HMAT claims") && text.contains("interleave across tiers"),
        "{text}"
    );

    assert!(
        log.contains("=== RC bad 2 error: --interleave: node 7 does not exist"),
        "bad node not refused:\n{log}"
    );
}
