//! The contend matrix: one row per phase, one column per agent (its rate
//! and slowdown against alone), then the aggregate, the sum of the
//! alones, the loss, the share of the DRAM peak and the bystander's latency.

use std::fmt::Write as _;

use super::rate;
use crate::model::detail::ContendDetail;
use crate::model::{AgentKind, Record, Run, Status};
use crate::report::grid::{Block, Table};

fn detail(r: &Record) -> ContendDetail {
    r.detail.get::<ContendDetail>().cloned().unwrap_or_default()
}

/// This suite's view (it states its own byte convention).
pub const VIEW: super::View = super::View {
    render,
    own_convention: true,
};

pub fn render(run: &Run, recs: &[&Record]) -> Vec<Block> {
    let u = run.display_units;
    // Agents in the order they first appear, with what they are.
    let mut agents: Vec<(String, String)> = Vec::new();
    let mut phases: Vec<String> = Vec::new();
    for r in recs {
        let d = detail(r);
        let Some(name) = d.case_agent.clone() else {
            continue;
        };
        if d.is_agent() && !agents.iter().any(|a| a.0 == name) {
            let mut what = d.agent.clone().unwrap_or_default();
            if let Some(dev) = &d.device {
                let _ = write!(what, " — {dev}");
            }
            if d.dma == Some(false) && d.agent_kind == Some(AgentKind::Device) {
                what.push_str(" [no DMA]");
            }
            agents.push((name, what));
        }
        if let Some(p) = d.case_phase {
            if !phases.contains(&p) {
                phases.push(p);
            }
        }
    }
    if phases.is_empty() {
        return Vec::new();
    }
    let mut header = vec!["phase".to_string()];
    header.extend(agents.iter().map(|a| a.0.clone()));
    header.extend(
        ["aggregate", "Σ alone", "loss", "% DRAM peak", "bystander"]
            .iter()
            .map(|s| s.to_string()),
    );
    let mut t = Table::new(header).titled(format!(
        "contention, {} per agent over one window of the same clock (× = slowdown against alone)",
        u.label()
    ));
    t.lead = agents
        .iter()
        .map(|(name, what)| format!("  {name}: {what}"))
        .collect();
    for p in &phases {
        let of_phase: Vec<&&Record> = recs
            .iter()
            .filter(|r| detail(r).case_phase.as_deref() == Some(p))
            .collect();
        let find = |name: &str| {
            of_phase
                .iter()
                .find(|r| detail(r).case_agent.as_deref() == Some(name))
        };
        let find_kind = |is: fn(&ContendDetail) -> bool| of_phase.iter().find(|r| is(&detail(r)));
        let mut row = vec![p.clone()];
        for (name, _) in &agents {
            row.push(match find(name) {
                None => String::new(),
                Some(r) if r.status != Status::Ok => "ended".into(),
                Some(r) => cell(r, u),
            });
        }
        let agg = find_kind(ContendDetail::is_aggregate).map(|r| detail(r));
        let num = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map_or("-".into(), f);
        row.push(num(
            agg.as_ref().and_then(|d| d.aggregate_gbps.value()),
            &|v| rate(v, u),
        ));
        row.push(num(
            agg.as_ref().and_then(|d| d.sum_alone_gbps.value()),
            &|v| rate(v, u),
        ));
        row.push(num(
            agg.as_ref().and_then(|d| d.loss_percent.value()),
            &|v| format!("{v:.0} %"),
        ));
        row.push(num(
            agg.as_ref().and_then(|d| d.percent_of_dram_peak.value()),
            &|v| format!("{v:.0} %"),
        ));
        row.push(find_kind(ContendDetail::is_bystander).map_or("-".into(), |r| bystander_cell(r, u)));
        t.rows.push(row);
    }
    let note = recs
        .iter()
        .find_map(|r| detail(r).dram_peak_gbps.value())
        .map_or("DRAM peak unknown (give --dram-peak)".to_string(), |p| {
            format!("DRAM peak {} {}", rate(p, u), u.label())
        });
    t.notes = vec![
        String::new(),
        format!("loss = how far the aggregate falls below the sum of the agents' alone rates; {note}. Bytes: CPU teams read + written by the asm kernels; devices as `bwscope transfer` counts them; TCP payload."),
    ];
    vec![Block::Table(t)]
}

/// The bystander in a phase: ns per load over the window, or its GB/s.
fn bystander_cell(r: &Record, u: crate::model::Units) -> String {
    let d = detail(r);
    match (r.status, d.bystander_latency_ns.value(), d.window_gbps.value()) {
        (Status::Ok, Some(ns), _) => format!("{ns:.1} ns"),
        (Status::Ok, None, Some(g)) => format!("{} {}", rate(g, u), u.label()),
        _ => "ended".into(),
    }
}

/// `12.3 (×1.40)`.
fn cell(r: &Record, u: crate::model::Units) -> String {
    let d = detail(r);
    let Some(g) = d.window_gbps.value() else {
        return "-".into();
    };
    match d.slowdown.value() {
        Some(s) if (s - 1.0).abs() >= 0.005 => format!("{} (×{s:.2})", rate(g, u)),
        _ => rate(g, u),
    }
}
