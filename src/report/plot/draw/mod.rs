//! Drawing a [`Chart`] with plotters: lines on log-2 size axes with cache
//! markers, heatmaps with values in the cells, stacked bars with a
//! legend; SVG and PNG with the
//! embedded DejaVu font, so output is the same on every machine.

use std::sync::Once;

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{Chart, Kind, LineChart, XAxis};
use grid::{draw_bars, draw_heat};

mod grid;

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
    let (x0, x1) = x_range(c);
    // Limits count towards the scale: a roofline off the chart says nothing.
    let ymax = nice_max(
        pts()
            .map(|p| p.1)
            .chain(c.limits.iter().map(|l| l.gbps))
            .fold(0.0, f64::max),
    );
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
        // Whole numbers: threads, or a run's place in its history.
        XAxis::Threads | XAxis::Runs => {
            mesh.x_labels((x1.ceil() as usize + 1).min(33))
                .x_label_formatter(&threads_fmt);
        }
    }
    mesh.draw()?;
    let frame = Frame {
        x0,
        x1,
        ymax,
        scale,
    };
    draw_markers(root, &mut chart, c, &frame)?;
    draw_limits(root, &mut chart, c, &frame)?;
    draw_series(&mut chart, c, &frame)?;
    root.present()?;
    Ok(())
}

/// A line chart's plotting frame: its ranges and the pixel scale.
struct Frame {
    x0: f64,
    x1: f64,
    ymax: f64,
    scale: f64,
}

impl Frame {
    fn px(&self, v: i32) -> i32 {
        (v as f64 * self.scale).round() as i32
    }
}

type Plot<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// Where a chart's x value is drawn: log2 of bytes, or threads as is.
fn tx(axis: XAxis, x: f64) -> f64 {
    match axis {
        XAxis::Bytes => x.max(1.0).log2(),
        XAxis::Threads | XAxis::Runs => x,
    }
}

/// The x range: whole powers of two around the sizes, or 0 to the most
/// threads and a half.
fn x_range(c: &LineChart) -> (f64, f64) {
    let (mut x0, mut x1) = c
        .series
        .iter()
        .flat_map(|s| s.points.iter())
        .fold((f64::MAX, f64::MIN), |(a, b), p| {
            (a.min(tx(c.x, p.0)), b.max(tx(c.x, p.0)))
        });
    if x0 > x1 {
        (x0, x1) = (0.0, 1.0);
    }
    match c.x {
        XAxis::Bytes => (x0.floor() - 0.25, x1.ceil() + 0.25),
        XAxis::Threads => (0.0, x1.max(1.0) + 0.5),
        XAxis::Runs => (0.5, x1.max(1.0) + 0.5),
    }
}

/// Cache boundaries, drawn before the data so its lines draw over them;
/// their labels sit above the plot where no data or legend can hide them.
fn draw_markers<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &mut Plot<'_, DB>,
    c: &LineChart,
    f: &Frame,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let (x0, x1, ymax) = (f.x0, f.x1, f.ymax);
    let px = |v: i32| f.px(v);
    for m in &c.markers {
        let x = tx(c.x, m.x);
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
    Ok(())
}

/// Each limit over its regime's sizes, dotted dark red, labelled at its
/// left end just above the line.
fn draw_limits<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &mut Plot<'_, DB>,
    c: &LineChart,
    f: &Frame,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let (x0, x1, scale) = (f.x0, f.x1, f.scale);
    let px = |v: i32| f.px(v);
    let limit_col = RGBColor(150, 20, 20);
    for l in &c.limits {
        let (a, b) = (tx(c.x, l.x0).max(x0), tx(c.x, l.x1).min(x1));
        if a > b {
            continue;
        }
        chart.draw_series(std::iter::once(plotters::element::DashedPathElement::new(
            vec![(a, l.gbps), (b.max(a + 0.5).min(x1), l.gbps)],
            px(3),
            px(3),
            limit_col.stroke_width(px(2).max(1) as u32),
        )))?;
        let (bx, by) = chart.backend_coord(&(a, l.gbps));
        // Kept inside the plot: a label past its right edge is cut off.
        let (right, _) = chart.backend_coord(&(x1, l.gbps));
        let width = (l.label.chars().count() as f64 * 7.2 * scale) as i32;
        root.draw(&Text::new(
            l.label.clone(),
            ((bx + px(2)).min(right - width), by - px(17)),
            ("sans-serif", px(13)).into_font().color(&limit_col),
        ))?;
    }
    Ok(())
}

/// The data: one line with dots per series, and the legend where the
/// curves are low.
fn draw_series<'a, DB: DrawingBackend + 'a>(
    chart: &mut Plot<'a, DB>,
    c: &LineChart,
    f: &Frame,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let px = |v: i32| f.px(v);
    for (i, s) in c.series.iter().enumerate() {
        let col = color(i);
        let pts: Vec<(f64, f64)> = s.points.iter().map(|p| (tx(c.x, p.0), p.1)).collect();
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

fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, c: &Chart) -> DrawResult
where
    DB::ErrorType: 'static,
{
    match &c.kind {
        Kind::Line(l) => draw_line(root, &c.title, l),
        Kind::Heat(hm) => draw_heat(root, &c.title, hm),
        Kind::Bars(b) => draw_bars(root, &c.title, b),
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

#[cfg(test)]
mod tests {
    use super::*;

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
