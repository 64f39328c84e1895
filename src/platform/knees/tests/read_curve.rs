//! Knees of the read curve, and regimes from both curves.

use super::*;

/// This Zen 4 guest's stored probe (2026-11-22): random-chase latency jumps
/// past 6 MiB (TLB reach under nested paging), but sequential reads keep
/// L3 rates (99 GB/s at 8 MiB, 93 at 12 MiB in the sweep) and only fall
/// from 16 MiB. Each kind of record follows its own curve: latency records
/// call 12 MiB DRAM (the chase pays DRAM latency there), bandwidth records
/// keep CPUID's 32 MiB (the read curve ends its plateau at 16 MiB, within
/// 2× of CPUID's) and call 64 MiB, read at DRAM's rate, DRAM.
#[test]
fn each_kind_of_record_follows_its_own_curve() {
    let bandwidth = points(&[
        (16 * K, 223.6),
        (32 * K, 174.8),
        (64 * K, 105.3),
        (128 * K, 104.1),
        (256 * K, 104.1),
        (512 * K, 113.1),
        (M, 101.9),
        (2 * M, 99.7),
        (4 * M, 99.7),
        (8 * M, 98.9),
        (16 * M, 80.7),
        (32 * M, 51.8),
        (64 * M, 29.8),
        (128 * M, 29.4),
        (256 * M, 28.2),
    ]);
    let cpuid = [(1, 32 * K), (2, M), (3, 32 * M)];
    let mut p = KneeProbe {
        latency: this_guest(0),
        bandwidth,
        ..KneeProbe::default()
    };
    let mut h = host_with(&cpuid);
    analyse(&mut p, &h);
    let l3 = p
        .knees
        .iter()
        .find(|k| k.level == Some(3))
        .cloned()
        .expect("L3 knee");
    assert!((6 * M..=10 * M).contains(&l3.end_bytes), "{l3:?}");
    assert_eq!(l3.confirmed, Some(false), "{l3:?}");
    assert_eq!(p.knees[0].confirmed, Some(true), "L1 ends with a drop");
    let bw = p.bandwidth_knee.clone().expect("read curve knee");
    assert_eq!(bw.end_bytes, 16 * M, "{bw:?}");
    assert_eq!(bw.dram_from_bytes, 64 * M, "{bw:?}");
    assert_eq!(bw.level, Some(3));
    assert_eq!(p.note, None, "{:?}", p.note);
    apply(&mut h, p);
    assert_eq!(h.caches[2].effective_size_bytes, Some(l3.end_bytes));
    assert_eq!(h.caches[2].bandwidth_size_bytes, Some(16 * M));
    assert_eq!(h.regime(12 * M, 1, Curve::Latency), "DRAM");
    assert_eq!(h.regime(12 * M, 1, Curve::Bandwidth), "L3");
    assert_eq!(h.regime(32 * M, 1, Curve::Bandwidth), "L3");
    assert_eq!(h.regime(64 * M, 1, Curve::Bandwidth), "DRAM");
    // No run-level warning: the read curve agrees with CPUID's L3.
    assert!(h.cache_warnings().is_empty(), "{:?}", h.cache_warnings());
}

/// The Granite Rapids guest of issue 21 (CPUID L3 480 MiB), from the
/// figures quoted there: the chase's L3 plateau is 44.7 ns to 20 MiB, then
/// 159 ns; sequential reads stay at ~30 GB/s to ~130 MiB, read 19.5 GB/s
/// at 256 MiB, 15.9 at 362 MiB and 15.1 at 1 GiB. Points between are
/// filled in on the same plateaus, on the probe's grids.
pub(crate) fn gnr_issue21_probe() -> KneeProbe {
    let latency = curve(&grid(GIB), |s| match s {
        s if s <= 48 * K => 1.45,
        s if s <= 2 * M => 4.6,
        s if s <= 5 * M / 2 => 20.0,
        s if s <= 3 * M => 30.0,
        s if s <= 20 * M => 44.7,
        s if s <= 24 * M => 110.0,
        _ => 159.0,
    });
    let bandwidth = points(&[
        (16 * K, 320.0),
        (32 * K, 318.0),
        (64 * K, 140.0),
        (128 * K, 135.0),
        (256 * K, 132.0),
        (512 * K, 130.0),
        (M, 128.0),
        (1448 * K, 125.0),
        (2 * M, 110.0),
        (2896 * K, 45.0),
        (4 * M, 31.0),
        (5793 * K, 30.4),
        (8 * M, 30.2),
        (11586 * K, 30.1),
        (16 * M, 30.3),
        (23171 * K, 30.0),
        (32 * M, 29.9),
        (46341 * K, 30.0),
        (64 * M, 29.8),
        (92682 * K, 29.6),
        (128 * M, 29.2),
        (185364 * K, 25.0),
        (256 * M, 19.5),
        (370728 * K, 15.9),
        (512 * M, 15.5),
        (741456 * K, 15.3),
        (GIB, 15.1),
    ]);
    KneeProbe {
        measured_at: "2026-01-01T00:00:00Z".into(),
        source: "this run".into(),
        latency,
        bandwidth,
        ..KneeProbe::default()
    }
}

#[test]
fn the_granite_rapids_guest_labels_by_both_curves() {
    let mut p = gnr_issue21_probe();
    let mut h = gnr_vm_host();
    analyse(&mut p, &h);
    let l3 = p
        .knees
        .iter()
        .find(|k| k.level == Some(3))
        .cloned()
        .unwrap();
    assert_eq!(l3.end_bytes, 20 * M, "{:?}", p.knees);
    assert!((l3.latency_ns - 44.7).abs() < 0.1 && l3.next_latency_ns > 150.0);
    // Read bandwidth does not drop at the latency knee …
    assert_eq!(l3.confirmed, Some(false));
    // … but leaves its ~30 GB/s plateau past 128 MiB, and reads at DRAM's
    // rate (15.3 GB/s) from 362 MiB.
    let bw = p.bandwidth_knee.clone().unwrap();
    assert!((128 * M..=182 * M).contains(&bw.end_bytes), "{bw:?}");
    assert_eq!(bw.level, Some(3));
    assert!((bw.plateau_gbps - 29.5).abs() < 0.5, "{bw:?}");
    assert!((bw.dram_gbps - 15.3).abs() < 0.01, "{bw:?}");
    assert_eq!(bw.dram_from_bytes, 370728 * K);
    apply(&mut h, p);
    // Latency records by the latency knee: 32 MiB (159 ns) is DRAM.
    assert_eq!(h.regime(16 * M, 1, Curve::Latency), "L3");
    assert_eq!(h.regime(32 * M, 1, Curve::Latency), "DRAM");
    // Bandwidth records by the read curve: 32–128 MiB still read at L3's
    // rate; 185–362 MiB, which CPUID's 480 MiB called L3, do not.
    assert_eq!(h.regime(32 * M, 1, Curve::Bandwidth), "L3");
    assert_eq!(h.regime(128 * M, 1, Curve::Bandwidth), "L3");
    for s in [185 * M, 256 * M, 362 * M, GIB] {
        assert_eq!(h.regime(s, 1, Curve::Bandwidth), "DRAM", "{s}");
    }
    // The run-level warning names the size sweeps follow.
    assert!(h.cache_warnings().iter().any(|w| matches!(
        w,
        crate::model::Warning::CpuidL3NotVisible { measured_bytes, .. } if *measured_bytes == bw.end_bytes
    )));
}

#[test]
fn a_size_read_at_drams_rate_is_never_a_cache() {
    // CPUID's 32 MiB L3 would call 32 MiB a cache, but the read curve is
    // within 10 % of its DRAM plateau there: bandwidth records say DRAM,
    // even though the read knee (16 MiB) is within 2× of CPUID's size.
    let mut p = KneeProbe {
        latency: zen4(),
        bandwidth: points(&[
            (M, 100.0),
            (2 * M, 100.0),
            (4 * M, 99.0),
            (8 * M, 98.0),
            (16 * M, 90.0),
            (24 * M, 40.0),
            (32 * M, 31.0),
            (64 * M, 29.5),
            (128 * M, 29.0),
        ]),
        ..KneeProbe::default()
    };
    let mut h = host_with(&[(1, 32 * K), (2, M), (3, 32 * M)]);
    analyse(&mut p, &h);
    let bw = p.bandwidth_knee.clone().unwrap();
    assert_eq!(
        (bw.end_bytes, bw.dram_from_bytes),
        (16 * M, 32 * M),
        "{bw:?}"
    );
    apply(&mut h, p);
    // The read knee labels instead: 16 MiB is L3, 24 MiB (40 GB/s, nearer
    // DRAM's rate than the plateau's) is not.
    assert_eq!(h.regime(16 * M, 1, Curve::Bandwidth), "L3");
    assert_eq!(h.regime(24 * M, 1, Curve::Bandwidth), "DRAM");
    assert_eq!(h.regime(32 * M, 1, Curve::Bandwidth), "DRAM");
    assert_eq!(h.regime(32 * M, 1, Curve::Latency), "L3", "{:?}", h.caches);
    // Two threads sharing the L3: 8 MiB each is 16 MiB of it.
    assert_eq!(h.regime(8 * M, 2, Curve::Bandwidth), "L3");
    assert_eq!(h.regime(16 * M, 2, Curve::Bandwidth), "DRAM");
}

#[test]
fn a_read_curve_without_a_dram_plateau_has_no_knee() {
    // Still falling at its last points (the probe stopped too early), or
    // too short: nothing is claimed.
    let falling = points(&[
        (4 * M, 30.0),
        (8 * M, 30.0),
        (16 * M, 30.0),
        (32 * M, 24.0),
        (64 * M, 19.0),
        (128 * M, 15.0),
    ]);
    assert_eq!(bandwidth_knee(&falling), None);
    assert_eq!(bandwidth_knee(&falling[..3]), None);
    // Flat all the way: no drop, no knee.
    let flat = curve(&grid(GIB), |_| 20.0);
    assert_eq!(bandwidth_knee(&flat), None);
    // Junk is ignored, never a panic.
    let junk = points(&[
        (0, 1.0),
        (M, f64::NAN),
        (2 * M, -1.0),
        (4 * M, f64::INFINITY),
    ]);
    assert_eq!(bandwidth_knee(&junk), None);
}

#[test]
fn a_slowed_read_point_moves_the_read_knee_at_most_one_step() {
    // Interference only lowers a reading: a slowed point on the plateau is
    // lifted by a later, faster one; the plateau's last point, slowed, can
    // only pull the knee one grid step down.
    let clean = gnr_issue21_probe().bandwidth;
    let want = bandwidth_knee(&clean).unwrap();
    for i in 0..clean.len() {
        let mut c = clean.clone();
        c[i].value *= 0.6;
        let Some(got) = bandwidth_knee(&c) else {
            // Only a slowed tail can hide the DRAM plateau.
            assert!(i >= clean.len() - 2, "slowed point {i}: no knee");
            continue;
        };
        let r = got.end_bytes as f64 / want.end_bytes as f64;
        assert!((0.7..=1.0).contains(&r), "slowed point {i}: {got:?}");
    }
}

/// The knee probe of this 32 MiB Zen 5 guest in a survey while other
/// engineers built and tested on it: DRAM's rate swung between 46 GB/s
/// (64–128 MiB) and 22–26 (181–256 MiB), which reads like one more
/// plateau ending at 128 MiB. A cache holds no more than its size: the
/// read knee past 1.5× CPUID's L3 is not taken, and 64 MiB stays DRAM.
#[test]
fn a_busy_machines_dram_swing_is_not_a_cache() {
    let bandwidth = points(&[
        (16 * K, 577.3),
        (32 * K, 576.1),
        (64 * K, 211.5),
        (128 * K, 214.9),
        (256 * K, 215.7),
        (512 * K, 282.2),
        (M, 180.0),
        (1449 * K, 139.8),
        (2 * M, 127.7),
        (2897 * K, 125.9),
        (4 * M, 127.8),
        (5793 * K, 118.6),
        (8 * M, 120.8),
        (11586 * K, 115.0),
        (16 * M, 110.4),
        (23171 * K, 100.6),
        (32 * M, 78.0),
        (46341 * K, 71.7),
        (64 * M, 54.9),
        (92682 * K, 45.9),
        (128 * M, 45.3),
        (185364 * K, 22.4),
        (256 * M, 26.1),
    ]);
    let mut p = KneeProbe {
        latency: zen4(),
        bandwidth,
        ..KneeProbe::default()
    };
    let mut h = host_with(&[(1, 48 * K), (2, M), (3, 32 * M)]);
    analyse(&mut p, &h);
    let bw = p.bandwidth_knee.clone().unwrap();
    assert_eq!((bw.end_bytes, bw.level), (128 * M, None), "{bw:?}");
    assert!(
        p.note.as_deref().unwrap().contains("keep CPUID's L3"),
        "{:?}",
        p.note
    );
    apply(&mut h, p);
    assert_eq!(h.llc_size(Curve::Bandwidth), Some(32 * M));
    assert_eq!(h.regime(64 * M, 1, Curve::Bandwidth), "DRAM");
    assert!(h.cache_warnings().is_empty());
}
