//! The verdict on recorded matrices: nviennot/core-to-core-latency's
//! published CAS results (tests/fixtures/c2c/README.md), held against the
//! topology the machine has and against the one a VM (or a wrong
//! firmware table) would state.

use super::*;
use crate::model::{CpuPlace, Topology};
use crate::plan::classes::{class_of, classes};

/// A topology of `n` cpus: `core(c)` names its core (cpus with the same
/// name are siblings), `l3(c)` its last-level cache, `package(c)` its
/// package (one node per package, distance 32 across).
fn topology(
    cpus: &[u32],
    core: impl Fn(u32) -> u32,
    l3: impl Fn(u32) -> u32,
    package: impl Fn(u32) -> u32,
) -> Topology {
    let group = |f: &dyn Fn(u32) -> u32, c: u32| -> Vec<u32> {
        cpus.iter().copied().filter(|&x| f(x) == f(c)).collect()
    };
    let packages: Vec<u32> = {
        let mut p: Vec<u32> = cpus.iter().map(|&c| package(c)).collect();
        p.sort_unstable();
        p.dedup();
        p
    };
    Topology {
        cpus: cpus
            .iter()
            .map(|&c| CpuPlace {
                cpu: c,
                package: package(c),
                die: None,
                cluster: None,
                core_cpus: group(&core, c),
                l2: group(&core, c),
                l3: group(&l3, c),
                node: Some(package(c)),
                kind: None,
            })
            .collect(),
        nodes: packages.clone(),
        distances: packages
            .iter()
            .map(|a| packages.iter().map(|b| if a == b { 10 } else { 32 }).collect())
            .collect(),
    }
    .sorted()
}

/// The recorded pairs of `name` (`holder,reader,ns` lines).
fn recorded(name: &str) -> Vec<(u32, u32, f64)> {
    let path = format!("{}/tests/fixtures/c2c/{name}.pairs", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let v: Vec<&str> = l.split(',').collect();
            (v[0].parse().unwrap(), v[1].parse().unwrap(), v[2].parse().unwrap())
        })
        .collect()
}

/// The verdict of `name`'s pairs against `t`, cycles at `hz`.
fn verdict(name: &str, t: &Topology, hz: f64) -> (Vec<ClassKey>, Verdict) {
    let pairs = recorded(name);
    let mut cpus: Vec<u32> = pairs.iter().flat_map(|p| [p.0, p.1]).collect();
    cpus.sort_unstable();
    cpus.dedup();
    let keys: Vec<ClassKey> = classes(t, &cpus).into_iter().map(|(k, _)| k).collect();
    let figs: Vec<PairFigure> = pairs
        .iter()
        .map(|&(a, b, ns)| {
            let (pa, pb) = (t.place(a).unwrap(), t.place(b).unwrap());
            let k = class_of(t, pa, pb);
            PairFigure {
                pair: [a, b],
                class: keys.iter().position(|x| *x == k).unwrap(),
                packages: [pa.package, pb.package],
                cas_ns: Some(ns),
                cas_cycles: Some(ns * hz / 1e9),
                read: None,
            }
        })
        .collect();
    let v = judge(&keys, &figs);
    (keys, v)
}

fn kinds(v: &Verdict) -> Vec<String> {
    v.warnings
        .iter()
        .map(|w| {
            serde_json::to_value(w).unwrap()["kind"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

const I7_6700K_HZ: f64 = 4.0e9;

#[test]
fn a_6700k_as_it_is_raises_nothing() {
    let cpus: Vec<u32> = (0..8).collect();
    let t = topology(&cpus, |c| c / 2, |_| 0, |_| 0);
    let (keys, v) = verdict("i7-6700k", &t, I7_6700K_HZ);
    assert!(v.warnings.is_empty(), "{:?}", v.warnings);
    assert_eq!(keys.iter().map(|k| k.name()).collect::<Vec<_>>(), ["smt", "l3"]);
    let smt = v.classes[0].median_ns.unwrap();
    let l3 = v.classes[1].median_ns.unwrap();
    assert!((6.5..7.5).contains(&smt) && (18.0..22.0).contains(&l3), "{smt} {l3}");
    assert_eq!(v.classes[0].group, Some(1));
    assert_eq!(v.classes[1].group, Some(2));
    assert_eq!(v.classes[1].alike, 24);
}

#[test]
fn a_6700k_stated_as_eight_separate_cores_shares_four_of_them() {
    // What a VM that hides SMT states: eight cores on one L3.
    let cpus: Vec<u32> = (0..8).collect();
    let t = topology(&cpus, |c| c, |_| 0, |_| 0);
    let (_, v) = verdict("i7-6700k", &t, I7_6700K_HZ);
    assert_eq!(kinds(&v), ["shares_a_core"], "{:?}", v.warnings);
    let Warning::SharesACore {
        pairs,
        stated,
        exchange,
        cycles,
        ..
    } = &v.warnings[0]
    else {
        unreachable!()
    };
    assert_eq!(pairs, &vec![[0, 1], [2, 3], [4, 5], [6, 7]]);
    assert_eq!((stated.as_str(), exchange.as_str()), ("l3", "cas"));
    assert!(cycles.unwrap() < limits::SAME_CORE_CAS_CYCLES);
}

/// The 5950X's CCDs: 0-7 and 8-15, each cpu's sibling 16 above it.
fn ccd(c: u32) -> u32 {
    (c % 16) / 8
}

const R5950X_HZ: f64 = 4.5e9;

#[test]
fn a_5950x_as_it_is_raises_nothing() {
    let cpus: Vec<u32> = (0..32).collect();
    let t = topology(&cpus, |c| c % 16, ccd, |_| 0);
    let (keys, v) = verdict("ryzen-9-5950x", &t, R5950X_HZ);
    assert_eq!(
        keys.iter().map(|k| k.name()).collect::<Vec<_>>(),
        ["smt", "l3", "node"]
    );
    assert!(v.warnings.is_empty(), "{:?}", v.warnings);
    assert_eq!(v.groups.len(), 3, "{:?}", v.groups);
}

#[test]
fn a_5950x_cpu_stated_in_the_wrong_ccd_answers_like_its_real_one() {
    let cpus: Vec<u32> = (0..32).collect();
    // cpu 7 (and its sibling 23) stated on the second CCD.
    let wrong = |c: u32| if c % 16 == 7 { 1 } else { ccd(c) };
    let t = topology(&cpus, |c| c % 16, wrong, |_| 0);
    let (_, v) = verdict("ryzen-9-5950x", &t, R5950X_HZ);
    let likes: Vec<(String, Option<String>, usize)> = v
        .warnings
        .iter()
        .filter_map(|w| match w {
            Warning::AnswersLikeClass {
                stated,
                like,
                pairs,
                ..
            } => Some((stated.clone(), like.clone(), pairs.len())),
            _ => None,
        })
        .collect();
    assert!(
        likes.contains(&("l3".into(), Some("node".into()), 32)),
        "{:?}",
        v.warnings
    );
    assert!(
        likes.contains(&("node".into(), Some("l3".into()), 28)),
        "{:?}",
        v.warnings
    );
    assert!(likes
        .iter()
        .all(|(_, _, n)| *n == 32 || *n == 28), "{likes:?}");
}

#[test]
fn a_5950x_stated_as_one_l3_splits_it() {
    let cpus: Vec<u32> = (0..32).collect();
    let t = topology(&cpus, |c| c % 16, |_| 0, |_| 0);
    let (_, v) = verdict("ryzen-9-5950x", &t, R5950X_HZ);
    assert_eq!(kinds(&v), ["class_splits"], "{:?}", v.warnings);
    let Warning::ClassSplits { class, groups } = &v.warnings[0] else {
        unreachable!()
    };
    assert_eq!(class, "l3");
    let counts: Vec<u32> = groups.iter().map(|g| g.1).collect();
    assert_eq!(counts, vec![224, 256], "{groups:?}");
}

#[test]
fn a_dual_epyc_7r13_finds_its_slower_second_socket() {
    // cpus 0-15 of socket 0 and 48-63 of socket 1, CCXs of 8 cores.
    let cpus: Vec<u32> = (0..16).chain(48..64).collect();
    let t = topology(&cpus, |c| c, |c| c / 8, |c| c / 48);
    let (keys, v) = verdict("epyc-7r13-dual", &t, 3.0e9);
    assert_eq!(
        keys.iter().map(|k| k.name()).collect::<Vec<_>>(),
        ["l3", "node", "socket d32"]
    );
    assert_eq!(kinds(&v), ["slower_twin"], "{:?}", v.warnings);
    let Warning::SlowerTwin {
        class,
        package,
        twin,
        ns,
        twin_ns,
    } = &v.warnings[0]
    else {
        unreachable!()
    };
    assert_eq!((class.as_str(), *package, *twin), ("node", 1, 0));
    assert!(ns / twin_ns > 1.6, "{ns} vs {twin_ns}");
}

#[test]
fn an_l1_speed_read_between_separate_cores_is_one_core() {
    let keys = vec![ClassKey {
        near: Near::L3,
        distance: None,
        kinds: None,
    }];
    let fig = |read_cycles: f64| PairFigure {
        pair: [0, 1],
        class: 0,
        packages: [0, 0],
        cas_ns: Some(20.0),
        cas_cycles: Some(60.0),
        read: Some(("hitm", read_cycles / 3.0, Some(read_cycles))),
    };
    let one = judge(&keys, &[fig(5.0)]);
    assert!(
        matches!(&one.warnings[..], [Warning::SharesACore { exchange, .. }] if exchange == "hitm"),
        "{:?}",
        one.warnings
    );
    assert!(judge(&keys, &[fig(150.0)]).warnings.is_empty());
}
