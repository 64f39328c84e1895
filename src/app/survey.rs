//! The default job (`bwscope` with no subcommand): what this machine is and
//! how fast bytes move through it, in under a minute on a 2-core machine,
//! ending in a summary a person can read in ten seconds, with the JSON and
//! an HTML report saved into a results folder.
//!
//! The survey runs `info`, then every suite of `suites::REGISTRY` in its
//! short configuration, all into one run: each suite's resolved plan under
//! `options.<name>`, its records in the shared sink. The summary
//! (`report::summary`) reads whatever records exist, so a suite's headline
//! appears as soon as it is in the registry.

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::runner::Recorder;
use crate::cli::{OutputArgs, SurveyArgs};
use crate::error::{UserError, EXIT_INTERRUPTED, EXIT_OK};
use crate::model::{Host, Run};
use crate::report::html::Html;
use crate::report::json::Json;
use crate::report::sink;
use crate::report::Exporter;
use crate::suites::{Flow, REGISTRY};

/// `./bwscope-results/2026-11-21T12-51-11Z`: sortable, and no colons
/// (which some file systems and tools reject).
fn default_dir() -> PathBuf {
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
    let unwritable = |e: std::io::Error| UserError::Unwritable {
        path: dir.display().to_string(),
        detail: format!("{e} (--out)"),
    };
    std::fs::create_dir_all(&dir).map_err(unwritable)?;
    // Probe: a directory we cannot create files in fails here, not after
    // a minute of measuring.
    let probe = dir.join(".bwscope-write-test");
    std::fs::write(&probe, b"").map_err(unwritable)?;
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
        REGISTRY
            .iter()
            .map(|e| serde_json::json!({"name": e.name, "what": e.what})),
    );
    let options = serde_json::json!({ "steps": steps });
    let mut rec = Recorder::start("survey", options, &out, host.clone())?;
    let quiet = rec.sink.stdout_taken();
    if !quiet {
        crate::util::out::print(&format!("{}\n", crate::report::views::info::render(&host)));
    }
    let tty = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let steps = REGISTRY.len() + 1;
    if tty {
        eprintln!("[1/{steps}] knees: where each cache level ends");
    }
    let mut stopped = !knees(&mut rec, &mut host)?;
    for (i, entry) in REGISTRY.iter().enumerate() {
        if stopped {
            break;
        }
        if tty {
            eprintln!("[{}/{steps}] {}: {}", i + 2, entry.name, entry.what);
        }
        let suite = (entry.quick)(&host)?;
        if let serde_json::Value::Object(m) = &mut rec.sink.run_mut().options {
            m.insert(entry.name.to_string(), suite.options());
        }
        if rec.measure(&host, suite.as_ref())? == Flow::Stopped {
            stopped = true;
            break;
        }
    }
    // The summary below says the same as the per-kind warning lines, more
    // briefly; critical warnings were already printed as they happened.
    rec.sink.echo_warnings = false;
    let run = rec.finish(stopped)?;
    // Nothing measured (stopped at once): nothing to save, nothing
    // clobbered.
    let saved = match &dir {
        Some(d) if !run.records.is_empty() => Some(save(d, &run, out.json.as_deref())?),
        _ => None,
    };
    let summary =
        crate::report::views::survey::render_summary(&run, saved.as_deref(), t0.elapsed());
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
    Ok(if stopped { EXIT_INTERRUPTED } else { EXIT_OK })
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
    let stop = crate::util::signal::install();
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
    fn registry_names_are_unique() {
        let mut names: Vec<&str> = REGISTRY.iter().map(|e| e.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), REGISTRY.len());
    }

    #[test]
    fn default_dir_has_no_colons() {
        let d = default_dir().display().to_string();
        assert!(d.starts_with("bwscope-results/") && !d.contains(':'), "{d}");
    }
}
