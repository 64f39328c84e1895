//! The parser on recorded sysfs trees (hwloc's test dumps of real
//! machines, this project's build guest) and on the generated ones
//! (tests/fixtures/topology/README.md says which is which).

use super::*;

/// The fixture `name` (`tests/fixtures/topology/<name>.sysfs`), parsed.
pub(crate) fn fixture(name: &str) -> Topology {
    let path = format!(
        "{}/tests/fixtures/topology/{name}.sysfs",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let files = recorded(&text);
    from_sysfs(&|p: &str| files.get(p).cloned())
}

fn distinct<T: Ord + Clone>(v: impl Iterator<Item = T>) -> Vec<T> {
    let mut d: Vec<T> = v.collect();
    d.sort();
    d.dedup();
    d
}

#[test]
fn a_two_socket_intel_server_with_smt() {
    let t = fixture("32intel64-2p8co2t+8ve");
    assert_eq!(t.cpus.len(), 32);
    assert_eq!(distinct(t.cpus.iter().map(|p| p.package)), vec![0, 1]);
    let c0 = t.place(0).unwrap();
    assert_eq!(c0.core_cpus, vec![0, 16], "cpu 16 is cpu 0's SMT sibling");
    assert_eq!(c0.l2, vec![0, 16]);
    assert_eq!(c0.l3.len(), 16, "one L3 per socket: 8 cores × 2 threads");
    assert_eq!(c0.node, Some(0));
    assert_eq!(t.place(8).unwrap().node, Some(1));
    assert_eq!(t.distance(0, 1), Some(21));
    assert!(t.cpus.iter().all(|p| p.kind.is_none()));
}

#[test]
fn a_big_little_arm_board_tells_its_kinds_by_midr() {
    let t = fixture("nvidia-dgx-gb10");
    assert_eq!(t.cpus.len(), 20);
    let kinds = distinct(t.cpus.iter().filter_map(|p| p.kind.clone()));
    // Cortex-A725 (0xd87) and Cortex-X925 (0xd85), not the per-cpu
    // capacities (718 … 1024), which also differ within a kind.
    assert_eq!(kinds, vec!["0x41-0xd85", "0x41-0xd87"]);
    assert_eq!(t.place(0).unwrap().l3, (0..10).collect::<Vec<_>>());
    assert_eq!(t.place(19).unwrap().l3, (10..20).collect::<Vec<_>>());
    assert!(t.cpus.iter().all(|p| p.core_cpus.len() == 1), "no SMT");
}

#[test]
fn an_arm_server_with_clusters_and_four_nodes() {
    let t = fixture("128arm-2pa2n8cluster4co");
    assert_eq!(t.cpus.len(), 128);
    let c5 = t.place(5).unwrap();
    assert_eq!(c5.die, None, "die_id -1 is no die");
    assert_eq!(c5.l3, (0..32).collect::<Vec<_>>());
    let cluster: Vec<u32> = t
        .cpus
        .iter()
        .filter(|p| p.cluster == c5.cluster)
        .map(|p| p.cpu)
        .collect();
    assert_eq!(cluster, vec![4, 5, 6, 7]);
    assert_eq!(t.nodes, vec![0, 1, 2, 3]);
    assert_eq!(t.distance(0, 3), Some(33));
    assert_eq!(t.distance(2, 3), Some(16));
}

#[test]
fn an_intel_hybrid_part_shares_its_e_cores_l2() {
    let t = fixture("20em64t-hybrid-1p6c2t+2ca4co1t");
    assert_eq!(t.cpus.len(), 20);
    assert_eq!(t.place(0).unwrap().core_cpus, vec![0, 1]);
    let e = t.place(12).unwrap();
    assert_eq!(e.core_cpus, vec![12]);
    assert_eq!(e.l2, vec![12, 13, 14, 15]);
}

#[test]
fn this_build_guest_states_two_separate_cores_on_one_l3() {
    let t = fixture("guest-emr-2vcpu");
    assert_eq!(t.cpus.len(), 2);
    for p in &t.cpus {
        assert_eq!(p.core_cpus, vec![p.cpu]);
        assert_eq!(p.l2, vec![p.cpu]);
        assert_eq!(p.l3, vec![0, 1]);
        assert_eq!(p.node, Some(0));
        assert_eq!(p.kind, None, "one capacity is no kind");
    }
}

#[test]
fn a_qemu_guest_kernel_states_sockets_cores_and_threads() {
    // Debian's 6.1 kernel under QEMU -smp sockets=2,cores=4,threads=2
    // (tests/numa-vm/cores.rs records it again each run).
    let t = fixture("qemu-2s4c2t");
    assert_eq!(t.cpus.len(), 16);
    for p in &t.cpus {
        let first = p.cpu / 2 * 2;
        assert_eq!(p.core_cpus, vec![first, first + 1]);
        assert_eq!(p.package, p.cpu / 8);
        assert_eq!(p.node, Some(p.cpu / 8));
        assert_eq!(p.l3.len(), 8);
    }
    assert_eq!(t.distance(1, 0), Some(20));
}

#[test]
fn an_unknown_cluster_is_no_cluster() {
    // x86 without an L2 id writes 65535, arm64 without one -1.
    let files: std::collections::HashMap<String, String> = [
        ("system/cpu/online", "0-1"),
        ("system/cpu/cpu0/topology/cluster_id", "65535"),
        ("system/cpu/cpu1/topology/cluster_id", "-1"),
    ]
    .into_iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    let t = from_sysfs(&|p: &str| files.get(p).cloned());
    assert!(t.cpus.iter().all(|p| p.cluster.is_none()), "{t:?}");
}

#[test]
fn the_generated_zen4_server_has_eight_core_ccds() {
    let t = fixture("generated-2x-epyc-9654");
    assert_eq!(t.cpus.len(), 384);
    let groups = distinct(t.cpus.iter().map(|p| p.l3.clone()));
    assert_eq!(groups.len(), 24, "12 CCDs per socket");
    assert!(groups.iter().all(|g| g.len() == 16), "8 cores × 2 threads");
    assert_eq!(t.place(0).unwrap().core_cpus, vec![0, 192]);
    assert_eq!(t.distance(0, 1), Some(32));
}

#[test]
fn the_generated_576_cpu_server_parses_whole() {
    let t = fixture("generated-576-aarch64");
    assert_eq!(t.cpus.len(), 576);
    assert_eq!(t.nodes.len(), 8);
    assert_eq!(distinct(t.cpus.iter().map(|p| p.package)).len(), 4);
    assert!(t.cpus.iter().all(|p| p.core_cpus.len() == 2));
}

#[test]
fn a_tree_without_lists_is_probed_and_a_missing_one_is_empty() {
    let files: std::collections::HashMap<String, String> = [
        ("system/cpu/cpu0/topology/physical_package_id", "0"),
        ("system/cpu/cpu1/topology/physical_package_id", "0"),
    ]
    .into_iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    let t = from_sysfs(&|p: &str| files.get(p).cloned());
    assert_eq!(t.cpus.len(), 2);
    assert_eq!(t.place(1).unwrap().core_cpus, vec![1]);
    assert!(t.place(1).unwrap().l3.is_empty());
    assert!(from_sysfs(&|_: &str| None).cpus.is_empty());
}

#[test]
fn a_system_without_sysfs_composes_its_cores_caches_and_kinds() {
    // What Windows states of a 2-core, 4-thread part with one L3: its
    // cores (siblings), each cpu's caches and the kinds it names.
    let cpus: Vec<Cpu> = (0..4)
        .map(|id| Cpu {
            id,
            core: id / 2,
            package: 0,
            node: 0,
            siblings: vec![id / 2 * 2, id / 2 * 2 + 1],
        })
        .collect();
    let caches = |c: u32| {
        vec![
            Cache::new(1, "instruction", 32 << 10, 64, vec![c], "test".into()),
            Cache::new(
                2,
                "unified",
                1 << 20,
                64,
                vec![c / 2 * 2, c / 2 * 2 + 1],
                "test".into(),
            ),
            Cache::new(3, "unified", 32 << 20, 64, vec![0, 1, 2, 3], "test".into()),
        ]
    };
    let nodes = vec![Node {
        id: 0,
        cpus: vec![0, 1, 2, 3],
        memory_bytes: None,
        distances: vec![10],
    }];
    let kinds = Some(vec![
        ("performance".to_string(), vec![0, 1]),
        ("efficiency".to_string(), vec![2, 3]),
    ]);
    let t = compose(&cpus, &caches, &nodes, kinds);
    let p = t.place(3).unwrap();
    assert_eq!(p.core_cpus, vec![2, 3]);
    assert_eq!(p.l2, vec![2, 3]);
    assert_eq!(p.l3, vec![0, 1, 2, 3]);
    assert_eq!(p.kind.as_deref(), Some("efficiency"));
    assert_eq!(t.distance(0, 0), Some(10));
}
