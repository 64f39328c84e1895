use super::*;
use crate::model::detail::{Bandwidth, CacheDetail};
use crate::model::{Cache, Host, Stats, Uarch, UarchMatch, Units};

fn l1_read(b: Bandwidth) -> Record {
    let g = Stats {
        best: 200.0,
        median: 190.0,
        min: 180.0,
        max: 200.0,
        mean: 190.0,
        cv: 0.01,
        n: 3,
    };
    Record {
        kernel: "seq_read_256_avx2".into(),
        op: Op::Read,
        pattern: Some(Pattern::Seq),
        width_bits: Some(256),
        nontemporal: Some(false),
        size_bytes: Some(16 << 10),
        threads: 1,
        regime: Some("L1".into()),
        gbps: Some(g),
        ..Record::new(CacheDetail::from(b))
    }
}

fn stats(best: f64) -> Stats {
    Stats::constant(best, 1)
}

/// The Granite Rapids guest: CPUID's L3 480 MiB, measured 10 MiB.
fn guest() -> Run {
    let mut host = Host::default();
    for (level, size, eff) in [
        (1u8, 48u64 << 10, None),
        (2, 2 << 20, None),
        (3, 480 << 20, Some(10u64 << 20)),
    ] {
        host.caches.push(Cache {
            effective_size_bytes: eff,
            bandwidth_size_bytes: eff,
            ..Cache::new(level, "unified", size, 64, vec![0], "test".into())
        });
    }
    Run::new("survey", serde_json::json!({}), host, Units::GB)
}

fn read(run: &Run, size: u64, gbps: f64) -> Record {
    Record {
        kernel: "seq_read_512_avx512f".into(),
        op: Op::Read,
        pattern: Some(Pattern::Seq),
        width_bits: Some(512),
        size_bytes: Some(size),
        threads: 1,
        regime: Some(run.host.regime(size, 1, Curve::Bandwidth)),
        gbps: Some(stats(gbps)),
        ..Record::new(SuiteId::Cache)
    }
}

fn run(uarch: Option<Uarch>, rec: Record) -> Run {
    let host = Host {
        clock_hz: Some(2e9),
        uarch: Some(UarchMatch {
            row: uarch,
            reason: "test".into(),
        }),
        ..Host::default()
    };
    let mut r = Run::new("cache", serde_json::json!({}), host, Units::default());
    r.records.push(rec);
    r
}

fn row() -> Uarch {
    Uarch {
        id: "t".into(),
        name: "t".into(),
        l1: vec![crate::model::L1Rate {
            width_bits: 256,
            loads_per_cycle: 2.0,
            stores_per_cycle: 1.0,
        }],
        l2_to_l1_bytes_per_cycle: None,
        source: "t".into(),
        l3_per_core_bytes_per_cycle: None,
        l3_source: None,
        basis: None,
    }
}

#[test]
fn l1_percentage_uses_the_records_own_ceiling() {
    let r = run(
        Some(row()),
        l1_read(Bandwidth {
            ceiling_gbps: Nullable::Value(250.0),
            ..Bandwidth::default()
        }),
    );
    assert!(
        headline(&r)[0].contains("= 80 % of this core's limit"),
        "{:?}",
        headline(&r)
    );
}

#[test]
fn l1_percentage_falls_back_to_the_records_clock_then_the_runs() {
    // 64 B/cycle at the record's 2.5 GHz = 160 GB/s.
    let at = Bandwidth {
        clock_hz: Some(2.5e9),
        ..Bandwidth::default()
    };
    let r = run(Some(row()), l1_read(at));
    assert!(headline(&r)[0].contains("= 125 %"), "{:?}", headline(&r));
    // At the run's 2 GHz: 128 GB/s.
    let r = run(Some(row()), l1_read(Bandwidth::default()));
    assert!(headline(&r)[0].contains("= 156 %"), "{:?}", headline(&r));
}

#[test]
fn unknown_core_gives_no_percentage() {
    let unknown = Bandwidth {
        ceiling_gbps: Nullable::Null,
        ..Bandwidth::default()
    };
    let r = run(None, l1_read(unknown));
    let h = headline(&r);
    assert!(
        h[0].contains("limit is unknown") && !h[0].contains('%'),
        "{h:?}"
    );
    let r = run(None, l1_read(Bandwidth::default()));
    assert!(!headline(&r)[0].contains('%'));
}

fn chase(run: &Run, size: u64, ns: f64) -> Record {
    Record {
        kernel: "chase_latency_64_scalar".into(),
        op: Op::Latency,
        size_bytes: Some(size),
        threads: 1,
        regime: Some(run.host.regime(size, 1, Curve::Latency)),
        ..Record::new(LatencyDetail {
            case_view: Some(View::Random),
            latency_ns: Nullable::Value(stats(ns)),
            ..LatencyDetail::default()
        })
    }
}

/// Issue 29, item 7: the DRAM read measured at several moments shows
/// its range, and says plainly when the memory was contended from
/// outside.
#[test]
fn the_dram_headline_says_its_range_and_when_memory_was_contended() {
    use crate::model::{Repeats, Turn};
    let mut run = guest();
    let mut r = read(&run, 1 << 30, 34.2);
    let turns = |gbps: &[f64]| {
        gbps.iter()
            .map(|&g| Turn {
                at: "again".into(),
                gbps: g,
                foreign_cpus: Some(0.0),
            })
            .collect()
    };
    r.repeats = Some(Repeats::of(turns(&[34.2, 32.1, 58.5]), 1, 2));
    run.records.push(r.clone());
    let h = headline(&run).join(" | ");
    assert!(
        h.contains("DRAM read 34.2 GB/s per core (32.1–58.5 GB/s over 3 measurements)"),
        "{h}"
    );
    assert!(h.contains("the memory was contended from outside"), "{h}");
    // Within the plateau's spread: the range, no claim.
    run.records[0].repeats = Some(Repeats::of(turns(&[34.2, 33.0]), 1, 2));
    let h = headline(&run).join(" | ");
    assert!(h.contains("(33.0–34.2 GB/s over 2 measurements)"), "{h}");
    assert!(!h.contains("contended"), "{h}");
}

#[test]
fn headlines_come_from_inside_the_measured_regimes() {
    let mut run = guest();
    // 3 MiB is L3 by label but still hits L2 (2 MiB) a third of the
    // time; 16 MiB is DRAM by label but still hits L3.
    for (size, g) in [
        (16u64 << 10, 300.0),
        (1 << 20, 120.0),
        (3 << 20, 60.0),
        (8 << 20, 29.6),
        (16 << 20, 24.0),
        (128 << 20, 15.6),
    ] {
        let r = read(&run, size, g);
        run.records.push(r);
    }
    let h = headline(&run).join(" · ");
    assert!(h.contains("L3 read 29.6 GB/s"), "{h}");
    assert!(h.contains("DRAM read 15.6 GB/s"), "{h}");
    // A chase that stops at 16 MiB gives no DRAM latency (125 ns
    // there against 170 in DRAM); one that reaches 64 MiB does.
    let r = chase(&run, 16 << 20, 125.0);
    run.records.push(r);
    assert!(!headline(&run).join(" ").contains("latency"));
    let r = chase(&run, 64 << 20, 168.0);
    run.records.push(r);
    assert!(headline(&run).join(" ").contains("DRAM latency 168 ns"));
}

fn copy(run: &Run, kernel: &str, size: u64, gbps: f64) -> Record {
    Record {
        kernel: kernel.into(),
        op: Op::Copy,
        pattern: Some(Pattern::Seq),
        width_bits: match kernel {
            "libc_memcpy" => None,
            "rep_movsb" => Some(8),
            _ => Some(512),
        },
        ..read(run, size, gbps)
    }
}

#[test]
fn the_dram_copy_headline_names_the_fastest_copy() {
    let mut run = guest();
    // libc wins at the top size (the Granite Rapids guest at 1 GiB);
    // the NT copy's better figure at a smaller size does not count.
    for (k, size, g) in [
        ("libc_memcpy", 1u64 << 30, 23.2),
        ("seq_copy_512_nt_avx512f", 1 << 30, 19.9),
        ("seq_copy_512_avx512f", 1 << 30, 12.0),
        ("seq_copy_512_nt_avx512f", 64 << 20, 25.0),
    ] {
        let r = copy(&run, k, size, g);
        run.records.push(r);
    }
    let h = headline(&run).join(" · ");
    assert!(
        h.contains("DRAM copy 23.2 GB/s (libc_memcpy; best bwscope kernel seq_copy_512_nt_avx512f 19.9 GB/s)"),
        "{h}"
    );
    // A bwscope kernel that beats libc is named, with libc beside it.
    let r = copy(&run, "rep_movsb", 1 << 30, 46.0);
    run.records.push(r);
    let h = headline(&run).join(" · ");
    assert!(
        h.contains("DRAM copy 46.0 GB/s (rep_movsb; DRAM memcpy 23.2 GB/s by libc)"),
        "{h}"
    );
    // Random-order copies and multi-thread copies are not candidates.
    let mut r = copy(&run, "rand_copy_512_avx512f", 1 << 30, 90.0);
    r.pattern = Some(Pattern::Random);
    run.records.push(r);
    let mut r = copy(&run, "seq_copy_512_avx512f", 1 << 30, 80.0);
    r.threads = 2;
    run.records.push(r);
    assert!(headline(&run)
        .join(" ")
        .contains("DRAM copy 46.0 GB/s (rep_movsb"));
}
