//! The headline figures as metrics in the Prometheus text exposition
//! format: what node_exporter's textfile collector reads from a `.prom`
//! file and `promtool check metrics` accepts (`--prometheus FILE`,
//! `report -f prometheus`, `-o RUN.prom`, `watch --prometheus`). The
//! families are [`super::families`]'s, documented in `docs/metrics.md`;
//! [`super::openmetrics`] writes the same families in OpenMetrics 1.0.

use super::exposition;
use super::families;
use super::{Cadence, Exporter, Output, ReportFormat};
use crate::model::fleet::FleetRun;
use crate::model::Run;

pub struct Prometheus;

impl Exporter for Prometheus {
    fn serialize(&self, run: &Run) -> anyhow::Result<Vec<u8>> {
        Ok(exposition::prometheus(&families::run(run)).into_bytes())
    }
}

impl ReportFormat for Prometheus {
    fn name(&self) -> &'static str {
        "prometheus"
    }

    fn about(&self) -> &'static str {
        "The headline figures as metrics in the Prometheus text format (node_exporter's textfile collector reads it)"
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["prom"]
    }

    fn fleet(&self, f: &FleetRun, _scale_max: Option<f64>) -> Vec<u8> {
        exposition::prometheus(&families::fleet::families(f)).into_bytes()
    }
}

impl Output for Prometheus {
    fn flag(&self) -> &'static str {
        "--prometheus"
    }

    fn help(&self) -> &'static str {
        "Also write the headline figures as metrics to FILE in the Prometheus text format, for node_exporter's textfile collector (docs/metrics.md)"
    }

    fn cadence(&self) -> Cadence {
        Cadence::AtEnd
    }
}
