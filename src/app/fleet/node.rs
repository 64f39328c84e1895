//! The per-node phase: every rank measures its own node with today's
//! suites and returns an ordinary [`Run`] (so `report`, `plot` and
//! `compare` work on any node of a fleet).
//!
//! [`measure_node`] is the one place the fleet calls into the suites: it
//! builds their plans from [`NodeOptions`] the way the survey does
//! (`suites::survey`), with the sizes cut to the key points so a node
//! takes seconds, not minutes.

use std::sync::atomic::AtomicBool;

use serde::{Deserialize, Serialize};

use crate::cli::{CacheArgs, LatencyArgs, MemoryArg, MemtypeArgs, PagesArg, PlacementArg};
use crate::cli::{SampleArgs, ThreadsArgs};
use crate::error::UserError;
use crate::model::{Host, Run, Units};
use crate::report::sink::Sink;
use crate::suites;
use crate::suites::cache::CachePlan;
use crate::suites::latency::LatencyPlan;
use crate::suites::memtype::MemtypePlan;
use crate::suites::threads::ThreadsPlan;

/// The suites a fleet can run on each node, with what each measures.
pub const SUITES: &[(&str, &str)] = &[
    ("info", "CPU, caches and topology, with the measured core clock (always recorded)"),
    ("cache", "key kernels (read/write/copy at the widest ISA, NT write, rep movsb, memcpy) at half of each cache and at a DRAM-sized set"),
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
    Survey,
}

fn sample(o: &NodeOptions) -> SampleArgs {
    SampleArgs {
        samples: o.samples,
        min_sample_ms: o.min_sample_ms,
    }
}

/// Half of each cache level and a DRAM-sized set (`cache::default_top`),
/// whole KiB so every kernel's granule divides them.
fn key_sizes(host: &Host) -> String {
    let mut v: Vec<u64> = (1..=3u8)
        .filter_map(|l| host.cache_size(l))
        .map(|s| (s / 2).div_ceil(1024) * 1024)
        .collect();
    v.push(suites::cache::default_top(host));
    v.sort_unstable();
    v.dedup();
    v.iter()
        .map(|s| format!("{s}B"))
        .collect::<Vec<_>>()
        .join(",")
}

fn plan(o: &NodeOptions, host: &Host) -> Result<Vec<Step>, UserError> {
    let mut steps = Vec::new();
    for s in &o.suites {
        steps.push(match s.as_str() {
            "cache" => Step::Cache(suites::cache::plan(
                &CacheArgs {
                    kernel: None,
                    sizes: Some(key_sizes(host)),
                    threads: None,
                    cpus: None,
                    quick: true,
                    memory: MemoryArg::Thp,
                    first_use: false,
                    pattern: None,
                    sample: sample(o),
                },
                host,
            )?),
            "latency" => Step::Latency(suites::latency::plan(
                &LatencyArgs {
                    sizes: Some(key_sizes(host)),
                    pages: PagesArg::Thp,
                    view: Some("random".into()),
                    window: None,
                    stride: None,
                    cpu: None,
                    quick: true,
                    sample: sample(o),
                },
                host,
            )?),
            "threads" => {
                let read = suites::cache::key_kernels(host)
                    .iter()
                    .find(|k| k.name.starts_with("seq_read_"))
                    .map_or("seq_read_64_scalar".to_string(), |k| k.name.to_string());
                let mut p = suites::threads::plan(
                    &ThreadsArgs {
                        kernel: Some(read),
                        sizes: Some(format!("{}B", suites::cache::default_top(host))),
                        threads: None,
                        counts: None,
                        cpus: None,
                        placement: PlacementArg::Compact,
                        smt: false,
                        shared: false,
                        oversubscribe: false,
                        processes: false,
                        memory: MemoryArg::Thp,
                        sample: sample(o),
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
                &MemtypeArgs {
                    kinds: None,
                    size: None,
                    passes: Some(10),
                    read_passes: Some(3),
                    kernel: None,
                    cpu: None,
                    device_mem: Vec::new(),
                    allow_device_writes: false,
                },
                host,
            )?),
            "survey" => Step::Survey,
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
            Step::Survey => SURVEY_SECONDS,
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
    let mut sink = Sink::new(run, None, None)?;
    sink.echo_warnings = false;
    let mut interrupted = false;
    for step in &steps {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            interrupted = true;
            break;
        }
        let name = |n: &str, v: serde_json::Value, sink: &mut Sink| {
            if let serde_json::Value::Object(m) = &mut sink.run_mut().options {
                m.insert(n.into(), v);
            }
        };
        interrupted = match step {
            Step::Cache(p) => {
                name("cache", serde_json::to_value(p)?, &mut sink);
                suites::cache::run(p, host, &mut sink, stop)?
            }
            Step::Latency(p) => {
                name("latency", serde_json::to_value(p)?, &mut sink);
                let mut hit = false;
                let flag = &mut hit;
                let total = (p.sizes.len() * p.views.len()) as u64;
                suites::pinned::run_on_cpu(p.cpu, &mut sink, total, move |tx| {
                    *flag = suites::latency::run_cases(p, host, tx, stop)?;
                    Ok(())
                })?;
                hit
            }
            Step::Threads(p) => {
                name("threads", serde_json::to_value(p)?, &mut sink);
                suites::threads::run(p, host, &mut sink, stop)?
            }
            Step::Memtype(p) => {
                name("memtype", serde_json::to_value(p)?, &mut sink);
                suites::memtype::run(p, host, &mut sink, stop)?
            }
            Step::Survey => {
                let mut cx = suites::survey::Ctx {
                    host,
                    sink: &mut sink,
                    stop,
                    quiet: true,
                };
                let mut hit = false;
                for s in suites::survey::steps() {
                    if (s.run)(&mut cx)? == suites::survey::Flow::Interrupted {
                        hit = true;
                        break;
                    }
                }
                hit
            }
        };
        if interrupted {
            break;
        }
    }
    Ok(sink.finish(interrupted)?)
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
        let sizes = crate::util::units::parse_size_list(&key_sizes(&host)).unwrap();
        assert_eq!(*sizes.last().unwrap(), suites::cache::default_top(&host));
        assert_eq!(host.regime(*sizes.last().unwrap(), 1), "DRAM");
        if let Some(l1) = host.cache_size(1) {
            assert_eq!(host.regime(sizes[0], 1), "L1", "{sizes:?} l1 {l1}");
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
