//! The sweep grids of `cache`: one grid per op, rows = working-set sizes,
//! columns = kernels, cells = best/median.

use std::collections::BTreeMap;

use super::rate;
use crate::model::{Pattern, Record, Run, Status, Units};
use crate::report::grid::{Block, Table};
use crate::util::units::format_bytes;

/// This suite's view (it takes the common byte footer).
pub const VIEW: super::View = super::View {
    render,
    own_convention: false,
};

/// One grid per op, in the order the run measured them.
pub fn render(run: &Run, recs: &[&Record]) -> Vec<Block> {
    let mut ops: Vec<&str> = Vec::new();
    for r in recs {
        if !ops.contains(&r.op.as_str()) {
            ops.push(r.op.as_str());
        }
    }
    ops.into_iter()
        .filter_map(|op| sweep_grid(recs, op, run.display_units))
        .map(Block::Table)
        .collect()
}

/// Short column title: `seq_read_256_nt_avx2` → `256_nt_avx2`,
/// `rand_read_256_avx2` → `rand_256_avx2`, `pages_copy_512_nt_avx512f` →
/// `pages_512_nt_avx512f`.
fn short(kernel: &str, op: &str) -> String {
    for pattern in ["rand", "pages"] {
        if let Some(rest) = kernel.strip_prefix(&format!("{pattern}_{op}_")) {
            return format!("{pattern}_{rest}");
        }
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
            if *p != Pattern::Seq
                && !(*p == Pattern::Random && r.kernel.starts_with("rand_"))
                && !r.kernel.starts_with(p.as_str()) =>
        {
            format!("{}:{}", p, r.kernel)
        }
        _ => r.kernel.clone(),
    }
}

/// The grid for one op of a sweep suite.
fn sweep_grid(records: &[&Record], op: &str, units: Units) -> Option<Table> {
    let mut rows = sweep_rows(records, op, units)?;
    let header = rows.remove(0);
    let mut t = Table::new(header).gap().titled(format!(
        "{} bandwidth, {} best/median (per-thread working set; all threads together)",
        op,
        units.label()
    ));
    t.rows = rows;
    Some(t)
}

/// The cells of [`sweep_grid`], header row first.
fn sweep_rows(records: &[&Record], op: &str, units: Units) -> Option<Vec<Vec<String>>> {
    let recs: Vec<&&Record> = records
        .iter()
        .filter(|r| r.op.as_str() == op && r.status == Status::Ok && r.size_bytes.is_some())
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
            .or_insert_with(|| (r.level_label(), BTreeMap::new()));
        // A size any of whose kernels read like DRAM says so.
        if r.reads_as_dram() {
            e.0 = r.level_label();
        }
        if let Some(s) = r.gbps {
            e.1.insert(
                name,
                format!("{}/{}", rate(s.best, units), rate(s.median, units)),
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

#[cfg(test)]
mod tests {
    use super::short;

    #[test]
    fn column_titles_drop_the_op_and_keep_a_pattern_other_than_seq() {
        assert_eq!(short("seq_read_256_nt_avx2", "read"), "256_nt_avx2");
        assert_eq!(short("rand_read_256_avx2", "read"), "rand_256_avx2");
        assert_eq!(short("pages_copy_512_nt_avx512f", "copy"), "pages_512_nt_avx512f");
        assert_eq!(short("rep_movsb", "copy"), "rep_movsb");
    }
}
