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
//! untouched. The paths are still checked up front ([`check_files`]), so
//! an unwritable one fails before anything is measured.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::outfile::{self, Replacement};
use super::{Cadence, Output};
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

/// The files given by flag, `(flag, path)` as the command line holds them,
/// as outputs of [`super::OUTPUTS`].
pub fn outputs<'a>(
    files: &'a [(&'static str, String)],
) -> Result<Vec<(&'static dyn Output, &'a str)>, UserError> {
    files
        .iter()
        .map(|&(flag, ref path)| {
            super::output(flag)
                .map(|o| (o, path.as_str()))
                .ok_or_else(|| UserError::flag(flag, "no output format has this flag"))
        })
        .collect()
}

/// Validate the files given by flag together before anything runs (see
/// [`check`]).
pub fn check_files(files: &[(&'static str, String)]) -> Result<(), UserError> {
    check(&outputs(files)?)
}

/// Validate the outputs together: not two on stdout, no two into one
/// file (the last written would clobber the others), each writable
/// (checked without creating or truncating anything), so a typo fails
/// before a long run, not after it.
pub fn check(outputs: &[(&'static dyn Output, &str)]) -> Result<(), UserError> {
    let named: Vec<(&'static str, &str)> = outputs
        .iter()
        .map(|&(f, p)| (f.flag(), if outfile::is_stdout(p) { "-" } else { p }))
        .collect();
    let stdout: Vec<&str> = named
        .iter()
        .filter(|(_, p)| *p == "-")
        .map(|(f, _)| *f)
        .collect();
    if let [first, second, ..] = stdout[..] {
        return Err(UserError::flag(
            second,
            format!("{first} - and {second} - would both write to stdout and neither would parse; send one of them to a file"),
        ));
    }
    for (i, &(flag, p)) in named.iter().enumerate() {
        if p.is_empty() {
            return Err(UserError::flag(
                flag,
                "the path is empty: give a file name, or '-' for stdout",
            ));
        }
        for &(earlier, q) in &named[..i] {
            if p != "-" && q != "-" && outfile::same_file(Path::new(q), Path::new(p)) {
                return Err(UserError::flag(
                    flag,
                    format!("names the same file as {earlier} ({p}); give them different paths"),
                ));
            }
        }
    }
    for (_, p) in named {
        if p != "-" {
            outfile::check_writable(Path::new(p))?;
        }
    }
    for &(o, p) in outputs {
        if let Some(w) = unread_by_node_exporter(o.flag(), p) {
            super::emit("", &w);
        }
    }
    Ok(())
}

/// node_exporter's textfile collector reads `*.prom` files in the
/// Prometheus text format only (prometheus/node_exporter#1988): OpenMetrics
/// written to such a file is dropped whole there, so it is said before
/// the run, with the flag that writes what it reads.
pub fn unread_by_node_exporter(flag: &str, path: &str) -> Option<Warning> {
    (flag == "--openmetrics" && path.to_ascii_lowercase().ends_with(".prom")).then(|| {
        Warning::Other {
            message: format!(
                "--openmetrics writes OpenMetrics 1.0 to {path}, which node_exporter's textfile collector cannot parse"
            ),
            hint: format!("for node_exporter, write the Prometheus text format: --prometheus {path}"),
        }
    })
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

/// A stream's file: opened with the first record.
enum Stream {
    /// Not started: nothing written anywhere yet.
    Pending,
    /// A regular file, replaced (renamed into place) with the first row.
    File(Replacement),
    /// A FIFO, /dev/null, a terminal, a descriptor: written in place.
    Special(outfile::Special),
    Stdout,
}

/// One format and where it goes.
struct Out {
    format: &'static dyn Output,
    target: Target,
    /// Its stream, for a [`Cadence::Stream`] format.
    stream: Stream,
}

impl Out {
    fn is(&self, cadence: Cadence) -> bool {
        self.format.cadence() == cadence
    }
}

pub struct Sink {
    run: Run,
    /// Every output, in the order given.
    outs: Vec<Out>,
    /// When the checkpoint files were last written; `None` = not yet.
    last_checkpoint: Option<Instant>,
    /// Our stdout reader went away: stop writing there.
    stdout_gone: bool,
    /// Print warnings to stderr as they come (off in tests).
    pub echo_warnings: bool,
    /// The files above, held for the run: another run given the same
    /// path is refused ([`outfile::Claim`]).
    _claims: Vec<outfile::Claim>,
}

/// Claim the files among `outputs` for this run.
fn claim(outputs: &[(&'static dyn Output, &str)]) -> Result<Vec<outfile::Claim>, UserError> {
    let mut claims = Vec::new();
    for (_, p) in outputs {
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
    /// The sink of the files given by flag (`OutputArgs::files`; none:
    /// the run is only returned); see [`Sink::with_outputs`].
    pub fn new(run: Run, files: &[(&'static str, String)]) -> Result<Sink, UserError> {
        Sink::with_outputs(run, &outputs(files)?)
    }

    /// Check the outputs now (see [`check`]); files are created with the
    /// first record.
    pub fn with_outputs(
        run: Run,
        outputs: &[(&'static dyn Output, &str)],
    ) -> Result<Sink, UserError> {
        check(outputs)?;
        let claims = claim(outputs)?;
        Ok(Sink {
            run,
            outs: outputs
                .iter()
                .map(|&(format, p)| Out {
                    format,
                    target: Target::parse(p),
                    stream: Stream::Pending,
                })
                .collect(),
            last_checkpoint: None,
            stdout_gone: false,
            echo_warnings: true,
            _claims: claims,
        })
    }

    /// True when an output goes to stdout, so nothing else may.
    pub fn stdout_taken(&self) -> bool {
        self.outs.iter().any(|o| matches!(o.target, Target::Stdout))
    }

    pub fn run(&self) -> &Run {
        &self.run
    }

    pub fn run_mut(&mut self) -> &mut Run {
        &mut self.run
    }

    /// Write the checkpoint files as they stand. A special file (a FIFO,
    /// a device, a descriptor) is written only at the end (`last`): each
    /// write there is one more document to its reader, not a replacement.
    fn write_checkpoints(&self, last: bool) -> Result<(), UserError> {
        for o in self.outs.iter().filter(|o| o.is(Cadence::Checkpoint)) {
            if let Target::File(p) = &o.target {
                if !last && outfile::is_special(p) {
                    continue;
                }
                let bytes = o
                    .format
                    .serialize(&self.run)
                    .map_err(|e| unwritable(p, e))?;
                write_atomic(p, &bytes)?;
            }
        }
        Ok(())
    }

    /// stdout for a stream: a closed reader stops the run like a signal
    /// (files still get every finished record; exit 141).
    fn write_stdout(&mut self, bytes: &[u8]) {
        write_stdout(&mut self.stdout_gone, bytes);
    }

    /// Append a record's row to every stream (its head first, when the
    /// first row comes).
    fn write_rows(&mut self, r: &Record) -> Result<(), UserError> {
        for o in self.outs.iter_mut().filter(|o| o.is(Cadence::Stream)) {
            if matches!(o.stream, Stream::Pending) {
                o.stream = start_stream(o, &mut self.stdout_gone)?;
            }
            let row = o.format.row(r);
            write_row(o, &row, &mut self.stdout_gone)?;
        }
        Ok(())
    }

    /// Add a finished record: echo critical warnings, append the stream
    /// rows, refresh the checkpoint files (at once for the first record,
    /// then at most once a second).
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
        self.write_rows(&r)?;
        self.run.records.push(r);
        if self
            .last_checkpoint
            .is_none_or(|t| t.elapsed() >= Duration::from_secs(1))
        {
            self.write_checkpoints(false)?;
            self.last_checkpoint = Some(Instant::now());
        }
        Ok(())
    }

    /// Close the run: stamp it (complete, or why not), summarise warnings
    /// on stderr, write the final files (or stdout). A run without a
    /// single record writes no file, so it cannot replace an earlier
    /// result.
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
            self.finish_empty();
        } else {
            self.write_checkpoints(true)?;
            self.write_at_end()?;
        }
        let to_stdout: Vec<&'static dyn Output> = self
            .outs
            .iter()
            .filter(|o| o.is(Cadence::Checkpoint) && matches!(o.target, Target::Stdout))
            .map(|o| o.format)
            .collect();
        for f in to_stdout {
            let bytes = f
                .serialize(&self.run)
                .map_err(|e| unwritable(std::path::Path::new("-"), e))?;
            self.write_stdout(&bytes);
        }
        Ok(self.run)
    }

    /// No record: say which files were not written; a stream on stdout
    /// still gets its head (a CSV reader sees the columns).
    fn finish_empty(&mut self) {
        let files: Vec<String> = self
            .outs
            .iter()
            .filter(|o| !o.is(Cadence::AtEnd))
            .filter_map(|o| match &o.target {
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
        let heads: Vec<Vec<u8>> = self
            .outs
            .iter()
            .filter(|o| o.is(Cadence::Stream) && matches!(o.target, Target::Stdout))
            .map(|o| o.format.head())
            .collect();
        for h in heads {
            self.write_stdout(&h);
        }
    }

    /// The formats written once, at the end.
    fn write_at_end(&mut self) -> Result<(), UserError> {
        for i in 0..self.outs.len() {
            let o = &self.outs[i];
            if !o.is(Cadence::AtEnd) {
                continue;
            }
            let p = match &o.target {
                Target::File(p) => Some(p.clone()),
                Target::Stdout => None,
            };
            let bytes = o
                .format
                .serialize(&self.run)
                .map_err(|e| unwritable(p.as_deref().unwrap_or(Path::new("-")), e))?;
            match p {
                Some(p) => write_atomic(&p, &bytes)?,
                None => self.write_stdout(&bytes),
            }
        }
        Ok(())
    }
}

/// stdout for a stream: a closed reader stops the run like a signal
/// (files still get every finished record; exit 141).
fn write_stdout(gone: &mut bool, bytes: &[u8]) {
    if *gone {
        return;
    }
    if let Err(e) = crate::util::out::try_write(bytes) {
        *gone = true;
        if !crate::util::out::is_closed_pipe(&e) {
            eprintln!("error: cannot write to stdout: {e}; stopping");
        }
        crate::os::signal::request_stop(crate::os::signal::Stop::ClosedPipe);
    }
}

/// Open a stream (its head first) when the first row comes.
fn start_stream(o: &Out, stdout_gone: &mut bool) -> Result<Stream, UserError> {
    let head = o.format.head();
    Ok(match &o.target {
        Target::Stdout => {
            write_stdout(stdout_gone, &head);
            Stream::Stdout
        }
        Target::File(p) if outfile::is_special(p) => {
            let mut f = outfile::Special::open(p)?;
            f.write_all(&head)?;
            Stream::Special(f)
        }
        Target::File(p) => {
            let mut r = Replacement::start(p)?;
            r.file.write_all(&head).map_err(|e| unwritable(p, e))?;
            Stream::File(r)
        }
    })
}

/// Append one row to a started stream.
fn write_row(o: &mut Out, row: &[u8], stdout_gone: &mut bool) -> Result<(), UserError> {
    let path = match &o.target {
        Target::File(p) => p.clone(),
        Target::Stdout => PathBuf::from("-"),
    };
    match &mut o.stream {
        Stream::File(r) => {
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
            // The head and first row are in: the old file may go.
            if !r.is_committed() {
                r.commit()?;
            }
        }
        Stream::Special(f) => f.write_all(row)?,
        Stream::Stdout => write_stdout(stdout_gone, row),
        Stream::Pending => {}
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::detail::CacheDetail;
    use crate::report::json::Json;
    use crate::report::Exporter;

    /// Every output of the list gets its own format's bytes: the JSON
    /// and OpenMetrics documents of the finished run, the CSV stream of
    /// its rows.
    #[test]
    fn every_output_gets_its_format() {
        let dir = tempfile::tempdir().unwrap();
        let path = |n: &str| dir.path().join(n).display().to_string();
        let (j, c, m) = (path("r.json"), path("r.csv"), path("r.om"));
        let run = Run::new(
            "cache",
            serde_json::json!({}),
            crate::model::Host::default(),
            crate::model::Units::GB,
        );
        let files = [
            ("--json", j.clone()),
            ("--csv", c.clone()),
            ("--openmetrics", m.clone()),
        ];
        let mut sink = Sink::new(run, &files).unwrap();
        sink.echo_warnings = false;
        assert!(!sink.stdout_taken());
        for k in ["a", "b"] {
            let mut r = Record::new(CacheDetail::default());
            r.kernel = k.into();
            sink.push(r).unwrap();
        }
        let run = sink.finish(End::Complete).unwrap();
        let read = |p: &str| std::fs::read(p).unwrap();
        assert_eq!(read(&j), Json.serialize(&run).unwrap());
        assert_eq!(read(&c), super::super::csv::Csv.serialize(&run).unwrap());
        let om = super::super::openmetrics::OpenMetrics;
        assert_eq!(read(&m), om.serialize(&run).unwrap());
        // Two outputs on stdout, or two into one file, are refused by flag.
        let (json, csv, om) = (
            &Json,
            &super::super::csv::Csv,
            &super::super::openmetrics::OpenMetrics,
        );
        let e = check(&[(json, "-"), (om, "-")]).unwrap_err();
        assert!(e.to_string().contains("--openmetrics"), "{e}");
        let e = check(&[(csv, &j), (json, &j)]).unwrap_err();
        assert!(e.to_string().contains("same file as --csv"), "{e}");
        // A flag no output has is refused, naming it.
        let e = check_files(&[("--pdf", j.clone())]).unwrap_err();
        assert!(e.to_string().contains("pdf"), "{e}");
    }
}
