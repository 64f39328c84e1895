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
//! - `threads`, or any suite whose records differ only in thread count: the
//!   metric against threads (linear x);
//! - anything with two or more working-set sizes (`cache`, `latency`,
//!   `memtype`, `transfer`, `net`, ...): the metric against size on a log2
//!   axis labelled in KiB/MiB/GiB, with the cache boundaries from
//!   `host.caches` drawn and labelled where the suite measures CPU memory.

use std::collections::BTreeMap;
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::metric::{self, StatKind};
use super::Exporter;
use crate::model::{Record, Run, Status};

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

#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    pub x: XAxis,
    pub x_desc: String,
    pub y_desc: String,
    pub series: Vec<Series>,
    pub markers: Vec<Marker>,
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

#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Line(LineChart),
    Heat(Heatmap),
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
    let mut suites: Vec<&str> = Vec::new();
    for r in &run.records {
        if !suites.contains(&r.suite.as_str()) {
            suites.push(&r.suite);
        }
    }
    let mut out = Vec::new();
    for suite in suites {
        let recs: Vec<&Record> = run
            .records
            .iter()
            .filter(|r| r.suite == suite && r.status == Status::Ok && metric::of(r).is_some())
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
        if suite == "numa" {
            out.extend(numa_heatmaps(suite, &recs, stat));
        } else if suite == "threads" || (threads > 1 && sizes <= 1) {
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
    for (k, v) in &r.extra {
        if k.starts_with("case_") && vary.cases.contains(k) {
            let v = v
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| v.to_string());
            name.push_str(&format!(" {}={}", k.trim_start_matches("case_"), v));
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
    cases: Vec<String>,
}

fn vary(recs: &[&Record]) -> Vary {
    let differs = |f: &dyn Fn(&Record) -> String| recs.iter().any(|r| f(r) != f(recs[0]));
    let mut cases: Vec<String> = recs
        .iter()
        .flat_map(|r| r.extra.keys().filter(|k| k.starts_with("case_")).cloned())
        .collect();
    cases.sort();
    cases.dedup();
    cases.retain(|k| differs(&|r| r.extra.get(k).map(|v| v.to_string()).unwrap_or_default()));
    Vary {
        pattern: differs(&|r| r.pattern.clone().unwrap_or_default()),
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

fn line_charts(run: &Run, suite: &str, recs: &[&Record], x: XAxis, stat: StatKind) -> Vec<Chart> {
    let v = vary(recs);
    // Split by unit (a suite may mix bandwidth and latency records), then
    // by op when there are too many lines for one picture.
    let mut groups: BTreeMap<(&'static str, String), Vec<&Record>> = BTreeMap::new();
    let mut names = Vec::new();
    for r in recs {
        let m = metric::of(r).expect("filtered");
        let name = series_name(r, &v, x);
        if !names.contains(&name) {
            names.push(name);
        }
        groups.entry((m.unit, r.op.clone())).or_default().push(r);
    }
    let split = names.len() > MAX_SERIES;
    let mut merged: BTreeMap<(&'static str, String), Vec<&Record>> = BTreeMap::new();
    for ((unit, op), rs) in groups {
        let key = if split { op } else { String::new() };
        merged.entry((unit, key)).or_default().extend(rs);
    }
    let cpu_memory = !matches!(suite, "net" | "transfer");
    let mut units: Vec<&str> = merged.keys().map(|k| k.0).collect();
    units.dedup();
    let mixed_units = units.len() > 1;
    let mut out = Vec::new();
    for ((unit, op), rs) in merged {
        let mut series: Vec<Series> = Vec::new();
        for r in &rs {
            let m = metric::of(r).expect("filtered");
            let xv = match x {
                XAxis::Bytes => r.size_bytes.unwrap_or(1) as f64,
                XAxis::Threads => r.threads as f64,
            };
            let name = series_name(r, &v, x);
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
        let what = if unit == "ns" { "latency" } else { "bandwidth" };
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
        let mut head = if suite == what {
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
        let markers = if x == XAxis::Bytes && cpu_memory {
            cache_markers(run)
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
                series,
                markers,
            }),
        });
    }
    out
}

/// One boundary per data/unified cache level: where the knee probe found
/// it ends (`effective_size_bytes`) with CPUID's size as a faint line, or
/// CPUID's size alone where nothing was measured. A faint line within
/// 1.5× of the measured one goes unlabelled (the labels would overlap).
pub fn cache_markers(run: &Run) -> Vec<Marker> {
    let size = crate::util::units::format_bytes;
    let mut out = Vec::new();
    for c in run.host.data_caches().filter(|c| c.size_bytes > 0) {
        let Some(e) = c.effective_size_bytes.filter(|&e| e > 0) else {
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

fn numa_heatmaps(suite: &str, recs: &[&Record], stat: StatKind) -> Vec<Chart> {
    let node = |r: &Record, which: &str| -> Option<u32> {
        let p = r.placement.as_ref();
        let from_placement = match which {
            "cpu" => p.and_then(|p| p.cpu_node),
            _ => p.and_then(|p| p.memory_node),
        };
        from_placement.or_else(|| {
            r.extra
                .get(&format!("case_{which}_node"))
                .and_then(|v| v.as_u64())
                .map(|v| v as u32)
        })
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

// ---------------------------------------------------------------- drawing

static FONTS: Once = Once::new();

/// Register the embedded DejaVu Sans under the family name every chart
/// asks for. Without this plotters' ab_glyph backend has no font at all,
/// for SVG as much as for PNG.
pub fn register_fonts() {
    FONTS.call_once(|| {
        let _ = plotters::style::register_font(
            "sans-serif",
            FontStyle::Normal,
            dejavu::sans::regular(),
        );
        let _ = plotters::style::register_font("sans-serif", FontStyle::Bold, dejavu::sans::bold());
    });
}

/// Tableau 10: distinguishable, and readable for most colour-blind readers.
const PALETTE: [(u8, u8, u8); 10] = [
    (31, 119, 180),
    (255, 127, 14),
    (44, 160, 44),
    (214, 39, 40),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (127, 127, 127),
    (188, 189, 34),
    (23, 190, 207),
];

pub fn color(i: usize) -> RGBColor {
    let (r, g, b) = PALETTE[i % PALETTE.len()];
    RGBColor(r, g, b)
}

/// Axis label for log2(bytes) = `e`: "4 KiB", "1 MiB"; nothing between
/// whole powers of two.
fn bytes_label(e: f64) -> String {
    if (e - e.round()).abs() > 1e-6 || e < 0.0 {
        return String::new();
    }
    crate::util::units::format_bytes(1u64 << (e.round() as u32).min(62))
}

fn nice_max(v: f64) -> f64 {
    if v.is_nan() || v <= 0.0 {
        return 1.0;
    }
    let mag = 10f64.powf(v.log10().floor());
    for mag in [mag, mag * 10.0] {
        for m in [1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0] {
            if v * 1.05 <= m * mag {
                return m * mag;
            }
        }
    }
    100.0 * mag
}

type DrawResult = Result<(), Box<dyn std::error::Error>>;

fn draw_line<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    c: &LineChart,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let pts = || c.series.iter().flat_map(|s| s.points.iter());
    let tx = |x: f64| match c.x {
        XAxis::Bytes => x.max(1.0).log2(),
        XAxis::Threads => x,
    };
    let (mut x0, mut x1) = pts().fold((f64::MAX, f64::MIN), |(a, b), p| {
        (a.min(tx(p.0)), b.max(tx(p.0)))
    });
    if x0 > x1 {
        (x0, x1) = (0.0, 1.0);
    }
    match c.x {
        XAxis::Bytes => {
            x0 = x0.floor() - 0.25;
            x1 = x1.ceil() + 0.25;
        }
        XAxis::Threads => {
            x0 = 0.0;
            x1 = x1.max(1.0) + 0.5;
        }
    }
    let ymax = nice_max(pts().map(|p| p.1).fold(0.0, f64::max));
    let (_, h) = root.dim_in_pixel();
    let scale = (h as f64 / 720.0).clamp(0.5, 3.0);
    let px = |v: i32| (v as f64 * scale).round() as i32;
    let body = root.margin(px(8), 0, 0, 0).titled(
        title,
        ("sans-serif", px(24)).into_font().style(FontStyle::Bold),
    )?;
    let mut chart = ChartBuilder::on(&body)
        .margin(px(16))
        // Room above the plot for the cache-boundary labels.
        .margin_top(if c.markers.is_empty() { px(8) } else { px(28) })
        .x_label_area_size(px(50))
        .y_label_area_size(px(70))
        .build_cartesian_2d(x0..x1, 0.0..ymax)?;
    let label_font = ("sans-serif", px(15)).into_font();
    let bytes_fmt = |v: &f64| bytes_label(*v);
    let threads_fmt = |v: &f64| {
        if (v - v.round()).abs() < 1e-6 && *v >= 1.0 {
            format!("{}", v.round())
        } else {
            String::new()
        }
    };
    let y_fmt = |v: &f64| {
        if ymax >= 20.0 {
            format!("{v:.0}")
        } else if ymax >= 2.0 {
            format!("{v:.1}")
        } else {
            format!("{v:.2}")
        }
    };
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(c.x_desc.as_str())
        .y_desc(c.y_desc.as_str())
        .label_style(label_font.clone())
        .axis_desc_style(("sans-serif", px(17)))
        .light_line_style(RGBColor(238, 238, 238))
        .bold_line_style(RGBColor(215, 215, 215))
        .x_max_light_lines(1)
        .y_max_light_lines(2)
        .y_labels(10)
        .y_label_formatter(&y_fmt);
    match c.x {
        XAxis::Bytes => {
            let span = (x1 - x0).round() as usize;
            mesh.x_labels(span + 1).x_label_formatter(&bytes_fmt);
        }
        XAxis::Threads => {
            mesh.x_labels((x1.ceil() as usize + 1).min(33))
                .x_label_formatter(&threads_fmt);
        }
    }
    mesh.draw()?;
    // Cache boundaries first, so the data lines draw over them; their
    // labels sit above the plot where no data or legend can hide them.
    for m in &c.markers {
        let x = tx(m.x);
        if x < x0 || x > x1 {
            continue;
        }
        let (color, width) = if m.faint {
            (RGBColor(190, 190, 190), px(1).max(1) as u32)
        } else {
            (RGBColor(90, 90, 90), px(2).max(1) as u32)
        };
        chart.draw_series(std::iter::once(plotters::element::DashedPathElement::new(
            vec![(x, 0.0), (x, ymax)],
            px(6),
            px(4),
            color.stroke_width(width),
        )))?;
        if !m.label.is_empty() {
            let (bx, by) = chart.backend_coord(&(x, ymax));
            root.draw(&Text::new(
                m.label.clone(),
                (bx + px(4), by - px(19)),
                ("sans-serif", px(14)).into_font().color(&color),
            ))?;
        }
    }
    for (i, s) in c.series.iter().enumerate() {
        let col = color(i);
        let pts: Vec<(f64, f64)> = s.points.iter().map(|p| (tx(p.0), p.1)).collect();
        chart
            .draw_series(LineSeries::new(
                pts.clone(),
                col.stroke_width(px(2).max(1) as u32),
            ))?
            .label(s.name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], col.stroke_width(3)));
        chart.draw_series(
            pts.into_iter()
                .map(|p| Circle::new(p, px(3).max(2), col.filled())),
        )?;
    }
    if !c.series.is_empty() {
        chart
            .configure_series_labels()
            .label_font(("sans-serif", px(14)))
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(180, 180, 180))
            .position(legend_corner(c))
            .draw()?;
    }
    root.present()?;
    Ok(())
}

/// Put the legend where the curves are low: upper right when they fall
/// with x (bandwidth over size), upper left when they rise (latency over
/// size, thread scaling).
fn legend_corner(c: &LineChart) -> SeriesLabelPosition {
    let rise: f64 = c
        .series
        .iter()
        .filter_map(|s| Some(s.points.last()?.1 - s.points.first()?.1))
        .sum();
    if rise > 0.0 {
        SeriesLabelPosition::UpperLeft
    } else {
        SeriesLabelPosition::UpperRight
    }
}

fn heat_color(t: f64) -> RGBColor {
    // White → dark blue; t in 0..1.
    let t = t.clamp(0.0, 1.0);
    let lerp = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
    RGBColor(lerp(247.0, 8.0), lerp(251.0, 48.0), lerp(255.0, 107.0))
}

fn draw_heat<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    c: &Heatmap,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let (w, h) = root.dim_in_pixel();
    let scale = (h as f64 / 720.0).clamp(0.5, 3.0);
    let px = |v: i32| (v as f64 * scale).round() as i32;
    root.draw(&Text::new(
        title.to_string(),
        (px(16), px(12)),
        ("sans-serif", px(24)).into_font().style(FontStyle::Bold),
    ))?;
    let left = px(130);
    let top = px(90);
    let right = w as i32 - px(30);
    let bottom = h as i32 - px(30);
    let nr = c.rows.len().max(1) as i32;
    let nc = c.cols.len().max(1) as i32;
    let cw = ((right - left) / nc).max(1);
    let ch = ((bottom - top) / nr).max(1);
    let all: Vec<f64> = c.values.iter().flatten().flatten().copied().collect();
    let lo = all.iter().copied().fold(f64::MAX, f64::min);
    let hi = all.iter().copied().fold(f64::MIN, f64::max);
    let font = ("sans-serif", px(16)).into_font();
    root.draw(&Text::new(
        format!("{} ↓   {} →", c.row_desc, c.col_desc),
        (px(16), top - px(45)),
        font.clone(),
    ))?;
    for (j, col) in c.cols.iter().enumerate() {
        root.draw(&Text::new(
            col.clone(),
            (left + j as i32 * cw + cw / 2 - px(25), top - px(22)),
            font.clone(),
        ))?;
    }
    for (i, row) in c.rows.iter().enumerate() {
        let y = top + i as i32 * ch;
        root.draw(&Text::new(
            row.clone(),
            (px(16), y + ch / 2 - px(8)),
            font.clone(),
        ))?;
        for j in 0..c.cols.len() {
            let x = left + j as i32 * cw;
            let v = c.values.get(i).and_then(|r| r.get(j)).copied().flatten();
            let t = match v {
                Some(v) if hi > lo => (v - lo) / (hi - lo),
                Some(_) => 1.0,
                None => 0.0,
            };
            let fill = if v.is_some() {
                heat_color(0.15 + 0.85 * t)
            } else {
                RGBColor(230, 230, 230)
            };
            root.draw(&Rectangle::new(
                [(x, y), (x + cw - 2, y + ch - 2)],
                fill.filled(),
            ))?;
            let text = v.map_or("–".to_string(), |v| format!("{:.1} {}", v, c.unit));
            let fg = if t > 0.55 { WHITE } else { BLACK };
            root.draw(&Text::new(
                text,
                (x + px(8), y + ch / 2 - px(8)),
                font.clone().color(&fg),
            ))?;
        }
    }
    root.present()?;
    Ok(())
}

fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, c: &Chart) -> DrawResult
where
    DB::ErrorType: 'static,
{
    match &c.kind {
        Kind::Line(l) => draw_line(root, &c.title, l),
        Kind::Heat(hm) => draw_heat(root, &c.title, hm),
    }
}

/// Smallest and largest accepted picture sides, pixels.
pub const MIN_SIDE: u32 = 200;
pub const MAX_SIDE: u32 = 8000;

/// The chart as an SVG document.
pub fn svg(c: &Chart, width: u32, height: u32) -> anyhow::Result<String> {
    register_fonts();
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, (width, height)).into_drawing_area();
        draw(&root, c).map_err(|e| anyhow::anyhow!("drawing {}: {}", c.id, e))?;
    }
    Ok(s)
}

/// The chart as a PNG file (RGB, 8 bit), encoded with the `png` crate to
/// keep the heavy `image` crate out of the build.
pub fn png(c: &Chart, width: u32, height: u32) -> anyhow::Result<Vec<u8>> {
    register_fonts();
    let mut rgb = vec![0u8; width as usize * height as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (width, height)).into_drawing_area();
        draw(&root, c).map_err(|e| anyhow::anyhow!("drawing {}: {}", c.id, e))?;
    }
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, width, height);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_compression(png::Compression::Best);
        let mut w = enc.write_header()?;
        w.write_image_data(&rgb)?;
    }
    Ok(out)
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
            level,
            kind: "unified".into(),
            size_bytes: size,
            line_bytes: 64,
            shared_cpus: vec![0],
            source: "test".into(),
            effective_size_bytes: eff,
            effective_source: None,
        };
        run.host.caches = vec![
            cache(1, 48 << 10, None),
            cache(2, 2 << 20, Some(3 << 19)),
            cache(3, 480 << 20, Some(10 << 20)),
        ];
        let m = cache_markers(&run);
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

    #[test]
    fn byte_labels_only_on_whole_powers() {
        assert_eq!(bytes_label(14.0), "16 KiB");
        assert_eq!(bytes_label(20.0), "1 MiB");
        assert_eq!(bytes_label(30.0), "1 GiB");
        assert_eq!(bytes_label(14.5), "");
    }

    #[test]
    fn nice_max_is_above_the_data() {
        for v in [0.3, 1.0, 9.9, 22.5, 203.0, 1234.0] {
            let m = nice_max(v);
            assert!(m >= v * 1.05 && m <= v * 2.5, "{v} -> {m}");
        }
        assert_eq!(nice_max(0.0), 1.0);
    }
}
