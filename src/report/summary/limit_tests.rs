use super::*;
use crate::model::{BoundBy, Host, Limit, Stats, Units};

fn rec(size: u64, regime: &str, threads: u32, best: f64, limit: Option<(f64, BoundBy)>) -> Record {
    let mut r = Record {
        kernel: "seq_read_512_avx512f".into(),
        op: Op::Read,
        pattern: Some(Pattern::Seq),
        width_bits: Some(512),
        nontemporal: Some(false),
        size_bytes: Some(size),
        threads,
        regime: Some(regime.into()),
        gbps: Some(Stats::constant(best, 3)),
        ..Record::new(SuiteId::Cache)
    };
    r.set_limit(match limit {
        Some((g, b)) => Limit {
            gbps: Some(g),
            bound_by: b,
        },
        None => Limit {
            gbps: None,
            bound_by: BoundBy::Unknown,
        },
    });
    r
}

#[test]
fn every_level_with_a_known_limit_shows_its_share() {
    let mut run = Run::new("survey", serde_json::json!({}), Host::default(), Units::GB);
    run.records = vec![
        rec(
            16 << 10,
            "L1",
            1,
            250.0,
            Some((256.0, BoundBy::L1LoadPorts)),
        ),
        rec(256 << 10, "L2", 1, 100.0, Some((128.0, BoundBy::L2Fill))),
        rec(8 << 20, "L3", 1, 30.0, None),
        rec(
            1 << 30,
            "DRAM",
            1,
            15.36,
            Some((76.8, BoundBy::DramChannels)),
        ),
        rec(
            1 << 30,
            "DRAM",
            2,
            30.72,
            Some((76.8, BoundBy::DramChannels)),
        ),
    ];
    let h = headline(&run).join(" · ");
    assert!(
        h.contains("L1 read 250 GB/s = 98 % of this core's limit"),
        "{h}"
    );
    assert!(
        h.contains("L2 read 100 GB/s = 78 % of its limit (L2→L1 fill)"),
        "{h}"
    );
    assert!(
        h.contains("L3 read 30.0 GB/s · "),
        "unknown limit, no share: {h}"
    );
    assert!(
        h.contains("DRAM read 15.4 GB/s per core = 20 % of the 76.8 GB/s peak (one core rarely reaches it), 30.7 GB/s with 2 threads = 40 %"),
        "{h}"
    );
}

/// A set of exactly twice the level below still takes that level's limit
/// (its hits flatter it), so the headline of its own level skips it: on a
/// Zen 4 guest (32 KiB L1, 1 MiB L2) the 64 KiB read, 119.5 GB/s against
/// the L1 ports' 236, was the summary's "L2 read … = 50 % of its limit (L1
/// load ports)" where 128 KiB reads 117.5 of the fill's 118.
#[test]
fn a_level_headline_skips_a_set_at_exactly_twice_the_level_below() {
    let mut host = Host::default();
    for (level, size) in [(1u8, 32u64 << 10), (2, 1 << 20)] {
        let kind = if level == 1 { "data" } else { "unified" };
        host.caches.push(crate::model::Cache::new(
            level,
            kind,
            size,
            64,
            vec![0],
            "test".into(),
        ));
    }
    let mut run = Run::new("survey", serde_json::json!({}), host, Units::GB);
    run.records = vec![
        rec(
            64 << 10,
            "L2",
            1,
            119.5,
            Some((236.4, BoundBy::L1LoadPorts)),
        ),
        rec(128 << 10, "L2", 1, 117.5, Some((118.2, BoundBy::L2Fill))),
    ];
    let h = headline(&run).join(" · ");
    assert!(
        h.contains("L2 read 118 GB/s = 99 % of its limit (L2→L1 fill)"),
        "{h}"
    );
}
