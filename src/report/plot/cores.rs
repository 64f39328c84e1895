//! The `cores` charts: the CAS one-way latency of every measured pair as
//! a cpu × cpu heatmap (what nviennot/core-to-core-latency draws, from
//! whatever pairs the planner chose: blank where a pair was not
//! measured), and the classes' figures (a bar per class, and the class ×
//! exchange matrix).

use super::{Bar, Bars, Chart, Heatmap, Kind};
use crate::model::detail::{CoresDetail, CoresView, Exchange};
use crate::model::Record;
use crate::report::metric::StatKind;

/// The most cpus a heatmap draws one row each for: past that the cells
/// are thinner than a pixel on the default picture.
const MAX_CPUS: usize = 128;

fn detail(r: &Record, view: CoresView) -> Option<&CoresDetail> {
    r.detail
        .get::<CoresDetail>()
        .filter(|d| d.case_view == Some(view))
}

fn pick(d: &CoresDetail, stat: StatKind) -> Option<f64> {
    let s = d.one_way_ns.value()?;
    Some(match stat {
        StatKind::Best => s.best,
        StatKind::Median => s.median,
    })
}

/// cpu × cpu, CAS ns, both halves filled (a pair is one transfer each
/// way, the holder first in its record).
pub fn matrix(recs: &[&Record], stat: StatKind) -> Option<Chart> {
    let cells: Vec<([u32; 2], f64)> = recs
        .iter()
        .filter_map(|r| detail(r, CoresView::Pair))
        .filter(|d| d.case_exchange == Some(Exchange::Cas))
        .filter_map(|d| Some((d.case_pair?, pick(d, stat)?)))
        .collect();
    let mut cpus: Vec<u32> = cells.iter().flat_map(|c| c.0).collect();
    cpus.sort_unstable();
    cpus.dedup();
    if cells.is_empty() || cpus.len() > MAX_CPUS {
        return None;
    }
    let at = |c: u32| cpus.iter().position(|&x| x == c);
    let mut values = vec![vec![None; cpus.len()]; cpus.len()];
    for ([a, b], v) in &cells {
        let (Some(i), Some(j)) = (at(*a), at(*b)) else {
            continue;
        };
        values[i][j] = Some(*v);
        values[j][i] = Some(*v);
    }
    let names: Vec<String> = cpus.iter().map(|c| c.to_string()).collect();
    Some(Chart {
        id: "cores-matrix".into(),
        title: "cores: CAS one-way latency by cpu pair, ns".into(),
        kind: Kind::Heat(Heatmap {
            row_desc: "cpu".into(),
            col_desc: "cpu".into(),
            rows: names.clone(),
            cols: names,
            values,
            unit: "ns".into(),
        }),
    })
}

/// The classes, in the order measured (nearest first).
fn classes(recs: &[&Record]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for d in recs.iter().filter_map(|r| detail(r, CoresView::Class)) {
        if let Some(c) = d.case_class.as_ref().filter(|c| !out.contains(c)) {
            out.push(c.clone());
        }
    }
    out
}

/// A bar per class: its CAS figure over its pairs.
pub fn by_class(recs: &[&Record], stat: StatKind) -> Option<Chart> {
    let names = classes(recs);
    let bars: Vec<Bar> = names
        .iter()
        .filter_map(|c| {
            let d = recs
                .iter()
                .filter_map(|r| detail(r, CoresView::Class))
                .find(|d| {
                    d.case_class.as_ref() == Some(c) && d.case_exchange == Some(Exchange::Cas)
                })?;
            let v = pick(d, stat)?;
            Some(Bar {
                label: c.clone(),
                segments: vec![Some(v)],
                total: Some(v),
                reference: None,
            })
        })
        .collect();
    (!bars.is_empty()).then(|| Chart {
        id: "cores-classes".into(),
        title: "cores: CAS one-way latency of each class of cpu pairs (its pairs' median)".into(),
        kind: Kind::Bars(Bars {
            y_desc: "ns one-way".into(),
            keys: vec!["CAS".into()],
            bars,
        }),
    })
}

/// class × exchange, ns.
pub fn exchanges(recs: &[&Record], stat: StatKind) -> Option<Chart> {
    let names = classes(recs);
    let cols: Vec<Exchange> = Exchange::ALL
        .into_iter()
        .filter(|e| {
            recs.iter()
                .filter_map(|r| detail(r, CoresView::Class))
                .any(|d| d.case_exchange == Some(*e))
        })
        .collect();
    if names.is_empty() || cols.len() < 2 {
        return None;
    }
    let mut values = vec![vec![None; cols.len()]; names.len()];
    for d in recs.iter().filter_map(|r| detail(r, CoresView::Class)) {
        let i = names.iter().position(|c| Some(c) == d.case_class.as_ref());
        let j = cols.iter().position(|e| Some(*e) == d.case_exchange);
        if let (Some(i), Some(j)) = (i, j) {
            values[i][j] = pick(d, stat);
        }
    }
    Some(Chart {
        id: "cores-exchanges".into(),
        title: "cores: one-way ns of each class by exchange (CAS, a clean line read, a modified line read)".into(),
        kind: Kind::Heat(Heatmap {
            row_desc: "class".into(),
            col_desc: "exchange".into(),
            rows: names,
            cols: cols.iter().map(|e| e.name().to_uppercase()).collect(),
            values,
            unit: "ns".into(),
        }),
    })
}
