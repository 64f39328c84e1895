//! Which level a working set was served by, beside the level its size
//! names. In a cloud guest the host's other tenants share the last-level
//! cache: a size CPUID's caches call L3 can read at DRAM's latency or
//! bandwidth (a 2-vCPU Zen 3 guest's chase read 150–170 ns at 4–32 MiB,
//! labelled L3, against 175–186 ns in DRAM and 19 ns at 2 MiB). Such a
//! record keeps its nominal level and gets a `reads_as_dram` warning
//! saying what it read like, instead of wearing the nominal label alone.
//!
//! Only the last cache against DRAM: their plateaus lie 3× or more apart
//! in latency and bandwidth on every core in `uarch-limits` (L2 and L3
//! bandwidth can lie within 20 %, as on Zen 4, where no rule of this kind
//! tells an evicted L2 from a slow one).

use std::collections::BTreeMap;

use crate::model::{Curve, Host, Op, Record, Regime, Status, Warning};

/// A last-cache size reads as DRAM when its median is within these of
/// DRAM's: bandwidth at most 1.25 × DRAM's best median, latency at least
/// 0.8 × DRAM's lowest median. The plateaus are ≥ 3× apart, so a set the
/// cache still serves (even half of it) stays clear of both.
pub const BANDWIDTH_WITHIN: f64 = 1.25;
pub const LATENCY_WITHIN: f64 = 0.8;

/// A record's figure: median GB/s (higher is better) or median ns. Of
/// the bandwidths only cached reads tell which level served the set: a
/// non-temporal kernel writes to DRAM at every size by design (a quiet
/// Zen 4 guest's `seq_write_512_nt` read 28.2 GB/s at 2.8-16 MiB and in
/// DRAM alike), and how a copy or a write reaches memory depends on
/// write-back and on the copy's own protocol (`rep movsb` and libc switch
/// to non-temporal stores past a size of their own).
fn figure(r: &Record) -> Option<(f64, Curve)> {
    match (&r.gbps, r.detail.latency_ns()) {
        (Some(g), _) if r.op == Op::Read && r.nontemporal != Some(true) => {
            Some((g.median, Curve::Bandwidth))
        }
        (Some(_), _) => None,
        (None, Some(l)) => Some((l.median, Curve::Latency)),
        _ => None,
    }
}

/// The case without its size: records of one key form one curve.
fn curve_key(r: &Record) -> String {
    let mut key = format!("{}/{}/t{}", r.suite(), r.kernel, r.threads);
    if let Some(m) = &r.memory {
        key.push_str(&format!("/{}", m.kind));
    }
    for p in r.detail.case() {
        key.push_str(&format!("/{}={}", p.name, p.value));
    }
    key
}

/// The `reads_as_dram` warning for each record (by index) whose size lies
/// well inside the last cache (past twice the level below, at most half
/// the cache) but whose figure is DRAM's, judged against the same curve's
/// records well inside DRAM.
pub fn reads_as_dram(records: &[Record], host: &Host) -> Vec<(usize, Warning)> {
    let mut curves: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, r) in records.iter().enumerate() {
        if r.status == Status::Ok && r.threads == 1 && r.size_bytes.is_some() && figure(r).is_some()
        {
            curves.entry(curve_key(r)).or_default().push(i);
        }
    }
    let mut out = Vec::new();
    for idx in curves.values() {
        let Some((_, curve)) = figure(&records[idx[0]]) else {
            continue;
        };
        let inside = |i: &usize, regime: &Regime| {
            let r = &records[*i];
            r.regime.as_ref() == Some(regime)
                && r.size_bytes
                    .is_some_and(|s| host.well_inside(s, regime, 2, curve))
        };
        let dram: Vec<f64> = idx
            .iter()
            .filter(|i| inside(i, &Regime::Dram))
            .filter_map(|i| figure(&records[*i]).map(|f| f.0))
            .collect();
        let reference = match curve {
            Curve::Bandwidth => dram.iter().copied().reduce(f64::max),
            Curve::Latency => dram.iter().copied().reduce(f64::min),
        };
        let Some(dram_figure) = reference.filter(|d| *d > 0.0) else {
            continue;
        };
        let Some(last) = host.llc_size(curve) else {
            continue;
        };
        let last_regime = host.regime_of(last, 1, curve);
        for i in idx {
            let r = &records[*i];
            let (Some(regime), Some(size)) = (r.regime.as_ref(), r.size_bytes) else {
                continue;
            };
            if Some(regime) != last_regime.as_ref()
                || *regime == Regime::Dram
                || !inside(i, regime)
                || size > last / 2
            {
                continue;
            }
            let Some((f, _)) = figure(r) else { continue };
            let like_dram = match curve {
                Curve::Bandwidth => f <= BANDWIDTH_WITHIN * dram_figure,
                Curve::Latency => f >= LATENCY_WITHIN * dram_figure,
            };
            if like_dram {
                out.push((
                    *i,
                    Warning::ReadsAsDram {
                        level: regime.clone(),
                        measured: f,
                        dram: dram_figure,
                        unit: match curve {
                            Curve::Bandwidth => "GB/s".into(),
                            Curve::Latency => "ns".into(),
                        },
                    },
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
