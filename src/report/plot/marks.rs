//! What a line chart draws beside its series: the computed limits of the
//! kernels it shows, and the cache boundaries of the host.

use super::{LimitLine, Marker};
use crate::model::{BoundBy, Curve, Op, Record, Regime, Run};

/// One labelled line per regime the records reach with a known limit,
/// spanning that regime's sizes, named by the ceiling it is: the regime's
/// own limit, read from the records well inside it — past twice the level
/// below, where a record no longer takes that level's higher limit
/// (`suites::record::limit`) — and from its reads where the chart has
/// reads (the headline op, as the summary judges it), else the highest
/// (the widest kernel's). Issue 29: a survey's L2 and L3 lines were drawn
/// at the 236 GB/s of a copy at the L1 edge, labelled "L1 store ports",
/// while the summary said L2 was bound by the L2→L1 fill at 118.
pub fn limit_lines(run: &Run, recs: &[&Record]) -> Vec<LimitLine> {
    let mut out: Vec<LimitLine> = Vec::new();
    let below = |regime: &Regime| match regime {
        Regime::L2 => Some(1),
        Regime::L3 => Some(2),
        Regime::Dram => run.host.data_caches().map(|c| c.level).max(),
        _ => None,
    };
    for regime in &Regime::ALL {
        let here: Vec<&&Record> = recs
            .iter()
            .filter(|r| r.regime.as_ref() == Some(regime) && r.size_bytes.is_some())
            .collect();
        let edge = below(regime)
            .and_then(|l| run.host.cache_size(l, Curve::Bandwidth))
            .map_or(0, |s| s.saturating_mul(2));
        let with_limit = |r: &&&Record| r.limit_gbps.is_some() && r.bound_by.is_some();
        let inside: Vec<&&Record> = here
            .iter()
            .copied()
            .filter(|r| r.size_bytes.is_some_and(|s| s > edge))
            .filter(with_limit)
            .collect();
        // Only records at the edge: theirs is the best there is.
        let pool = if inside.is_empty() {
            here.iter().copied().filter(with_limit).collect()
        } else {
            inside
        };
        let reads: Vec<&&Record> = pool.iter().copied().filter(|r| r.op == Op::Read).collect();
        let pool = if reads.is_empty() { pool } else { reads };
        let top = pool
            .iter()
            .filter_map(|r| Some((r.limit_gbps?, r.bound_by?)))
            .max_by(|a, b| a.0.total_cmp(&b.0));
        let Some((gbps, bound)) = top else {
            continue;
        };
        let sizes = here.iter().filter_map(|r| r.size_bytes);
        let (x0, x1) = sizes.fold((u64::MAX, 0), |(a, b), s| (a.min(s), b.max(s)));
        let what = if bound == BoundBy::DramChannels {
            "DRAM peak".to_string()
        } else {
            bound.label().to_string()
        };
        let g = if gbps >= 100.0 {
            format!("{gbps:.0}")
        } else {
            format!("{gbps:.1}")
        };
        out.push(LimitLine {
            x0: x0 as f64,
            x1: x1 as f64,
            gbps,
            label: format!("{regime} limit: {what} {g} GB/s"),
        });
    }
    out
}

/// One boundary per data/unified cache level: where the knee probe found
/// it ends for records of `curve` (`effective_size_bytes` for latency,
/// `bandwidth_size_bytes` for bandwidth) with CPUID's size as a faint line,
/// or CPUID's size alone where nothing was measured. A faint line within
/// 1.5× of the measured one goes unlabelled (the labels would overlap).
pub fn cache_markers(run: &Run, curve: Curve) -> Vec<Marker> {
    let size = crate::util::units::format_bytes;
    let mut out = Vec::new();
    for c in run.host.data_caches().filter(|c| c.size_bytes > 0) {
        let Some(e) = c.measured(curve).filter(|&e| e > 0) else {
            out.push(Marker {
                x: c.size_bytes as f64,
                label: format!("L{} {}", c.level, size(c.size_bytes)),
                faint: false,
            });
            continue;
        };
        out.push(Marker {
            x: e as f64,
            label: format!("L{} {} measured", c.level, size(e)),
            faint: false,
        });
        if e != c.size_bytes {
            let far = (e as f64 / c.size_bytes as f64).log2().abs() > 1.5f64.log2();
            out.push(Marker {
                x: c.size_bytes as f64,
                label: if far {
                    format!("L{} {} CPUID", c.level, size(c.size_bytes))
                } else {
                    String::new()
                },
                faint: true,
            });
        }
    }
    out
}
