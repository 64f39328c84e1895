//! The per-node phase: every rank measures its own node with today's
//! suites and returns an ordinary [`Run`] (so `report`, `plot` and
//! `compare` work on any node of a fleet).
//!
//! [`measure_node`] is the one place the fleet calls into the suites: it
//! builds their plans from [`NodeOptions`] through the suites' own options
//! (as the survey does), with the sizes cut to the key points so a node
//! takes seconds, not minutes, and runs them through the runner's
//! recorder, with no files.

use std::sync::atomic::AtomicBool;

use serde::{Deserialize, Serialize};

use crate::app::runner::Recorder;
use crate::error::UserError;
use crate::model::{Curve, Host, Run, Units};
use crate::report::sink::{End, Sink};
use crate::suites::cache::{CacheOptions, CachePlan};
use crate::suites::latency::{LatencyOptions, LatencyPlan, View};
use crate::suites::memtype::{MemtypeOptions, MemtypePlan};
use crate::suites::threads::{ThreadsOptions, ThreadsPlan};
use crate::suites::{self, Flow, Sampling, Suite};

/// The suites a fleet can run on each node, with what each measures.
pub const SUITES: &[(&str, &str)] = &[
    ("info", "CPU, caches and topology, with the measured core clock (always recorded)"),
    ("cache", "key kernels (read/write/copy at the widest ISA, NT write and copy, rep movsb, memcpy) at half of each cache and at a DRAM-sized set"),
    ("latency", "pointer-chase latency at the same points"),
    ("threads", "read bandwidth with 1 and all cores at a DRAM-sized set"),
    ("memtype", "the memory kinds available: first-use cost, copy and read bandwidth"),
    ("survey", "the whole default survey (`bwscope` with no subcommand), about a minute"),
];

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
    let mut out: Vec<String> = Vec::new();
    for s in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if s == "none" {
            continue;
        }
        if !SUITES.iter().any(|(n, _)| *n == s) {
            let names: Vec<&str> = SUITES.iter().map(|(n, _)| *n).collect();
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

/// One planned step of the node phase.
enum Step {
    Cache(CachePlan),
    Latency(LatencyPlan),
    Threads(ThreadsPlan),
    Memtype(MemtypePlan),
    /// The survey's suites (the registry's short configurations).
    Survey(Vec<Box<dyn Suite>>),
}

impl Step {
    fn suites(&self) -> Vec<&dyn Suite> {
        match self {
            Step::Cache(p) => vec![p as &dyn Suite],
            Step::Latency(p) => vec![p as &dyn Suite],
            Step::Threads(p) => vec![p as &dyn Suite],
            Step::Memtype(p) => vec![p as &dyn Suite],
            Step::Survey(v) => v.iter().map(|s| s.as_ref()).collect(),
        }
    }
}

fn sampling(o: &NodeOptions) -> Sampling {
    Sampling {
        samples: o.samples,
        min_sample_ms: o.min_sample_ms,
    }
}

/// Half of each cache level and a DRAM-sized set (`cache::default_top`),
/// whole KiB so every kernel's granule divides them.
fn key_sizes(host: &Host) -> Vec<u64> {
    let mut v: Vec<u64> = (1..=3u8)
        .filter_map(|l| host.cache_size(l, Curve::Bandwidth))
        .map(|s| (s / 2).div_ceil(1024) * 1024)
        .collect();
    v.push(suites::cache::default_top(host, Curve::Bandwidth));
    v.sort_unstable();
    v.dedup();
    v
}

fn plan(o: &NodeOptions, host: &Host) -> Result<Vec<Step>, UserError> {
    let mut steps = Vec::new();
    for s in &o.suites {
        steps.push(match s.as_str() {
            "cache" => Step::Cache(suites::cache::plan(
                &CacheOptions {
                    sizes: Some(key_sizes(host)),
                    quick: true,
                    sampling: sampling(o),
                    ..CacheOptions::default()
                },
                host,
            )?),
            "latency" => Step::Latency(suites::latency::plan(
                &LatencyOptions {
                    sizes: Some(key_sizes(host)),
                    views: Some(vec![View::Random]),
                    quick: true,
                    sampling: sampling(o),
                    ..LatencyOptions::default()
                },
                host,
            )?),
            "threads" => {
                let read = suites::cache::key_kernels(host)
                    .iter()
                    .find(|k| k.name.starts_with("seq_read_"))
                    .map_or("seq_read_64_scalar".to_string(), |k| k.name.to_string());
                let mut p = suites::threads::plan(
                    &ThreadsOptions {
                        kernel: Some(read),
                        sizes: Some(vec![suites::cache::default_top(host, Curve::Bandwidth)]),
                        sampling: sampling(o),
                        ..ThreadsOptions::default()
                    },
                    host,
                )?;
                // One core and all of them: the two ends of the curve
                // are what tells nodes apart.
                let n = p.order.len();
                p.counts = if n > 1 { vec![1, n] } else { vec![1] };
                Step::Threads(p)
            }
            "memtype" => Step::Memtype(suites::memtype::plan(
                &MemtypeOptions {
                    passes: Some(10),
                    read_passes: Some(3),
                    ..MemtypeOptions::default()
                },
                host,
            )?),
            "survey" => Step::Survey(
                suites::REGISTRY
                    .iter()
                    .map(|e| (e.quick)(host))
                    .collect::<Result<_, _>>()?,
            ),
            _ => continue, // info: the host facts every run carries
        });
    }
    Ok(steps)
}

/// First touch of fresh pages, bytes per second: the slow end of what the
/// research notes measured (1 GB/s with 4 KiB pages; THP in a VM can be
/// slower). Used only for the estimate.
const FAULT_BPS: f64 = 1e9;
/// Calibration and warm-up calls per case, on top of the samples.
const CALIBRATION_CALLS: f64 = 4.0;
/// A pointer chase of N bytes is built in about 0.15 ns per byte.
const CHASE_BUILD_S_PER_BYTE: f64 = 0.15e-9;
/// What the whole survey takes on a 2-core machine (its own docs say
/// "under a minute").
const SURVEY_SECONDS: f64 = 60.0;

/// How long one node's phase should take, seconds (an estimate for
/// `--dry-run` and for the deadline rank 0 gives the ranks; the run
/// records the real time next to it).
pub fn estimate(o: &NodeOptions, host: &Host) -> Result<f64, UserError> {
    let case = |samples: usize, ms: f64| (samples as f64 + CALIBRATION_CALLS) * ms / 1000.0;
    let mut t = 0.3; // host detection with the clock
    for s in plan(o, host)? {
        t += match s {
            Step::Cache(p) => {
                let top = p.sizes.iter().max().copied().unwrap_or(0) as f64;
                (p.kernels.len() * p.sizes.len()) as f64 * case(p.samples, p.min_sample_ms)
                    + 2.0 * top / FAULT_BPS
            }
            Step::Latency(p) => {
                let top = p.sizes.iter().max().copied().unwrap_or(0) as f64;
                let build: f64 = p
                    .sizes
                    .iter()
                    .map(|&b| b as f64 * CHASE_BUILD_S_PER_BYTE)
                    .sum();
                p.sizes.len() as f64 * case(p.samples, p.min_sample_ms) + build + top / FAULT_BPS
            }
            Step::Threads(p) => {
                let top = p.sizes.iter().max().copied().unwrap_or(0) as f64;
                (p.counts.len() * p.kernels.len() * p.sizes.len()) as f64
                    * case(p.samples, p.min_sample_ms)
                    + p.counts.len() as f64 * top / FAULT_BPS
            }
            Step::Memtype(p) => {
                let passes = (p.passes + p.read_passes + 2) as f64;
                p.cases.len() as f64 * passes * p.size as f64 * 2.0 / FAULT_BPS
            }
            Step::Survey(_) => SURVEY_SECONDS,
        };
    }
    Ok(t)
}

/// Check the options against this machine before anything runs.
pub fn validate(o: &NodeOptions, host: &Host) -> Result<(), UserError> {
    plan(o, host).map(|_| ())
}

/// Measure this node: the suites of `o`, in order, into one run. `stop`
/// (Ctrl-C, or rank 0 asking) ends it between samples; what finished is
/// kept and the run is marked interrupted.
pub fn measure_node(
    o: &NodeOptions,
    host: &Host,
    stop: &'static AtomicBool,
) -> anyhow::Result<Run> {
    let steps = plan(o, host)?;
    let mut run = Run::new(
        "fleet-node",
        serde_json::json!({ "suites": o.suites }),
        host.clone(),
        Units::GB,
    );
    run.warnings = suites::host_warnings(host);
    let mut rec = Recorder::quiet(Sink::new(run, None, None)?);
    let mut interrupted = false;
    'steps: for step in &steps {
        for suite in step.suites() {
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                interrupted = true;
                break 'steps;
            }
            if let serde_json::Value::Object(m) = &mut rec.sink.run_mut().options {
                m.insert(suite.name().into(), suite.options());
            }
            if rec.measure_with(host, suite, stop)? == Flow::Stopped {
                interrupted = true;
                break 'steps;
            }
        }
    }
    let end = match interrupted {
        true => End::Stopped,
        false => End::Complete,
    };
    Ok(rec.finish(end)?)
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
    fn key_sizes_end_in_dram() {
        let host = crate::platform::detect_host(false);
        let sizes = key_sizes(&host);
        let bw = Curve::Bandwidth;
        assert_eq!(
            *sizes.last().unwrap(),
            suites::cache::default_top(&host, bw)
        );
        assert_eq!(host.regime(*sizes.last().unwrap(), 1, bw), "DRAM");
        if let Some(l1) = host.cache_size(1, bw) {
            assert_eq!(host.regime(sizes[0], 1, bw), "L1", "{sizes:?} l1 {l1}");
        }
    }

    #[test]
    fn estimate_grows_with_samples() {
        let host = crate::platform::detect_host(false);
        let o = |s| NodeOptions {
            suites: vec!["cache".into(), "latency".into(), "threads".into()],
            samples: Some(s),
            min_sample_ms: Some(10.0),
        };
        let a = estimate(&o(3), &host).unwrap();
        let b = estimate(&o(30), &host).unwrap();
        assert!(a > 0.3 && b > a, "{a} {b}");
    }
}
