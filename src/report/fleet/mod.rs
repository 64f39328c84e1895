//! Fleet results (`bwscope fleet`): loading a fleet file, its headline
//! figures, and its views: the HTML report, the verdict file, the
//! terminal summary, and `compare` of two fleets (its long-form CSV and
//! its JSON are `report::csv::fleet` and `report::json::fleet`, each
//! format's fleet form beside its run form).
//!
//! A fleet file holds every node's run in the ordinary schema, so
//! `report`/`plot`/`compare --node HOST` hand one of them to the ordinary
//! exporters.

pub mod compare;
mod heatmap;
pub mod html;
pub mod metrics;
pub mod past;
pub mod reference;
pub mod text;
pub mod verdict;

use crate::error::UserError;
use crate::model::fleet::{FleetRun, NodeStatus, FLEET_KIND, FLEET_SCHEMA_VERSION};
use crate::model::Run;

/// A saved run or a saved fleet.
pub enum Doc {
    Run(Box<Run>),
    Fleet(Box<FleetRun>),
}

/// Load a file written by bwscope: a fleet when its `kind` says so,
/// otherwise a run (checked by `json::load`). A truncated file or one from
/// a newer bwscope is a one-line error naming the file.
pub fn load(path: &str) -> Result<Doc, UserError> {
    from_value(path, crate::report::json::read_value(path)?)
}

/// [`load`] of the bytes of a file already read (`path` names it in
/// errors): what `report`, `plot` and `compare` make of a file, on its
/// own so it can be fuzzed (`fuzz/fuzz_targets/fleet_file.rs`).
pub fn parse(path: &str, bytes: &[u8]) -> Result<Doc, UserError> {
    from_value(path, crate::report::json::value_of(path, bytes)?)
}

fn from_value(path: &str, value: serde_json::Value) -> Result<Doc, UserError> {
    let bad = |problem: String| UserError::BadInput {
        path: path.to_string(),
        problem,
    };
    if value.get("kind").and_then(|k| k.as_str()) != Some(FLEET_KIND) {
        return crate::report::json::from_value(path, value).map(|r| Doc::Run(Box::new(r)));
    }
    let version = value
        .get("fleet_schema_version")
        .and_then(|v| v.as_u64())
        .ok_or_else(|| bad("a fleet file without fleet_schema_version".into()))?;
    if version > FLEET_SCHEMA_VERSION as u64 {
        return Err(bad(format!(
            "fleet schema version {version} is newer than this bwscope understands ({FLEET_SCHEMA_VERSION}); upgrade bwscope"
        )));
    }
    // Its own figures, and each node's run as a run file's (L9: a node
    // run's 1e308 once showed as `inf` and a 309-digit metric).
    crate::report::plausible::fleet_figures(&value).map_err(bad)?;
    let mut f: FleetRun = serde_json::from_value(value)
        .map_err(|e| bad(format!("does not match the bwscope fleet schema: {e}")))?;
    for n in &mut f.nodes {
        if let Some(run) = &mut n.run {
            crate::report::json::clean_names(&mut run.host);
            crate::report::plausible::check(run)
                .map_err(|e| bad(format!("node {} (rank {}): {e}", n.label, n.rank)))?;
        }
    }
    Ok(Doc::Fleet(Box::new(f)))
}

/// A fleet-only flag given with a run of one machine: refused rather than
/// ignored.
pub fn not_a_fleet(flag: &'static str, path: &str) -> UserError {
    UserError::flag(
        flag,
        format!("{path} is a run of one machine, not a fleet file; {flag} applies to `bwscope fleet` results only"),
    )
}

/// One node's run out of a fleet, by label or host name.
pub fn node_run(f: &FleetRun, name: &str, path: &str) -> Result<Run, UserError> {
    let n = f.find(name).ok_or_else(|| {
        let names: Vec<&str> = f.nodes.iter().take(20).map(|n| n.label.as_str()).collect();
        UserError::flag(
            "--node",
            format!(
                "{path} has no node '{name}'; its nodes: {}",
                names.join(", ")
            ),
        )
    })?;
    n.run.clone().ok_or_else(|| {
        let why = match (n.status, &n.reason) {
            (NodeStatus::Ok, _) => "the fleet ran no per-node suites (--suites none): it has network figures only; compare the fleet files without --node".to_string(),
            (s, Some(r)) => format!("{}: {r}", status_word(s)),
            (s, None) => status_word(s).to_string(),
        };
        UserError::flag(
            "--node",
            format!("node '{name}' has no run in {path}: {why}"),
        )
    })
}

/// A node's status as the fleet file spells it.
pub fn status_word(s: NodeStatus) -> &'static str {
    match s {
        NodeStatus::Ok => "ok",
        NodeStatus::Lost => "lost",
        NodeStatus::Interrupted => "interrupted",
        NodeStatus::Error => "error",
    }
}

/// A run for the ordinary exporters: the file's run, or with `node` one
/// node of a fleet. A fleet without `node` is refused with the hint.
pub fn load_run(path: &str, node: Option<&str>) -> Result<Run, UserError> {
    match (load(path)?, node) {
        (Doc::Run(_), Some(_)) => Err(not_a_fleet("--node", path)),
        (Doc::Run(r), None) => Ok(*r),
        (Doc::Fleet(f), Some(n)) => node_run(&f, n, path),
        (Doc::Fleet(f), None) => Err(UserError::flag(
            "--node",
            format!(
                "{path} is a fleet of {} nodes: pick one with --node HOST (e.g. --node {})",
                f.nodes.len(),
                f.nodes.first().map_or("HOST", |n| n.label.as_str())
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_without_a_run_says_why_in_words() {
        // `--suites none`: every node is ok and has network figures only.
        let mut f = FleetRun::test_shift(3, |_, _| Some(1.0));
        let e = node_run(&f, "n1", "f.json").unwrap_err().to_string();
        assert!(e.contains("--suites none") && !e.contains("(Ok)"), "{e}");
        f.nodes[2].status = NodeStatus::Lost;
        f.nodes[2].reason = Some("connection closed".into());
        let e = node_run(&f, "n2", "f.json").unwrap_err().to_string();
        assert!(
            e.ends_with("has no run in f.json: lost: connection closed"),
            "{e}"
        );
    }
}
