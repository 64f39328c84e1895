//! The default job (`bwscope` with no subcommand): what this machine is and
//! how fast bytes move through it, in under a minute on a 2-core machine,
//! ending in a summary a person can read in ten seconds, with the JSON and
//! an HTML report saved into a results folder.
//!
//! The survey runs `info`, the knee probe, then every suite whose
//! descriptor has a short configuration (`suites::survey`), all into one run: each suite's resolved plan under
//! `options.<name>`, its records in the shared sink. The summary
//! (`report::summary`) reads whatever records exist, so a suite's headline
//! appears as soon as its descriptor has a short configuration.

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::runner::Recorder;
use crate::cli::{OutputArgs, SurveyArgs};
use crate::error::{UserError, EXIT_INTERRUPTED, EXIT_OK};
use crate::model::{Host, Run};
use crate::report::html::Html;
use crate::report::json::Json;
use crate::report::outfile::Folder;
use crate::report::sink;
use crate::report::Exporter;
use crate::suites::{self, Flow};

/// `./bwscope-results/2026-11-21T12-51-11Z`: sortable, and no colons
/// (which some file systems and tools reject).
fn default_dir() -> PathBuf {
    let stamp = crate::model::time::now_rfc3339().replace(':', "-");
    Path::new("bwscope-results").join(stamp)
}

/// Create the results folder before anything is measured, so an
/// unwritable path fails at once.
fn prepare_dir(args: &SurveyArgs) -> Result<Option<Folder>, UserError> {
    if args.no_save {
        return Ok(None);
    }
    match &args.out {
        Some(d) => Folder::prepare(Path::new(d), "--out").map(Some),
        // Two surveys started in the same second get a folder each.
        None => Folder::fresh(&default_dir(), "--out").map(Some),
    }
}

pub fn run(cx: &super::Context, out: &OutputArgs, args: &SurveyArgs) -> anyhow::Result<u8> {
    let t0 = Instant::now();
    let dir = prepare_dir(args)?;
    let mut out = out.clone();
    if let (None, Some(d)) = (out.file("--json"), &dir) {
        out.set_file("--json", d.path.join("run.json").display().to_string());
    }
    let mut host = crate::platform::detect_host(true);
    let options = serde_json::json!({ "steps": steps() });
    let mut rec = Recorder::start("survey", options, &out, host.clone())?;
    let quiet = rec.sink.stdout_taken();
    let tty = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let steps = suites::survey().count() + 2;
    if tty {
        eprintln!("[1/{steps}] knees: where each cache level ends");
    }
    // A suite that fails ends the survey; what was measured is still
    // written, marked incomplete with the reason.
    let mut flow = knees(&mut rec, &mut host).map(|done| match done {
        true => Flow::Done,
        false => Flow::Stopped,
    });
    // The header after the knee probe: the cache sizes it shows are the
    // ones this run measured and labels its figures by, not the ones an
    // earlier run left in the store.
    if !quiet {
        crate::util::out::print(&format!("{}\n", crate::report::views::info::render(&host)));
    }
    for (i, (d, quick)) in suites::survey().enumerate() {
        if !matches!(flow, Ok(Flow::Done)) {
            break;
        }
        if tty {
            eprintln!("[{}/{steps}] {}: {}", i + 2, d.id, d.about);
        }
        flow = step(&mut rec, &host, d, quick);
    }
    // Memory tiers, only where there are several (nothing on a one-tier
    // machine, not even a step).
    if let (Ok(Flow::Done), Some(suite)) = (&flow, suites::numa::survey_tiers(&host)) {
        if tty {
            eprintln!("[+] numa --tiers: every memory tier from every initiator");
        }
        flow = suite.map_err(anyhow::Error::from).and_then(|suite| {
            if let serde_json::Value::Object(m) = &mut rec.sink.run_mut().options {
                m.insert("numa".into(), suite.options());
            }
            rec.measure(&host, suite.as_ref())
        });
    }
    if matches!(flow, Ok(Flow::Done)) {
        if tty {
            eprintln!("[{steps}/{steps}] again: the DRAM reads once more, for their spread");
        }
        let probes = rec.probes().clone();
        flow = super::again::dram_reads(rec.sink.run_mut(), &probes);
    }
    // The summary below says the same as the per-kind warning lines, more
    // briefly; critical warnings were already printed as they happened.
    rec.sink.echo_warnings = false;
    let probes = rec.probes().clone();
    let mut history = super::history::Session::open(&cx.history);
    history.judge(rec.sink.run_mut());
    let (run, flow) = rec.finish_after(flow.map_err(survey_memory));
    // Nothing measured (stopped at once, or failed at once): nothing to
    // save, nothing clobbered, and no empty folder left behind.
    let saved = match (&dir, &run) {
        (Some(d), Some(run)) if !run.records.is_empty() => {
            Some(save(&d.path, run, out.file("--json"))?)
        }
        _ => None,
    };
    if let (None, Some(d)) = (&saved, &dir) {
        d.remove_if_empty();
    }
    if let Some(run) = run.as_ref().filter(|r| !r.records.is_empty()) {
        history.record(run);
    }
    let Some(run) = run else {
        return flow.map(|_| EXIT_OK);
    };
    if run.records.is_empty() && flow.is_err() {
        // Nothing measured: the error is the only line worth printing.
        return flow.map(|_| EXIT_OK);
    }
    let stopped = matches!(flow, Ok(Flow::Stopped));
    let summary = crate::report::views::survey::render_summary(
        &run,
        saved.as_deref(),
        t0.elapsed(),
        probes.spent(),
    );
    if quiet {
        // stdout carries JSON/CSV; the summary still reaches a person.
        eprint!("{summary}");
    } else {
        crate::util::out::print(&format!(
            "{}\n{}",
            crate::report::views::render(&run),
            summary
        ));
    }
    // An error that ended the survey early comes after what it measured.
    flow?;
    Ok(if stopped { EXIT_INTERRUPTED } else { EXIT_OK })
}

/// The survey's steps as its run's options list them.
fn steps() -> Vec<serde_json::Value> {
    let mut steps = vec![
        serde_json::json!({
            "name": "info",
            "what": "CPU, caches, topology, measured clock and L1 ceilings",
        }),
        serde_json::json!({
            "name": "knees",
            "what": "where each cache level ends as this process sees it (random-chase latency, confirmed by read bandwidth); stored for later runs",
        }),
    ];
    steps.extend(
        suites::survey().map(|(d, _)| serde_json::json!({"name": d.id.name(), "what": d.about})),
    );
    steps.push(serde_json::json!({
        "name": "again",
        "what": "the DRAM reads (one thread, all cores) once more at the end: their spread, and whether the memory was contended from outside",
    }));
    steps
}

/// One suite of the survey, planned by its `quick` plan. A suite whose
/// buffers do not fit (memory, `ulimit -v`) is left out with a warning
/// saying why, and the survey goes on.
fn step(
    rec: &mut Recorder,
    host: &Host,
    d: &suites::Descriptor,
    quick: fn(&Host) -> suites::Planned,
) -> anyhow::Result<Flow> {
    let suite = match quick(host) {
        Err(UserError::NotEnoughMemory {
            need, limit: left, ..
        })
        | Err(UserError::AddressSpace { need, left, .. }) => {
            rec.sink
                .run_mut()
                .warnings
                .push(crate::model::Warning::Other {
                    message: format!(
                        "{} not measured: it needs {need} of memory and {left} may be used",
                        d.id
                    ),
                    hint: "free memory (or raise `ulimit -v`) and run the survey again".into(),
                });
            return Ok(Flow::Done);
        }
        other => other?,
    };
    if let serde_json::Value::Object(m) = &mut rec.sink.run_mut().options {
        m.insert(d.id.name().to_string(), suite.options());
    }
    rec.measure(host, suite.as_ref())
}

/// What to do when the survey's buffers do not fit: it has no --sizes or
/// --threads to shrink them.
const SURVEY_MEMORY: &str = "the survey sizes its sweeps past the last cache level to reach DRAM; free memory, or measure smaller sizes with a single command, e.g. `bwscope cache --sizes 16KiB..64MiB:x2`";

/// A memory refusal inside the survey, with the survey's hint.
fn survey_memory(e: anyhow::Error) -> anyhow::Error {
    match e.downcast::<UserError>() {
        Ok(u) => u.with_memory_hint("survey", SURVEY_MEMORY).into(),
        Err(e) => e,
    }
}

/// The knee probe: measure where each level ends, store it for this host,
/// and put it on the run's host so every later suite labels regimes (and
/// sizes its sweep) by it. False when a stop request ended it.
fn knees(rec: &mut Recorder, host: &mut Host) -> anyhow::Result<bool> {
    if crate::platform::emulation().is_some() {
        // Under qemu-user the curve is the emulator host's caches: nothing
        // to store for this core (the run's warnings say it is emulated).
        if let serde_json::Value::Object(m) = &mut rec.sink.run_mut().options {
            m.insert(
                "knees".into(),
                serde_json::json!({"skipped": "under an emulator"}),
            );
        }
        return Ok(true);
    }
    let plan = crate::suites::knees::plan(host)?;
    // Its largest buffer is the survey's: refused before allocating when
    // it cannot fit (memory, or `ulimit -v`), rather than at the first
    // mmap with a hint about flags the survey does not have.
    let top = plan
        .sizes
        .iter()
        .chain(&plan.read_sizes)
        .max()
        .copied()
        .unwrap_or(0);
    crate::suites::check_memory(top + top / 16 + (4 << 20), "survey", SURVEY_MEMORY)?;
    let stop = crate::os::signal::install();
    let before = host.cache_warnings();
    let Some(warnings) = crate::suites::knees::probe_and_store(&plan, host, stop)? else {
        return Ok(false);
    };
    let run = rec.sink.run_mut();
    if let serde_json::Value::Object(m) = &mut run.options {
        m.insert("knees".into(), serde_json::to_value(&plan)?);
    }
    run.host = host.clone();
    run.warnings.retain(|w| !before.contains(w));
    run.warnings.extend(host.cache_warnings());
    run.warnings.extend(warnings);
    Ok(true)
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
    fn default_dir_has_no_colons() {
        let d = default_dir();
        let name = d.file_name().unwrap().to_string_lossy();
        assert!(
            d.starts_with("bwscope-results") && !name.contains(':'),
            "{d:?}"
        );
    }
}
