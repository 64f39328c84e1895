//! A [`Run`]: what was asked, where it ran, and every record.
//!
//! Bump [`SCHEMA_VERSION`] on any incompatible change
//! (renaming or removing a field, changing a unit); adding an optional field
//! is compatible. Numbers are numbers and a missing value is `null`, never a
//! string (nvbandwidth's `"N/A"` broke its users' parsers).

use serde::{Deserialize, Serialize};

use super::{Host, Record, Warning};

/// Version of the JSON layout below. Readers refuse newer major versions.
pub const SCHEMA_VERSION: u32 = 1;

/// The byte-counting convention, stated in every run and in table footers.
pub const BYTE_CONVENTION: &str = "bytes = bytes read + bytes written by the kernel, \
from its declaration (STREAM/likwid convention: a copy over an N-byte working set reads N/2 \
and writes N/2 and counts N); write-allocate (RFO) traffic is not counted; \
payload_gbps counts bytes delivered (a copy counts the bytes copied, N/2)";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Tool {
    pub name: String,
    pub version: String,
    /// The commit this bwscope was built from (`build.rs`: git, else
    /// `BWSCOPE_REVISION`); absent when the build could not tell (a
    /// tarball) and in runs from before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
}

/// The commit this bwscope was built from, when its build knew it.
pub const REVISION: Option<&str> = option_env!("BWSCOPE_REVISION");

/// What `--version` prints after the name: the version and the commit
/// (`build.rs` writes it, with or without one).
pub const VERSION_LINE: &str = env!("BWSCOPE_VERSION_LINE");

impl Tool {
    pub fn this() -> Tool {
        Tool {
            name: "bwscope".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            revision: REVISION.map(str::to_string),
        }
    }
}

/// Units used for every bandwidth figure in this run.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
pub enum Units {
    /// 10^9 bytes per second.
    #[default]
    #[serde(rename = "GB/s")]
    GB,
    /// 2^30 bytes per second.
    #[serde(rename = "GiB/s")]
    GiB,
}

impl Units {
    pub fn bytes_per_unit(self) -> f64 {
        match self {
            Units::GB => 1e9,
            Units::GiB => (1u64 << 30) as f64,
        }
    }
    pub fn label(self) -> &'static str {
        match self {
            Units::GB => "GB/s",
            Units::GiB => "GiB/s",
        }
    }
}

/// A whole run: what was asked, where it ran, and what was measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Run {
    pub schema_version: u32,
    /// This run's identity: 128 random bits as 32 hex digits, made when
    /// the run starts. The history store keys a run by it, so a run
    /// recorded as it finished and imported again from its file is one
    /// run. Absent in files from before it (the store then keys them by a
    /// hash of what they hold).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub tool: Tool,
    /// The subcommand that produced the run (`cache`, `survey`, ...).
    pub command: String,
    /// argv as given.
    pub command_line: Vec<String>,
    /// Every option after defaults were applied and values resolved.
    pub options: serde_json::Value,
    /// RFC 3339 UTC.
    pub started_at: String,
    pub finished_at: Option<String>,
    /// False while the run is in progress, and when it ended before its
    /// plan did (a signal, an error, a lost peer, a full disk).
    pub complete: bool,
    /// True when SIGINT stopped the run early; records are still valid.
    pub interrupted: bool,
    /// Why a run that finished writing is not complete: the signal or the
    /// error that ended it early. Null when it is complete, and when it
    /// never finished (killed: nothing was left to say why). Written only
    /// when set, so runs and fixtures of complete runs are unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete_reason: Option<String>,
    /// Bandwidth figures are always stored in GB/s (10^9 B/s) in the JSON;
    /// `display_units` is what the user asked to see in tables.
    pub display_units: Units,
    pub byte_convention: String,
    pub host: Host,
    pub records: Vec<Record>,
    /// Run-level warnings (noisy machine, VM, ...). Per-record warnings sit
    /// in the record.
    pub warnings: Vec<Warning>,
    /// Where the run's headline figures sit among this machine's earlier
    /// runs (the history store); absent with `--no-history`, without a
    /// store, and in runs from before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<super::HistoryContext>,
}

/// 128 random bits as 32 hex digits. `RandomState` is seeded from the
/// operating system's randomness once per thread and stepped for each new
/// one, so no two runs of any process share an id; the clock and the pid
/// are hashed in as well.
fn new_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    (0..2u8)
        .map(|i| {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u8(i);
            h.write_u128(nanos);
            h.write_u32(std::process::id());
            format!("{:016x}", h.finish())
        })
        .collect()
}

impl Run {
    pub fn new(command: &str, options: serde_json::Value, host: Host, units: Units) -> Run {
        Run {
            schema_version: SCHEMA_VERSION,
            id: Some(new_id()),
            tool: Tool::this(),
            command: command.into(),
            command_line: std::env::args().collect(),
            options,
            started_at: super::time::now_rfc3339(),
            finished_at: None,
            complete: false,
            interrupted: false,
            incomplete_reason: None,
            display_units: units,
            byte_convention: BYTE_CONVENTION.into(),
            host,
            records: Vec::new(),
            warnings: Vec::new(),
            history: None,
        }
    }
}

#[cfg(test)]
mod id_tests {
    #[test]
    fn every_run_gets_its_own_id() {
        let a = super::new_id();
        let b = super::new_id();
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
