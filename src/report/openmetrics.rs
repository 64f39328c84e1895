//! The headline figures in OpenMetrics text format (what Prometheus
//! scrapes and node_exporter's textfile collector reads from a `.prom`
//! file), so a fleet can graph bwscope in an existing Prometheus/Grafana.
//!
//! Families:
//! - `bwscope_run_info{host,version,cpu,command}` 1: what ran where;
//! - `bwscope_figure{host,metric,unit}`: every headline figure
//!   ([`crate::report::fleet::metrics`]);
//! - fleet runs add `bwscope_fleet_node_ok{host}` (1 ok, 0 failed or
//!   lost), `bwscope_fleet_outlier{host,metric,unit}` (1 when the figure
//!   is an outlier or below its class bound), `bwscope_fleet_robust_z
//!   {host,metric}` and `bwscope_fleet_median{metric,unit}`; against the
//!   fleet's past (the history store) `bwscope_fleet_past_median
//!   {metric,unit}`, `bwscope_fleet_drop{metric}` (1 for a fleet-wide
//!   drop), `bwscope_fleet_drop_pct{metric}`, and
//!   `bwscope_fleet_finding{kind,metric[,host]}` per fleet finding.

use std::fmt::Write as _;

use super::fleet::metrics::{self, Figure};
use super::{Cadence, Exporter, Output, ReportFormat};
use crate::model::fleet::{FleetRun, NodeStatus};
use crate::model::Run;

pub struct OpenMetrics;

impl Exporter for OpenMetrics {
    fn serialize(&self, run: &Run) -> anyhow::Result<Vec<u8>> {
        Ok(run_text(run).into_bytes())
    }
}

impl ReportFormat for OpenMetrics {
    fn name(&self) -> &'static str {
        "openmetrics"
    }

    fn about(&self) -> &'static str {
        "The headline figures in OpenMetrics text format"
    }

    fn fleet(&self, f: &FleetRun, _scale_max: Option<f64>) -> Vec<u8> {
        fleet_text(f).into_bytes()
    }
}

impl Output for OpenMetrics {
    fn flag(&self) -> &'static str {
        "--openmetrics"
    }

    fn help(&self) -> &'static str {
        "Also write the headline figures in OpenMetrics text format to FILE (node_exporter's textfile collector reads it)"
    }

    fn cadence(&self) -> Cadence {
        Cadence::AtEnd
    }
}

/// A label value with `\`, `"` and newlines escaped, and every other
/// control, bidirectional or invisible character shown as `�`
/// (`util::text::printable`): no value, whoever wrote it, can end the
/// line or hide what the sample says.
fn lv(s: &str) -> String {
    crate::util::text::printable(s)
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn labels(pairs: &[(&str, &str)]) -> String {
    let inner: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", lv(v)))
        .collect();
    format!("{{{}}}", inner.join(","))
}

struct Families {
    info: String,
    figure: String,
}

impl Families {
    fn new() -> Families {
        Families {
            info: "# TYPE bwscope_run info\n# HELP bwscope_run What ran where.\n".into(),
            figure: "# TYPE bwscope_figure gauge\n# HELP bwscope_figure A headline figure; the metric label names it, the unit label gives its unit (GB/s = 10^9 bytes/s).\n".into(),
        }
    }

    fn add(&mut self, host: &str, run: &Run, network: &[Figure]) {
        let _ = writeln!(
            self.info,
            "bwscope_run_info{} 1",
            labels(&[
                ("host", host),
                ("version", &run.tool.version),
                ("cpu", run.host.cpu.model_name.trim()),
                ("command", &run.command),
            ])
        );
        for g in metrics::node_figures(run).iter().chain(network) {
            self.figure_line(host, g);
        }
    }

    fn figure_line(&mut self, host: &str, g: &Figure) {
        if g.value.is_finite() {
            let _ = writeln!(
                self.figure,
                "bwscope_figure{} {}",
                labels(&[("host", host), ("metric", &g.metric), ("unit", g.unit())]),
                g.value
            );
        }
    }
}

/// What `bwscope watch` leaves for node_exporter's textfile collector
/// after each sample: the last sample's figures, this machine's usual
/// ones beside them, the spell probes' readings, and the state as one
/// gauge per state (1 for the current one), so an alert can say
/// `bwscope_watch_state{state="memory_contended"} == 1`.
pub fn watch_text(w: &crate::model::WatchStatus) -> String {
    let host = w.host.as_str();
    let size = w.size_bytes.to_string();
    let case = labels(&[("host", host), ("kernel", &w.kernel), ("size_bytes", &size)]);
    let at = labels(&[("host", host), ("size_bytes", &size)]);
    let plain = labels(&[("host", host)]);
    let mut s = String::new();
    let mut gauge = |name: &str, help: &str, l: &str, v: Option<f64>| {
        let _ = writeln!(s, "# TYPE {name} gauge\n# HELP {name} {help}");
        if let Some(v) = v.filter(|v| v.is_finite()) {
            let _ = writeln!(s, "{name}{l} {v}");
        }
    };
    let l = &w.last;
    gauge(
        "bwscope_watch_dram_read_gbps",
        "The last sample's one-core DRAM read, GB/s (10^9 bytes/s), best of its samples.",
        &case,
        l.dram_read_gbps,
    );
    gauge(
        "bwscope_watch_dram_read_usual_gbps",
        "This machine's usual one-core DRAM read: the median of its clean samples, GB/s.",
        &case,
        w.usual_dram_read_gbps,
    );
    gauge(
        "bwscope_watch_latency_ns",
        "The last sample's idle load-to-use latency at a DRAM-sized set, ns.",
        &at,
        l.latency_ns,
    );
    gauge(
        "bwscope_watch_latency_usual_ns",
        "This machine's usual idle latency: the median of its clean samples, ns.",
        &at,
        w.usual_latency_ns,
    );
    gauge("bwscope_watch_core_share", "The share of its core the core-share probe found (1 = a core of its own; about 0.5 = a busy SMT sibling).", &plain, l.core_share);
    gauge(
        "bwscope_watch_chase_ns",
        "The memory probe's median reading in the last sample, ns per load.",
        &plain,
        l.chase_ns,
    );
    gauge(
        "bwscope_watch_chase_baseline_ns",
        "The memory probe's quiet reading (10th percentile) it is judged against, ns.",
        &plain,
        l.chase_baseline_ns,
    );
    gauge(
        "bwscope_watch_last_sample_timestamp_seconds",
        "When the last sample was taken, seconds since the Unix epoch.",
        &plain,
        Some(l.unix_seconds),
    );
    gauge(
        "bwscope_watch_usual_samples",
        "How many clean samples the usual figures rest on.",
        &plain,
        Some(w.usual_from as f64),
    );
    let _ = writeln!(s, "# TYPE bwscope_watch_state gauge\n# HELP bwscope_watch_state The last sample's state: 1 for the current one (ok, core_shared, memory_contended, stepped).");
    for st in crate::model::WatchState::ALL {
        let _ = writeln!(
            s,
            "bwscope_watch_state{} {}",
            labels(&[("host", host), ("state", st.as_str())]),
            u8::from(st == l.state)
        );
    }
    let _ = writeln!(s, "# TYPE bwscope_watch_samples counter\n# HELP bwscope_watch_samples Samples this watch has taken.\nbwscope_watch_samples_total{plain} {}", w.samples);
    s.push_str("# EOF\n");
    s
}

fn host_of(run: &Run) -> String {
    run.host
        .env
        .hostname
        .clone()
        .unwrap_or_else(|| "unknown".into())
}

/// One run.
pub fn run_text(run: &Run) -> String {
    let mut f = Families::new();
    f.add(&host_of(run), run, &[]);
    format!("{}{}# EOF\n", f.info, f.figure)
}

/// A fleet: every node's figures and the verdicts.
pub fn fleet_text(fleet: &FleetRun) -> String {
    let mut f = Families::new();
    for n in &fleet.nodes {
        let net = metrics::net_figures(fleet, n.rank);
        match &n.run {
            Some(run) => f.add(&n.label, run, &net),
            None => {
                for g in &net {
                    f.figure_line(&n.label, g);
                }
            }
        }
    }
    let mut s = format!("{}{}", f.info, f.figure);
    if let Some(v) = &fleet.verdicts {
        s.push_str("# TYPE bwscope_fleet_node_ok gauge\n# HELP bwscope_fleet_node_ok 1 when the node passed every check, 0 when it failed one or was lost.\n");
        for n in &v.nodes {
            let lost = fleet
                .node(n.rank)
                .is_some_and(|x| x.status == NodeStatus::Lost);
            let _ = writeln!(
                s,
                "bwscope_fleet_node_ok{} {}",
                labels(&[("host", &n.label)]),
                u8::from(n.ok && !lost)
            );
        }
        s.push_str("# TYPE bwscope_fleet_outlier gauge\n# HELP bwscope_fleet_outlier 1 when the figure is a fleet outlier or worse than its class bound.\n");
        for n in &v.nodes {
            for c in &n.checks {
                let _ = writeln!(
                    s,
                    "bwscope_fleet_outlier{} {}",
                    labels(&[("host", &n.label), ("metric", &c.metric), ("unit", &c.unit)]),
                    u8::from(c.outlier || c.below_reference)
                );
            }
        }
        s.push_str("# TYPE bwscope_fleet_robust_z gauge\n# HELP bwscope_fleet_robust_z Distance from the fleet median in robust standard deviations of the logarithm (1.4826 MAD), positive is worse.\n");
        for n in &v.nodes {
            for c in &n.checks {
                if let Some(z) = c.robust_z.filter(|z| z.is_finite()) {
                    let _ = writeln!(
                        s,
                        "bwscope_fleet_robust_z{} {z}",
                        labels(&[("host", &n.label), ("metric", &c.metric)])
                    );
                }
            }
        }
        s.push_str("# TYPE bwscope_fleet_median gauge\n# HELP bwscope_fleet_median The fleet median of a figure.\n");
        for m in v.metrics.iter().filter(|m| m.nodes > 0) {
            let _ = writeln!(
                s,
                "bwscope_fleet_median{} {}",
                labels(&[("metric", &m.metric), ("unit", &m.unit)]),
                m.median
            );
        }
        past_families(&mut s, v);
    }
    s.push_str("# EOF\n");
    s
}

/// The fleet against its past and the findings about the whole fleet.
fn past_families(s: &mut String, v: &crate::model::fleet::Verdicts) {
    if let Some(p) = &v.past {
        let judged: Vec<_> = p.metrics.iter().filter(|m| m.judged).collect();
        s.push_str("# TYPE bwscope_fleet_past_median gauge\n# HELP bwscope_fleet_past_median The median of this fleet's medians of a figure over its recent runs (the history store).\n");
        for m in &judged {
            if let Some(x) = m.past_median {
                let _ = writeln!(
                    s,
                    "bwscope_fleet_past_median{} {x}",
                    labels(&[("metric", &m.metric), ("unit", &m.unit)])
                );
            }
        }
        s.push_str("# TYPE bwscope_fleet_drop gauge\n# HELP bwscope_fleet_drop 1 when the fleet median of a figure is a fleet-wide drop against this fleet's recent runs.\n");
        for m in &judged {
            let _ = writeln!(
                s,
                "bwscope_fleet_drop{} {}",
                labels(&[("metric", &m.metric)]),
                u8::from(m.drop)
            );
        }
        s.push_str("# TYPE bwscope_fleet_drop_pct gauge\n# HELP bwscope_fleet_drop_pct Percent the fleet median is worse than this fleet's recent runs' median (negative: better).\n");
        for m in &judged {
            if let Some(x) = m.pct_worse.filter(|x| x.is_finite()) {
                let _ = writeln!(
                    s,
                    "bwscope_fleet_drop_pct{} {x}",
                    labels(&[("metric", &m.metric)])
                );
            }
        }
    }
    s.push_str("# TYPE bwscope_fleet_finding gauge\n# HELP bwscope_fleet_finding 1 per finding about the whole fleet: kind fleet_drop, fleet_below_reference or usually_slowest (host: the node).\n");
    for f in &v.findings {
        let kind = f.kind.name();
        let mut l = vec![("kind", kind), ("metric", f.metric.as_str())];
        if let Some(n) = &f.node {
            l.push(("host", n.as_str()));
        }
        let _ = writeln!(s, "bwscope_fleet_finding{} 1", labels(&l));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(labels(&[("a", "x\"y\\z\nw")]), "{a=\"x\\\"y\\\\z\\nw\"}");
    }

    #[test]
    fn an_empty_run_is_well_formed() {
        let run = Run::new(
            "cache",
            serde_json::json!({}),
            crate::model::Host::default(),
            crate::model::Units::GB,
        );
        let t = run_text(&run);
        assert!(t.ends_with("# EOF\n"));
        assert!(t.contains("bwscope_run_info{host=\"unknown\""), "{t}");
        // Every sample line belongs to a declared family.
        for line in t.lines().filter(|l| !l.starts_with('#')) {
            assert!(
                line.starts_with("bwscope_run_info{") || line.starts_with("bwscope_figure{"),
                "{line}"
            );
        }
    }
}
