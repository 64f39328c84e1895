//! One fleet run, as every rank lives it. All ranks say hello (gather);
//! rank 0 then drives with commands (broadcast) that the others follow:
//! `Go` (the plan and the roster), `Measure` (a round of the per-node
//! phase, then gather the runs), `Step` (one step of the network phase at
//! one size, then gather the flows), `Done` (the exit code every rank
//! returns, so `mpirun`/`srun` report rank 0's verdict).
//!
//! Rank 0 writes `fleet.json` after every round and every few seconds of
//! the network phase, so a crash or a kill loses at most the last steps.

use std::time::Duration;

use serde_json::Value;

use super::node;
use super::plan::FleetPlan;
pub use super::protocol::Ctx;
use super::protocol::{refusal, to_value, Cmd, Hello};
use crate::cluster::comm::{Comm, Identity};
use crate::cluster::network::Transponder;
use crate::model::fleet::Transport;

/// This rank's part of the run; returns the exit code.
pub fn run(comm: &mut dyn Comm, plan: &FleetPlan, cx: Ctx) -> anyhow::Result<u8> {
    // The transponder listens before anyone can be told its port.
    let tcp = plan
        .network
        .as_ref()
        .filter(|n| n.transports.contains(&Transport::Tcp));
    // A fixed --net-port is offset by the local rank, so ranks sharing a
    // node do not collide.
    let transponder = match tcp {
        Some(n) => {
            let port = match n.net_port {
                0 => 0,
                p => p.saturating_add(cx.launch.local_rank.unwrap_or(0) as u16),
            };
            Some(Transponder::start(port, cx.token.clone(), &n.tcp)?)
        }
        None => None,
    };
    let ip = plan
        .network
        .as_ref()
        .and_then(|n| n.subnet.as_deref())
        .and_then(crate::cluster::rendezvous::parse_cidr)
        .and_then(crate::cluster::rendezvous::address_in)
        .or_else(|| comm.fleet_ip());
    // The node's phase is planned once, here: the plan gives the estimate
    // and the error rank 0 is told, and is what this rank measures later
    // (unless rank 0's plan differs).
    let node_plan = node::plan(&plan.node, cx.host);
    let hello = Hello {
        id: Identity::this(cx.launch.rank, cx.launch.size, cx.launch.job.clone()),
        local_rank: cx.launch.local_rank,
        ip,
        port: transponder.as_ref().map(|t| t.port),
        estimate_s: node_plan.as_ref().ok().map(node::NodePlan::estimate_s),
        error: node_plan.as_ref().err().map(|e| e.to_string()),
        plan: Some(Box::new(plan.clone())),
    };
    let hellos = comm.gather(
        to_value(&hello),
        "startup",
        Duration::from_secs_f64(plan.timeout_s),
    )?;
    let code = if comm.rank() == 0 {
        if let Some(reason) = other_flags(plan, &hellos) {
            comm.bcast(Some(to_value(&Cmd::Refused {
                reason: reason.clone(),
            })))?;
            return Err(refusal(reason));
        }
        super::root::Root::new(comm, plan, cx, hellos, node_plan.ok()).drive()?
    } else {
        super::rank::follow(comm, cx, node_plan.ok())?
    };
    drop(transponder);
    Ok(code)
}

/// The leaves where two JSON values differ, as `a.b.c` paths.
fn differences(a: &Value, b: &Value, at: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort_unstable();
            keys.dedup();
            for k in keys {
                let path = if at.is_empty() {
                    k.clone()
                } else {
                    format!("{at}.{k}")
                };
                differences(
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                    &path,
                    out,
                );
            }
        }
        _ if a != b => out.push(format!("{at}: {b} there, {a} on rank 0")),
        _ => {}
    }
}

/// Why the fleet cannot run as one: ranks whose own flags make another
/// plan than rank 0's (an MPMD launch, a wrapper that changes the
/// command line), named with what differs.
pub(super) fn other_flags(plan: &FleetPlan, hellos: &[Option<Value>]) -> Option<String> {
    let mine = to_value(plan);
    let mut odd: Vec<String> = Vec::new();
    for (r, h) in hellos.iter().enumerate().skip(1) {
        let Some(theirs) = h
            .as_ref()
            .and_then(|h| Hello::decode(r as u32, h))
            .and_then(|h| h.plan)
        else {
            continue;
        };
        let mut diff = Vec::new();
        differences(&mine, &to_value(&theirs), "", &mut diff);
        if !diff.is_empty() {
            diff.truncate(3);
            odd.push(format!("rank {r} ({})", diff.join("; ")));
        }
    }
    if odd.is_empty() {
        return None;
    }
    let n = odd.len();
    odd.truncate(4);
    Some(format!(
        "{n} rank(s) were started with other flags than rank 0, nothing was measured: {}; give every rank the same `bwscope fleet` command line",
        odd.join(", ")
    ))
}
