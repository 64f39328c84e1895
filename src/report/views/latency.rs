//! The latency table: one row per size, per view ns and core cycles.

use std::fmt::Write as _;

use crate::model::{Record, Run, Stats, Status};
use crate::report::table::grid;
use crate::util::units::format_bytes;

fn stat(r: &Record, key: &str) -> Option<Stats> {
    r.extra
        .get(key)
        .and_then(|v| serde_json::from_value(v.clone()).ok())
}

/// The human table of a latency run: one table per page kind, one row per
/// size, per view the latency in ns (best/median) and in core cycles (best).
pub fn render_table(records: &[&Record]) -> String {
    let kind = |r: &Record| r.extra.get("case_pages").map(|v| v.to_string());
    let mut kinds: Vec<Option<String>> = Vec::new();
    for r in records {
        if !kinds.contains(&kind(r)) {
            kinds.push(kind(r));
        }
    }
    if kinds.len() <= 1 {
        return render_one(records);
    }
    kinds
        .iter()
        .map(|k| {
            let recs: Vec<&Record> = records.iter().copied().filter(|r| &kind(r) == k).collect();
            render_one(&recs)
        })
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

fn render_one(records: &[&Record]) -> String {
    let ok: Vec<&&Record> = records.iter().filter(|r| r.status == Status::Ok).collect();
    if ok.is_empty() {
        return String::new();
    }
    let mut views: Vec<String> = Vec::new();
    for r in &ok {
        let v = view_label(r);
        if !views.contains(&v) {
            views.push(v);
        }
    }
    let mut sizes: Vec<u64> = ok.iter().filter_map(|r| r.size_bytes).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut head = vec!["size".to_string(), "regime".to_string()];
    for v in &views {
        head.push(format!("{v} ns"));
        head.push("cycles".into());
    }
    let mut rows = vec![head];
    for s in sizes {
        let mut regime = String::new();
        let mut cells = Vec::new();
        for v in &views {
            match ok
                .iter()
                .find(|r| r.size_bytes == Some(s) && &view_label(r) == v)
            {
                Some(r) => {
                    regime = r.regime.clone().unwrap_or_default();
                    cells.push(
                        stat(r, "latency_ns")
                            .map_or("-".into(), |l| format!("{:.2}/{:.2}", l.best, l.median)),
                    );
                    cells.push(
                        stat(r, "cycles_per_load").map_or("-".into(), |c| format!("{:.1}", c.best)),
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
        rows.push(row);
    }
    let mut out =
        String::from("load-to-use latency, ns best/median and core cycles (best) per load\n");
    out.push_str(&grid(&rows));
    if let Some(r) = ok.first() {
        let page = r.extra.get("page_bytes").and_then(|v| v.as_u64());
        let _ = writeln!(
            out,
            "pages: {} (obtained {}); cycles from the measured core clock; hops per sample in the JSON.",
            r.extra.get("case_pages").and_then(|v| v.as_str()).unwrap_or("?"),
            page.map_or("unknown".into(), format_bytes)
        );
    }
    out
}

fn view_label(r: &Record) -> String {
    let view = r
        .extra
        .get("case_view")
        .and_then(|v| v.as_str())
        .unwrap_or("?");
    match view {
        "window" => format!(
            "window {}",
            r.extra
                .get("case_window_bytes")
                .and_then(|v| v.as_u64())
                .map_or("?".into(), format_bytes)
        ),
        "stride" => format!(
            "stride {}",
            r.extra
                .get("case_stride_bytes")
                .and_then(|v| v.as_u64())
                .map_or("?".into(), format_bytes)
        ),
        v => v.to_string(),
    }
}

/// The latency suite's view.
pub fn render(_run: &Run, recs: &[&Record]) -> String {
    render_table(recs)
}
