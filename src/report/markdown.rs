//! Markdown: the run as a page for an issue, a wiki or a pull request —
//! summary, warnings, the same tables as the terminal view, the method.

use std::fmt::Write as _;

use super::table::long_rows;
use super::views::cache::sweep_rows;
use super::{summary, Exporter};
use crate::model::{Record, Run, Status, SuiteId};

pub struct Markdown;

/// Escape the characters that would break a table cell.
pub fn cell(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace('\n', " ")
}

/// A GitHub-flavoured Markdown table; columns after the first two are
/// right-aligned (numbers).
pub fn table(rows: &[Vec<String>]) -> String {
    let mut out = String::new();
    let Some(head) = rows.first() else {
        return out;
    };
    let line = |r: &Vec<String>| {
        format!(
            "| {} |\n",
            r.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | ")
        )
    };
    out.push_str(&line(head));
    let align: Vec<&str> = (0..head.len())
        .map(|i| if i < 2 { "---" } else { "---:" })
        .collect();
    let _ = writeln!(out, "| {} |", align.join(" | "));
    for r in &rows[1..] {
        out.push_str(&line(r));
    }
    out
}

/// The whole run as Markdown.
pub fn render(run: &Run) -> String {
    let mut s = String::new();
    let h = &run.host;
    let _ = writeln!(
        s,
        "# bwscope {}: {}\n",
        run.command,
        cell(&h.cpu.model_name)
    );
    let _ = writeln!(
        s,
        "bwscope {} · started {} · {} records{}\n",
        run.tool.version,
        run.started_at,
        run.records.len(),
        if run.interrupted {
            " · **interrupted**"
        } else if !run.complete {
            " · **incomplete**"
        } else {
            ""
        }
    );
    if let Some(state) = super::run_state(run) {
        let _ = writeln!(s, "> **⚠ {state}**\n");
    }
    let head = summary::headline(run);
    if !head.is_empty() {
        let _ = writeln!(s, "**Summary:** {}\n", head.join(" · "));
    }
    let warns = summary::warning_lines(run);
    if !warns.is_empty() {
        let _ = writeln!(s, "**Warnings**\n");
        for w in warns {
            let _ = writeln!(s, "- {}", w);
        }
        s.push('\n');
    }
    let units = run.display_units;
    for (suite, recs) in super::by_suite(&run.records) {
        if !recs.iter().any(|r| r.status == Status::Ok) {
            continue;
        }
        let _ = writeln!(s, "## {suite}\n");
        let mut ops: Vec<&str> = Vec::new();
        for r in &recs {
            if !ops.contains(&r.op.as_str()) {
                ops.push(r.op.as_str());
            }
        }
        if suite == SuiteId::Cache {
            for op in ops {
                if let Some(rows) = sweep_rows(&recs, op, units) {
                    let _ = writeln!(
                        s,
                        "### {op}\n\n{} best/median, per-thread working set\n",
                        units.label()
                    );
                    s.push_str(&table(&rows));
                    s.push('\n');
                }
            }
        } else {
            s.push_str(&table(&long_rows(&recs, units)));
            s.push('\n');
        }
    }
    let not_ok: Vec<&Record> = run
        .records
        .iter()
        .filter(|r| r.status != Status::Ok)
        .collect();
    if !not_ok.is_empty() {
        let _ = writeln!(s, "## Not measured\n");
        let mut seen = Vec::new();
        for r in not_ok {
            let l = format!(
                "- {} `{}`: {}",
                if r.status == Status::Skipped {
                    "skipped"
                } else {
                    "error"
                },
                r.kernel,
                r.reason.as_deref().unwrap_or("")
            );
            if !seen.contains(&l) {
                seen.push(l);
            }
        }
        let _ = writeln!(s, "{}\n", seen.join("\n"));
    }
    let _ = writeln!(
        s,
        "## Method\n\n{} = {} bytes/s. {}.\n",
        units.label(),
        if units == crate::model::Units::GB {
            "10^9"
        } else {
            "2^30"
        },
        run.byte_convention
    );
    s
}

impl Exporter for Markdown {
    fn serialize(&self, run: &Run) -> anyhow::Result<Vec<u8>> {
        Ok(render(run).into_bytes())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn cells_are_escaped() {
        assert_eq!(super::cell("a|b\nc"), "a\\|b c");
        let t = super::table(&[
            vec!["k".into(), "v".into(), "n".into()],
            vec!["x".into(), "y".into(), "1".into()],
        ]);
        assert_eq!(t, "| k | v | n |\n| --- | --- | ---: |\n| x | y | 1 |\n");
    }
}
