//! JSON: the run as documented in `docs/schema.md`; reading it back checks
//! that the file is a bwscope run of a schema this version understands.

use super::Exporter;
use crate::error::UserError;
use crate::model::{Run, SCHEMA_VERSION};

pub struct Json;

impl Exporter for Json {
    fn serialize(&self, run: &Run) -> anyhow::Result<Vec<u8>> {
        let mut v = serde_json::to_vec_pretty(run)?;
        v.push(b'\n');
        Ok(v)
    }
}

/// Load a run written by bwscope; a one-line error names the file and the
/// problem otherwise.
pub fn load(path: &str) -> Result<Run, UserError> {
    from_value(path, read_value(path)?)
}

/// The JSON of a file, or a one-line error naming it.
pub fn read_value(path: &str) -> Result<serde_json::Value, UserError> {
    let bad = |problem: String| UserError::BadInput {
        path: path.to_string(),
        problem,
    };
    let text = std::fs::read_to_string(path).map_err(|e| bad(format!("cannot read: {e}")))?;
    serde_json::from_str(&text)
        .map_err(|e| bad(format!("not valid JSON ({e}); is the file truncated?")))
}

/// A run from the JSON of `path`, checked to be a bwscope run of a schema
/// this version reads.
pub fn from_value(path: &str, value: serde_json::Value) -> Result<Run, UserError> {
    let bad = |problem: String| UserError::BadInput {
        path: path.to_string(),
        problem,
    };
    let tool = value.pointer("/tool/name").and_then(|v| v.as_str());
    if tool != Some("bwscope") {
        return Err(bad("not a bwscope run (no tool.name = \"bwscope\")".into()));
    }
    let version = value
        .get("schema_version")
        .and_then(|v| v.as_u64())
        .ok_or_else(|| bad("no schema_version".into()))?;
    if version > SCHEMA_VERSION as u64 {
        return Err(bad(format!(
            "schema version {version} is newer than this bwscope understands ({SCHEMA_VERSION}); upgrade bwscope"
        )));
    }
    serde_json::from_value(value)
        .map_err(|e| bad(format!("does not match the bwscope schema: {e}")))
}
