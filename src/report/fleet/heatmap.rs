//! The fleet report's pair heatmaps: one SVG per matrix and message size,
//! row = sender, column = receiver, colour = what arrived, with host
//! labels, a hover read-out per cell and the colour scale's legend.

use std::fmt::Write as _;

use super::text::num;
use crate::model::fleet::{FleetRun, Flow, NetMatrix};
use crate::report::page::esc;
use crate::util::units::format_bytes;

/// A colour on a perceptual ramp from dark violet (0) to yellow (1),
/// viridis's end points and three stops between.
pub fn ramp(t: f64) -> String {
    const STOPS: [(f64, f64, f64); 5] = [
        (68.0, 1.0, 84.0),
        (59.0, 82.0, 139.0),
        (33.0, 145.0, 140.0),
        (94.0, 201.0, 98.0),
        (253.0, 231.0, 37.0),
    ];
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let x = t * (STOPS.len() - 1) as f64;
    let i = (x.floor() as usize).min(STOPS.len() - 2);
    let f = x - i as f64;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    let mix = |p: f64, q: f64| (p + (q - p) * f).round() as u8;
    format!(
        "#{:02x}{:02x}{:02x}",
        mix(a.0, b.0),
        mix(a.1, b.1),
        mix(a.2, b.2)
    )
}

/// The pair matrix at one size: row = sender, column = receiver, colour =
/// what arrived; grey cells were scheduled and failed (hover for why),
/// blank ones were not scheduled.
pub(super) fn heatmap(
    f: &FleetRun,
    m: &NetMatrix,
    size: u64,
    scale_max: Option<f64>,
    id: usize,
) -> String {
    let grid = Grid::new(f);
    let flows: Vec<&Flow> = m.flows.iter().filter(|x| x.size_bytes == size).collect();
    let top =
        scale_max.unwrap_or_else(|| flows.iter().filter_map(|x| x.recv_gbps).fold(0.0, f64::max));
    let top = if top > 0.0 { top } else { 1.0 };
    let (w, h) = grid.size();
    let mut s = format!(
        "<figure class=chart><div class=readout id=readout-{id}>hover a cell</div><svg class=heatmap width=\"{w:.0}\" height=\"{h:.0}\" viewBox=\"0 0 {w:.0} {h:.0}\" data-readout=\"readout-{id}\" role=img aria-label=\"pair bandwidth\">"
    );
    grid.labels(&mut s, f);
    grid.cells(&mut s, f, &flows, top);
    grid.legend(&mut s, top);
    let _ = writeln!(
        s,
        "<figcaption>{} {}, {}: received GB/s per pair (row = sender, column = receiver); colour scale 0 to {} GB/s{}</figcaption></figure>",
        esc(m.transport.name()),
        esc(&m.schedule),
        format_bytes(size),
        num(top),
        if scale_max.is_some() { " (fixed with --scale-max)" } else { "" }
    );
    s
}

/// Where a heatmap's parts go: the ranks in row (and column) order, the
/// cell's side (smaller as the fleet grows), and the margins the host
/// labels take on the left and on top.
struct Grid {
    ranks: Vec<u32>,
    cell: f64,
    left: f64,
    topm: f64,
}

impl Grid {
    fn new(f: &FleetRun) -> Self {
        let ranks: Vec<u32> = f.nodes.iter().map(|n| n.rank).collect();
        let n = ranks.len();
        let longest = f
            .nodes
            .iter()
            .map(|x| x.label.chars().count())
            .max()
            .unwrap_or(4)
            .min(24);
        let cell = if n <= 16 {
            28.0
        } else if n <= 64 {
            12.0
        } else {
            4.0
        };
        let left = 10.0 + longest as f64 * 6.5;
        Grid {
            ranks,
            cell,
            left,
            topm: left,
        }
    }

    /// The side of the square of cells.
    fn side(&self) -> f64 {
        self.cell * self.ranks.len() as f64
    }

    /// The SVG's width and height: labels, cells, and room for the legend.
    fn size(&self) -> (f64, f64) {
        (
            self.left + self.side() + 120.0,
            self.topm + self.side() + 20.0,
        )
    }

    /// The row (and column) of rank `r`.
    fn pos(&self, r: u32) -> f64 {
        self.ranks.iter().position(|&x| x == r).unwrap_or(0) as f64
    }

    /// Each node's label left of its row and above its column (up to 64
    /// nodes; beyond, the cells are too small to name).
    fn labels(&self, s: &mut String, f: &FleetRun) {
        if self.ranks.len() > 64 {
            return;
        }
        let (left, topm) = (self.left, self.topm);
        for (i, node) in f.nodes.iter().enumerate() {
            let l: String = node.label.chars().take(24).collect();
            let c = topm + self.cell * i as f64 + self.cell / 2.0;
            let _ = write!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=end dominant-baseline=middle>{}</text>",
                left - 4.0,
                c,
                esc(&l)
            );
            let _ = write!(s, "<text transform=\"translate({c:.1},{:.1}) rotate(-90)\" dominant-baseline=middle>{}</text>", topm - 4.0, esc(&l));
        }
    }

    /// A cell per flow, coloured by what arrived (on the scale to `top`
    /// GB/s) or grey where it failed, with its figures or reason to hover.
    fn cells(&self, s: &mut String, f: &FleetRun, flows: &[&Flow], top: f64) {
        for x in flows {
            let (cx, cy) = (
                self.left + self.pos(x.dst) * self.cell,
                self.topm + self.pos(x.src) * self.cell,
            );
            let (class, fill, info) = cell_look(f, x, top);
            let _ = write!(
                s,
                "<rect class=\"{class}\" x=\"{cx:.1}\" y=\"{cy:.1}\" width=\"{0:.1}\" height=\"{0:.1}\" fill=\"{fill}\" data-info=\"{1}\"><title>{1}</title></rect>",
                (self.cell - 1.0).max(1.0),
                esc(&info)
            );
        }
    }

    /// Legend: the colour ramp from 0 to the top of the scale, right of
    /// the cells, and the SVG's end.
    fn legend(&self, s: &mut String, top: f64) {
        let topm = self.topm;
        let lx = self.left + self.side() + 20.0;
        let lh = self.side().max(60.0);
        for i in 0..20 {
            let t = 1.0 - i as f64 / 20.0;
            let _ = write!(
                s,
                "<rect x=\"{lx:.1}\" y=\"{:.1}\" width=\"14\" height=\"{:.1}\" fill=\"{}\"/>",
                topm + lh * i as f64 / 20.0,
                lh / 20.0 + 0.5,
                ramp(t)
            );
        }
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\">{} GB/s</text><text x=\"{:.1}\" y=\"{:.1}\">0</text></svg>",
            lx + 18.0,
            topm + 8.0,
            num(top),
            lx + 18.0,
            topm + lh
        );
    }
}

/// A flow's cell: its class, its colour and the read-out hovering it
/// shows (the figures, or why it was not measured).
fn cell_look(f: &FleetRun, x: &Flow, top: f64) -> (&'static str, String, String) {
    let who = format!("{} → {}", f.label(x.src), f.label(x.dst));
    match x.recv_gbps {
        Some(g) => (
            "cell",
            ramp(g / top),
            format!(
                "{who}: {} GB/s received ({} Gbit/s), {} GB/s sent; step {}, {} flows at once",
                num(g),
                num(g * 8.0),
                x.send_gbps.map_or("-".into(), num),
                x.step,
                x.concurrent
            ),
        ),
        None => (
            "cell null",
            "#e5e7eb".into(),
            format!(
                "{who}: not measured: {}",
                x.reason.as_deref().unwrap_or("?")
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ramp_ends() {
        assert_eq!(ramp(0.0), "#440154");
        assert_eq!(ramp(1.0), "#fde725");
        assert_eq!(ramp(7.0), "#fde725");
        assert_eq!(ramp(f64::NAN), "#440154");
    }
}
