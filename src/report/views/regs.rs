//! The register-transfer table: one row per kernel.

use crate::model::detail::RegsDetail;
use crate::model::{Record, Run, Status};
use crate::report::grid::{Block, Table};

/// This suite's view (it states its own byte convention).
pub const VIEW: super::View = super::View {
    render,
    own_convention: true,
};

/// The human table: one row per kernel with GB/s and bytes per cycle.
pub fn render(run: &Run, recs: &[&Record]) -> Vec<Block> {
    let units = run.display_units;
    let mut t = Table::new(vec![
        "kernel".to_string(),
        "op".into(),
        format!("best {}", units.label()),
        "median".into(),
        "cv %".into(),
        "B/cycle".into(),
        "instr/cycle".into(),
    ]);
    for r in recs.iter().filter(|r| r.status == Status::Ok) {
        let Some(s) = r.gbps else { continue };
        let d = r.detail.get::<RegsDetail>().cloned().unwrap_or_default();
        let f = |v: Option<f64>| v.map_or("-".into(), |v| format!("{:.2}", v));
        let scale = 1e9 / units.bytes_per_unit();
        t.rows.push(vec![
            r.kernel.clone(),
            r.op.to_string(),
            format!("{:.1}", s.best * scale),
            format!("{:.1}", s.median * scale),
            format!("{:.1}", s.cv * 100.0),
            f(d.bytes_per_cycle),
            f(d.instructions_per_cycle),
        ]);
    }
    t.notes.push(format!(
        "{} bytes/s; bytes = bytes arriving in the destination register or stack slot per instruction (no memory working set).",
        super::unit_line(units)
    ));
    vec![Block::Table(t)]
}
