//! A rank's work: follow rank 0's commands, measure this node's phase,
//! take its share of a network step. Rank 0 does the same work at its
//! own turn (`root`).

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::node;
use super::plan::FleetPlan;
use super::protocol::{refusal, to_value, Cmd, Ctx, Member, NodeReply, StepReply};
use crate::cluster::comm::Comm;
use crate::cluster::network;
use crate::cluster::schedule::Test;
use crate::model::fleet::{Flow, Transport};

/// A rank other than 0: do what rank 0 says until `Done`.
pub(super) fn follow(
    comm: &mut dyn Comm,
    cx: Ctx,
    node_plan: Option<node::NodePlan>,
) -> anyhow::Result<u8> {
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
                    to_value(&measure(p, node_plan.as_ref(), cx.stop))
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
                let (flows, secs) = step(comm, p, &members, transport, &tests, size, &cx);
                let reply = StepReply {
                    flows,
                    seconds: secs,
                };
                comm.gather(to_value(&reply), "network", Duration::ZERO)?;
            }
            Cmd::Done { code } => return Ok(code),
            Cmd::Refused { reason } => return Err(refusal(reason)),
        }
    }
}

/// Measure this node with `planned` (planned again only when rank 0's
/// plan differs from this rank's); the reply rank 0 gathers. The host is
/// detected again here, with the clock, so ranks sharing a machine
/// measure it at their own turn.
pub(super) fn measure(
    plan: &FleetPlan,
    planned: Option<&node::NodePlan>,
    stop: &'static AtomicBool,
) -> NodeReply {
    let t0 = Instant::now();
    let host = crate::platform::detect_host(true);
    let measured = match planned.filter(|p| p.options == plan.node) {
        Some(p) => p.measure(&host, stop),
        None => node::plan(&plan.node, &host)
            .map_err(anyhow::Error::from)
            .and_then(|p| p.measure(&host, stop)),
    };
    match measured {
        Ok(run) => NodeReply {
            run: Some(run),
            error: None,
            seconds: t0.elapsed().as_secs_f64(),
        },
        Err(e) => NodeReply {
            run: None,
            error: Some(format!("{e:#}")),
            seconds: t0.elapsed().as_secs_f64(),
        },
    }
}

/// This rank's share of one network step.
pub(super) fn step(
    comm: &mut dyn Comm,
    plan: &FleetPlan,
    members: &[Member],
    transport: Transport,
    tests: &[Test],
    size: u64,
    cx: &Ctx,
) -> (Vec<Flow>, f64) {
    let net = plan.network.as_ref().expect("a step needs a network plan");
    let before = crate::measure::noise::snapshot();
    let (mut flows, secs) = if transport == Transport::Mpi {
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
            let streams = if transport == Transport::Mpi {
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
