//! The human view of a numa run: matrices, the pair table, the loaded
//! curve, distances and notes.

use super::rate;
use crate::model::detail::NumaDetail;
use crate::model::options::{self, NumaModeKind};
use crate::model::{Record, Run, Status};
use crate::report::grid::{Block, Table};

/// The kernel name of the latency cells (the pointer chase).
const CHASE_KERNEL: &str = "chase_64_scalar";

fn cell<'a>(recs: &[&'a Record], kernel: &str, c: u32, m: u32) -> Option<&'a Record> {
    recs.iter()
        .find(|r| {
            r.kernel == kernel
                && r.placement.as_ref().and_then(|p| p.cpu_node) == Some(c)
                && r.placement.as_ref().and_then(|p| p.memory_node) == Some(m)
        })
        .copied()
}

fn latency_of(r: &Record) -> Option<crate::model::Stats> {
    r.detail.latency_ns().copied()
}

/// The record's numa detail (empty for a record of another suite).
fn detail(r: &Record) -> NumaDetail {
    r.detail.get::<NumaDetail>().cloned().unwrap_or_default()
}

/// This suite's view (it takes the common byte footer).
pub const VIEW: super::View = super::View {
    render,
    own_convention: false,
};

/// Matrices, scenario and load tables, then notes.
pub fn render(run: &Run, recs: &[&Record]) -> Vec<Block> {
    let opts: options::Numa = run.options_as();
    let mode = opts.mode.mode;
    let all = recs;
    let (_, recs): (Vec<&Record>, Vec<&Record>) = recs
        .iter()
        .partition(|r| mode == NumaModeKind::Matrix && super::numa_tiers::is_tier_extra(r));
    let recs = &recs[..];
    let mut out = match mode {
        NumaModeKind::Matrix => matrices(run, recs, &opts.cpu_nodes, &opts.memory_nodes),
        NumaModeKind::WritePair => pairs(run, recs),
        NumaModeKind::Load => loaded(run, recs, &opts),
    };
    out.extend(super::numa_tiers::render(run, all));
    out.extend(notes(run, recs, &opts));
    out
}

/// ` (97% placed)` when the pages were not all on the intended node.
fn mark(r: &Record) -> String {
    match r.placement.as_ref().and_then(|p| p.verified_fraction) {
        Some(f) if f < 0.999 => format!(" ({:.0}% placed)", f * 100.0),
        _ => String::new(),
    }
}

/// One cpu node × memory node matrix per kernel.
fn matrices(run: &Run, recs: &[&Record], cpu_nodes: &[u32], mem_nodes: &[u32]) -> Vec<Block> {
    let u = run.display_units;
    let mut out = Vec::new();
    let mut kernels: Vec<String> = Vec::new();
    for r in recs {
        if !kernels.contains(&r.kernel) {
            kernels.push(r.kernel.clone());
        }
    }
    for k in &kernels {
        let lat = k == CHASE_KERNEL;
        let title = if lat {
            "latency, ns per dependent load (pointer chase, 1 thread), best/median".to_string()
        } else {
            let threads = recs
                .iter()
                .find(|r| &r.kernel == k)
                .map_or(0, |r| r.threads);
            format!(
                "{}: bandwidth {} best/median, {} thread(s) per cell",
                k.trim_start_matches("mix_"),
                u.label(),
                threads
            )
        };
        let mut t = Table::new({
            let mut h = vec!["cpu \\ mem".to_string(), String::new()];
            h.extend(mem_nodes.iter().map(|m| format!("node {}", m)));
            h
        })
        .gap()
        .titled(format!("{} (rows: cpu node, columns: memory node)", title));
        for &c in cpu_nodes {
            let mut row = vec![format!("node {}", c), String::new()];
            for &m in mem_nodes {
                row.push(match cell(recs, k, c, m) {
                    Some(r) if r.status == Status::Ok => {
                        if lat {
                            latency_of(r).map_or("-".into(), |s| {
                                format!("{:.1}/{:.1}{}", s.best, s.median, mark(r))
                            })
                        } else {
                            r.gbps.map_or("-".into(), |g| {
                                format!("{}/{}{}", rate(g.best, u), rate(g.median, u), mark(r))
                            })
                        }
                    }
                    Some(_) => "skipped".into(),
                    None => "-".into(),
                });
            }
            t.rows.push(row);
        }
        out.push(Block::Table(t));
    }
    out
}

/// The write-pair table: local/local against local/remote.
fn pairs(run: &Run, recs: &[&Record]) -> Vec<Block> {
    let u = run.display_units;
    let mut t = Table::new(vec![
        "pair".to_string(),
        "memory (t0/t1)".into(),
        "total s best".into(),
        "median".into(),
        format!("{} best", u.label()),
        "vs local/local".into(),
        "placed".into(),
    ])
    .gap()
    .titled("write-pair: two threads on node 0, same work in every case; total time = first start → last end");
    for r in recs.iter().filter(|r| r.status == Status::Ok) {
        let d = detail(r);
        let total = d.total_seconds;
        t.rows.push(vec![
            r.kernel.trim_end_matches("_pair").to_string(),
            d.case_memory_nodes.unwrap_or_else(|| "?".into()),
            total.map_or("-".into(), |t| format!("{:.4}", t.best)),
            total.map_or("-".into(), |t| format!("{:.4}", t.median)),
            r.gbps.map_or("-".into(), |g| rate(g.best, u)),
            d.percent_vs_local
                .value()
                .map_or("(baseline)".into(), |p| format!("{:+.1} %", p)),
            r.placement
                .as_ref()
                .and_then(|p| p.verified_fraction)
                .map_or("-".into(), |f| format!("{:.3}", f)),
        ]);
    }
    vec![Block::Table(t)]
}

/// The loaded-latency (or bandwidth) curve.
fn loaded(run: &Run, recs: &[&Record], opts: &options::Numa) -> Vec<Block> {
    let u = run.display_units;
    let probe_lat = recs.iter().any(|r| r.op == crate::model::Op::Latency);
    let title = format!(
            "loaded {}: probe on cpu {}, memory on node {}, load {} (delay after every 4 KiB each load thread streams)",
            if probe_lat { "latency" } else { "bandwidth" },
            opts.mode.probe_cpu.map_or("?".into(), |c| c.to_string()),
            opts.memory_nodes.first().map_or("?".into(), |n| n.to_string()),
            opts.mode.description.as_deref().unwrap_or("?")
    );
    let mut t = Table::new(vec![
        "delay ns".to_string(),
        "".into(),
        format!("injected {}", u.label()),
        if probe_lat {
            "latency ns best".into()
        } else {
            format!("probe {} best", u.label())
        },
        "median".into(),
    ])
    .gap()
    .titled(title);
    for r in recs.iter().filter(|r| r.status == Status::Ok) {
        let (b, m) = if probe_lat {
            latency_of(r).map_or(("-".into(), "-".into()), |s| {
                (format!("{:.1}", s.best), format!("{:.1}", s.median))
            })
        } else {
            r.gbps.map_or(("-".into(), "-".into()), |g| {
                (rate(g.best, u), rate(g.median, u))
            })
        };
        let d = detail(r);
        t.rows.push(vec![
            d.case_delay_ns
                .value()
                .map_or("unloaded".into(), |d| d.to_string()),
            String::new(),
            d.injected_gbps.value().map_or("0".into(), |g| rate(g, u)),
            b,
            m,
        ]);
    }
    vec![Block::Table(t)]
}

/// Node distances and the notes under the tables.
fn notes(run: &Run, recs: &[&Record], opts: &options::Numa) -> Vec<Block> {
    let mut out = Vec::new();
    let nodes = &run.host.nodes;
    if !nodes.is_empty() {
        let mut t = Table::new({
            let mut h = vec!["distance".to_string(), String::new()];
            h.extend(nodes.iter().map(|n| format!("node {}", n.id)));
            h
        });
        for n in nodes {
            let mut row = vec![format!("node {}", n.id), String::new()];
            row.extend(n.distances.iter().map(|d| d.to_string()));
            t.rows.push(row);
        }
        out.push(Block::Table(t));
    }
    let mut lines = vec![format!(
            "kernel.numa_balancing = {}; memory bound with mbind(MPOL_BIND), pages verified with move_pages after each cell",
            run.host.env.numa_balancing.map_or("unknown".into(), |v| v.to_string())
        )];
    if nodes.len() == 1 {
        lines.push(
            "note: this machine has one NUMA node, so the matrix is 1×1 (local only).".into(),
        );
    }
    let matrix_ran = opts.tiers.as_ref().and_then(|t| t.matrix) != Some(false);
    if opts.mode.mode == NumaModeKind::Matrix
        && matrix_ran
        && !recs.iter().any(|r| r.kernel == CHASE_KERNEL)
    {
        lines.push("note: latency matrix not measured (--no-latency): bandwidth only.".into());
    }
    out.push(Block::Text(lines));
    out
}
