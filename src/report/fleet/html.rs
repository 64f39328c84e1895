//! The fleet report: one self-contained HTML file (no network, no external
//! scripts, styles or fonts). The verdict first, then every node sorted by
//! how far it sits from the fleet, a strip plot per headline figure, and a
//! heatmap of each pair matrix with host labels and hover values
//! (`scale_max` fixes the colour scale so two reports compare by eye).
//!
//! Self-check for the browser test: script errors land in
//! `data-js-errors` on `<html>`; `<body>` gets `data-heatmaps` (drawn
//! heatmaps) and, with `#fleettest`, `data-fleettest` (hovering a cell
//! filled the read-out).

use std::fmt::Write as _;

use super::heatmap::heatmap;
use super::metrics::{self, Figure};
use super::text::num;
use crate::model::fleet::{Check, FleetNode, FleetRun, NodeStatus, NodeVerdict};
use crate::report::page::{esc, SCRIPT, STYLE};

/// Heatmaps beyond this many nodes would be millions of cells; the tables
/// and strip plots still show every node.
pub const HEATMAP_MAX_NODES: usize = 256;

const FLEET_STYLE: &str = r#"
td.noisy{color:var(--warn);font-style:italic}
#nodetable th{white-space:normal;vertical-align:bottom}
#nodetable th,#nodetable td{padding:4px 6px}
#nodetable td.node{white-space:normal;overflow-wrap:anywhere;min-width:6em}
#nodetable td.notes{white-space:normal;min-width:8em}
.ok{color:#1a7f37;font-weight:600}.fail{color:#b42318;font-weight:600}.unknown{color:var(--muted);font-weight:600}
tr.fail td{background:#fff1f0}
svg.strip,svg.heatmap{display:block;max-width:100%;height:auto;font:11px system-ui,sans-serif}
figure.chart svg.heatmap{width:auto}
svg.strip .dot{fill:#1f77b4;fill-opacity:.75}svg.strip .dot.out{fill:#b42318;fill-opacity:1}
svg.heatmap rect.cell:hover{stroke:#000;stroke-width:1.5}
svg.heatmap rect.null{fill:#e5e7eb}
.readout{min-height:1.5em;font-variant-numeric:tabular-nums;color:var(--fg);margin:4px 0}
"#;

const FLEET_SCRIPT: &str = r#"
(function(){
var maps=document.querySelectorAll('svg.heatmap');
maps.forEach(function(svg){var out=document.getElementById(svg.getAttribute('data-readout'));
 svg.addEventListener('mouseover',function(e){var c=e.target;if(!c.classList||!c.classList.contains('cell'))return;out.textContent=c.getAttribute('data-info');});});
document.body.setAttribute('data-heatmaps',String(maps.length));
var nodes=document.getElementById('nodetable');
if(nodes){var w=nodes.closest('.tablewrap')||nodes.parentNode;document.body.setAttribute('data-nodes-fit',nodes.offsetWidth+' '+w.clientWidth);}
if(location.hash==='#fleettest'){var r='no heatmap';
 if(maps.length){var c=maps[0].querySelector('rect.cell'),o=document.getElementById(maps[0].getAttribute('data-readout'));
  if(!c)r='no cell';else{c.dispatchEvent(new MouseEvent('mouseover',{bubbles:true}));r=o.textContent.length>0?'ok '+maps[0].querySelectorAll('rect.cell').length+' cells':'no read-out';}}
 document.body.setAttribute('data-fleettest',r);}
})();
"#;

fn verdict_word(v: Option<&NodeVerdict>) -> (&'static str, &'static str) {
    match v {
        Some(v) if v.ok => ("OK", "ok"),
        Some(v) if v.drain => ("FAIL", "fail"),
        Some(_) => ("?", "unknown"),
        None => ("?", "unknown"),
    }
}

/// The node table: one row per node, the farthest from the fleet first.
fn node_table(f: &FleetRun, figs: &[(u32, Vec<Figure>)], metrics: &[Figure]) -> String {
    // Looked up by rank once per node (and in the sort): maps, not
    // searches, so a fleet of many thousand nodes is not quadratic.
    let verdicts: std::collections::HashMap<u32, _> = f
        .verdicts
        .iter()
        .flat_map(|v| v.nodes.iter().map(|n| (n.rank, n)))
        .collect();
    let v_of = |r: u32| verdicts.get(&r).copied();
    let figs = super::metrics::by_rank(figs);
    let mut order: Vec<u32> = f.nodes.iter().map(|n| n.rank).collect();
    order.sort_by(|a, b| {
        let d = |r: u32| {
            v_of(r).map_or(0.0, |v| {
                if v.drain {
                    1e12 + v.distance
                } else {
                    v.distance
                }
            })
        };
        d(*b).total_cmp(&d(*a))
    });
    let mut s = node_table_head(metrics);
    for r in order {
        let n = f.node(r).expect("ranks come from the nodes");
        let v = v_of(r);
        let (word, class) = verdict_word(v);
        let _ = write!(
            s,
            "<tr{}><td class=node>{}</td><td class=n data-v=\"{r}\">{r}</td><td class=\"{class}\">{word}</td><td class=n data-v=\"{d}\">{d:.1}</td>",
            if class == "fail" { " class=fail" } else { "" },
            esc(&n.label),
            d = v.map_or(0.0, |v| v.distance)
        );
        let mine = figs.get(&r).copied().unwrap_or(&[]);
        for m in metrics {
            let check = v.and_then(|v| v.checks.iter().find(|c| c.metric == m.metric));
            match mine.iter().find(|g| g.metric == m.metric) {
                Some(g) => figure_cell(&mut s, g, check),
                None => s.push_str("<td class=n data-v=\"\"></td>"),
            }
        }
        let _ = writeln!(
            s,
            "<td class=notes>{}</td></tr>",
            esc(&node_notes(n, v).join("; "))
        );
    }
    s.push_str("</tbody></table></div>\n");
    s
}

/// The node table's opening and header row: node, rank, verdict, distance,
/// a column per headline figure, notes.
fn node_table_head(metrics: &[Figure]) -> String {
    let mut s = String::from("<div class=tablewrap><table class=sortable id=nodetable><thead><tr><th>node</th><th>rank</th><th>verdict</th><th>distance (robust z)</th>");
    for m in metrics {
        // Breakable after each underscore: a dozen figures must fit the
        // page's width (the metric names alone are wider than 1200 px).
        let name = esc(&m.metric).replace('_', "_<wbr>");
        let _ = write!(
            s,
            "<th class=metric title=\"{}\">{name} ({})</th>",
            esc(&m.what),
            esc(m.unit())
        );
    }
    s.push_str("<th>notes</th></tr></thead><tbody>\n");
    s
}

/// A node's figure in its column: marked failing or noisy by the verdict's
/// check of it, whose figures (z, % worse, bound, load, turns) it shows on
/// hover.
fn figure_cell(s: &mut String, g: &Figure, check: Option<&Check>) {
    let state = match check {
        Some(c) if c.fails() => " fail",
        Some(c) if c.noisy || c.transient => " noisy",
        _ => "",
    };
    let tip = check.map_or(String::new(), |c| {
        format!(
            "z {} · {} % worse than the median{}{}{}",
            c.robust_z.map_or("-".into(), |z| format!("{z:.1}")),
            c.pct_worse.map_or("-".into(), |p| format!("{p:.1}")),
            c.reference
                .map_or(String::new(), |b| format!(" · class bound {}", num(b))),
            c.foreign_cpus.map_or(String::new(), |x| format!(
                " · other processes used {x:.2} CPUs meanwhile"
            )),
            super::text::turns_note(c).map_or(String::new(), |t| format!(" · {t}"))
        )
    });
    let _ = write!(
        s,
        "<td class=\"n{}\" data-v=\"{}\" title=\"{}\">{}</td>",
        state,
        g.value,
        esc(&tip),
        num(g.value)
    );
}

/// A node's notes: its status when not ok, the reason it was judged (or
/// failed), its tier gaps and transient figures.
fn node_notes(n: &FleetNode, v: Option<&NodeVerdict>) -> Vec<String> {
    let mut notes: Vec<String> = Vec::new();
    if n.status != NodeStatus::Ok {
        notes.push(super::status_word(n.status).into());
    }
    if let Some(reason) = v
        .and_then(|v| v.reason.clone())
        .or_else(|| n.reason.clone())
    {
        notes.push(reason);
    }
    if let Some(v) = v {
        notes.extend(v.tier_gaps.iter().map(super::text::tier_gap));
        notes.extend(super::text::transient(v));
    }
    notes
}

/// One metric: every node a dot on a value axis, the median a line, the
/// outlier threshold dashed, outliers red and named.
fn strip(f: &FleetRun, figs: &[(u32, Vec<Figure>)], m: &Figure) -> String {
    let pts: Vec<(u32, f64)> = figs
        .iter()
        .filter_map(|(r, v)| {
            v.iter()
                .find(|g| g.metric == m.metric)
                .map(|g| (*r, g.value))
        })
        .collect();
    let hi = pts.iter().map(|p| p.1).fold(f64::MIN, f64::max);
    let ax = StripAxis {
        hi: if hi > 0.0 { hi * 1.05 } else { 1.0 },
    };
    let mut s = format!(
        "<figure class=chart data-metric=\"{}\"><svg class=strip viewBox=\"0 0 {} {}\" role=img aria-label=\"{}\">",
        esc(&m.metric),
        StripAxis::W,
        StripAxis::H,
        esc(&m.what)
    );
    ax.draw(&mut s);
    strip_median(&mut s, f, m, &ax);
    strip_dots(&mut s, f, m, &ax, &pts);
    let _ = writeln!(
        s,
        "</svg><figcaption>{} ({}): {}{}</figcaption></figure>",
        esc(&m.metric),
        esc(m.unit()),
        esc(&m.what),
        if m.higher_is_better {
            "; higher is better"
        } else {
            "; lower is better"
        }
    );
    s
}

/// A strip plot's value axis: from 0 to `hi`, along the bottom.
struct StripAxis {
    hi: f64,
}

impl StripAxis {
    const W: f64 = 900.0;
    const H: f64 = 110.0;
    const PAD: f64 = 40.0;

    fn x(&self, v: f64) -> f64 {
        Self::PAD + (v / self.hi).clamp(0.0, 1.0) * (Self::W - 2.0 * Self::PAD)
    }

    /// The axis line and five ticks.
    fn draw(&self, s: &mut String) {
        let _ = write!(
            s,
            "<line x1=\"{}\" y1=\"80\" x2=\"{}\" y2=\"80\" stroke=\"#999\"/>",
            Self::PAD,
            Self::W - Self::PAD
        );
        for i in 0..=4 {
            let v = self.hi * i as f64 / 4.0;
            let _ = write!(
                s,
                "<text x=\"{:.1}\" y=\"96\" text-anchor=middle fill=\"#5b6570\">{}</text>",
                self.x(v),
                num(v)
            );
        }
    }
}

/// The fleet median of a figure and, where it is judged, the dashed line
/// past which a node is "worse" by the verdict's percentage.
fn strip_median(s: &mut String, f: &FleetRun, m: &Figure, ax: &StripAxis) {
    let summary = f
        .verdicts
        .as_ref()
        .and_then(|v| v.metrics.iter().find(|x| x.metric == m.metric));
    let Some(sm) = summary.filter(|s| s.nodes > 0) else {
        return;
    };
    let _ = write!(
        s,
        "<line x1=\"{0:.1}\" y1=\"12\" x2=\"{0:.1}\" y2=\"80\" stroke=\"#1d232a\"/><text x=\"{0:.1}\" y=\"10\" text-anchor=middle>median {1}</text>",
        ax.x(sm.median),
        num(sm.median)
    );
    if !sm.judged {
        return;
    }
    if let Some(t) = f.verdicts.as_ref().map(|v| v.pct_worse) {
        let th = if sm.higher_is_better {
            sm.median * (1.0 - t / 100.0)
        } else {
            sm.median * (1.0 + t / 100.0)
        };
        let _ = write!(s, "<line x1=\"{0:.1}\" y1=\"18\" x2=\"{0:.1}\" y2=\"80\" stroke=\"#b42318\" stroke-dasharray=\"4 3\"/>", ax.x(th));
    }
}

/// One dot per node, jittered over seven rows; a node that fails this
/// figure is red and labelled.
fn strip_dots(s: &mut String, f: &FleetRun, m: &Figure, ax: &StripAxis, pts: &[(u32, f64)]) {
    let outlier = |r: u32| {
        f.verdicts.as_ref().is_some_and(|v| {
            v.nodes
                .iter()
                .any(|n| n.rank == r && n.checks.iter().any(|c| c.metric == m.metric && c.fails()))
        })
    };
    for (i, (r, v)) in pts.iter().enumerate() {
        let y = 30.0 + (i % 7) as f64 * 6.5;
        let out = outlier(*r);
        let label = f.label(*r);
        let _ = write!(
            s,
            "<circle class=\"dot{}\" cx=\"{:.1}\" cy=\"{y:.1}\" r=\"{}\"><title>{}: {} {}</title></circle>",
            if out { " out" } else { "" },
            ax.x(*v),
            if out { 5 } else { 4 },
            esc(&label),
            num(*v),
            esc(m.unit())
        );
        if out {
            let _ = write!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"#b42318\">{}</text>",
                ax.x(*v) + 7.0,
                y + 4.0,
                esc(&label)
            );
        }
    }
}

/// The whole fleet report.
pub fn render(f: &FleetRun, scale_max: Option<f64>) -> String {
    let figs = metrics::fleet_figures(f);
    let defs = metrics::definitions(&figs);
    let title = format!("bwscope fleet — {} nodes", f.nodes.len());
    let mut s = String::with_capacity(64 * 1024);
    let _ = write!(
        s,
        "<!doctype html>\n<html lang=en><head><meta charset=utf-8><meta name=viewport content=\"width=device-width,initial-scale=1\"><title>{}</title><style>{STYLE}{FLEET_STYLE}</style>\
<script>window.addEventListener('error',function(e){{var h=document.documentElement;h.setAttribute('data-js-errors',(h.getAttribute('data-js-errors')||'')+(e.message||'error')+';');}});</script></head><body>\n\
<nav><a href=\"#verdict\">Verdict</a><a href=\"#nodes\">Nodes</a><a href=\"#figures\">Figures</a><a href=\"#network\">Network</a><a href=\"#time\">Time</a></nav><main>\n<h1>{}</h1>\n",
        esc(&title),
        esc(&title)
    );
    let _ = writeln!(
        s,
        "<p class=meta>bwscope {} · {} ranks on {} machine(s) via {} (control {}) · started {} · {}{}</p>",
        esc(&f.tool.version),
        f.launch.ranks,
        f.launch.machines,
        esc(&f.launch.launcher),
        esc(&f.launch.control),
        esc(&f.started_at),
        esc(f.finished_at.as_deref().unwrap_or("not finished")),
        if f.interrupted { " · <strong>interrupted</strong>" } else { "" }
    );
    s.push_str("<section id=verdict><h2>Verdict</h2>\n");
    verdict_section(&mut s, f);
    for w in &f.warnings {
        let _ = writeln!(
            s,
            "<p class=meta>warning: {} ({})</p>",
            esc(&w.to_string()),
            esc(w.hint())
        );
    }
    s.push_str("</section>\n<section id=nodes><h2>Nodes</h2><p class=meta>Farthest from the fleet first; click a header to sort. Hover a figure for its z-score.</p>\n");
    s.push_str(&node_table(f, &figs, &defs));
    s.push_str("</section>\n<section id=figures><h2>Figures</h2>\n");
    if defs.is_empty() {
        s.push_str("<p>No node figures: the per-node phase measured nothing.</p>\n");
    }
    for m in &defs {
        s.push_str(&strip(f, &figs, m));
    }
    s.push_str("</section>\n<section id=network><h2>Network</h2>\n");
    if f.network.is_empty() {
        s.push_str("<p>No network phase.</p>\n");
    }
    network_section(&mut s, f, scale_max);
    let t = &f.timings;
    let _ = writeln!(
        s,
        "</section>\n<section id=time><h2>Time</h2><table><tbody>\
<tr><td>total</td><td class=n>{:.1} s</td></tr><tr><td>startup (all ranks joined)</td><td class=n>{:.1} s</td></tr>\
<tr><td>per-node phase</td><td class=n>{:.1} s (measuring {:.1} s)</td></tr><tr><td>network phase</td><td class=n>{:.1} s (measuring {:.1} s)</td></tr>\
<tr><td>outside the measuring</td><td class=n>{:.1} %</td></tr></tbody></table>\
<h3>Options</h3><pre>{}</pre></section>",
        t.total_seconds,
        t.startup_seconds,
        t.node_phase_seconds,
        t.node_measure_seconds,
        t.network_seconds,
        t.network_measure_seconds,
        t.overhead_fraction * 100.0,
        esc(&serde_json::to_string_pretty(&f.options).unwrap_or_default())
    );
    let _ = writeln!(
        s,
        "</main><script>{SCRIPT}{FLEET_SCRIPT}</script></body></html>"
    );
    s
}

/// The verdict: nodes not judged, the failing nodes with why, slow paths
/// between healthy nodes, and how an outlier is defined.
fn verdict_section(s: &mut String, f: &FleetRun) {
    match &f.verdicts {
        None => s.push_str("<p>No verdict yet: the run did not finish.</p>\n"),
        Some(v) => {
            let failing: Vec<&NodeVerdict> = v.nodes.iter().filter(|n| n.drain).collect();
            let unknown: Vec<&NodeVerdict> = v.nodes.iter().filter(|n| !n.ok && !n.drain).collect();
            if let Some(line) = super::text::noise_line(v) {
                let _ = writeln!(s, "<p class=unknown id=noise>{}</p>", esc(&line));
            }
            // The fleet against its past, and findings about the whole fleet.
            let fleet = super::text::fleet_lines(v);
            if !fleet.is_empty() {
                s.push_str("<ul id=fleet-past>");
                for line in &fleet {
                    let _ = write!(s, "<li>{}</li>", esc(line));
                }
                s.push_str("</ul>\n");
            }
            if !unknown.is_empty() {
                s.push_str("<h3>Not judged (UNKNOWN)</h3><ul class=unknown>");
                for n in &unknown {
                    let _ = write!(
                        s,
                        "<li><strong>{}</strong>: {}</li>",
                        esc(&n.label),
                        esc(n.reason.as_deref().unwrap_or("not judged"))
                    );
                }
                s.push_str("</ul>\n");
            }
            if failing.is_empty() && unknown.len() == v.nodes.len() {
                s.push_str("<p class=unknown>No node could be judged.</p>\n");
            } else if failing.is_empty() {
                let _ = writeln!(s, "<p class=ok>Every judged node is within the fleet (robust z &lt; {} or less than {} % worse than the median{}).</p>", v.robust_z, v.pct_worse, if v.reference.is_some() { ", and within its class bounds" } else { "" });
            } else {
                s.push_str("<ul class=warnings>");
                for n in failing {
                    let _ = write!(
                        s,
                        "<li><strong>{}</strong>: {}</li>",
                        esc(&n.label),
                        esc(&super::text::why(n))
                    );
                }
                s.push_str("</ul>\n");
            }
            let slow: Vec<_> = v.links.iter().filter(|l| l.is_path()).collect();
            if !slow.is_empty() {
                s.push_str(
                    "<h3>Slow or failed paths between healthy nodes</h3><ul class=warnings>",
                );
                for l in slow {
                    let _ = write!(s, "<li>{}</li>", esc(&super::text::link_line(f, l)));
                }
                s.push_str("</ul>\n");
            }
            let _ = writeln!(s, "<p class=meta>A figure is an outlier when its robust z-score (median and MAD of the logarithms over the nodes) is at least {} and it is at least {} % worse than the fleet median; fewer than {} nodes with a figure are not judged.{}</p>", v.robust_z, v.pct_worse, v.min_nodes, v.reference.as_ref().map_or(String::new(), |r| format!(" Class bounds from {}.", esc(r))));
        }
    }
}

/// A heatmap per transport, schedule and size (up to
/// [`HEATMAP_MAX_NODES`] nodes).
fn network_section(s: &mut String, f: &FleetRun, scale_max: Option<f64>) {
    let mut id = 0;
    for m in &f.network {
        let measured = m.flows.iter().filter(|x| x.recv_gbps.is_some()).count();
        let _ = writeln!(
            s,
            "<h3>{} — {} schedule</h3><p class=meta>{} steps per size, {} of {} flows measured, {:.1} s; parameters <code>{}</code></p>",
            esc(m.transport.name()),
            esc(&m.schedule),
            m.steps,
            measured,
            m.flows.len(),
            m.seconds,
            esc(&m.parameters.to_string())
        );
        if f.nodes.len() > HEATMAP_MAX_NODES {
            let _ = writeln!(s, "<p>{} nodes: the heatmap is drawn up to {HEATMAP_MAX_NODES}; see fleet.csv for every pair.</p>", f.nodes.len());
            continue;
        }
        for &size in &m.sizes {
            s.push_str(&heatmap(f, m, size, scale_max, id));
            id += 1;
        }
    }
}
