//! Heatmaps (values in the cells) and stacked bars (with a legend): the
//! charts that are not lines.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::super::{Bar, Bars, Heatmap};
use super::{color, nice_max, DrawResult};
use crate::report::short_num;

fn heat_color(t: f64) -> RGBColor {
    // White → dark blue; t in 0..1.
    let t = t.clamp(0.0, 1.0);
    let lerp = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
    RGBColor(lerp(247.0, 8.0), lerp(251.0, 48.0), lerp(255.0, 107.0))
}

/// A white page with `title` at its top: its size and the text scale
/// (1 at 720 pixels high).
fn titled<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
) -> Result<(u32, u32, f64), Box<dyn std::error::Error>>
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
    Ok((w, h, scale))
}

pub(super) fn draw_heat<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    c: &Heatmap,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let (w, h, scale) = titled(root, title)?;
    let px = |v: i32| (v as f64 * scale).round() as i32;
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

/// Stacked bars: a y axis with gridlines, one bar per group, segments
/// coloured by key (legend on the right), the total above each bar and the
/// reference as a dashed level across it.
pub(super) fn draw_bars<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    c: &Bars,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let (w, h, scale) = titled(root, title)?;
    let px = |v: i32| (v as f64 * scale).round() as i32;
    let font = ("sans-serif", px(15)).into_font();
    let (left, top) = (px(80), px(80));
    let (right, bottom) = (w as i32 - px(190), h as i32 - px(90));
    let stacked = |b: &Bar| b.segments.iter().flatten().sum::<f64>();
    let hi = c
        .bars
        .iter()
        .flat_map(|b| [Some(stacked(b)), b.total, b.reference])
        .flatten()
        .fold(0.0, f64::max);
    let ymax = nice_max(hi);
    let y_of = |v: f64| bottom - ((v / ymax) * (bottom - top) as f64).round() as i32;
    root.draw(&Text::new(
        c.y_desc.clone(),
        (px(16), top - px(32)),
        font.clone(),
    ))?;
    for t in 0..=5 {
        let v = ymax * t as f64 / 5.0;
        let y = y_of(v);
        root.draw(&PathElement::new(
            vec![(left, y), (right, y)],
            RGBColor(225, 225, 225),
        ))?;
        let label = if ymax >= 10.0 {
            format!("{v:.0}")
        } else {
            short_num(v)
        };
        root.draw(&Text::new(label, (px(16), y - px(8)), font.clone()))?;
    }
    let n = c.bars.len().max(1) as i32;
    let slot = ((right - left) / n).max(1);
    let bw = (slot * 3 / 5).max(1);
    for (i, b) in c.bars.iter().enumerate() {
        let x0 = left + i as i32 * slot + (slot - bw) / 2;
        let mut base = 0.0;
        for (k, v) in b.segments.iter().enumerate() {
            let Some(v) = v.filter(|v| *v > 0.0) else {
                continue;
            };
            let (y0, y1) = (y_of(base), y_of(base + v));
            root.draw(&Rectangle::new(
                [(x0, y1), (x0 + bw, y0)],
                color(k).filled(),
            ))?;
            base += v;
        }
        let top_label = b
            .total
            .map_or("incomplete".into(), |t| format!("{} GB/s", short_num(t)));
        root.draw(&Text::new(
            top_label,
            (x0, y_of(base) - px(22)),
            font.clone(),
        ))?;
        if let Some(r) = b.reference {
            let y = y_of(r);
            let dashes = (0..bw + px(10)).step_by(px(8).max(2) as usize);
            for d in dashes {
                let a = x0 - px(5) + d;
                root.draw(&PathElement::new(
                    vec![(a, y), (a + px(4), y)],
                    BLACK.stroke_width(2),
                ))?;
            }
            let text = format!("Σ alone {}", short_num(r));
            root.draw(&Text::new(text, (x0 + bw + px(6), y - px(8)), font.clone()))?;
        }
        let lf = ("sans-serif", px(13)).into_font();
        root.draw(&Text::new(b.label.clone(), (x0, bottom + px(10)), lf))?;
    }
    root.draw(&PathElement::new(
        vec![(left, bottom), (right, bottom)],
        BLACK,
    ))?;
    bars_legend(root, c, right + px(20), top, scale)?;
    root.present()?;
    Ok(())
}

/// The stacked bars' legend at (`lx`, `top`): a swatch per agent, then
/// the dashed sum of the alones.
fn bars_legend<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    c: &Bars,
    lx: i32,
    top: i32,
    scale: f64,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let px = |v: i32| (v as f64 * scale).round() as i32;
    let font = ("sans-serif", px(15)).into_font();
    for (k, key) in c.keys.iter().enumerate() {
        let y = top + k as i32 * px(26);
        let sw = [(lx, y), (lx + px(16), y + px(16))];
        root.draw(&Rectangle::new(sw, color(k).filled()))?;
        root.draw(&Text::new(key.clone(), (lx + px(24), y), font.clone()))?;
    }
    let y = top + c.keys.len() as i32 * px(26) + px(8);
    root.draw(&PathElement::new(
        vec![(lx, y), (lx + px(16), y)],
        BLACK.stroke_width(2),
    ))?;
    root.draw(&Text::new(
        "Σ alone".to_string(),
        (lx + px(24), y - px(8)),
        font,
    ))?;
    Ok(())
}
