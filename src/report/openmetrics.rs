//! The headline figures as metrics in OpenMetrics 1.0 text
//! (`--openmetrics FILE`, `report -f openmetrics`, `watch
//! --openmetrics`): the same families as [`super::prometheus`]
//! (`docs/metrics.md`), with `info` and `counter` types, `# UNIT` lines
//! and `# EOF`, for readers of OpenMetrics (a Pushgateway, an
//! OpenMetrics parser). node_exporter's textfile collector does not read
//! it (prometheus/node_exporter#1988): for that, `--prometheus`.

use super::exposition;
use super::families;
use super::{Cadence, Exporter, Output, ReportFormat};
use crate::model::fleet::FleetRun;
use crate::model::Run;

pub struct OpenMetrics;

impl Exporter for OpenMetrics {
    fn serialize(&self, run: &Run) -> anyhow::Result<Vec<u8>> {
        Ok(exposition::openmetrics(&families::run(run)).into_bytes())
    }
}

impl ReportFormat for OpenMetrics {
    fn name(&self) -> &'static str {
        "openmetrics"
    }

    fn about(&self) -> &'static str {
        "The same metrics in OpenMetrics 1.0 text (node_exporter's textfile collector does not read it: use prometheus)"
    }

    fn fleet(&self, f: &FleetRun, _scale_max: Option<f64>) -> Vec<u8> {
        exposition::openmetrics(&families::fleet::families(f)).into_bytes()
    }
}

impl Output for OpenMetrics {
    fn flag(&self) -> &'static str {
        "--openmetrics"
    }

    fn help(&self) -> &'static str {
        "Also write the headline figures as metrics to FILE in OpenMetrics 1.0 text (node_exporter's textfile collector reads --prometheus, not this)"
    }

    fn cadence(&self) -> Cadence {
        Cadence::AtEnd
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_run_is_well_formed() {
        let run = Run::new(
            "cache",
            serde_json::json!({}),
            crate::model::Host::default(),
            crate::model::Units::GB,
        );
        let t = String::from_utf8(OpenMetrics.serialize(&run).unwrap()).unwrap();
        assert!(t.ends_with("# EOF\n"), "{t}");
        assert!(
            t.contains("bwscope_run_info{host=\"unknown\",command=\"cache\""),
            "{t}"
        );
        let p = String::from_utf8(
            super::super::prometheus::Prometheus
                .serialize(&run)
                .unwrap(),
        )
        .unwrap();
        assert!(
            p.starts_with("# HELP bwscope_run_info ") && !p.contains("# EOF"),
            "{p}"
        );
    }
}
