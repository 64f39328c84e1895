//! The text-table exporter (each suite's view is in `views`) and the
//! one-row-per-record rows of Markdown; the column aligner every view
//! uses is `report::grid`.

use super::views::rate;
use super::Exporter;
use crate::model::{Record, Run, Status, Units};
use crate::util::units::format_bytes;

pub struct Table;

impl Exporter for Table {
    fn serialize(&self, run: &Run) -> anyhow::Result<Vec<u8>> {
        Ok(super::views::render(run).into_bytes())
    }
}

/// One row per record, header row first: Markdown's table of a suite
/// without a grid of its own.
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
                rate(s.best, units),
                rate(s.median, units),
                format!("{:.1}", s.cv * 100.0),
            )
        });
        rows.push(vec![
            r.suite().to_string(),
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
