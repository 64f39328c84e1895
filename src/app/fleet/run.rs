//! One fleet run, as every rank lives it. All ranks say hello (gather);
//! rank 0 then drives with commands (broadcast) that the others follow:
//! `Go` (the plan and the roster), `Measure` (a round of the per-node
//! phase, then gather the runs), `Step` (one step of the network phase at
//! one size, then gather the flows), `Done` (the exit code every rank
//! returns, so `mpirun`/`srun` report rank 0's verdict).
//!
//! Rank 0 writes `fleet.json` after every round and every few seconds of
//! the network phase, so a crash or a kill loses at most the last steps.

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::node;
use super::output::Outputs;
use super::plan::FleetPlan;
use crate::cluster::comm::{Comm, Identity};
use crate::cluster::network::{self, Transponder};
use crate::cluster::schedule::Test;
use crate::model::fleet::Flow;
use crate::model::Host;

/// Exit code when `--fail-if-outlier` finds a failing node.
pub const EXIT_OUTLIER: u8 = 3;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Hello {
    pub(super) id: Identity,
    pub(super) local_rank: Option<u32>,
    /// The address peers test against, and the transponder's port.
    pub(super) ip: Option<IpAddr>,
    pub(super) port: Option<u16>,
    /// This node's phase estimate, seconds.
    pub(super) estimate_s: Option<f64>,
    /// Why this rank cannot run the per-node phase (flags vs its machine).
    pub(super) error: Option<String>,
    /// The plan this rank's own flags make: rank 0 refuses a fleet whose
    /// ranks were started with other flags than its own (they would run
    /// rank 0's plan while their records and estimates said otherwise).
    #[serde(default)]
    pub(super) plan: Option<Box<FleetPlan>>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Member {
    pub(super) rank: u32,
    pub(super) label: String,
    pub(super) data: Option<SocketAddr>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "cmd", rename_all = "snake_case")]
pub(super) enum Cmd {
    Go {
        plan: Box<FleetPlan>,
        members: Vec<Member>,
    },
    Measure {
        round: u32,
        ranks: Vec<u32>,
    },
    Step {
        transport: String,
        size: u64,
        step: u32,
        tests: Vec<Test>,
    },
    Done {
        code: u8,
    },
    /// Rank 0 refused the fleet before anything was measured.
    Refused {
        reason: String,
    },
}

/// What a rank brings to the run.
pub struct Ctx<'a> {
    pub launch: &'a crate::cluster::launch::Launch,
    pub host: &'a Host,
    pub token: Option<Vec<u8>>,
    pub stop: &'static AtomicBool,
    /// Rank 0 only.
    pub out: Option<Outputs>,
    pub t0: Instant,
    pub started_at: String,
}

pub(super) fn to_value<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// This rank's part of the run; returns the exit code.
pub fn run(comm: &mut dyn Comm, plan: &FleetPlan, cx: Ctx) -> anyhow::Result<u8> {
    // The transponder listens before anyone can be told its port.
    let tcp = plan
        .network
        .as_ref()
        .filter(|n| n.transports.iter().any(|t| t == "tcp"));
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
        follow(comm, cx, node_plan.ok())?
    };
    drop(transponder);
    Ok(code)
}

/// A rank other than 0: do what rank 0 says until `Done`.
fn follow(comm: &mut dyn Comm, cx: Ctx, node_plan: Option<node::NodePlan>) -> anyhow::Result<u8> {
    let me = comm.rank();
    let mut plan: Option<FleetPlan> = None;
    let mut members: Vec<Member> = Vec::new();
    loop {
        let cmd: Cmd = serde_json::from_value(comm.bcast(None)?)?;
        match cmd {
            Cmd::Go {
                plan: p,
                members: m,
            } => {
                plan = Some(*p);
                members = m;
            }
            Cmd::Measure { ranks, .. } => {
                let p = plan.as_ref().expect("Go comes first");
                let body = if ranks.contains(&me) {
                    measure(p, node_plan.as_ref(), cx.stop)
                } else {
                    Value::Null
                };
                comm.gather(body, "node", Duration::ZERO)?;
            }
            Cmd::Step {
                transport,
                size,
                tests,
                ..
            } => {
                let p = plan.as_ref().expect("Go comes first");
                let (flows, secs) = step(comm, p, &members, &transport, &tests, size, &cx);
                comm.gather(
                    json!({"flows": flows, "seconds": secs}),
                    "network",
                    Duration::ZERO,
                )?;
            }
            Cmd::Done { code } => return Ok(code),
            Cmd::Refused { reason } => return Err(refusal(reason)),
        }
    }
}

fn refusal(reason: String) -> anyhow::Error {
    crate::error::UserError::BadInput {
        path: "bwscope fleet".into(),
        problem: reason,
    }
    .into()
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
            .and_then(|h| serde_json::from_value::<Hello>(h.clone()).ok())
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

/// Measure this node with `planned` (planned again only when rank 0's
/// plan differs from this rank's); the body rank 0 gathers. The host is
/// detected again here, with the clock, so ranks sharing a machine
/// measure it at their own turn.
pub(super) fn measure(
    plan: &FleetPlan,
    planned: Option<&node::NodePlan>,
    stop: &'static AtomicBool,
) -> Value {
    let t0 = Instant::now();
    let host = crate::platform::detect_host(true);
    let measured = match planned.filter(|p| p.options == plan.node) {
        Some(p) => p.measure(&host, stop),
        None => node::plan(&plan.node, &host)
            .map_err(anyhow::Error::from)
            .and_then(|p| p.measure(&host, stop)),
    };
    match measured {
        Ok(run) => json!({"run": run, "seconds": t0.elapsed().as_secs_f64()}),
        Err(e) => json!({"error": format!("{e:#}"), "seconds": t0.elapsed().as_secs_f64()}),
    }
}

/// This rank's share of one network step.
pub(super) fn step(
    comm: &mut dyn Comm,
    plan: &FleetPlan,
    members: &[Member],
    transport: &str,
    tests: &[Test],
    size: u64,
    cx: &Ctx,
) -> (Vec<Flow>, f64) {
    let net = plan.network.as_ref().expect("a step needs a network plan");
    let before = crate::measure::noise::snapshot();
    let (mut flows, secs) = if transport == "mpi" {
        comm.mpi_step(tests, size, net.window, net.tcp.step_time_s)
            .unwrap_or_default()
    } else {
        let addr = |r: u32| members.iter().find(|m| m.rank == r).and_then(|m| m.data);
        network::run_step(
            comm.rank(),
            tests,
            size,
            &net.tcp,
            &addr,
            cx.token.as_deref(),
            cx.stop,
        )
    };
    // What else ran on this machine meanwhile: a flow that comes out slow
    // under it is not evidence of a slow path (verdict::links).
    if !flows.is_empty() {
        if let Some(n) = crate::measure::noise::since(before) {
            let streams = if transport == "mpi" {
                1
            } else {
                net.tcp.streams
            };
            let k = crate::model::noise_slowdown(
                n.foreign_cpus,
                u32::from(streams),
                cx.host.cpus.len(),
            );
            for f in &mut flows {
                f.foreign_cpus = Some(n.foreign_cpus);
                f.noise_slowdown = Some(k);
            }
        }
    }
    (flows, secs)
}
