//! A trend chart per headline figure: where this run's figure sits among
//! this machine's earlier runs of the same case, as the history store
//! answered when the run was written (`Run::history`, the figures the
//! HTML report's sparklines draw). Only `bwscope plot` draws them: the
//! HTML report keeps its sparkline beside each figure's line.

use super::{Chart, Kind, LineChart, Series, XAxis};
use crate::model::{Run, Standing};

/// One chart per headline figure that has earlier figures to draw.
pub fn trends(run: &Run) -> Vec<Chart> {
    run.history
        .iter()
        .flat_map(|h| &h.standings)
        .filter_map(trend)
        .collect()
}

fn trend(s: &Standing) -> Option<Chart> {
    if s.recent.is_empty() {
        return None;
    }
    let n = s.recent.len();
    // `recent` holds the last of the earlier figures counted (noisy ones
    // left out), oldest first; this run is the point after them.
    let earlier = if n < s.earlier as usize {
        format!("the last {n} of {} earlier runs", s.earlier)
    } else {
        format!("{n} earlier run{}", if n == 1 { "" } else { "s" })
    };
    let noisy = match s.left_out_noisy {
        0 => String::new(),
        k => format!(", {k} noisy left out"),
    };
    Some(Chart {
        id: format!("history-{}", slug(&s.name)),
        title: format!("{} on this machine, {}", s.name, s.unit),
        kind: Kind::Line(LineChart {
            x: XAxis::Runs,
            x_desc: "run on this machine, oldest first; the last is this run".into(),
            y_desc: s.unit.clone(),
            series: vec![
                Series {
                    name: format!("{earlier}{noisy}"),
                    points: (1..).map(f64::from).zip(s.recent.iter().copied()).collect(),
                },
                Series {
                    name: "this run".into(),
                    points: vec![((n + 1) as f64, s.value)],
                },
            ],
            markers: Vec::new(),
            limits: Vec::new(),
        }),
    })
}

/// `DRAM read all cores` → `dram-read-all-cores`.
fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::HistoryContext;

    fn standing(name: &str, recent: &[f64], earlier: u32) -> Standing {
        Standing {
            name: name.into(),
            case: format!("headline/{name}"),
            value: 16.1,
            unit: "GB/s".into(),
            earlier,
            left_out_noisy: 0,
            among_noisy: false,
            recent: recent.to_vec(),
            rank: None,
            percentile: None,
            expected: None,
        }
    }

    #[test]
    fn a_headline_with_earlier_runs_gets_a_trend_chart_ending_at_this_run() {
        let mut run: Run =
            serde_json::from_str(include_str!("../../../tests/fixtures/cache-quick.json")).unwrap();
        assert!(trends(&run).is_empty(), "no history, no trend");
        let mut dram = standing("DRAM read all cores", &[15.0, 17.5, 16.0], 40);
        dram.left_out_noisy = 2;
        run.history = Some(HistoryContext {
            earlier_runs: 42,
            standings: vec![standing("L1 read", &[], 0), dram],
        });
        let charts = trends(&run);
        assert_eq!(charts.len(), 1, "the first run of a case has no trend");
        let c = &charts[0];
        assert_eq!(c.id, "history-dram-read-all-cores");
        assert_eq!(c.title, "DRAM read all cores on this machine, GB/s");
        let Kind::Line(l) = &c.kind else {
            panic!("{:?}", c.kind)
        };
        assert_eq!(l.x, XAxis::Runs);
        assert_eq!(
            l.series[0].name,
            "the last 3 of 40 earlier runs, 2 noisy left out"
        );
        assert_eq!(
            l.series[0].points,
            vec![(1.0, 15.0), (2.0, 17.5), (3.0, 16.0)]
        );
        assert_eq!(l.series[1].points, vec![(4.0, 16.1)]);
        let svg = super::super::svg(c, 640, 360).unwrap();
        assert!(
            svg.contains("this run") && svg.contains("on this machine"),
            "{svg}"
        );
    }
}
