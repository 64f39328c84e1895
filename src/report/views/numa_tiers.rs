//! What `numa --tiers` adds to the matrix view: each cell's memory kind
//! beside its HMAT claim, the loaded-latency curves, and the interleave
//! sweep with its best ratio and the weights a user would write.

use super::rate;
use crate::model::detail::NumaDetail;
use crate::model::{Op, Record, Run, Status};
use crate::report::grid::{Block, Table};

fn detail(r: &Record) -> NumaDetail {
    r.detail.get::<NumaDetail>().cloned().unwrap_or_default()
}

/// Whether a record belongs to these tables rather than the matrices.
pub fn is_tier_extra(r: &Record) -> bool {
    r.kernel.starts_with("loaded_") || detail(r).case_interleave.is_some()
}

/// A table of these, its grid indented under its title.
fn table(header: &[&str], title: String) -> Table {
    let mut t = Table::new(header.iter().map(|h| h.to_string()).collect()).titled(title);
    t.indent = 2;
    t
}

/// The tables; empty when the run has none of it.
pub fn render(run: &Run, recs: &[&Record]) -> Vec<Block> {
    let mut out = Vec::new();
    if run
        .options_as::<crate::model::options::Numa>()
        .tiers
        .is_some()
    {
        out.extend(claims(run, recs));
    }
    out.extend(curves(run, recs));
    out.extend(interleave(run, recs));
    out.into_iter().map(Block::Table).collect()
}

fn claims(run: &Run, recs: &[&Record]) -> Option<Table> {
    let u = run.display_units;
    let mut t = table(
        &["cell", "kind", "measured best", "HMAT claims", "worse by"],
        format!(
            "tiers: each cell beside what HMAT claims ({}; a cell more than 25 % worse carries a below_hmat warning)",
            u.label()
        ),
    );
    for r in recs.iter().filter(|r| r.status == Status::Ok) {
        let d = detail(r);
        let (Some(kind), Some(c), Some(m)) = (&d.memory_kind, d.case_cpu_node, d.case_memory_node)
        else {
            continue;
        };
        if !matches!(r.op, Op::Read | Op::Latency) {
            continue;
        }
        let (measured, worse) = match (&r.op, d.hmat_claim) {
            (Op::Read, claim) => {
                let b = r.gbps.map_or(0.0, |g| g.best);
                (rate(b, u), claim.map(|c| (1.0 - b / c) * 100.0))
            }
            (_, claim) => {
                let b = d.latency_ns.value().map_or(0.0, |s| s.best);
                (format!("{b:.1} ns"), claim.map(|c| (b / c - 1.0) * 100.0))
            }
        };
        t.rows.push(vec![
            format!("{c} → {m} {}", r.op),
            kind.clone(),
            measured,
            d.hmat_claim.map_or("-".into(), |c| {
                if r.op == Op::Read {
                    rate(c, u)
                } else {
                    format!("{c:.0} ns")
                }
            }),
            worse.map_or("-".into(), |w| format!("{w:.0} %")),
        ]);
    }
    (!t.rows.is_empty()).then_some(t)
}

fn curves(run: &Run, recs: &[&Record]) -> Option<Table> {
    let u = run.display_units;
    let mut t = table(
        &["load", "delay ns", "injected", "latency ns best"],
        format!(
            "loaded latency per cell (probe on the node's first cpu, load on the others, injected {})",
            u.label()
        ),
    );
    for r in recs.iter().filter(|r| r.kernel.starts_with("loaded_")) {
        let d = detail(r);
        let lat = match r.status {
            Status::Ok => d
                .latency_ns
                .value()
                .map_or("-".into(), |s| format!("{:.1}", s.best)),
            _ => format!("skipped: {}", r.reason.as_deref().unwrap_or("")),
        };
        t.rows.push(vec![
            d.case_load.unwrap_or_default(),
            d.case_delay_ns
                .value()
                .map_or("unloaded".into(), |d| d.to_string()),
            d.injected_gbps.value().map_or("0".into(), |g| rate(g, u)),
            lat,
        ]);
    }
    (!t.rows.is_empty()).then_some(t)
}

fn interleave(run: &Run, recs: &[&Record]) -> Option<Table> {
    let u = run.display_units;
    let mut t = table(
        &[
            "nodes fast+slow",
            "ratio",
            "method",
            "pages on fast",
            "meant",
            "read best",
            "gain vs fast",
        ],
        format!(
            "interleave across tiers (read {}; pages counted with move_pages)",
            u.label()
        ),
    );
    let mut best = Vec::new();
    let mut skipped = Vec::new();
    for r in recs {
        let d = detail(r);
        let Some(label) = &d.case_interleave else {
            continue;
        };
        let nodes = d.case_memory_nodes.clone().unwrap_or_default();
        if r.status != Status::Ok {
            skipped.push(format!(
                "  {nodes} {label}: skipped: {}",
                r.reason.as_deref().unwrap_or("")
            ));
            continue;
        }
        let fast = d.interleave_nodes.as_ref().and_then(|n| n.first().copied());
        let on_fast = d.interleave_pages.as_ref().and_then(|p| {
            let total: u64 = p.iter().map(|x| x.1).sum();
            let f = p.iter().find(|x| Some(x.0) == fast).map_or(0, |x| x.1);
            (total > 0).then(|| f as f64 / total as f64 * 100.0)
        });
        t.rows.push(vec![
            nodes.clone(),
            label.clone(),
            d.interleave_method.clone().unwrap_or_default(),
            on_fast.map_or("?".into(), |f| format!("{f:.1} %")),
            d.interleave_expected_fast
                .map_or("?".into(), |f| format!("{:.1} %", f * 100.0)),
            r.gbps.map_or("-".into(), |g| rate(g.best, u)),
            d.interleave_gain_percent
                .value()
                .map_or("-".into(), |g| format!("{g:+.1} %")),
        ]);
        if let Some(w) = d.interleave_weights_to_write {
            best.push((nodes, label.clone(), w));
        }
    }
    if t.rows.is_empty() && skipped.is_empty() {
        return None;
    }
    t.notes = skipped;
    for (nodes, label, lines) in best {
        t.notes.push(format!(
            "  best over {nodes}: {label}; to make it the default (bwscope never writes them):"
        ));
        t.notes.extend(lines.iter().map(|l| format!("    {l}")));
    }
    Some(t)
}
