//! Markdown: the run as a page for an issue, a wiki or a pull request —
//! summary, warnings, the same tables as the terminal view, the method.

use std::fmt::Write as _;

use super::grid::{Block, Table};
use super::{summary, views, Exporter, ReportFormat};
use crate::model::{Record, Run, Status};

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

/// A view's table: its title in bold, the lines that introduce it as a
/// list, the table, the lines under it.
fn view_table(t: &Table) -> String {
    let mut s = String::new();
    if let Some(title) = &t.title {
        let _ = writeln!(s, "**{}**\n", title.trim());
    }
    if !t.lead.is_empty() {
        for l in &t.lead {
            let _ = writeln!(s, "- {}", l.trim());
        }
        s.push('\n');
    }
    let rows: Vec<Vec<String>> = std::iter::once(t.header.clone())
        .chain(t.rows.iter().cloned())
        .collect();
    s.push_str(&table(&rows));
    s.push('\n');
    s.push_str(&paragraph(&t.notes));
    s
}

/// Lines as one paragraph (each on its own line); nothing for none.
fn paragraph(lines: &[String]) -> String {
    super::grid::prose(lines).map_or(String::new(), |l| format!("{}\n\n", l.join("  \n")))
}

/// Every suite's tables, as the terminal shows them.
fn suites(run: &Run) -> String {
    let mut s = String::new();
    for (suite, blocks) in views::blocks(run) {
        let any_ok = run
            .records
            .iter()
            .any(|r| r.suite() == suite && r.status == Status::Ok);
        if !any_ok || blocks.is_empty() {
            continue;
        }
        let _ = writeln!(s, "## {suite}\n");
        for b in &blocks {
            match b {
                Block::Table(t) => s.push_str(&view_table(t)),
                Block::Text(lines) => s.push_str(&paragraph(lines)),
            }
        }
    }
    s
}

/// The title, the run's line, its state, the summary and the warnings.
fn header(run: &Run) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# bwscope {}: {}\n",
        run.command,
        cell(&run.host.cpu.model_name)
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
    s
}

/// One line per distinct case skipped or failed.
fn not_measured(run: &Run) -> String {
    let not_ok: Vec<&Record> = run
        .records
        .iter()
        .filter(|r| r.status != Status::Ok)
        .collect();
    if not_ok.is_empty() {
        return String::new();
    }
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
    format!("## Not measured\n\n{}\n\n", seen.join("\n"))
}

/// The whole run as Markdown.
pub fn render(run: &Run) -> String {
    let mut s = header(run);
    s.push_str(&suites(run));
    s.push_str(&not_measured(run));
    let _ = writeln!(
        s,
        "## Method\n\n{} bytes/s. {}.\n",
        views::unit_line(run.display_units),
        run.byte_convention
    );
    s
}

impl Exporter for Markdown {
    fn serialize(&self, run: &Run) -> anyhow::Result<Vec<u8>> {
        Ok(render(run).into_bytes())
    }
}

impl ReportFormat for Markdown {
    fn name(&self) -> &'static str {
        "md"
    }

    fn about(&self) -> &'static str {
        "Markdown: the summary and every suite's tables"
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["md", "markdown"]
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
