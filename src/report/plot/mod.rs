//! Charts, rendered from the run itself so pictures and data never
//! disagree (peers leave plotting to gnuplot scripts that drift from their
//! output, pmbw#10).
//!
//! Two steps: [`charts`] turns a run into chart descriptions using only the
//! record model (suite, size_bytes, threads, placement, the metric), so a
//! suite gets charts the day it lands; [`svg`] / [`png`] draw one with
//! plotters. Text uses the embedded DejaVu Sans (no fontconfig, no system
//! fonts), registered once before the first chart.
//!
//! Which chart a suite gets:
//! - `numa`: a heatmap, rows = cpu node, columns = memory node, per kernel;
//! - `contend`: stacked bars, one per phase (each agent's GB/s a segment,
//!   the aggregate above, the sum of the alones marked), and the phase ×
//!   agent matrix as a heatmap;
//! - `cores`: a bar per class of cpu pairs (CAS one-way ns), the class ×
//!   exchange matrix, and the cpu × cpu heatmap of the measured pairs;
//! - `threads`, or any suite whose records differ only in thread count: the
//!   metric against threads (linear x);
//! - anything with two or more working-set sizes (`cache`, `latency`,
//!   `memtype`, `transfer`, `net`, ...): the metric against size on a log2
//!   axis labelled in KiB/MiB/GiB, with the cache boundaries from
//!   `host.caches` drawn and labelled where the suite measures CPU memory.
//!
//! [`trends`] adds, for `bwscope plot`, one chart per headline figure with
//! earlier runs in this machine's history (`Run::history`).

use std::collections::BTreeMap;

use super::metric::{self, StatKind};
use super::Exporter;

mod contend;
mod cores;
mod draw;
mod lines;
mod marks;
mod trend;
use crate::model::detail::NumaDetail;
use crate::model::{Record, Run, Status, SuiteId};
pub use draw::{color, png, register_fonts, svg, MAX_SIDE, MIN_SIDE};
use lines::line_charts;
pub use marks::{cache_markers, limit_lines};
pub use trend::trends;

/// The x axis of a line chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XAxis {
    /// Working-set or transfer size in bytes, log2 scale.
    Bytes,
    /// Thread count, linear.
    Threads,
    /// Runs of one case on this machine, oldest first (1, 2, …), linear:
    /// a headline's trend ([`trends`]).
    Runs,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    /// (x, y), x ascending.
    pub points: Vec<(f64, f64)>,
}

/// A labelled vertical line (a cache boundary).
#[derive(Debug, Clone, PartialEq)]
pub struct Marker {
    pub x: f64,
    /// Empty: the line alone.
    pub label: String,
    /// Drawn light: CPUID's size where the measured one is drawn too.
    pub faint: bool,
}

/// A physical limit over a span of sizes (a roofline in bandwidth form):
/// the highest `limit_gbps` the chart's records carry in one regime.
#[derive(Debug, Clone, PartialEq)]
pub struct LimitLine {
    /// The sizes of that regime's records, bytes.
    pub x0: f64,
    pub x1: f64,
    pub gbps: f64,
    /// What it is and its source, e.g. "L2→L1 fill 128 GB/s".
    pub label: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    pub x: XAxis,
    pub x_desc: String,
    pub y_desc: String,
    pub series: Vec<Series>,
    pub markers: Vec<Marker>,
    /// Limits drawn as labelled horizontal lines; bandwidth over size only.
    pub limits: Vec<LimitLine>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Heatmap {
    pub row_desc: String,
    pub col_desc: String,
    pub rows: Vec<String>,
    pub cols: Vec<String>,
    /// values[row][col]; None where nothing was measured.
    pub values: Vec<Vec<Option<f64>>>,
    pub unit: String,
}

/// Stacked bars: one bar per group (a contend phase), one segment per
/// key (an agent) with a legend, the bar's total written above it and a
/// reference level (the sum of the agents' alone rates) marked across it.
#[derive(Debug, Clone, PartialEq)]
pub struct Bars {
    pub y_desc: String,
    /// Segment names, in legend and stacking order (bottom first).
    pub keys: Vec<String>,
    pub bars: Vec<Bar>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    pub label: String,
    /// One value per key; None where that key is not in this bar.
    pub segments: Vec<Option<f64>>,
    /// Written above the bar; None: the bar is marked incomplete.
    pub total: Option<f64>,
    /// Drawn as a dashed level across the bar, labelled.
    pub reference: Option<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Line(LineChart),
    Heat(Heatmap),
    Bars(Bars),
}

/// One chart: a stable id (used in file names and HTML anchors), a title,
/// and what to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub id: String,
    pub title: String,
    pub kind: Kind,
}

/// Every chart the run supports, in record order of suites.
pub fn charts(run: &Run, stat: StatKind) -> Vec<Chart> {
    let mut out = Vec::new();
    for (suite, recs) in crate::report::by_suite(&run.records) {
        let recs: Vec<&Record> = recs
            .into_iter()
            .filter(|r| r.status == Status::Ok && metric::of(r).is_some())
            .collect();
        if recs.is_empty() {
            continue;
        }
        let distinct = |f: &dyn Fn(&Record) -> String| {
            let mut v: Vec<String> = recs.iter().map(|r| f(r)).collect();
            v.sort();
            v.dedup();
            v.len()
        };
        let sizes = distinct(&|r| format!("{:?}", r.size_bytes));
        let threads = distinct(&|r| r.threads.to_string());
        if suite == SuiteId::Numa {
            out.extend(numa_heatmaps(suite, &recs, stat));
        } else if suite == SuiteId::Cores {
            out.extend(cores::by_class(&recs, stat));
            out.extend(cores::exchanges(&recs, stat));
            out.extend(cores::matrix(&recs, stat));
        } else if suite == SuiteId::Contend {
            out.extend(contend::bars(&recs));
            out.extend(contend::matrix(&recs));
        } else if suite == SuiteId::Threads || (threads > 1 && sizes <= 1) {
            out.extend(line_charts(run, suite, &recs, XAxis::Threads, stat));
        } else if sizes > 1 && recs.iter().all(|r| r.size_bytes.is_some()) {
            out.extend(line_charts(run, suite, &recs, XAxis::Bytes, stat));
        }
    }
    out
}

fn numa_heatmaps(suite: SuiteId, recs: &[&Record], stat: StatKind) -> Vec<Chart> {
    let node = |r: &Record, which: &str| -> Option<u32> {
        let p = r.placement.as_ref();
        let cell = r.detail.get::<NumaDetail>();
        match which {
            "cpu" => p
                .and_then(|p| p.cpu_node)
                .or_else(|| cell.and_then(|c| c.case_cpu_node)),
            _ => p
                .and_then(|p| p.memory_node)
                .or_else(|| cell.and_then(|c| c.case_memory_node)),
        }
    };
    let mut by_kernel: BTreeMap<String, Vec<&Record>> = BTreeMap::new();
    for r in recs {
        by_kernel.entry(r.kernel.clone()).or_default().push(r);
    }
    let mut out = Vec::new();
    for (kernel, rs) in by_kernel {
        let mut rows: Vec<u32> = rs.iter().filter_map(|r| node(r, "cpu")).collect();
        let mut cols: Vec<u32> = rs.iter().filter_map(|r| node(r, "memory")).collect();
        rows.sort_unstable();
        rows.dedup();
        cols.sort_unstable();
        cols.dedup();
        if rows.is_empty() || cols.is_empty() {
            continue;
        }
        let mut values = vec![vec![None; cols.len()]; rows.len()];
        let mut unit = "GB/s";
        for r in &rs {
            if let (Some(c), Some(m), Some(mm)) = (node(r, "cpu"), node(r, "memory"), metric::of(r))
            {
                let i = rows.iter().position(|&x| x == c).expect("row");
                let j = cols.iter().position(|&x| x == m).expect("col");
                let v = mm.pick(stat);
                unit = mm.unit;
                // Several records per cell (sizes): keep the better one.
                let better = |a: f64, b: f64| {
                    if mm.higher_is_better {
                        a.max(b)
                    } else {
                        a.min(b)
                    }
                };
                values[i][j] = Some(values[i][j].map_or(v, |o| better(o, v)));
            }
        }
        out.push(Chart {
            id: format!("{suite}-matrix-{kernel}"),
            title: format!("{suite}: {kernel}, {unit} by cpu node × memory node"),
            kind: Kind::Heat(Heatmap {
                row_desc: "cpu node".into(),
                col_desc: "memory node".into(),
                rows: rows.iter().map(|r| format!("node {r}")).collect(),
                cols: cols.iter().map(|c| format!("node {c}")).collect(),
                values,
                unit: unit.into(),
            }),
        });
    }
    out
}

/// Picture format of an output file, from its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Svg,
    Png,
}

impl Format {
    pub fn from_path(p: &str) -> Option<Format> {
        let lower = p.to_ascii_lowercase();
        if lower.ends_with(".svg") {
            Some(Format::Svg)
        } else if lower.ends_with(".png") {
            Some(Format::Png)
        } else {
            None
        }
    }
}

/// Exporter for the run's first chart (or a chosen one).
pub struct Picture {
    pub format: Format,
    pub width: u32,
    pub height: u32,
    pub stat: StatKind,
    pub chart: Option<String>,
}

impl Exporter for Picture {
    fn serialize(&self, run: &Run) -> anyhow::Result<Vec<u8>> {
        let all = charts(run, self.stat);
        let c = match &self.chart {
            Some(id) => all.iter().find(|c| &c.id == id),
            None => all.first(),
        }
        .ok_or_else(|| anyhow::anyhow!("the run has no chart to draw"))?;
        match self.format {
            Format::Svg => Ok(svg(c, self.width, self.height)?.into_bytes()),
            Format::Png => png(c, self.width, self.height),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Curve;

    #[test]
    fn measured_boundaries_are_drawn_with_cpuid_faint() {
        let mut run = Run::new(
            "cache",
            serde_json::json!({}),
            crate::model::Host::default(),
            crate::model::Units::GB,
        );
        let cache = |level: u8, size: u64, eff: Option<u64>| crate::model::Cache {
            effective_size_bytes: eff,
            ..crate::model::Cache::new(level, "unified", size, 64, vec![0], "test".into())
        };
        run.host.caches = vec![
            cache(1, 48 << 10, None),
            cache(2, 2 << 20, Some(3 << 19)),
            cache(3, 480 << 20, Some(10 << 20)),
        ];
        let m = cache_markers(&run, Curve::Latency);
        let shown: Vec<(f64, &str, bool)> =
            m.iter().map(|m| (m.x, m.label.as_str(), m.faint)).collect();
        assert_eq!(
            shown,
            vec![
                ((48u64 << 10) as f64, "L1 48 KiB", false),
                ((3u64 << 19) as f64, "L2 1.50 MiB measured", false),
                ((2u64 << 20) as f64, "", true),
                ((10u64 << 20) as f64, "L3 10 MiB measured", false),
                ((480u64 << 20) as f64, "L3 480 MiB CPUID", true),
            ]
        );
    }
}
