//! "Is this number normal?": the headline figures a run is judged by
//! across runs, and the lines that say where each sits in its machine's
//! history (`Run::history`, which the app filled from the store) and
//! against a published figure where one matches.

use crate::model::{Run, Standing};

/// One line per headline figure: "DRAM read 16.1 GB/s: 3rd best of 6
/// runs on this machine (this one and 5 earlier; p40)", then the published floor where one
/// matches; empty without a history.
pub fn lines(run: &Run) -> Vec<String> {
    let Some(h) = &run.history else {
        return Vec::new();
    };
    let mut out: Vec<String> = h.standings.iter().map(line).collect();
    if !out.is_empty() && h.standings.iter().all(|s| s.expected.is_none()) {
        out.push(
            "no published reference figure matches this machine (docs/history.md lists them)"
                .into(),
        );
    }
    out
}

fn line(s: &Standing) -> String {
    let value = if s.unit == "ns" {
        format!("{:.0} ns", s.value)
    } else {
        format!("{} {}", super::short_num(s.value), s.unit)
    };
    let mut l = format!("{} {value}: ", s.name);
    match (s.rank, s.percentile) {
        (Some(rank), Some(p)) => l.push_str(&place(rank, s.earlier, p, s.among_noisy)),
        _ if s.left_out_noisy > 0 => {
            l.push_str("no quiet earlier run on this machine to judge it by")
        }
        _ => l.push_str("the first run of this case on this machine"),
    }
    if s.left_out_noisy > 0 {
        l.push_str(&format!(
            ", {} noisy run{} left out",
            s.left_out_noisy,
            if s.left_out_noisy == 1 { "" } else { "s" }
        ));
    }
    if let Some(e) = &s.expected {
        l.push_str(&format!(
            "; published floor {} {} ({}, {})",
            super::short_num(e.floor),
            e.unit,
            e.source.split([',', '(']).next().unwrap_or_default().trim(),
            e.licence
        ));
    }
    l
}

/// Where a figure ranked `rank` among itself and `earlier` earlier runs
/// sits, in words that read right for one earlier run and for many.
fn place(rank: u32, earlier: u32, p: f64, among_noisy: bool) -> String {
    let noisy = if among_noisy {
        "; all taken in noise, like this one"
    } else {
        ""
    };
    if earlier == 1 {
        let how = if p > 50.0 {
            "better than"
        } else if p < 50.0 {
            "worse than"
        } else {
            "the same as"
        };
        return format!(
            "{how} the one earlier run on this machine{}",
            if among_noisy {
                " (both taken in noise)"
            } else {
                ""
            }
        );
    }
    let of = earlier + 1;
    let which = if rank == 1 {
        "the best".to_string()
    } else if rank == of {
        "the worst".to_string()
    } else {
        format!("{} best", ordinal(rank))
    };
    format!("{which} of {of} runs on this machine (this one and {earlier} earlier; p{p:.0}{noisy})")
}

/// The standings with their lines, for a report that draws each trend.
pub fn with_lines(run: &Run) -> Vec<(&Standing, String)> {
    run.history
        .iter()
        .flat_map(|h| &h.standings)
        .map(|s| (s, line(s)))
        .collect()
}

/// A trend as a small inline SVG: the earlier figures as a line, this
/// run's as a dot at the end, on the range of all of them. Empty without
/// earlier figures.
pub fn sparkline_svg(s: &Standing) -> String {
    if s.recent.is_empty() {
        return String::new();
    }
    let (w, h, pad) = (120.0, 24.0, 3.0);
    let all = s.recent.iter().chain(std::iter::once(&s.value));
    let lo = all.clone().copied().fold(f64::INFINITY, f64::min);
    let hi = all.copied().fold(f64::NEG_INFINITY, f64::max);
    let n = s.recent.len() as f64;
    let x = |i: f64| pad + i / n * (w - 2.0 * pad);
    let y = |v: f64| {
        let t = if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
        h - pad - t * (h - 2.0 * pad)
    };
    let points: Vec<String> = s
        .recent
        .iter()
        .enumerate()
        .map(|(i, &v)| format!("{:.1},{:.1}", x(i as f64), y(v)))
        .collect();
    format!(
        "<svg class=\"trend\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" role=\"img\" aria-label=\"earlier runs, then this one\"><polyline fill=\"none\" stroke=\"currentColor\" stroke-width=\"1\" points=\"{}\"/><circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.5\"/></svg>",
        points.join(" "),
        x(n),
        y(s.value)
    )
}

/// 1st, 2nd, 3rd, 4th, …, 11th, 12th, 13th, 21st.
pub fn ordinal(n: u32) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Expected, HistoryContext};

    fn standing(rank: Option<u32>, earlier: u32, p: Option<f64>) -> Standing {
        Standing {
            name: "DRAM read".into(),
            case: "headline/DRAM read".into(),
            value: 16.1,
            unit: "GB/s".into(),
            earlier,
            left_out_noisy: 0,
            among_noisy: false,
            recent: Vec::new(),
            rank,
            percentile: p,
            expected: None,
        }
    }

    #[test]
    fn a_standing_reads_as_the_issue_asks() {
        assert_eq!(
            line(&standing(Some(3), 5, Some(40.0))),
            "DRAM read 16.1 GB/s: 3rd best of 6 runs on this machine (this one and 5 earlier; p40)"
        );
        assert_eq!(
            line(&standing(None, 0, None)),
            "DRAM read 16.1 GB/s: the first run of this case on this machine"
        );
        let mut s = standing(Some(1), 1, Some(100.0));
        s.left_out_noisy = 2;
        s.expected = Some(Expected {
            floor: 320.0,
            unit: "GB/s".into(),
            what: String::new(),
            source: "Azure/azurehpc-health-checks, https://example".into(),
            licence: "MIT".into(),
            date: "2026-11-28".into(),
        });
        assert_eq!(
            line(&s),
            "DRAM read 16.1 GB/s: better than the one earlier run on this machine, 2 noisy runs left out; published floor 320 GB/s (Azure/azurehpc-health-checks, MIT)"
        );
        let mut n = standing(Some(2), 4, Some(62.0));
        n.among_noisy = true;
        assert_eq!(
            line(&n),
            "DRAM read 16.1 GB/s: 2nd best of 5 runs on this machine (this one and 4 earlier; p62; all taken in noise, like this one)"
        );
        let mut q = standing(None, 0, None);
        q.left_out_noisy = 3;
        assert_eq!(
            line(&q),
            "DRAM read 16.1 GB/s: no quiet earlier run on this machine to judge it by, 3 noisy runs left out"
        );
        // One earlier run: better, worse or the same, never "2nd of 1".
        assert_eq!(
            line(&standing(Some(2), 1, Some(0.0))),
            "DRAM read 16.1 GB/s: worse than the one earlier run on this machine"
        );
        assert_eq!(
            line(&standing(Some(1), 1, Some(50.0))),
            "DRAM read 16.1 GB/s: the same as the one earlier run on this machine"
        );
        // Two and many: the best, the worst, and in between.
        assert_eq!(
            line(&standing(Some(3), 2, Some(0.0))),
            "DRAM read 16.1 GB/s: the worst of 3 runs on this machine (this one and 2 earlier; p0)"
        );
        assert_eq!(
            line(&standing(Some(1), 9, Some(100.0))),
            "DRAM read 16.1 GB/s: the best of 10 runs on this machine (this one and 9 earlier; p100)"
        );
        assert_eq!(
            [1, 2, 3, 4, 11, 12, 13, 21, 22, 111].map(ordinal).join(" "),
            "1st 2nd 3rd 4th 11th 12th 13th 21st 22nd 111th"
        );
    }

    #[test]
    fn no_history_no_lines_and_no_reference_is_said() {
        let mut run: Run =
            serde_json::from_str(include_str!("../../tests/fixtures/cache-quick.json")).unwrap();
        assert!(lines(&run).is_empty());
        run.history = Some(HistoryContext {
            earlier_runs: 0,
            standings: vec![standing(None, 0, None)],
        });
        let l = lines(&run);
        assert_eq!(l.len(), 2);
        assert!(l[1].starts_with("no published reference"), "{l:?}");
        let mut s = standing(Some(1), 2, Some(100.0));
        assert_eq!(sparkline_svg(&s), "");
        s.recent = vec![15.0, 16.0];
        let svg = sparkline_svg(&s);
        assert!(
            svg.starts_with("<svg") && svg.contains("<polyline") && svg.contains("<circle"),
            "{svg}"
        );
        assert_eq!(with_lines(&run).len(), 1);
    }
}
