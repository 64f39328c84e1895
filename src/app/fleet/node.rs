//! The per-node phase: every rank measures its own node with today's
//! suites and returns an ordinary [`Run`] (so `report`, `plot` and
//! `compare` work on any node of a fleet).
//!
//! [`plan`] is the one place the fleet calls into the suites: each suite's
//! fleet configuration (its descriptor's `key` plan, the key points only,
//! so a node takes seconds, not minutes), planned once per node;
//! [`NodePlan::measure`] runs them through the runner's recorder, with no
//! files.

use std::sync::atomic::AtomicBool;

use serde::{Deserialize, Serialize};

use crate::app::runner::Recorder;
use crate::error::UserError;
use crate::model::{Host, Run, Units};
use crate::report::sink::{End, Sink};
use crate::suites::{self, Flow, Sampling, Suite};

/// `--suites info`: the host facts every run carries.
const INFO: &str = "CPU, caches and topology, with the measured core clock (always recorded)";
/// `--suites survey`: every suite the survey runs, as the survey runs it.
const SURVEY: &str = "the whole default survey (`bwscope` with no subcommand), about a minute";

/// The suites a fleet can run on each node, with what each measures:
/// `info`, every suite with a fleet configuration, `survey`.
pub fn choices() -> Vec<(&'static str, &'static str)> {
    let mut v = vec![("info", INFO)];
    v.extend(suites::fleet().map(|(d, k)| (d.id.name(), k.about)));
    v.push(("survey", SURVEY));
    v
}

/// What every node measures (the same on every rank; each rank resolves
/// sizes against its own caches).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeOptions {
    pub suites: Vec<String>,
    pub samples: Option<usize>,
    pub min_sample_ms: Option<f64>,
}

/// `--suites LIST`.
pub fn parse_suites(text: &str) -> Result<Vec<String>, UserError> {
    let choices = choices();
    let mut out: Vec<String> = Vec::new();
    for s in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if s == "none" {
            continue;
        }
        if !choices.iter().any(|(n, _)| *n == s) {
            let names: Vec<&str> = choices.iter().map(|(n, _)| *n).collect();
            return Err(UserError::flag(
                "--suites",
                format!(
                    "unknown suite '{s}': use a list of {} or none",
                    names.join(", ")
                ),
            ));
        }
        if !out.iter().any(|x| x == s) {
            out.push(s.to_string());
        }
    }
    Ok(out)
}

/// One node's phase, planned for its machine: the suites in order.
pub struct NodePlan {
    /// What it was planned from.
    pub options: NodeOptions,
    suites: Vec<Box<dyn Suite>>,
}

/// Host detection with the clock, seconds: part of every node's phase.
const DETECT_SECONDS: f64 = 0.3;

/// Plan the suites of `o` for `host`; an error names the flag that does
/// not fit this machine.
pub fn plan(o: &NodeOptions, host: &Host) -> Result<NodePlan, UserError> {
    let sampling = Sampling {
        samples: o.samples,
        min_sample_ms: o.min_sample_ms,
    };
    let mut out = Vec::new();
    for s in &o.suites {
        if s == "survey" {
            for (_, quick) in suites::survey() {
                out.push(quick(host)?);
            }
            continue;
        }
        // info: the host facts every run carries.
        if let Some((_, key)) = suites::fleet().find(|(d, _)| d.id.name() == s) {
            out.push((key.plan)(host, sampling)?);
        }
    }
    Ok(NodePlan {
        options: o.clone(),
        suites: out,
    })
}

impl NodePlan {
    /// How long the phase should take, seconds (for `--dry-run` and for
    /// the deadline rank 0 gives the ranks; the run records the real time
    /// next to it): every plan's own estimate.
    pub fn estimate_s(&self) -> f64 {
        DETECT_SECONDS
            + self
                .suites
                .iter()
                .map(|s| s.estimate().seconds)
                .sum::<f64>()
    }

    /// Measure this node: the suites in order, into one run. `stop`
    /// (Ctrl-C, or rank 0 asking) ends it between samples; what finished
    /// is kept and the run is marked interrupted.
    pub fn measure(&self, host: &Host, stop: &'static AtomicBool) -> anyhow::Result<Run> {
        let mut run = Run::new(
            "fleet-node",
            serde_json::json!({ "suites": self.options.suites }),
            host.clone(),
            Units::GB,
        );
        run.warnings = suites::host_warnings(host);
        // The node's run has its own spell probes: its baseline is this
        // run's readings, not an earlier run's of the same process.
        let probes = crate::measure::probe::SpellProbes::for_host(host);
        let mut rec = Recorder::quiet(Sink::new(run, &[])?, probes);
        let mut interrupted = false;
        for suite in &self.suites {
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                interrupted = true;
                break;
            }
            if let serde_json::Value::Object(m) = &mut rec.sink.run_mut().options {
                m.insert(suite.id().name().into(), suite.options());
            }
            if rec.measure_with(host, suite.as_ref(), stop)? == Flow::Stopped {
                interrupted = true;
                break;
            }
        }
        let end = match interrupted {
            true => End::Stopped,
            false => End::Complete,
        };
        Ok(rec.finish(end)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suites_parse_and_refuse_unknown_names() {
        assert_eq!(
            parse_suites("cache, latency,cache").unwrap(),
            vec!["cache", "latency"]
        );
        assert!(parse_suites("none").unwrap().is_empty());
        let e = parse_suites("cache,stream").unwrap_err().to_string();
        assert!(e.contains("--suites") && e.contains("'stream'"), "{e}");
    }

    #[test]
    fn estimate_grows_with_samples() {
        let host = crate::platform::detect_host(false);
        let o = |s| NodeOptions {
            suites: vec!["cache".into(), "latency".into(), "threads".into()],
            samples: Some(s),
            min_sample_ms: Some(10.0),
        };
        let a = plan(&o(3), &host).unwrap().estimate_s();
        let b = plan(&o(30), &host).unwrap().estimate_s();
        assert!(a > 0.3 && b > a, "{a} {b}");
    }
}
