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
//! - `threads`, or any suite whose records differ only in thread count: the
//!   metric against threads (linear x);
//! - anything with two or more working-set sizes (`cache`, `latency`,
//!   `memtype`, `transfer`, `net`, ...): the metric against size on a log2
//!   axis labelled in KiB/MiB/GiB, with the cache boundaries from
//!   `host.caches` drawn and labelled where the suite measures CPU memory.

use std::collections::BTreeMap;

use super::metric::{self, StatKind};
use super::Exporter;

mod contend;
mod draw;
use crate::model::detail::NumaDetail;
use crate::model::{BoundBy, Curve, Op, Record, Regime, Run, Status, SuiteId};
pub use draw::{color, png, register_fonts, svg, MAX_SIDE, MIN_SIDE};

/// The x axis of a line chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XAxis {
    /// Working-set or transfer size in bytes, log2 scale.
    Bytes,
    /// Thread count, linear.
    Threads,
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

/// More lines than this on one size chart are split per op.
const MAX_SERIES: usize = 10;

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

/// What tells records of one series apart beyond the kernel name: the
/// axes that vary within the suite and are not the x axis.
fn series_name(r: &Record, vary: &Vary, x: XAxis) -> String {
    let mut name = r.kernel.clone();
    if vary.pattern {
        if let Some(p) = &r.pattern {
            if !r.kernel.starts_with(p.as_str()) {
                name = format!("{p}:{name}");
            }
        }
    }
    if vary.threads && x != XAxis::Threads {
        name.push_str(&format!(" ×{}t", r.threads));
    }
    if vary.size && x != XAxis::Bytes {
        if let Some(s) = r.size_bytes {
            name.push_str(&format!(" {}", crate::util::units::format_bytes(s)));
        }
    }
    if vary.memory {
        if let Some(m) = &r.memory {
            name.push_str(&format!(" [{}]", m.kind));
        }
    }
    for p in r.detail.case() {
        if vary.cases.contains(&p.name) {
            name.push_str(&format!(" {}={}", p.name, p.shown()));
        }
    }
    name
}

#[derive(Default)]
struct Vary {
    pattern: bool,
    threads: bool,
    size: bool,
    memory: bool,
    /// The case parts (`CasePart::name`) that vary.
    cases: Vec<&'static str>,
}

fn vary(recs: &[&Record]) -> Vary {
    let differs = |f: &dyn Fn(&Record) -> String| recs.iter().any(|r| f(r) != f(recs[0]));
    let mut cases: Vec<&'static str> = recs
        .iter()
        .flat_map(|r| r.detail.case())
        .map(|p| p.name)
        .collect();
    cases.sort_unstable();
    cases.dedup();
    let part = |r: &Record, name: &str| {
        r.detail
            .case()
            .into_iter()
            .find(|p| p.name == name)
            .map(|p| p.value.to_string())
            .unwrap_or_default()
    };
    cases.retain(|k| differs(&|r| part(r, k)));
    Vary {
        pattern: differs(&|r| {
            r.pattern
                .as_ref()
                .map(|p| p.to_string())
                .unwrap_or_default()
        }),
        threads: differs(&|r| r.threads.to_string()),
        size: differs(&|r| format!("{:?}", r.size_bytes)),
        memory: differs(&|r| {
            r.memory
                .as_ref()
                .map(|m| m.kind.clone())
                .unwrap_or_default()
        }),
        cases,
    }
}

fn line_charts(
    run: &Run,
    suite: SuiteId,
    recs: &[&Record],
    x: XAxis,
    stat: StatKind,
) -> Vec<Chart> {
    let v = line_vary(recs, x);
    let merged = line_groups(recs, &v, x);
    let cpu_memory = !matches!(suite, SuiteId::Net | SuiteId::Transfer);
    let mut units: Vec<&str> = merged.keys().map(|k| k.0).collect();
    units.dedup();
    let mixed_units = units.len() > 1;
    let mut out = Vec::new();
    for ((unit, op), rs) in merged {
        let what = if unit == "ns" { "latency" } else { "bandwidth" };
        let (id, title, x_desc) = line_title(suite, &op, what, x, stat, mixed_units, cpu_memory);
        let markers = if x == XAxis::Bytes && cpu_memory {
            let curve = if unit == "ns" {
                Curve::Latency
            } else {
                Curve::Bandwidth
            };
            cache_markers(run, curve)
        } else {
            Vec::new()
        };
        let limits = if x == XAxis::Bytes && unit != "ns" {
            limit_lines(run, &rs)
        } else {
            Vec::new()
        };
        out.push(Chart {
            id,
            title,
            kind: Kind::Line(LineChart {
                x,
                x_desc: x_desc.into(),
                y_desc: format!("{what}, {unit}"),
                series: line_series(&rs, &v, x, stat),
                markers,
                limits,
            }),
        });
    }
    out
}

/// What names a series of a line chart (see [`vary`]).
fn line_vary(recs: &[&Record], x: XAxis) -> Vary {
    let mut v = vary(recs);
    if x == XAxis::Threads && v.size {
        // A size that follows the thread count (the survey splits 256 MiB
        // over the threads: 256 MiB at 1, 128 MiB each at 2) is one line
        // over thread counts; the size names series only where one thread
        // count has several (issue 29: one single-point series per size).
        v.size = false;
        let key = |r: &Record| (series_name(r, &v, x), r.threads);
        v.size = recs.iter().any(|a| {
            recs.iter()
                .any(|b| key(a) == key(b) && a.size_bytes != b.size_bytes)
        });
    }
    v
}

/// The records of each chart, keyed by (unit, op): split by unit (a suite
/// may mix bandwidth and latency records), then by op when there are too
/// many lines for one picture (op empty when not split).
fn line_groups<'a>(
    recs: &[&'a Record],
    v: &Vary,
    x: XAxis,
) -> BTreeMap<(&'static str, String), Vec<&'a Record>> {
    let mut groups: BTreeMap<(&'static str, String), Vec<&Record>> = BTreeMap::new();
    let mut names = Vec::new();
    for r in recs {
        let m = metric::of(r).expect("filtered");
        let name = series_name(r, v, x);
        if !names.contains(&name) {
            names.push(name);
        }
        groups
            .entry((m.unit, r.op.to_string()))
            .or_default()
            .push(r);
    }
    let split = names.len() > MAX_SERIES;
    let mut merged: BTreeMap<(&'static str, String), Vec<&Record>> = BTreeMap::new();
    for ((unit, op), rs) in groups {
        let key = if split { op } else { String::new() };
        merged.entry((unit, key)).or_default().extend(rs);
    }
    merged
}

/// One series per name, its points sorted along x.
fn line_series(rs: &[&Record], v: &Vary, x: XAxis, stat: StatKind) -> Vec<Series> {
    let mut series: Vec<Series> = Vec::new();
    for r in rs {
        let m = metric::of(r).expect("filtered");
        let xv = match x {
            XAxis::Bytes => r.size_bytes.unwrap_or(1) as f64,
            XAxis::Threads => r.threads as f64,
        };
        let name = series_name(r, v, x);
        let pos = match series.iter().position(|s| s.name == name) {
            Some(p) => p,
            None => {
                series.push(Series {
                    name,
                    points: Vec::new(),
                });
                series.len() - 1
            }
        };
        series[pos].points.push((xv, m.pick(stat)));
    }
    for s in &mut series {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    series
}

/// A line chart's id, title and x-axis description.
fn line_title(
    suite: SuiteId,
    op: &str,
    what: &str,
    x: XAxis,
    stat: StatKind,
    mixed_units: bool,
    cpu_memory: bool,
) -> (String, String, &'static str) {
    let stat_name = match stat {
        StatKind::Best => "best",
        StatKind::Median => "median",
    };
    let (x_desc, against, id_x) = match x {
        XAxis::Bytes => (
            if cpu_memory {
                "working set per thread"
            } else {
                "transfer size"
            },
            "size",
            "size",
        ),
        XAxis::Threads => ("threads", "threads", "threads"),
    };
    let mut id = format!("{suite}-{id_x}");
    if mixed_units {
        id.push_str(&format!("-{what}"));
    }
    // "latency: latency vs size" says it twice; "cache read: bandwidth …" does not.
    let mut head = if suite.name() == what {
        String::new()
    } else {
        suite.to_string()
    };
    if !op.is_empty() {
        id.push_str(&format!("-{op}"));
        head = format!("{head} {op}").trim().to_string();
    }
    let title = if head.is_empty() {
        format!("{what} vs {against} ({stat_name} of samples)")
    } else {
        format!("{head}: {what} vs {against} ({stat_name} of samples)")
    };
    (id, title, x_desc)
}

/// One labelled line per regime the records reach with a known limit,
/// spanning that regime's sizes, named by the ceiling it is: the regime's
/// own limit, read from the records well inside it — past twice the level
/// below, where a record no longer takes that level's higher limit
/// (`suites::record::limit`) — and from its reads where the chart has
/// reads (the headline op, as the summary judges it), else the highest
/// (the widest kernel's). Issue 29: a survey's L2 and L3 lines were drawn
/// at the 236 GB/s of a copy at the L1 edge, labelled "L1 store ports",
/// while the summary said L2 was bound by the L2→L1 fill at 118.
pub fn limit_lines(run: &Run, recs: &[&Record]) -> Vec<LimitLine> {
    let mut out: Vec<LimitLine> = Vec::new();
    let below = |regime: &Regime| match regime {
        Regime::L2 => Some(1),
        Regime::L3 => Some(2),
        Regime::Dram => run.host.data_caches().map(|c| c.level).max(),
        _ => None,
    };
    for regime in &Regime::ALL {
        let here: Vec<&&Record> = recs
            .iter()
            .filter(|r| r.regime.as_ref() == Some(regime) && r.size_bytes.is_some())
            .collect();
        let edge = below(regime)
            .and_then(|l| run.host.cache_size(l, Curve::Bandwidth))
            .map_or(0, |s| s.saturating_mul(2));
        let with_limit = |r: &&&Record| r.limit_gbps.is_some() && r.bound_by.is_some();
        let inside: Vec<&&Record> = here
            .iter()
            .copied()
            .filter(|r| r.size_bytes.is_some_and(|s| s > edge))
            .filter(with_limit)
            .collect();
        // Only records at the edge: theirs is the best there is.
        let pool = if inside.is_empty() {
            here.iter().copied().filter(with_limit).collect()
        } else {
            inside
        };
        let reads: Vec<&&Record> = pool.iter().copied().filter(|r| r.op == Op::Read).collect();
        let pool = if reads.is_empty() { pool } else { reads };
        let top = pool
            .iter()
            .filter_map(|r| Some((r.limit_gbps?, r.bound_by?)))
            .max_by(|a, b| a.0.total_cmp(&b.0));
        let Some((gbps, bound)) = top else {
            continue;
        };
        let sizes = here.iter().filter_map(|r| r.size_bytes);
        let (x0, x1) = sizes.fold((u64::MAX, 0), |(a, b), s| (a.min(s), b.max(s)));
        let what = if bound == BoundBy::DramChannels {
            "DRAM peak".to_string()
        } else {
            bound.label().to_string()
        };
        let g = if gbps >= 100.0 {
            format!("{gbps:.0}")
        } else {
            format!("{gbps:.1}")
        };
        out.push(LimitLine {
            x0: x0 as f64,
            x1: x1 as f64,
            gbps,
            label: format!("{regime} limit: {what} {g} GB/s"),
        });
    }
    out
}

/// One boundary per data/unified cache level: where the knee probe found
/// it ends for records of `curve` (`effective_size_bytes` for latency,
/// `bandwidth_size_bytes` for bandwidth) with CPUID's size as a faint line,
/// or CPUID's size alone where nothing was measured. A faint line within
/// 1.5× of the measured one goes unlabelled (the labels would overlap).
pub fn cache_markers(run: &Run, curve: Curve) -> Vec<Marker> {
    let size = crate::util::units::format_bytes;
    let mut out = Vec::new();
    for c in run.host.data_caches().filter(|c| c.size_bytes > 0) {
        let Some(e) = c.measured(curve).filter(|&e| e > 0) else {
            out.push(Marker {
                x: c.size_bytes as f64,
                label: format!("L{} {}", c.level, size(c.size_bytes)),
                faint: false,
            });
            continue;
        };
        out.push(Marker {
            x: e as f64,
            label: format!("L{} {} measured", c.level, size(e)),
            faint: false,
        });
        if e != c.size_bytes {
            let far = (e as f64 / c.size_bytes as f64).log2().abs() > 1.5f64.log2();
            out.push(Marker {
                x: c.size_bytes as f64,
                label: if far {
                    format!("L{} {} CPUID", c.level, size(c.size_bytes))
                } else {
                    String::new()
                },
                faint: true,
            });
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
