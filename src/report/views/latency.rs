//! The latency table: one row per size, per view ns and core cycles.

use crate::model::detail::{LatencyDetail, View};
use crate::model::{Record, Run, Status};
use crate::report::grid::{Block, Table};
use crate::util::units::format_bytes;

/// A latency record with its detail.
type Rec<'a> = (&'a Record, &'a LatencyDetail);

/// The human table of a latency run: one table per page kind, one row per
/// size, per view the latency in ns (best/median) and in core cycles (best).
fn tables(records: &[&Record]) -> Vec<Table> {
    let recs: Vec<Rec> = records
        .iter()
        .filter_map(|r| r.detail.get::<LatencyDetail>().map(|d| (*r, d)))
        .collect();
    let mut kinds = Vec::new();
    for (_, d) in &recs {
        if !kinds.contains(&d.case_pages) {
            kinds.push(d.case_pages);
        }
    }
    if kinds.len() <= 1 {
        return render_one(&recs).into_iter().collect();
    }
    kinds
        .iter()
        .filter_map(|k| {
            let one: Vec<Rec> = recs
                .iter()
                .copied()
                .filter(|(_, d)| d.case_pages == *k)
                .collect();
            render_one(&one)
        })
        .collect()
}

fn render_one(records: &[Rec]) -> Option<Table> {
    let ok: Vec<Rec> = records
        .iter()
        .copied()
        .filter(|(r, _)| r.status == Status::Ok)
        .collect();
    if ok.is_empty() {
        return None;
    }
    let mut views: Vec<String> = Vec::new();
    for (_, d) in &ok {
        let v = view_label(d);
        if !views.contains(&v) {
            views.push(v);
        }
    }
    let mut sizes: Vec<u64> = ok.iter().filter_map(|(r, _)| r.size_bytes).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut head = vec!["size".to_string(), "regime".to_string()];
    for v in &views {
        head.push(format!("{v} ns"));
        head.push("cycles".into());
    }
    let mut t = Table::new(head)
        .titled("load-to-use latency, ns best/median and core cycles (best) per load");
    for s in sizes {
        let mut regime = String::new();
        let mut cells = Vec::new();
        for v in &views {
            match ok
                .iter()
                .find(|(r, d)| r.size_bytes == Some(s) && &view_label(d) == v)
            {
                Some((r, d)) => {
                    // A view that read like DRAM says so for the row.
                    if !regime.ends_with("(as DRAM)") {
                        regime = r.level_label();
                    }
                    cells.push(
                        d.latency_ns
                            .get()
                            .map_or("-".into(), |l| format!("{:.2}/{:.2}", l.best, l.median)),
                    );
                    cells.push(
                        d.cycles_per_load
                            .get()
                            .map_or("-".into(), |c| format!("{:.1}", c.best)),
                    );
                }
                None => {
                    cells.push("-".into());
                    cells.push("-".into());
                }
            }
        }
        let mut row = vec![format_bytes(s), regime];
        row.extend(cells);
        t.rows.push(row);
    }
    if let Some((_, d)) = ok.first() {
        t.notes.push(format!(
            "pages: {} (obtained {}); cycles from the measured core clock; hops per sample in the JSON.",
            d.case_pages.map_or("?", |p| p.name()),
            d.page_bytes.value().map_or("unknown".into(), format_bytes)
        ));
    }
    Some(t)
}

fn view_label(d: &LatencyDetail) -> String {
    let bytes = |b: Option<u64>| b.map_or("?".into(), format_bytes);
    match d.case_view {
        Some(View::Window) => format!("window {}", bytes(d.case_window_bytes)),
        Some(View::Stride) => format!("stride {}", bytes(d.case_stride_bytes)),
        Some(View::Random) => "random".into(),
        None => "?".into(),
    }
}

/// This suite's view (it states its own byte convention).
pub const VIEW: super::View = super::View {
    render,
    own_convention: true,
};

/// The latency suite's view: one table per page kind, a blank line
/// between them.
pub fn render(_run: &Run, recs: &[&Record]) -> Vec<Block> {
    let mut tables = tables(recs);
    let n = tables.len();
    for t in tables.iter_mut().take(n.saturating_sub(1)) {
        t.gap = true;
    }
    tables.into_iter().map(Block::Table).collect()
}
