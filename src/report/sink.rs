//! Where records go as they complete.
//!
//! Every finished record is appended to the CSV at once and the JSON is
//! rewritten (temp file + rename, so it is always whole) at most once a
//! second and at the end; SIGINT stops the suite between samples and the
//! normal end path writes the final files. "We export results after each
//! individual benchmark, because we would risk losing them if a later
//! benchmark fails" (hyperfine).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::json::Json;
use super::Exporter;
use crate::error::UserError;
use crate::model::Warning;
use crate::model::{Record, Run};

#[derive(Debug, Clone)]
enum Target {
    Stdout,
    File(PathBuf),
}

impl Target {
    fn parse(s: &str) -> Target {
        if s == "-" {
            Target::Stdout
        } else {
            Target::File(PathBuf::from(s))
        }
    }
}

pub struct Sink {
    run: Run,
    json: Option<Target>,
    csv: Option<Target>,
    csv_file: Option<File>,
    last_json: Instant,
    /// Print warnings to stderr as they come (off in tests).
    pub echo_warnings: bool,
    /// `--openmetrics FILE`: the headline figures, written at the end.
    openmetrics: Option<PathBuf>,
}

fn unwritable(path: &std::path::Path, e: impl std::fmt::Display) -> UserError {
    UserError::Unwritable {
        path: path.display().to_string(),
        detail: e.to_string(),
    }
}

/// Write `bytes` to `path` atomically (temp file in the same directory,
/// then rename), so a reader never sees half a file.
///
/// Only regular files are replaced: renaming over `/dev/null`, a FIFO or
/// any other special file would swap the device node for a plain file
/// (`bwscope report run.json -o /dev/null` once turned this machine's
/// /dev/null into one), so those are written in place. A symlink is
/// followed and its target replaced, keeping the link.
pub fn write_atomic(path: &std::path::Path, bytes: &[u8]) -> Result<(), UserError> {
    let resolved;
    let path = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            resolved = std::fs::canonicalize(path).map_err(|e| unwritable(path, e))?;
            resolved.as_path()
        }
        _ => path,
    };
    if let Ok(m) = std::fs::metadata(path) {
        if !m.is_file() {
            return std::fs::write(path, bytes).map_err(|e| unwritable(path, e));
        }
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".partial");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, bytes).map_err(|e| unwritable(path, e))?;
    std::fs::rename(&tmp, path).map_err(|e| unwritable(path, e))
}

impl Sink {
    /// Open the outputs now, so an unwritable path fails before anything is
    /// measured.
    pub fn new(run: Run, json: Option<&str>, csv: Option<&str>) -> Result<Sink, UserError> {
        let json = json.map(Target::parse);
        let csv = csv.map(Target::parse);
        let mut csv_file = None;
        if let Some(Target::File(p)) = &csv {
            let mut f = OpenOptions::new()
                .create(true)
                .write(true)
                .truncate(true)
                .open(p)
                .map_err(|e| unwritable(p, e))?;
            f.write_all(&super::csv::encode(&[super::csv::header()]))
                .map_err(|e| unwritable(p, e))?;
            csv_file = Some(f);
        }
        if let Some(Target::Stdout) = &csv {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(&super::csv::encode(&[super::csv::header()]));
            let _ = out.flush();
        }
        let sink = Sink {
            run,
            json,
            csv,
            csv_file,
            last_json: Instant::now(),
            echo_warnings: true,
            openmetrics: None,
        };
        sink.write_json()?;
        Ok(sink)
    }

    /// Also write the headline figures in OpenMetrics format to `path`
    /// when the run finishes.
    pub fn with_openmetrics(mut self, path: Option<&str>) -> Sink {
        self.openmetrics = path.map(PathBuf::from);
        self
    }

    /// True when JSON or CSV goes to stdout, so nothing else may.
    pub fn stdout_taken(&self) -> bool {
        matches!(self.json, Some(Target::Stdout)) || matches!(self.csv, Some(Target::Stdout))
    }

    pub fn run(&self) -> &Run {
        &self.run
    }

    pub fn run_mut(&mut self) -> &mut Run {
        &mut self.run
    }

    fn write_json(&self) -> Result<(), UserError> {
        if let Some(Target::File(p)) = &self.json {
            let bytes = Json.serialize(&self.run).map_err(|e| unwritable(p, e))?;
            write_atomic(p, &bytes)?;
        }
        Ok(())
    }

    /// Add a finished record: echo critical warnings, append the CSV row,
    /// refresh the JSON file at most once a second.
    pub fn push(&mut self, r: Record) -> Result<(), UserError> {
        if self.echo_warnings {
            for w in &r.warnings {
                if matches!(w, Warning::AboveCeiling { .. }) {
                    super::emit(
                        &format!(
                            "{} {}",
                            r.kernel,
                            r.size_bytes
                                .map_or(String::new(), crate::util::units::format_bytes)
                        ),
                        w,
                    );
                }
            }
        }
        let row = super::csv::encode(&[super::csv::row(&r)]);
        match (&self.csv, &mut self.csv_file) {
            (Some(Target::File(p)), Some(f)) => {
                f.write_all(&row).map_err(|e| unwritable(p, e))?;
                f.flush().map_err(|e| unwritable(p, e))?;
            }
            (Some(Target::Stdout), _) => {
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(&row);
                let _ = out.flush();
            }
            _ => {}
        }
        self.run.records.push(r);
        if self.last_json.elapsed() >= Duration::from_secs(1) {
            self.write_json()?;
            self.last_json = Instant::now();
        }
        Ok(())
    }

    /// Close the run: stamp it, summarise warnings on stderr, write the
    /// final JSON (to its file, or to stdout).
    pub fn finish(mut self, interrupted: bool) -> Result<Run, UserError> {
        self.run.finished_at = Some(crate::model::time::now_rfc3339());
        self.run.interrupted = interrupted;
        self.run.complete = !interrupted;
        if self.echo_warnings {
            summarize_warnings(&self.run);
        }
        self.write_json()?;
        if let Some(p) = &self.openmetrics {
            write_atomic(p, super::openmetrics::run_text(&self.run).as_bytes())?;
        }
        if let Some(Target::Stdout) = &self.json {
            let bytes = Json
                .serialize(&self.run)
                .map_err(|e| unwritable(std::path::Path::new("-"), e))?;
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(&bytes);
            let _ = out.flush();
        }
        Ok(self.run)
    }
}

/// One stderr line per warning kind (with a count and the worst case) and
/// one per run-level warning; the JSON keeps every one.
pub fn summarize_warnings(run: &Run) {
    for w in &run.warnings {
        super::emit("", w);
    }
    let mut kinds: Vec<(String, usize, String, Warning)> = Vec::new();
    for r in &run.records {
        for w in &r.warnings {
            if matches!(w, Warning::AboveCeiling { .. }) {
                continue; // already printed as it happened
            }
            let kind = serde_json::to_value(w)
                .ok()
                .and_then(|v| v.get("kind").and_then(|k| k.as_str().map(str::to_string)))
                .unwrap_or_default();
            if let Some(e) = kinds.iter_mut().find(|e| e.0 == kind) {
                e.1 += 1;
            } else {
                kinds.push((
                    kind,
                    1,
                    format!(
                        "{} {}",
                        r.kernel,
                        r.size_bytes
                            .map_or(String::new(), crate::util::units::format_bytes)
                    ),
                    w.clone(),
                ));
            }
        }
    }
    let total = run.records.len();
    for (_, n, example, w) in kinds {
        eprintln!(
            "warning: {} of {} records: {} (e.g. {}; hint: {})",
            n,
            total,
            w,
            example.trim(),
            w.hint()
        );
    }
}
