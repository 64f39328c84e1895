//! The `contend` charts: a stacked bar per phase (each agent's GB/s, the
//! phase's aggregate above it, the sum of the agents' alone rates marked
//! across it) and the phase × agent matrix of the same figures.

use super::{Bar, Bars, Chart, Heatmap, Kind};
use crate::model::detail::ContendDetail;
use crate::model::{AgentKind, Record};

/// Phases in record order, and the agents (not the probe, not the
/// aggregate) in order of first appearance.
fn phases_and_agents(recs: &[&Record]) -> (Vec<String>, Vec<String>) {
    let mut phases: Vec<String> = Vec::new();
    let mut agents: Vec<String> = Vec::new();
    for d in recs.iter().filter_map(|r| r.detail.get::<ContendDetail>()) {
        if let Some(p) = &d.case_phase {
            if !phases.contains(p) {
                phases.push(p.clone());
            }
        }
        if let Some(a) = d.case_agent.as_ref().filter(|_| d.is_agent()) {
            if !agents.contains(a) {
                agents.push(a.clone());
            }
        }
    }
    (phases, agents)
}

/// `contend`: one bar per phase with an agent in it, each agent's window
/// GB/s a segment; the phase's aggregate is the bar's total (None when an
/// agent did not run through the window), the sum of the alones its
/// reference where the phase has two or more agents.
pub fn bars(recs: &[&Record]) -> Option<Chart> {
    let (phases, keys) = phases_and_agents(recs);
    let of = |p: &str| -> Vec<&ContendDetail> {
        recs.iter()
            .filter_map(|r| r.detail.get::<ContendDetail>())
            .filter(|d| d.case_phase.as_deref() == Some(p))
            .collect()
    };
    let bars: Vec<Bar> = phases
        .iter()
        .filter_map(|p| {
            let segments: Vec<Option<f64>> = keys
                .iter()
                .map(|k| {
                    of(p)
                        .into_iter()
                        .find(|d| d.case_agent.as_deref() == Some(k))
                        .and_then(|d| d.window_gbps.value())
                })
                .collect();
            let agg = of(p).into_iter().find(|d| d.is_aggregate());
            let members = agg
                .and_then(|d| d.phase_agents.as_ref())
                .map_or(0, |a| a.len());
            segments.iter().any(Option::is_some).then(|| Bar {
                label: p.clone(),
                segments,
                total: agg.and_then(|d| d.aggregate_gbps.value()),
                reference: agg
                    .and_then(|d| d.sum_alone_gbps.value())
                    .filter(|_| members > 1),
            })
        })
        .collect();
    (!bars.is_empty()).then(|| Chart {
        id: "contend-bars".into(),
        title: "contend: each agent's GB/s stacked per phase, against the sum of the alones".into(),
        kind: Kind::Bars(Bars {
            y_desc: "GB/s over the phase's window".into(),
            keys,
            bars,
        }),
    })
}

/// `contend`: GB/s by phase × agent (with the aggregate), each cell the
/// agent's rate over the phase's window.
pub fn matrix(recs: &[&Record]) -> Option<Chart> {
    let cell = |r: &Record| {
        let d = r.detail.get::<ContendDetail>()?;
        Some((
            d.case_phase.clone()?,
            d.case_agent.clone()?,
            d.is_aggregate(),
            d.window_gbps.value()?,
        ))
    };
    let cells: Vec<(String, String, bool, f64)> = recs.iter().filter_map(|r| cell(r)).collect();
    let mut rows: Vec<String> = Vec::new();
    let mut cols: Vec<String> = Vec::new();
    for (p, a, agg, _) in &cells {
        if !rows.contains(p) {
            rows.push(p.clone());
        }
        if !cols.contains(a) && !agg {
            cols.push(a.clone());
        }
    }
    // The phases' aggregates: the last column, whatever their records
    // are named.
    cols.push(AgentKind::Aggregate.to_string());
    let mut values = vec![vec![None; cols.len()]; rows.len()];
    for (p, a, agg, g) in &cells {
        let i = rows.iter().position(|x| x == p)?;
        let j = if *agg {
            cols.len() - 1
        } else {
            cols.iter().position(|x| x == a)?
        };
        values[i][j] = Some(*g);
    }
    (!rows.is_empty()).then(|| Chart {
        id: "contend-matrix".into(),
        title: "contend: GB/s of each agent by phase, over one window of one clock".into(),
        kind: Kind::Heat(Heatmap {
            row_desc: "phase".into(),
            col_desc: "agent".into(),
            rows,
            cols,
            values,
            unit: "GB/s".into(),
        }),
    })
}
