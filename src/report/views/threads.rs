//! The thread-scaling table: one block per (kernel, total size), one row
//! per thread count.

use super::rate;
use crate::model::detail::ThreadsDetail;
use crate::model::{Record, Run, Status};
use crate::report::grid::{Block, Table};
use crate::util::units::format_bytes;

/// This suite's view (it takes the common byte footer).
pub const VIEW: super::View = super::View {
    render,
    own_convention: false,
};

/// The scaling table: one block per (kernel, total size), one row per
/// thread count.
pub fn render(run: &Run, recs: &[&Record]) -> Vec<Block> {
    let u = run.display_units;
    let ok: Vec<&Record> = recs
        .iter()
        .copied()
        .filter(|r| r.status == Status::Ok)
        .collect();
    let detail = |r: &Record| r.detail.get::<ThreadsDetail>().cloned().unwrap_or_default();
    let total_of = |r: &Record| detail(r).total_bytes;
    let mut keys: Vec<(String, u64)> = Vec::new();
    for r in &ok {
        let k = (r.kernel.clone(), total_of(r).unwrap_or(0));
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys.sort_by_key(|k| k.1);
    let mut t = Table::new(vec![
        "kernel".to_string(),
        "total ws".into(),
        "threads".into(),
        "cpus".into(),
        "per thread".into(),
        "regime".into(),
        "aggregate best".into(),
        "median".into(),
        "per thread".into(),
        "slowest thread".into(),
        "speedup".into(),
        "efficiency".into(),
        "skew % sample".into(),
    ])
    .gap()
    .titled(format!(
        "thread scaling, {} (aggregate = all bytes / earliest start → latest end; per thread = aggregate / threads; slowest thread = lowest own-interval rate)",
        u.label()
    ));
    for (kernel, total) in &keys {
        let mut recs: Vec<&&Record> = ok
            .iter()
            .filter(|r| &r.kernel == kernel && total_of(r) == Some(*total))
            .collect();
        recs.sort_by_key(|r| r.threads);
        let one = recs
            .iter()
            .find(|r| r.threads == 1)
            .and_then(|r| r.gbps)
            .map(|g| g.best);
        for r in recs {
            let g = r.gbps.expect("ok records have stats");
            let d = detail(r);
            let eff = d.scaling_efficiency.value();
            t.rows.push(vec![
                kernel.clone(),
                format_bytes(*total),
                r.threads.to_string(),
                crate::util::cpulist::format_cpu_list(&r.cpus),
                r.size_bytes.map_or("-".into(), format_bytes),
                r.regime.as_ref().map(|g| g.to_string()).unwrap_or_default(),
                rate(g.best, u),
                rate(g.median, u),
                rate(g.best / r.threads as f64, u),
                // Each thread's own best rate over its own interval: a
                // thread far below the others was starved (SMT sibling,
                // remote memory, preemption).
                r.per_thread_gbps
                    .iter()
                    .copied()
                    .reduce(f64::min)
                    .map_or("-".into(), |v| rate(v, u)),
                one.map_or("-".into(), |o| format!("{:.2}x", g.best / o)),
                eff.map_or("-".into(), |e| format!("{:.0} %", e * 100.0)),
                d.start_skew_fraction
                    .map_or("-".into(), |f| format!("{:.3}", f * 100.0)),
            ]);
        }
    }
    // Every ok record is a row: no row, no title either.
    if t.rows.is_empty() {
        return Vec::new();
    }
    vec![Block::Table(t)]
}
