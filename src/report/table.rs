//! The human table: for sweep suites one grid per op (rows = working-set
//! sizes, columns = kernels, cells = best/median), for everything else one
//! row per record. Units follow `run.display_units`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::Exporter;
use crate::model::{Record, Run, Status, Units};
use crate::util::units::format_bytes;

pub struct Table;

impl Exporter for Table {
    fn serialize(&self, run: &Run) -> anyhow::Result<Vec<u8>> {
        Ok(render(run).into_bytes())
    }
}

/// Right-align `cells` into columns separated by two spaces.
pub fn grid(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(|r| r.len()).max().unwrap_or(0);
    let mut w = vec![0; cols];
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let mut out = String::new();
    for r in rows {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i < 2 {
                    format!("{:<width$}", c, width = w[i])
                } else {
                    format!("{:>width$}", c, width = w[i])
                }
            })
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

fn rate(gbps: f64, units: Units) -> f64 {
    gbps * 1e9 / units.bytes_per_unit()
}

fn fmt_rate(v: f64) -> String {
    if v >= 100.0 {
        format!("{:.0}", v)
    } else if v >= 10.0 {
        format!("{:.1}", v)
    } else {
        format!("{:.2}", v)
    }
}

/// Short column title: `seq_read_256_nt_avx2` → `256_nt_avx2`,
/// `rand_read_256_avx2` → `rand_256_avx2`.
fn short(kernel: &str, op: &str) -> String {
    if let Some(rest) = kernel.strip_prefix(&format!("rand_{}_", op)) {
        return format!("rand_{}", rest);
    }
    kernel
        .strip_prefix(&format!("seq_{}_", op))
        .unwrap_or(kernel)
        .to_string()
}

/// A record's column in the sweep grid: its kernel, prefixed with its
/// pattern when the name does not already say it.
fn column(r: &Record) -> String {
    match &r.pattern {
        Some(p)
            if p != "seq"
                && !(p == "random" && r.kernel.starts_with("rand_"))
                && !r.kernel.starts_with(p.as_str()) =>
        {
            format!("{}:{}", p, r.kernel)
        }
        _ => r.kernel.clone(),
    }
}

/// The grid for one op of a sweep suite.
fn sweep_grid(records: &[&Record], op: &str, units: Units) -> Option<String> {
    let rows = sweep_rows(records, op, units)?;
    let mut out = format!(
        "{} bandwidth, {} best/median (per-thread working set; all threads together)\n",
        op,
        units.label()
    );
    out.push_str(&grid(&rows));
    Some(out)
}

/// The cells of [`sweep_grid`], header row first (also used by Markdown).
pub fn sweep_rows(records: &[&Record], op: &str, units: Units) -> Option<Vec<Vec<String>>> {
    let recs: Vec<&&Record> = records
        .iter()
        .filter(|r| r.op == op && r.status == Status::Ok && r.size_bytes.is_some())
        .collect();
    if recs.is_empty() {
        return None;
    }
    let mut kernels: Vec<String> = Vec::new();
    for r in &recs {
        let name = column(r);
        if !kernels.contains(&name) {
            kernels.push(name);
        }
    }
    let mut by_size: BTreeMap<(u64, u32), (String, BTreeMap<String, String>)> = BTreeMap::new();
    for r in &recs {
        let name = column(r);
        let e = by_size
            .entry((r.size_bytes.unwrap_or(0), r.threads))
            .or_insert_with(|| (r.regime.clone().unwrap_or_default(), BTreeMap::new()));
        if let Some(s) = r.gbps {
            e.1.insert(
                name,
                format!(
                    "{}/{}",
                    fmt_rate(rate(s.best, units)),
                    fmt_rate(rate(s.median, units))
                ),
            );
        }
    }
    let threads: Vec<u32> = by_size.keys().map(|k| k.1).collect();
    let multi = threads.iter().any(|&t| t != threads[0]);
    let mut rows = vec![{
        let mut h = vec!["size".to_string(), "regime".to_string()];
        if multi {
            h.push("threads".into());
        }
        h.extend(kernels.iter().map(|k| short(k, op)));
        h
    }];
    for ((size, t), (regime, cells)) in &by_size {
        let mut row = vec![format_bytes(*size), regime.clone()];
        if multi {
            row.push(t.to_string());
        }
        row.extend(
            kernels
                .iter()
                .map(|k| cells.get(k).cloned().unwrap_or_else(|| "-".into())),
        );
        rows.push(row);
    }
    Some(rows)
}

/// One row per record, for suites without a size grid.
fn long_table(records: &[&Record], units: Units) -> String {
    grid(&long_rows(records, units))
}

/// The cells of [`long_table`], header row first (also used by Markdown).
pub fn long_rows(records: &[&Record], units: Units) -> Vec<Vec<String>> {
    let mut rows = vec![vec![
        "suite".to_string(),
        "kernel".to_string(),
        "size".to_string(),
        "threads".to_string(),
        format!("best {}", units.label()),
        "median".to_string(),
        "cv %".to_string(),
    ]];
    for r in records.iter().filter(|r| r.status == Status::Ok) {
        let (b, m, cv) = r.gbps.map_or(("-".into(), "-".into(), "-".into()), |s| {
            (
                fmt_rate(rate(s.best, units)),
                fmt_rate(rate(s.median, units)),
                format!("{:.1}", s.cv * 100.0),
            )
        });
        rows.push(vec![
            r.suite.clone(),
            r.kernel.clone(),
            r.size_bytes.map_or("-".into(), format_bytes),
            r.threads.to_string(),
            b,
            m,
            cv,
        ]);
    }
    rows
}

/// Render every suite in the run, then skipped/errored records, then the
/// byte-counting footer.
pub fn render(run: &Run) -> String {
    let units = run.display_units;
    let mut out = String::new();
    let mut suites: Vec<&str> = Vec::new();
    for r in &run.records {
        if !suites.contains(&r.suite.as_str()) {
            suites.push(&r.suite);
        }
    }
    for suite in suites {
        let recs: Vec<&Record> = run.records.iter().filter(|r| r.suite == suite).collect();
        let mut ops: Vec<&str> = Vec::new();
        for r in &recs {
            if !ops.contains(&r.op.as_str()) {
                ops.push(&r.op);
            }
        }
        let sweep = recs.iter().any(|r| r.size_bytes.is_some()) && suite == "cache";
        if suite == "latency" {
            let _ = writeln!(out, "{}", crate::suites::latency::render_table(&recs));
        } else if suite == "transfer" {
            let _ = writeln!(
                out,
                "{}",
                crate::suites::transfer::render(run, &recs, units)
            );
        } else if sweep {
            for op in ops {
                if let Some(g) = sweep_grid(&recs, op, units) {
                    let _ = writeln!(out, "{}", g);
                }
            }
        } else if suite == "net" {
            let _ = writeln!(out, "{}", crate::suites::net::render(&recs, units));
        } else if recs.iter().any(|r| r.status == Status::Ok) {
            let _ = writeln!(out, "{}", long_table(&recs, units));
        }
    }
    let not_ok: Vec<&Record> = run
        .records
        .iter()
        .filter(|r| r.status != Status::Ok)
        .collect();
    if !not_ok.is_empty() {
        let mut seen: Vec<String> = Vec::new();
        for r in not_ok {
            let line = format!(
                "{} {}: {}",
                if r.status == Status::Skipped {
                    "skipped"
                } else {
                    "error"
                },
                r.kernel,
                r.reason.as_deref().unwrap_or("")
            );
            if !seen.contains(&line) {
                seen.push(line);
            }
        }
        for l in seen {
            let _ = writeln!(out, "{}", l);
        }
        out.push('\n');
    }
    // The net and transfer tables state their own conventions.
    let counted = |r: &Record| r.gbps.is_some() && r.suite != "net" && r.suite != "transfer";
    if run.records.iter().any(counted) {
        let _ = writeln!(
            out,
            "{} = {} bytes/s. Bytes = read + written per the kernel's declaration (a copy of N/2 into N/2 counts N); write-allocate traffic not counted.",
            units.label(),
            if units == Units::GB { "10^9" } else { "2^30" }
        );
    }
    out
}
