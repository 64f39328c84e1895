//! JSON: the run as documented in `docs/schema.md`; reading it back checks
//! that the file is a bwscope run of a schema this version understands.

use std::path::Path;

use super::{Cadence, Exporter, Output, ReportFormat};
use crate::error::UserError;
use crate::model::fleet::FleetRun;
use crate::model::{Run, SCHEMA_VERSION};

pub struct Json;

impl Exporter for Json {
    fn serialize(&self, run: &Run) -> anyhow::Result<Vec<u8>> {
        let mut v = serde_json::to_vec_pretty(run)?;
        v.push(b'\n');
        Ok(v)
    }
}

impl ReportFormat for Json {
    fn name(&self) -> &'static str {
        "json"
    }

    fn about(&self) -> &'static str {
        "The run itself, as `--json` writes it (docs/schema.md)"
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["json"]
    }

    fn fleet(&self, f: &FleetRun, _scale_max: Option<f64>) -> Vec<u8> {
        fleet(f)
    }
}

/// A fleet file as JSON (pretty, newline-terminated).
pub fn fleet(f: &FleetRun) -> Vec<u8> {
    let mut v = serde_json::to_vec_pretty(f).unwrap_or_default();
    v.push(b'\n');
    v
}

impl Output for Json {
    fn flag(&self) -> &'static str {
        "--json"
    }

    fn help(&self) -> &'static str {
        "Write the run as JSON to FILE as records complete ('-' = stdout, nothing else printed there)"
    }

    fn cadence(&self) -> Cadence {
        Cadence::Checkpoint
    }
}

/// The largest run file a reader accepts. A run of 10,000 records with
/// every raw sample is about 30 MB; anything past this is not a bwscope
/// run, and reading it whole would only exhaust memory.
pub const MAX_RUN_BYTES: u64 = 256 << 20;

/// Load a run written by bwscope from a file, or from stdin for `-`; a
/// one-line error names the file and the problem otherwise.
pub fn load(path: &str) -> Result<Run, UserError> {
    let bytes = read_input(path)?;
    parse(path, &bytes)
}

fn bad(path: &str, problem: impl Into<String>) -> UserError {
    UserError::BadInput {
        path: path.to_string(),
        problem: problem.into(),
    }
}

/// Read at most [`MAX_RUN_BYTES`] (+1, to tell "too large") from `r`.
fn read_capped(path: &str, r: impl std::io::Read) -> Result<Vec<u8>, UserError> {
    use std::io::Read;
    let mut buf = Vec::new();
    r.take(MAX_RUN_BYTES + 1)
        .read_to_end(&mut buf)
        .map_err(|e| bad(path, format!("cannot read: {e}")))?;
    if buf.len() as u64 > MAX_RUN_BYTES {
        return Err(too_large(path));
    }
    Ok(buf)
}

fn too_large(path: &str) -> UserError {
    bad(
        path,
        format!(
            "is larger than the {} MiB a run file may be; is it really a bwscope run?",
            MAX_RUN_BYTES >> 20
        ),
    )
}

/// The bytes of a run file: `-` is stdin; otherwise only a regular file
/// (a device such as /dev/zero, a FIFO or a directory is refused on the
/// open descriptor, without waiting, so nothing can make the reader wait or
/// grow without end, nor swap the file between the check and the read).
pub fn read_input(path: &str) -> Result<Vec<u8>, UserError> {
    use crate::os::input::{read_regular, InputError, Rules};
    if path == "-" {
        return read_capped("stdin", std::io::stdin().lock());
    }
    let rules = Rules {
        max: MAX_RUN_BYTES,
        follow: true,
    };
    match read_regular(Path::new(path), rules) {
        Ok((bytes, _)) => Ok(bytes),
        Err(InputError::TooLarge { .. }) => Err(too_large(path)),
        Err(e @ (InputError::Directory | InputError::NotRegular)) => Err(bad(
            path,
            format!("{e}; give a saved run, or '-' to read one from stdin"),
        )),
        Err(e) => Err(bad(path, e.to_string())),
    }
}

/// Parse and check a run; `path` names it in errors.
pub fn parse(path: &str, bytes: &[u8]) -> Result<Run, UserError> {
    from_value(path, value_of(path, bytes)?)
}

/// The JSON of a run file (or of a fleet file, which holds runs), read as
/// [`read_input`] reads: a one-line error naming it when it is not JSON.
pub fn read_value(path: &str) -> Result<serde_json::Value, UserError> {
    value_of(path, &read_input(path)?)
}

/// The JSON of bytes already read, strings cleaned, as [`read_value`]
/// gives it.
pub fn value_of(path: &str, bytes: &[u8]) -> Result<serde_json::Value, UserError> {
    // A byte-order mark (some Windows editors write one) is not an error.
    let mut v: serde_json::Value = serde_json::from_slice(crate::os::input::strip_bom(bytes))
        .map_err(|e| {
            // Only a file that ends too soon is likely cut; anything else is
            // a mistake inside it (or not a run at all).
            let hint = if e.is_eof() {
                "is the file truncated?"
            } else {
                "is it a bwscope run, edited or damaged?"
            };
            bad(path, format!("not valid JSON ({e}); {hint}"))
        })?;
    printable(&mut v);
    Ok(v)
}

/// Every string of a file others may have written (values and keys)
/// without control characters, before any of it is shown: a kernel or
/// CPU name carrying terminal escapes would otherwise retitle or clear
/// the terminal of whoever reads the report (`util::out::printable`).
fn printable(v: &mut serde_json::Value) {
    use serde_json::Value;
    let fix = |s: &str| match crate::util::out::printable(s) {
        std::borrow::Cow::Owned(o) => Some(o),
        std::borrow::Cow::Borrowed(_) => None,
    };
    match v {
        Value::String(s) => {
            if let Some(o) = fix(s) {
                *s = o;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(printable),
        Value::Object(m) => {
            if m.keys().any(|k| fix(k).is_some()) {
                let old = std::mem::take(m);
                m.extend(old.into_iter().map(|(k, v)| (fix(&k).unwrap_or(k), v)));
            }
            m.values_mut().for_each(printable);
        }
        _ => {}
    }
}

/// A run from JSON already read: checked to be a bwscope run of a schema
/// this version reads, with plausible values.
pub fn from_value(path: &str, value: serde_json::Value) -> Result<Run, UserError> {
    let tool = value.pointer("/tool/name").and_then(|v| v.as_str());
    if tool != Some("bwscope") {
        return Err(bad(path, "not a bwscope run (no tool.name = \"bwscope\")"));
    }
    let version = value
        .get("schema_version")
        .and_then(|v| v.as_u64())
        .ok_or_else(|| bad(path, "no schema_version"))?;
    if version > SCHEMA_VERSION as u64 {
        return Err(bad(path, format!(
            "schema version {version} is newer than this bwscope understands ({SCHEMA_VERSION}); upgrade bwscope"
        )));
    }
    let mut run: Run = serde_json::from_value(value)
        .map_err(|e| bad(path, format!("does not match the bwscope schema: {e}")))?;
    clean_names(&mut run.host);
    super::plausible::check(&run).map_err(|problem| bad(path, problem))?;
    Ok(run)
}

/// The names a host carries (CPU vendor and model, hypervisor, host
/// name, kernel) as names from another machine: one bounded line each
/// (`util::text::foreign_name`), so a header that names the machines
/// (`compare`) cannot be given a line of someone else's making. Run
/// files and a fleet rank's node runs both come through here.
pub fn clean_names(h: &mut crate::model::Host) {
    use crate::util::text::foreign_name;
    h.cpu.vendor = foreign_name(&h.cpu.vendor);
    h.cpu.model_name = foreign_name(&h.cpu.model_name);
    for s in [
        &mut h.cpu.hypervisor,
        &mut h.env.hostname,
        &mut h.env.kernel,
    ]
    .into_iter()
    .flatten()
    {
        *s = foreign_name(s);
    }
}
