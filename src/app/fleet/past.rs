//! Rank 0's use of the history store for a fleet: the fleet's earlier
//! runs read, its medians judged against them
//! (`crate::report::fleet::past`, pure), and this run's nodes recorded.
//!
//! **The same fleet** is the same set of hosts (the hashes of the host
//! names of every rank, lost ones included, as the store keeps them), the
//! same per-node suites and the same network schedule: a fleet that lost
//! a node at startup, or was run with other suites, is another fleet with
//! a past of its own. Sample counts and sample times are not part of it:
//! they change how precisely a figure is measured, not what it is.

use crate::app::history::Settings;
use crate::history::{case, FleetRecord, Mode, Place, Store};
use crate::model::fleet::{FleetRun, Verdicts};
use crate::report::fleet::past::{self, NodeNow};

use super::plan::FleetPlan;

/// The fleet's identity in the store (see the module comment).
pub fn fleet_key(f: &FleetRun, plan: &FleetPlan) -> String {
    let mut hosts: Vec<String> = f
        .nodes
        .iter()
        .map(|n| {
            case::name_hash(if n.hostname.is_empty() {
                &n.label
            } else {
                &n.hostname
            })
        })
        .collect();
    hosts.sort_unstable();
    let mut suites = plan.node.suites.clone();
    suites.sort_unstable();
    let schedule = plan.network.as_ref().map_or("none", |n| n.schedule.name());
    case::short_hash(&format!(
        "bwscope fleet\0{}\0{}\0{schedule}",
        hosts.join(","),
        suites.join(",")
    ))
}

/// Judge `v` against the fleet's recent runs in this process's store and
/// record this run there. A store that cannot be used costs one warning on
/// stderr; no store (`--no-history`), nothing.
pub fn against_past(f: &FleetRun, v: &mut Verdicts, plan: &FleetPlan, settings: &Settings) {
    let Place::At(path) = &settings.place else {
        return;
    };
    let mut store = match Store::open(path, Mode::Create) {
        Ok(Some(s)) => s,
        Ok(None) => return,
        Err(w) => {
            crate::report::emit("", &w);
            return;
        }
    };
    let key = fleet_key(f, plan);
    // Only nodes with a run are kept and judged: a lost node has no figure.
    let ids: Vec<Option<String>> = f
        .nodes
        .iter()
        .map(|n| {
            n.run
                .as_ref()
                .filter(|_| !n.hostname.is_empty())
                .map(|_| case::name_hash(&n.hostname))
        })
        .collect();
    let now: Vec<NodeNow> = past::figures_now(v, &ids);
    match store.fleet_past(&key, &f.started_at, past::WINDOW) {
        Ok(earlier) => past::judge(
            v,
            &now,
            &earlier,
            &past::Settings {
                fleet: key.clone(),
                pct: plan.past_pct,
            },
        ),
        Err(w) => {
            crate::report::emit("", &w);
            return;
        }
    }
    let uid = case::short_hash(&format!(
        "{key}\0{}\0{}",
        f.started_at,
        f.launch.job.as_deref().unwrap_or("")
    ));
    let nodes: Vec<_> = now
        .iter()
        .filter_map(|n| Some((f.node(n.rank)?.run.as_ref()?, &n.figures)))
        .collect();
    let rec = FleetRecord {
        fleet: &key,
        fleet_run: &uid,
        started_at: &f.started_at,
        nodes,
        hostname: settings.hostname,
    };
    if let Err(w) = store.record_fleet(&rec) {
        crate::report::emit("", &w);
    }
}
