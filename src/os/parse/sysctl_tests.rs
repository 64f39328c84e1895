//! The recorded Macs of `tests/fixtures/sysctl/` (each file names its
//! public source): core kinds, cache sizes per kind, page and memory size.

use super::*;

fn mac(text: &str) -> MacHardware {
    read(&Dump::parse(text))
}

const M1: &str = include_str!("../../../tests/fixtures/sysctl/m1.txt");
const M2_PRO: &str = include_str!("../../../tests/fixtures/sysctl/m2pro.txt");
const M3_MAX: &str = include_str!("../../../tests/fixtures/sysctl/m3max.txt");
const INTEL: &str = include_str!("../../../tests/fixtures/sysctl/intel.txt");

const KIB: u64 = 1024;
const MIB: u64 = 1024 * 1024;
const GIB: u64 = 1024 * MIB;

/// (name, cpus, L1d, L1i, L2, cpus per L2) of every level.
fn kinds(m: &MacHardware) -> Vec<(String, u32, u64, u64, u64, u32)> {
    m.levels
        .iter()
        .map(|l| {
            (
                l.name.clone(),
                l.logical_cpus,
                l.l1d_bytes.unwrap_or(0),
                l.l1i_bytes.unwrap_or(0),
                l.l2_bytes.unwrap_or(0),
                l.cpus_per_l2,
            )
        })
        .collect()
}

fn sizes(m: &MacHardware, cpu: u32) -> Vec<(u8, &'static str, u64, Vec<u32>)> {
    m.caches(cpu)
        .into_iter()
        .map(|c| (c.level, c.kind, c.size_bytes, c.shared_cpus))
        .collect()
}

#[test]
fn m1_has_a_p_and_an_e_cluster_with_their_own_caches() {
    let m = mac(M1);
    let p = (
        "perflevel0".to_string(),
        4,
        128 * KIB,
        192 * KIB,
        12 * MIB,
        4,
    );
    let e = ("perflevel1".to_string(), 4, 64 * KIB, 128 * KIB, 4 * MIB, 4);
    assert_eq!(kinds(&m), [p, e]);
    assert_eq!(m.page_bytes, Some(16 * KIB));
    assert_eq!(m.memory_bytes, Some(16 * GIB));
    assert_eq!(m.line_bytes, Some(128));
    assert!(m.arm64);
    assert_eq!(m.cpu_count(), 8);
    // P cores are 0-3, E cores 4-7 (bwscope's numbering).
    assert_eq!(m.level_of(3), Some(0));
    assert_eq!(m.level_of(4), Some(1));
    assert_eq!(
        sizes(&m, 5),
        [
            (1, "data", 64 * KIB, vec![5]),
            (1, "instruction", 128 * KIB, vec![5]),
            (2, "unified", 4 * MIB, vec![4, 5, 6, 7]),
        ]
    );
}

#[test]
fn m2_pro_has_two_p_clusters_each_with_its_l2() {
    let m = mac(M2_PRO);
    let p = (
        "Performance".to_string(),
        8,
        128 * KIB,
        192 * KIB,
        16 * MIB,
        4,
    );
    let e = ("Efficiency".to_string(), 4, 64 * KIB, 128 * KIB, 4 * MIB, 4);
    assert_eq!(kinds(&m), [p, e]);
    assert_eq!(m.brand.as_deref(), Some("Apple M2 Pro"));
    assert_eq!(m.memory_bytes, Some(16 * GIB));
    assert_eq!(m.page_bytes, Some(16 * KIB));
    // Two L2s of 16 MiB on the P side: cpus 0-3 share one, 4-7 the other.
    assert_eq!(sizes(&m, 1)[2], (2, "unified", 16 * MIB, vec![0, 1, 2, 3]));
    assert_eq!(sizes(&m, 6)[2], (2, "unified", 16 * MIB, vec![4, 5, 6, 7]));
    assert_eq!(sizes(&m, 8)[2], (2, "unified", 4 * MIB, vec![8, 9, 10, 11]));
}

#[test]
fn m3_max_has_two_p_clusters_of_six() {
    let m = mac(M3_MAX);
    let p = (
        "Performance".to_string(),
        12,
        128 * KIB,
        192 * KIB,
        16 * MIB,
        6,
    );
    let e = ("Efficiency".to_string(), 4, 64 * KIB, 128 * KIB, 4 * MIB, 4);
    assert_eq!(kinds(&m), [p, e]);
    assert_eq!(m.memory_bytes, Some(128 * GIB));
    assert_eq!(m.page_bytes, Some(16 * KIB));
    assert_eq!(m.cpu_count(), 16);
    assert_eq!(sizes(&m, 7)[2].3, vec![6, 7, 8, 9, 10, 11]);
    assert_eq!(sizes(&m, 12)[0], (1, "data", 64 * KIB, vec![12]));
}

#[test]
fn an_intel_mac_is_one_kind_with_smt_and_an_l3() {
    let m = mac(INTEL);
    assert_eq!(m.levels.len(), 1);
    let l = &m.levels[0];
    assert_eq!((l.logical_cpus, l.physical_cpus), (16, 8));
    assert_eq!(m.memory_bytes, Some(32 * GIB));
    assert_eq!(m.page_bytes, None, "not in the recorded excerpt");
    assert!(!m.arm64);
    assert_eq!(m.siblings(5), vec![4, 5]);
    assert_eq!(
        sizes(&m, 3),
        [
            (1, "data", 32 * KIB, vec![2, 3]),
            (1, "instruction", 32 * KIB, vec![2, 3]),
            (2, "unified", 256 * KIB, vec![2, 3]),
            (3, "unified", 16 * MIB, (0..16).collect()),
        ]
    );
}

#[test]
fn the_plain_keys_are_not_the_fast_cores() {
    // hw.l1dcachesize is the E cores' on Apple silicon: never the P level's.
    let m = mac(M3_MAX);
    assert_eq!(m.levels[0].l1d_bytes, Some(128 * KIB));
    assert_eq!(Dump::parse(M3_MAX).int("hw.l1dcachesize"), Some(64 * KIB));
}

#[test]
fn an_empty_answer_is_one_cpu_and_no_caches() {
    let m = mac("");
    assert!(m.levels.is_empty());
    assert_eq!(m.cpu_count(), 1);
    assert!(m.caches(0).is_empty());
    assert_eq!(m.memory_bytes, None);
}
