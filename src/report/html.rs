//! The HTML report: one self-contained file (no network, no external
//! scripts, styles or fonts) with the summary, warnings, every suite's
//! tables (the views the terminal shows), charts as inline SVG, sortable
//! tables of every record, the environment, the method, and the raw JSON
//! as an appendix.
//!
//! The page carries a small self-check used by the Chromium test: errors
//! are recorded in `data-js-errors` on `<html>`, and opening the page with
//! `#selftest` sorts the first table and records the outcome in
//! `data-selftest` on `<body>`.

use std::fmt::Write as _;

use super::grid::{self, Block, Table};
use super::metric::{self, StatKind};
use super::page::{esc, SCRIPT, STYLE};
use super::{plot, summary, views, Exporter, ReportFormat};
use crate::model::fleet::FleetRun;
use crate::model::{Record, Run};
use crate::util::units::format_bytes;

pub struct Html {
    /// Size of the inline charts (the SVG scales to the page width).
    pub width: u32,
    pub height: u32,
}

impl Html {
    /// The report's charts at 1280 × 720.
    pub const STANDARD: Html = Html {
        width: 1280,
        height: 720,
    };
}

impl Default for Html {
    fn default() -> Self {
        Html::STANDARD
    }
}

fn num_cell(v: Option<f64>, digits: usize) -> String {
    match v {
        Some(x) if x.is_finite() => format!("<td class=n data-v=\"{x}\">{x:.digits$}</td>"),
        _ => "<td class=n data-v=\"\"></td>".into(),
    }
}

fn text_cell(s: &str) -> String {
    format!("<td>{}</td>", esc(s))
}

/// One sortable table of records; every record, including skipped ones.
fn records_table(recs: &[&Record]) -> String {
    let cols = [
        ("kernel", "kernel"),
        ("op", "op"),
        ("pattern", "pattern"),
        ("size", "size"),
        ("threads", "threads"),
        ("regime", "regime"),
        ("best", "best"),
        ("median", "median"),
        ("min", "min"),
        ("max", "max"),
        ("cv", "CV %"),
        ("unit", "unit"),
        ("samples", "samples"),
        ("memory", "memory"),
        ("status", "status"),
        ("notes", "warnings / reason"),
    ];
    let mut s = String::from("<div class=tablewrap><table class=sortable><thead><tr>");
    for (k, title) in cols {
        let _ = write!(s, "<th data-k=\"{k}\">{}</th>", esc(title));
    }
    s.push_str("</tr></thead><tbody>\n");
    for r in recs {
        let m = metric::of(r);
        let status = r.status.name();
        let _ = write!(s, "<tr class={status}>");
        // A kernel name may break after an underscore, the warnings
        // between words: the table fits its container (issue 29: at
        // 1280 px its warnings column was cut).
        let _ = write!(
            s,
            "<td class=k>{}</td>",
            esc(&r.kernel).replace('_', "_<wbr>")
        );
        s.push_str(&text_cell(r.op.as_str()));
        s.push_str(&text_cell(r.pattern.as_ref().map_or("", |p| p.as_str())));
        match r.size_bytes {
            Some(b) => {
                let _ = write!(
                    s,
                    "<td class=n data-v=\"{b}\">{}</td>",
                    esc(&format_bytes(b))
                );
            }
            None => s.push_str("<td class=n data-v=\"\"></td>"),
        }
        let _ = write!(s, "<td class=n data-v=\"{0}\">{0}</td>", r.threads);
        s.push_str(&text_cell(&r.level_label()));
        s.push_str(&num_cell(m.map(|m| m.best), 2));
        s.push_str(&num_cell(m.map(|m| m.median), 2));
        s.push_str(&num_cell(m.map(|m| m.min), 2));
        s.push_str(&num_cell(m.map(|m| m.max), 2));
        s.push_str(&num_cell(r.gbps.map(|g| g.cv * 100.0), 1));
        s.push_str(&text_cell(m.map_or("", |m| m.unit)));
        let _ = write!(s, "<td class=n data-v=\"{0}\">{0}</td>", r.samples.len());
        s.push_str(&text_cell(
            r.memory.as_ref().map_or("", |m| m.kind.as_str()),
        ));
        s.push_str(&text_cell(status));
        let mut notes: Vec<String> = r.warnings.iter().map(|w| w.to_string()).collect();
        if let Some(reason) = &r.reason {
            notes.insert(0, reason.clone());
        }
        let _ = write!(s, "<td class=notes>{}</td>", esc(&notes.join("; ")));
        s.push_str("</tr>\n");
    }
    s.push_str("</tbody></table></div>\n");
    s
}

/// The page's head, navigation, title and the run's line (with its
/// state when it did not end normally).
fn head(run: &Run, s: &mut String) {
    let title = format!("bwscope {} — {}", run.command, run.host.cpu.model_name);
    let _ = write!(
        s,
        "<!doctype html>\n<html lang=en><head><meta charset=utf-8>\
<meta name=viewport content=\"width=device-width,initial-scale=1\">\
<title>{}</title><style>{STYLE}</style>\
<script>window.addEventListener('error',function(e){{var h=document.documentElement;h.setAttribute('data-js-errors',(h.getAttribute('data-js-errors')||'')+(e.message||'error')+';');}});</script>\
</head><body>\n",
        esc(&title)
    );
    s.push_str("<nav><a href=\"#summary\">Summary</a><a href=\"#tables\">Tables</a><a href=\"#charts\">Charts</a><a href=\"#records\">Records</a><a href=\"#environment\">Environment</a><a href=\"#method\">Method</a><a href=\"#raw\">Raw JSON</a></nav>\n<main>\n");
    let _ = writeln!(s, "<h1>{}</h1>", esc(&title));
    let _ = writeln!(
        s,
        "<p class=meta>bwscope {} · <code>{}</code> · started {} · finished {} · {} records{}</p>",
        esc(&run.tool.version),
        esc(&run.command_line.join(" ")),
        esc(&run.started_at),
        esc(run.finished_at.as_deref().unwrap_or("not finished")),
        run.records.len(),
        if run.interrupted {
            " · <strong>interrupted</strong>"
        } else if !run.complete {
            " · <strong>incomplete</strong>"
        } else {
            ""
        }
    );
    if let Some(state) = super::run_state(run) {
        let _ = writeln!(
            s,
            "<p class=state style=\"border:2px solid #b00;padding:.5em;font-weight:bold\">⚠ {}</p>",
            esc(&state)
        );
    }
}

/// The headline figures and the warnings.
fn summary_section(run: &Run, s: &mut String) {
    s.push_str("<section id=summary><h2>Summary</h2>\n");
    let head = summary::headline(run);
    if head.is_empty() {
        s.push_str("<p>No headline figures: the run has no cache-sweep or latency records.</p>\n");
    } else {
        s.push_str("<ul class=headline>");
        for p in head {
            let _ = write!(s, "<li>{}</li>", esc(&p));
        }
        s.push_str("</ul>\n");
    }
    // Where each figure sits in this machine's history (the app put it
    // on the run from the store), with its trend.
    let history = super::standing::with_lines(run);
    if !history.is_empty() {
        s.push_str("<h3>This machine's history</h3><ul class=history>");
        for (st, line) in history {
            let _ = write!(
                s,
                "<li>{} {}</li>",
                esc(&line),
                super::standing::sparkline_svg(st)
            );
        }
        s.push_str("</ul>\n");
    }
    let warns = summary::warning_lines(run);
    if !warns.is_empty() {
        s.push_str("<h3>Warnings</h3><ul class=warnings>");
        for w in warns {
            let _ = write!(s, "<li>{}</li>", esc(&w));
        }
        s.push_str("</ul>\n");
    }
    s.push_str("</section>\n");
}

/// Lines as one paragraph, a break between them; nothing for none.
fn lines_html(class: &str, lines: &[String]) -> String {
    grid::prose(lines).map_or(String::new(), |lines| {
        let lines: Vec<String> = lines.into_iter().map(esc).collect();
        format!("<p class={class}>{}</p>\n", lines.join("<br>"))
    })
}

/// A view's table: the terminal's table with its title and lines; the
/// first two columns are names, the others figures (right-aligned).
fn view_table(t: &Table) -> String {
    let mut s = String::new();
    if let Some(title) = &t.title {
        let _ = writeln!(s, "<h4>{}</h4>", esc(title.trim()));
    }
    s.push_str(&lines_html("lead", &t.lead));
    s.push_str("<div class=tablewrap><table class=view><thead><tr>");
    for h in &t.header {
        let _ = write!(s, "<th>{}</th>", esc(h));
    }
    s.push_str("</tr></thead><tbody>\n");
    for r in &t.rows {
        s.push_str("<tr>");
        for (i, c) in r.iter().enumerate() {
            let class = if i < 2 { "" } else { " class=n" };
            let _ = write!(s, "<td{class}>{}</td>", esc(c));
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</tbody></table></div>\n");
    s.push_str(&lines_html("notes", &t.notes));
    s
}

/// Every suite's tables, as the terminal shows them.
fn tables_section(run: &Run, s: &mut String) {
    s.push_str("<section id=tables><h2>Tables</h2>\n");
    for (suite, blocks) in views::blocks(run) {
        if blocks.is_empty() {
            continue;
        }
        let _ = writeln!(s, "<h3 id=\"tables-{0}\">{0}</h3>", esc(suite.name()));
        for b in &blocks {
            match b {
                Block::Table(t) => s.push_str(&view_table(t)),
                Block::Text(lines) => s.push_str(&lines_html("notes", lines)),
            }
        }
    }
    s.push_str("</section>\n");
}

/// The charts as inline SVG.
fn charts_section(run: &Run, width: u32, height: u32, s: &mut String) -> anyhow::Result<()> {
    s.push_str("<section id=charts><h2>Charts</h2>\n");
    let charts = plot::charts(run, StatKind::Best);
    if charts.is_empty() {
        s.push_str("<p>No chart: no suite in this run has two or more sizes, thread counts or NUMA nodes.</p>\n");
    }
    for c in &charts {
        let svg = plot::svg(c, width, height)?;
        let _ = writeln!(
            s,
            "<figure class=chart id=\"chart-{0}\" data-chart=\"{0}\">{1}<figcaption>{2} — <code>bwscope plot RUN.json --chart {0} -o {0}.svg</code></figcaption></figure>",
            esc(&c.id),
            strip_xml_decl(&svg),
            esc(&c.title)
        );
    }
    s.push_str("</section>\n");
    Ok(())
}

/// Every record, one sortable table per suite.
fn records_section(run: &Run, s: &mut String) {
    s.push_str("<section id=records><h2>Records</h2><p class=meta>Click a column header to sort; click again to reverse. Bandwidth in GB/s = 10<sup>9</sup> B/s; latency in ns.</p>\n");
    for (suite, recs) in super::by_suite(&run.records) {
        let _ = writeln!(
            s,
            "<h3 id=\"suite-{0}\">{0} ({1} records)</h3>",
            esc(suite.name()),
            recs.len()
        );
        s.push_str(&records_table(&recs));
    }
    s.push_str("</section>\n");
}

/// The tier map (when the host has several tiers), the environment and
/// the options.
fn environment_section(run: &Run, s: &mut String) {
    let h = &run.host;
    if let Some(t) = h.tiers.as_ref().filter(|t| t.several()) {
        // The tier map: every node's kind and claims, and what this run
        // measured of them beside the claims.
        let numa: Vec<&Record> = run
            .records
            .iter()
            .filter(|r| r.suite() == crate::model::SuiteId::Numa)
            .collect();
        let _ = writeln!(
            s,
            "<section id=tiers><h2>Memory tiers</h2>\n<pre>{}\n{}</pre></section>",
            esc(&views::tiers::table(t)),
            esc(&grid::text(&views::numa_tiers::render(run, &numa)))
        );
    }
    s.push_str("<section id=environment><h2>Environment</h2>\n");
    let _ = writeln!(
        s,
        "<pre>{}hostname   {}\n</pre>",
        esc(&views::info::render(h)),
        esc(h.env.hostname.as_deref().unwrap_or("?"))
    );
    let opts = serde_json::to_string_pretty(&run.options).unwrap_or_default();
    let _ = writeln!(s, "<h3>Options</h3><pre>{}</pre>", esc(&opts));
    s.push_str("</section>\n");
}

/// How the numbers were made.
fn method_section(run: &Run, s: &mut String) {
    let _ = writeln!(
        s,
        "<section id=method><h2>Method</h2>\n<ul>\
<li><strong>Bytes counted.</strong> {}.</li>\
<li><strong>Units.</strong> GB/s = 10<sup>9</sup> bytes per second (the JSON always stores GB/s; tables were shown in {}).</li>\
<li><strong>Samples.</strong> Each case is calibrated (also the warm-up, never reported) until one sample lasts at least the minimum sample time, then timed N times; the kernel's declared bytes over the wall time of a sample give its rate. Multi-thread samples span the earliest start to the latest end, between barriers.</li>\
<li><strong>Best and median.</strong> <em>best</em> is the fastest sample (the estimate of what the path can do), <em>median</em> the typical one; min, max and CV show the spread. Charts plot <em>best</em>.</li>\
<li><strong>Regimes.</strong> L1/L2/L3/DRAM labels come from the cache sizes in the environment; cache boundaries on the charts are those sizes.</li>\
<li><strong>Kernels.</strong> Hot loops are hand-written assembly (<code>bwscope kernels</code> lists each one's instructions, width and bytes per pass); buffers hold random data and are pre-faulted.</li>\
</ul></section>",
        esc(&run.byte_convention),
        esc(run.display_units.label())
    );
}

/// The whole report.
pub fn render(run: &Run, width: u32, height: u32) -> anyhow::Result<String> {
    let mut s = String::with_capacity(64 * 1024 + run.records.len() * 2048);
    head(run, &mut s);
    summary_section(run, &mut s);
    tables_section(run, &mut s);
    charts_section(run, width, height, &mut s)?;
    records_section(run, &mut s);
    environment_section(run, &mut s);
    method_section(run, &mut s);
    let raw = serde_json::to_string_pretty(run)?;
    let _ = writeln!(
        s,
        "<section id=raw><h2>Raw JSON</h2><details><summary>the run exactly as bwscope stored it ({} bytes)</summary><pre>{}</pre></details></section>",
        raw.len(),
        esc(&raw)
    );
    let _ = writeln!(s, "</main><script>{SCRIPT}</script></body></html>");
    Ok(s)
}

/// Inline SVG must not carry an XML declaration.
fn strip_xml_decl(svg: &str) -> &str {
    match svg.strip_prefix("<?xml") {
        Some(rest) => rest.find("?>").map_or(svg, |i| rest[i + 2..].trim_start()),
        None => svg,
    }
}

impl Exporter for Html {
    fn serialize(&self, run: &Run) -> anyhow::Result<Vec<u8>> {
        Ok(render(run, self.width, self.height)?.into_bytes())
    }
}

impl ReportFormat for Html {
    fn name(&self) -> &'static str {
        "html"
    }

    fn about(&self) -> &'static str {
        "A self-contained page: the summary, every suite's tables, charts, every record and the run's JSON"
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["html", "htm"]
    }

    fn beside_run(&self) -> Option<&'static str> {
        Some("html")
    }

    fn fleet(&self, f: &FleetRun, scale_max: Option<f64>) -> Vec<u8> {
        super::fleet::html::render(f, scale_max).into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_declaration() {
        assert_eq!(strip_xml_decl("<?xml version=\"1.0\"?>\n<svg/>"), "<svg/>");
        assert_eq!(strip_xml_decl("<svg/>"), "<svg/>");
    }
}
