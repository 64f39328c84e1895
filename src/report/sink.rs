//! Where records go as they complete.
//!
//! Every finished record is appended to the CSV at once and the JSON is
//! rewritten (temp file + rename, so it is always whole) at most once a
//! second and at the end; a stop signal ends the suite between samples and
//! the normal end path writes the final files. "We export results after
//! each individual benchmark, because we would risk losing them if a later
//! benchmark fails" (hyperfine).
//!
//! Nothing is created or replaced before the first record exists: a run
//! that fails at once (no server, a bad device) leaves an earlier result
//! untouched. The paths are still checked up front ([`check_outputs`]), so
//! an unwritable one fails before anything is measured.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::json::Json;
use super::outfile::{self, Replacement};
use super::Exporter;
use crate::error::UserError;
use crate::model::Warning;
use crate::model::{Record, Run};

pub use super::outfile::write_atomic;

#[derive(Debug, Clone)]
enum Target {
    Stdout,
    File(PathBuf),
}

impl Target {
    /// `-`, and `/dev/stdout` or `/dev/fd/1`, which mean the same.
    fn parse(s: &str) -> Target {
        if outfile::is_stdout(s) {
            Target::Stdout
        } else {
            Target::File(PathBuf::from(s))
        }
    }
}

/// Validate `--json`/`--csv`/`--openmetrics` together before anything
/// runs: not two on stdout, no two into one file (the last written would
/// clobber the others), each writable (checked without creating or
/// truncating anything), so a typo fails before a long run, not after it.
pub fn check_outputs(
    json: Option<&str>,
    csv: Option<&str>,
    openmetrics: Option<&str>,
) -> Result<(), UserError> {
    fn alias(p: Option<&str>) -> Option<&str> {
        p.map(|p| if outfile::is_stdout(p) { "-" } else { p })
    }
    let (json, csv, openmetrics) = (alias(json), alias(csv), alias(openmetrics));
    let named = [
        ("--json", json),
        ("--csv", csv),
        ("--openmetrics", openmetrics),
    ];
    let stdout: Vec<&str> = named
        .iter()
        .filter(|(_, p)| *p == Some("-"))
        .map(|(f, _)| *f)
        .collect();
    if let [first, second, ..] = stdout[..] {
        return Err(UserError::flag(
            second,
            format!("{first} - and {second} - would both write to stdout and neither would parse; send one of them to a file"),
        ));
    }
    let files: Vec<(&'static str, &str)> = named
        .iter()
        .filter_map(|&(f, p)| p.map(|p| (f, p)))
        .collect();
    for (i, &(flag, p)) in files.iter().enumerate() {
        if p.is_empty() {
            return Err(UserError::flag(
                flag,
                "the path is empty: give a file name, or '-' for stdout",
            ));
        }
        for &(earlier, q) in &files[..i] {
            if p != "-" && q != "-" && outfile::same_file(Path::new(q), Path::new(p)) {
                return Err(UserError::flag(
                    flag,
                    format!("names the same file as {earlier} ({p}); give them different paths"),
                ));
            }
        }
    }
    for (_, p) in files {
        if p != "-" {
            outfile::check_writable(Path::new(p))?;
        }
    }
    Ok(())
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum End {
    /// Everything planned was measured (a point that failed is a record).
    Complete,
    /// A signal or a closed stdout stopped it between samples.
    Stopped,
    /// An error ended it early (a write error, a lost peer, memory): the
    /// records so far are kept, and the run says why it is short.
    Failed(String),
}

/// The CSV stream: opened with the first record.
enum CsvOut {
    /// Not started: nothing written anywhere yet.
    Pending,
    /// A regular file, replaced (renamed into place) with the first row.
    File(Replacement),
    /// A FIFO, /dev/null, a terminal, a descriptor: written in place.
    Special(outfile::Special),
    Stdout,
}

pub struct Sink {
    run: Run,
    json: Option<Target>,
    csv: Option<Target>,
    csv_out: CsvOut,
    /// When the JSON file was last written; `None` = not yet.
    last_json: Option<Instant>,
    /// Our stdout reader went away: stop writing there.
    stdout_gone: bool,
    /// Print warnings to stderr as they come (off in tests).
    pub echo_warnings: bool,
    /// `--openmetrics FILE` (or `-`): the headline figures, written at
    /// the end.
    openmetrics: Option<Target>,
    /// The files above, held for the run: another run given the same
    /// path is refused ([`outfile::Claim`]).
    _claims: Vec<outfile::Claim>,
}

/// Claim the files among `paths` for this run.
fn claim(paths: &[Option<&str>]) -> Result<Vec<outfile::Claim>, UserError> {
    let mut claims = Vec::new();
    for p in paths.iter().flatten() {
        claims.extend(outfile::Claim::output(Path::new(p))?);
    }
    Ok(claims)
}

fn unwritable(path: &std::path::Path, e: impl std::fmt::Display) -> UserError {
    UserError::Unwritable {
        path: path.display().to_string(),
        detail: e.to_string(),
    }
}

impl Sink {
    /// Check the outputs now (see [`check_outputs`]; add `--openmetrics`
    /// with [`Sink::with_openmetrics`]); files are created with the first
    /// record.
    pub fn new(run: Run, json: Option<&str>, csv: Option<&str>) -> Result<Sink, UserError> {
        check_outputs(json, csv, None)?;
        let claims = claim(&[json, csv])?;
        Ok(Sink {
            run,
            json: json.map(Target::parse),
            csv: csv.map(Target::parse),
            csv_out: CsvOut::Pending,
            last_json: None,
            stdout_gone: false,
            echo_warnings: true,
            openmetrics: None,
            _claims: claims,
        })
    }

    /// Also write the headline figures in OpenMetrics format to `path`
    /// when the run finishes; checked now with the other outputs.
    pub fn with_openmetrics(mut self, path: Option<&str>) -> Result<Sink, UserError> {
        if path.is_some() {
            let name = |t: &Option<Target>| match t {
                Some(Target::File(p)) => Some(p.to_string_lossy().into_owned()),
                Some(Target::Stdout) => Some("-".to_string()),
                None => None,
            };
            let (j, c) = (name(&self.json), name(&self.csv));
            check_outputs(j.as_deref(), c.as_deref(), path)?;
            self._claims.extend(claim(&[path])?);
        }
        self.openmetrics = path.map(Target::parse);
        Ok(self)
    }

    /// True when JSON or CSV goes to stdout, so nothing else may.
    pub fn stdout_taken(&self) -> bool {
        [&self.json, &self.csv, &self.openmetrics]
            .iter()
            .any(|t| matches!(t, Some(Target::Stdout)))
    }

    pub fn run(&self) -> &Run {
        &self.run
    }

    pub fn run_mut(&mut self) -> &mut Run {
        &mut self.run
    }

    /// Write the JSON file as it stands. A special file (a FIFO, a
    /// device, a descriptor) is written only at the end (`last`): each
    /// write there is one more document to its reader, not a replacement.
    fn write_json(&self, last: bool) -> Result<(), UserError> {
        if let Some(Target::File(p)) = &self.json {
            if !last && outfile::is_special(p) {
                return Ok(());
            }
            let bytes = Json.serialize(&self.run).map_err(|e| unwritable(p, e))?;
            write_atomic(p, &bytes)?;
        }
        Ok(())
    }

    /// stdout for a stream: a closed reader stops the run like a signal
    /// (files still get every finished record; exit 141).
    fn write_stdout(&mut self, bytes: &[u8]) {
        if self.stdout_gone {
            return;
        }
        if let Err(e) = crate::util::out::try_write(bytes) {
            self.stdout_gone = true;
            if crate::util::out::is_closed_pipe(&e) {
                crate::os::signal::request_stop(crate::os::signal::Stop::ClosedPipe);
            } else {
                eprintln!("error: cannot write to stdout: {e}; stopping");
                crate::os::signal::request_stop(crate::os::signal::Stop::ClosedPipe);
            }
        }
    }

    /// Open the CSV (header first) when the first row comes.
    fn start_csv(&mut self) -> Result<(), UserError> {
        let header = super::csv::encode(&[super::csv::header()]);
        self.csv_out = match &self.csv {
            None => return Ok(()),
            Some(Target::Stdout) => {
                self.write_stdout(&header);
                CsvOut::Stdout
            }
            Some(Target::File(p)) if outfile::is_special(p) => {
                let mut f = outfile::Special::open(p)?;
                f.write_all(&header)?;
                CsvOut::Special(f)
            }
            Some(Target::File(p)) => {
                let mut r = Replacement::start(p)?;
                r.file.write_all(&header).map_err(|e| unwritable(p, e))?;
                CsvOut::File(r)
            }
        };
        Ok(())
    }

    fn write_csv_row(&mut self, row: &[u8]) -> Result<(), UserError> {
        if matches!(self.csv_out, CsvOut::Pending) {
            self.start_csv()?;
        }
        let path = match &self.csv {
            Some(Target::File(p)) => p.clone(),
            _ => PathBuf::from("-"),
        };
        match &mut self.csv_out {
            CsvOut::File(r) => {
                use std::io::Seek;
                let before = r.file.stream_position().ok();
                if let Err(e) = r.file.write_all(row) {
                    // A full disk cuts the row: take the part back, so the
                    // file ends with the last whole record (which the JSON
                    // holds too).
                    if let Some(at) = before {
                        let _ = r.file.set_len(at);
                        let _ = r.file.seek(std::io::SeekFrom::Start(at));
                    }
                    return Err(unwritable(&path, e));
                }
                // The header and first row are in: the old file may go.
                if !r.is_committed() {
                    r.commit()?;
                }
            }
            CsvOut::Special(f) => f.write_all(row)?,
            CsvOut::Stdout => self.write_stdout(row),
            CsvOut::Pending => {}
        }
        Ok(())
    }

    /// Add a finished record: echo critical warnings, append the CSV row,
    /// refresh the JSON file (at once for the first record, then at most
    /// once a second).
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
        self.write_csv_row(&row)?;
        self.run.records.push(r);
        if self
            .last_json
            .is_none_or(|t| t.elapsed() >= Duration::from_secs(1))
        {
            self.write_json(false)?;
            self.last_json = Some(Instant::now());
        }
        Ok(())
    }

    /// Close the run: stamp it (complete, or why not), summarise warnings
    /// on stderr, write the final JSON (to its file, or to stdout). A run
    /// without a single record writes no file, so it cannot replace an
    /// earlier result.
    pub fn finish(mut self, end: End) -> Result<Run, UserError> {
        self.run.finished_at = Some(crate::model::time::now_rfc3339());
        self.run.interrupted = matches!(end, End::Stopped);
        self.run.complete = matches!(end, End::Complete);
        self.run.incomplete_reason = match end {
            End::Complete => None,
            End::Stopped => Some(match crate::os::signal::received() {
                Some(why) => why.name().to_string(),
                None => "a stop request".to_string(),
            }),
            End::Failed(why) => Some(why),
        };
        if self.echo_warnings {
            summarize_warnings(&self.run);
        }
        if self.run.records.is_empty() {
            let files: Vec<String> = [&self.json, &self.csv]
                .into_iter()
                .flatten()
                .filter_map(|t| match t {
                    Target::File(p) => Some(p.display().to_string()),
                    Target::Stdout => None,
                })
                .collect();
            if !files.is_empty() && self.echo_warnings {
                eprintln!(
                    "note: no record was finished, so {} was not written",
                    files.join(" and ")
                );
            }
            if let Some(Target::Stdout) = &self.csv {
                let header = super::csv::encode(&[super::csv::header()]);
                self.write_stdout(&header);
            }
        } else {
            self.write_json(true)?;
            match &self.openmetrics {
                Some(Target::File(p)) => {
                    write_atomic(p, super::openmetrics::run_text(&self.run).as_bytes())?
                }
                Some(Target::Stdout) => {
                    let text = super::openmetrics::run_text(&self.run);
                    self.write_stdout(text.as_bytes());
                }
                None => {}
            }
        }
        if let Some(Target::Stdout) = &self.json {
            let bytes = Json
                .serialize(&self.run)
                .map_err(|e| unwritable(std::path::Path::new("-"), e))?;
            self.write_stdout(&bytes);
        }
        Ok(self.run)
    }
}

/// One stderr line per warning kind (with a count and the worst case) and
/// one per run-level warning; the JSON keeps every one.
pub fn summarize_warnings(run: &Run) {
    for w in &run.warnings {
        eprintln!("warning: {} (hint: {})", w, w.hint_for(&run.command));
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
            w.hint_for(&run.command)
        );
    }
}
