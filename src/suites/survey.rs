//! The default job (`bwscope` with no subcommand): what this machine is and
//! how fast bytes move through it, in under a minute on a 2-core machine,
//! ending in a summary a person can read in ten seconds, with the JSON and
//! an HTML report saved into a results folder.
//!
//! The survey is a list of [`Step`]s run in order into one run; adding a
//! suite to it is one entry in [`steps`]. A step records its resolved plan
//! under `options.<step name>` and pushes records into the shared sink; the
//! summary ([`crate::report::summary`]) reads whatever records exist, so a
//! suite's headline appears as soon as its step does.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use crate::cli::{CacheArgs, MemoryArg, OutputArgs, SampleArgs, SurveyArgs};
use crate::commands;
use crate::error::{UserError, EXIT_INTERRUPTED, EXIT_OK};
use crate::model::Host;
use crate::model::Run;
use crate::report::html::Html;
use crate::report::json::Json;
use crate::report::sink::{self, Sink};
use crate::report::Exporter;

/// What a step gets: the machine, the sink of the run, the SIGINT flag, and
/// whether stdout belongs to a machine-readable stream.
pub struct Ctx<'a> {
    /// Mutable for the knee probe, which puts measured cache sizes on it.
    pub host: &'a mut Host,
    pub sink: &'a mut Sink,
    pub stop: &'static AtomicBool,
    pub quiet: bool,
}

impl Ctx<'_> {
    /// Record a step's resolved plan under `options.<name>`.
    pub fn set_options(&mut self, name: &str, plan: serde_json::Value) {
        if let serde_json::Value::Object(m) = &mut self.sink.run_mut().options {
            m.insert(name.to_string(), plan);
        }
    }
}

/// Whether the survey goes on after a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Interrupted,
}

/// One part of the survey.
pub struct Step {
    pub name: &'static str,
    /// What the step measures, for `options.steps` and the docs.
    pub what: &'static str,
    pub run: fn(&mut Ctx) -> anyhow::Result<Flow>,
}

/// The survey, in order. Transfers and the network need a device or a peer
/// and run only when asked (`bwscope transfer`, `bwscope net run`).
pub fn steps() -> Vec<Step> {
    vec![
        Step {
            name: "info",
            what: "CPU, caches, topology, measured clock and L1 ceilings",
            run: info_step,
        },
        Step {
            name: "knees",
            what: "where each cache level ends as this process sees it: random-chase latency knees, confirmed by read bandwidth, stored for later runs",
            run: knees_step,
        },
        Step {
            name: "cache",
            what: "cache → DRAM sweep of the key kernels (read/write/copy at the widest ISA, NT write, rep movsb, libc memcpy), one size per octave",
            run: cache_step,
        },
        Step {
            name: "latency",
            what: "load-to-use latency by pointer chase, one size per octave from L1 to DRAM",
            run: latency_step,
        },
        Step {
            name: "threads",
            what: "read bandwidth over 1..N pinned threads (one per physical core) at a DRAM-sized set",
            run: threads_step,
        },
        Step {
            name: "memtype",
            what: "memory kinds available here: first-use cost, copy and read bandwidth, break-even",
            run: memtype_step,
        },
    ]
}

fn flow(interrupted: bool) -> Flow {
    if interrupted {
        Flow::Interrupted
    } else {
        Flow::Continue
    }
}

fn no_samples() -> SampleArgs {
    SampleArgs {
        samples: None,
        min_sample_ms: None,
    }
}

fn latency_step(cx: &mut Ctx) -> anyhow::Result<Flow> {
    let args = crate::cli::LatencyArgs {
        sizes: None,
        pages: crate::cli::PagesArg::Thp,
        view: None,
        window: None,
        stride: None,
        cpu: None,
        quick: true,
        sample: no_samples(),
    };
    let plan = super::latency::plan(&args, cx.host)?;
    cx.set_options("latency", serde_json::to_value(&plan)?);
    let mut interrupted = false;
    let flag = &mut interrupted;
    let (h, p, stop) = (&*cx.host, &plan, cx.stop);
    let total = (plan.sizes.len() * plan.views.len()) as u64;
    super::pinned::run_on_cpu(plan.cpu, cx.sink, total, move |tx| {
        *flag = super::latency::run_cases(p, h, tx, stop)?;
        Ok(())
    })?;
    Ok(flow(interrupted))
}

/// The knee probe: the steps after it label regimes, size the sweep's top
/// and pick headlines by the cache sizes this process sees.
fn knees_step(cx: &mut Ctx) -> anyhow::Result<Flow> {
    let plan = super::knees::plan(cx.host)?;
    cx.set_options("knees", serde_json::to_value(&plan)?);
    let before = cx.host.cache_warnings();
    let Some(warnings) = super::knees::probe_and_store(&plan, cx.host, cx.stop)? else {
        return Ok(Flow::Interrupted);
    };
    let run = cx.sink.run_mut();
    run.host = cx.host.clone();
    run.warnings.retain(|w| !before.contains(w));
    run.warnings.extend(cx.host.cache_warnings());
    run.warnings.extend(warnings);
    Ok(Flow::Continue)
}

fn threads_step(cx: &mut Ctx) -> anyhow::Result<Flow> {
    // 256 MiB in all: 8× this L3, DRAM-bound, and quick to fault in.
    let top = super::cache::default_top(cx.host);
    let args = crate::cli::ThreadsArgs {
        kernel: Some(widest_read(cx.host)),
        sizes: Some(format!("{}B", top)),
        threads: None,
        counts: None,
        cpus: None,
        placement: crate::cli::PlacementArg::Compact,
        smt: false,
        shared: false,
        oversubscribe: false,
        processes: false,
        memory: MemoryArg::Thp,
        sample: no_samples(),
    };
    let plan = super::threads::plan(&args, cx.host)?;
    cx.set_options("threads", serde_json::to_value(&plan)?);
    Ok(flow(super::threads::run(&plan, cx.host, cx.sink, cx.stop)?))
}

/// The widest sequential read kernel this CPU runs.
fn widest_read(host: &Host) -> String {
    super::cache::key_kernels(host)
        .iter()
        .find(|k| k.name.starts_with("seq_read_"))
        .map_or("seq_read_64_scalar".into(), |k| k.name.to_string())
}

fn memtype_step(cx: &mut Ctx) -> anyhow::Result<Flow> {
    let args = crate::cli::MemtypeArgs {
        kinds: None,
        size: None,
        passes: Some(10),
        read_passes: Some(3),
        kernel: None,
        cpu: None,
        device_mem: Vec::new(),
        allow_device_writes: false,
    };
    let plan = super::memtype::plan(&args, cx.host)?;
    cx.set_options("memtype", serde_json::to_value(&plan)?);
    Ok(flow(super::memtype::run(&plan, cx.host, cx.sink, cx.stop)?))
}

fn info_step(cx: &mut Ctx) -> anyhow::Result<Flow> {
    if !cx.quiet {
        print!("{}", crate::report::views::info::render(cx.host));
        println!();
    }
    Ok(Flow::Continue)
}

/// The survey's cache sweep: the key kernels of `cache --quick`, 4 KiB to
/// half the default top at two sizes per octave, 7 samples of ≥ 3 ms
/// (about 10 s on a 2-core VM; `--quick` alone takes 2-3 s but finds cache
/// edges only to within an octave).
pub fn cache_plan(host: &Host) -> Result<super::cache::CachePlan, UserError> {
    let mut plan = super::cache::plan(&cache_args(), host)?;
    let top = plan.sizes.iter().copied().max().unwrap_or(4 << 10);
    plan.sizes = crate::util::units::geometric(4 << 10, top, std::f64::consts::SQRT_2)
        .into_iter()
        .map(|s| s.div_ceil(1024) * 1024)
        .collect();
    plan.sizes.dedup();
    Ok(plan)
}

fn cache_args() -> CacheArgs {
    CacheArgs {
        kernel: None,
        sizes: None,
        threads: None,
        cpus: None,
        quick: true,
        memory: MemoryArg::Thp,
        first_use: false,
        pattern: None,
        sample: SampleArgs {
            samples: Some(7),
            min_sample_ms: Some(3.0),
        },
    }
}

fn cache_step(cx: &mut Ctx) -> anyhow::Result<Flow> {
    let plan = cache_plan(cx.host)?;
    cx.set_options("cache", serde_json::to_value(&plan)?);
    let interrupted = super::cache::run(&plan, cx.host, cx.sink, cx.stop)?;
    Ok(if interrupted {
        Flow::Interrupted
    } else {
        Flow::Continue
    })
}

/// `./bwscope-results/2026-11-21T12-51-11Z`: sortable, and no colons
/// (which some file systems and tools reject).
pub fn default_dir() -> PathBuf {
    let stamp = crate::model::time::now_rfc3339().replace(':', "-");
    Path::new("bwscope-results").join(stamp)
}

/// Create the results folder before anything is measured, so an
/// unwritable path fails at once.
fn prepare_dir(args: &SurveyArgs) -> Result<Option<PathBuf>, UserError> {
    if args.no_save {
        return Ok(None);
    }
    let dir = args
        .out
        .as_ref()
        .map(PathBuf::from)
        .unwrap_or_else(default_dir);
    std::fs::create_dir_all(&dir).map_err(|e| UserError::Unwritable {
        path: dir.display().to_string(),
        detail: format!("{e} (--out)"),
    })?;
    // Probe: a directory we cannot create files in fails here, not after
    // a minute of measuring.
    let probe = dir.join(".bwscope-write-test");
    std::fs::write(&probe, b"").map_err(|e| UserError::Unwritable {
        path: dir.display().to_string(),
        detail: format!("{e} (--out)"),
    })?;
    let _ = std::fs::remove_file(probe);
    Ok(Some(dir))
}

pub fn run(out: &OutputArgs, args: &SurveyArgs) -> anyhow::Result<u8> {
    let t0 = Instant::now();
    let dir = prepare_dir(args)?;
    let mut out = out.clone();
    if out.json.is_none() {
        out.json = dir
            .as_ref()
            .map(|d| d.join("run.json").display().to_string());
    }
    let mut host = crate::platform::detect_host(true);
    let steps = steps();
    let options = serde_json::json!({
        "steps": steps.iter().map(|s| serde_json::json!({"name": s.name, "what": s.what})).collect::<Vec<_>>(),
    });
    let mut sink = commands::start_run("survey", options, &out, host.clone())?;
    let quiet = sink.stdout_taken();
    let stop = crate::util::signal::install();
    let mut interrupted = false;
    {
        let mut cx = Ctx {
            host: &mut host,
            sink: &mut sink,
            stop,
            quiet,
        };
        let tty = std::io::IsTerminal::is_terminal(&std::io::stderr());
        for (i, step) in steps.iter().enumerate() {
            if tty && i > 0 {
                eprintln!("[{}/{}] {}: {}", i, steps.len() - 1, step.name, step.what);
            }
            if (step.run)(&mut cx)? == Flow::Interrupted {
                interrupted = true;
                break;
            }
        }
    }
    // The summary below says the same as the per-kind warning lines, more
    // briefly; critical warnings were already printed as they happened.
    sink.echo_warnings = false;
    let run = sink.finish(interrupted)?;
    let saved = match &dir {
        Some(d) => Some(save(d, &run, out.json.as_deref())?),
        None => None,
    };
    let text = format!(
        "{}\n{}",
        crate::report::views::render(&run),
        crate::report::views::survey::render_summary(&run, saved.as_deref(), t0.elapsed())
    );
    if quiet {
        // stdout carries JSON/CSV; the summary still reaches a person.
        eprint!(
            "{}",
            crate::report::views::survey::render_summary(&run, saved.as_deref(), t0.elapsed())
        );
    } else {
        print!("{text}");
    }
    if interrupted {
        return Ok(EXIT_INTERRUPTED);
    }
    Ok(EXIT_OK)
}

/// Write run.json (unless the sink already wrote it there) and
/// report.html; returns the folder.
fn save(dir: &Path, run: &Run, sink_json: Option<&str>) -> Result<PathBuf, UserError> {
    let json_path = dir.join("run.json");
    if sink_json != Some(json_path.to_str().unwrap_or_default()) {
        let bytes = Json.serialize(run).map_err(|e| UserError::Unwritable {
            path: json_path.display().to_string(),
            detail: e.to_string(),
        })?;
        sink::write_atomic(&json_path, &bytes)?;
    }
    let html_path = dir.join("report.html");
    let bytes = Html::default()
        .serialize(run)
        .map_err(|e| UserError::Unwritable {
            path: html_path.display().to_string(),
            detail: e.to_string(),
        })?;
    sink::write_atomic(&html_path, &bytes)?;
    Ok(dir.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_have_unique_names() {
        let s = steps();
        let mut names: Vec<&str> = s.iter().map(|s| s.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), s.len());
        assert_eq!(s[0].name, "info");
    }

    #[test]
    fn default_dir_has_no_colons() {
        let d = default_dir().display().to_string();
        assert!(d.starts_with("bwscope-results/") && !d.contains(':'), "{d}");
    }
}
