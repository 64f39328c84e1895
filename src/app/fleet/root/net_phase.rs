//! Rank 0's network phase: for each transport, walk the schedule's steps
//! size by size, have every pair in a step measure at once, and fold the
//! flows into the fleet's matrices.

use std::time::{Duration, Instant};

use serde_json::json;

use super::{Root, SAVE_EVERY};
use crate::app::fleet::protocol::{reply, to_value, Cmd, StepReply};
use crate::app::fleet::rank::step;
use crate::cluster::network;
use crate::cluster::schedule::{self, Test};
use crate::model::fleet::{Flow, NetMatrix, Transport};

impl Root<'_> {
    pub(super) fn network_phase(&mut self) -> anyhow::Result<()> {
        let Some(net) = self.plan.network.clone() else {
            return Ok(());
        };
        let t0 = Instant::now();
        let live: Vec<u32> = (0..self.comm.size()).filter(|&r| self.alive(r)).collect();
        let steps = schedule::steps(net.schedule, &live);
        for &transport in &net.transports {
            let tt = Instant::now();
            self.fleet.network.push(NetMatrix {
                transport,
                schedule: net.schedule.name().into(),
                sizes: net.sizes.clone(),
                steps: steps.len() as u32,
                parameters: if transport == Transport::Tcp {
                    to_value(&net.tcp)
                } else {
                    json!({"step_time_s": net.tcp.step_time_s, "window": net.window})
                },
                ..NetMatrix::default()
            });
            let est = net.step_seconds(transport);
            let patience = net.step_patience(transport);
            eprintln!(
                "bwscope fleet: network phase over {transport}: {} schedule, {} step{} × {} size{} (about {})",
                net.schedule.name(),
                steps.len(),
                if steps.len() == 1 { "" } else { "s" },
                net.sizes.len(),
                if net.sizes.len() == 1 { "" } else { "s" },
                crate::app::fleet::plan::duration(est * (steps.len() * net.sizes.len()) as f64)
            );
            'sizes: for &size in &net.sizes {
                for (k, tests) in steps.iter().enumerate() {
                    if self.stopped() {
                        break 'sizes;
                    }
                    self.one_step(transport, size, k as u32, tests, patience)?;
                }
            }
            let m = self.fleet.network.last_mut().expect("pushed above");
            m.seconds = tt.elapsed().as_secs_f64();
            self.save();
        }
        self.fleet.timings.network_seconds = t0.elapsed().as_secs_f64();
        Ok(())
    }

    /// One step of the schedule at one size: the pairs that cannot run are
    /// left out with why, the rest measure at once, and every pair's views
    /// are folded into one flow of the transport's matrix.
    fn one_step(
        &mut self,
        transport: Transport,
        size: u64,
        k: u32,
        tests: &[Test],
        patience: f64,
    ) -> anyhow::Result<()> {
        let (mut flows, run) = self.triage(transport, size, tests);
        // The load the step's flows shared: the flows that ran, not the
        // ones a lost rank left out (link verdicts compare flows that ran
        // under the same load).
        let concurrent: u32 = run.iter().map(Test::flows).sum();
        let (reported, longest) = self.run_step(transport, size, k, &run, patience)?;
        flows.extend(self.join_views(&run, size, &reported));
        // A leader that missed the signal reports a cut test as too short.
        let cut = self.stopped();
        for f in &mut flows {
            f.step = k;
            f.concurrent = concurrent;
            if cut && f.recv_gbps.is_none() && f.reason.as_deref() == Some(network::NO_SAMPLE) {
                f.reason = Some(network::INTERRUPTED.into());
            }
        }
        self.fleet.timings.network_measure_seconds += longest;
        self.fleet
            .network
            .last_mut()
            .expect("a matrix per transport")
            .flows
            .extend(flows);
        if self.last_save.elapsed() >= SAVE_EVERY {
            self.save();
        }
        Ok(())
    }

    /// Why rank `r`'s flows have no figure: the node and the phase it was
    /// lost in.
    fn lost_reason(&self, r: u32) -> String {
        let n = &self.fleet.nodes[r as usize];
        format!(
            "{} (rank {r}) was lost in the {} phase",
            n.label,
            n.lost_in.as_deref().unwrap_or("?")
        )
    }

    /// Splits a step's tests into the flows left out before it starts (an
    /// end already lost; over MPI, a pair TCP could not connect) with their
    /// reasons, and the tests to run.
    fn triage(&self, transport: Transport, size: u64, tests: &[Test]) -> (Vec<Flow>, Vec<Test>) {
        // Over MPI a connection that fails ends the whole job (Open MPI's
        // ob1 aborts): a pair TCP could not reach is left out, with why.
        let tcp_failed = |a: u32, b: u32| {
            transport == Transport::Mpi
                && self.fleet.network.iter().any(|m| {
                    m.transport == Transport::Tcp
                        && m.flows.iter().any(|f| {
                            f.recv_gbps.is_none()
                                && ((f.src, f.dst) == (a, b) || (f.src, f.dst) == (b, a))
                        })
                })
        };
        let mut flows: Vec<Flow> = Vec::new();
        let mut run: Vec<Test> = Vec::new();
        for t in tests {
            if !self.alive(t.src) || !self.alive(t.dst) {
                let who = if self.alive(t.src) { t.dst } else { t.src };
                flows.extend(network::failed(t, size, &self.lost_reason(who)));
            } else if tcp_failed(t.src, t.dst) {
                flows.extend(network::failed(
                    t,
                    size,
                    "not run over MPI: this pair failed over TCP, and a failed MPI connection ends the whole job",
                ));
            } else {
                run.push(*t);
            }
        }
        (flows, run)
    }

    /// Has every rank run its part of the step (rank 0 its own) and gathers
    /// what each reported: the flows as each end saw them, and the longest
    /// time a rank spent measuring.
    fn run_step(
        &mut self,
        transport: Transport,
        size: u64,
        k: u32,
        run: &[Test],
        patience: f64,
    ) -> anyhow::Result<(Vec<Flow>, f64)> {
        let cmd = Cmd::Step {
            transport,
            size,
            step: k,
            tests: run.to_vec(),
        };
        self.comm.bcast(Some(to_value(&cmd)))?;
        let (mine, secs) = step(
            self.comm,
            self.plan,
            &self.members,
            transport,
            run,
            size,
            &self.cx,
        );
        let wait = Duration::from_secs_f64(patience);
        let mine = StepReply {
            flows: mine,
            seconds: secs,
        };
        let got = self.comm.gather(to_value(&mine), "network", wait)?;
        self.note_lost();
        // Every rank of the step reports its view: over TCP the leader
        // both views of its flows, over MPI each end its own side.
        let mut longest = 0.0f64;
        let mut reported: Vec<Flow> = Vec::new();
        for (r, body) in got.iter().enumerate() {
            let Some(body) = body else { continue };
            // A reply that does not parse leaves its flows without a
            // figure (their reason names the rank); say why here.
            match reply::<StepReply>(r as u32, body) {
                Ok(s) => {
                    longest = longest.max(s.seconds);
                    reported.extend(s.flows);
                }
                Err(e) => eprintln!("bwscope fleet: {e}"),
            }
        }
        Ok((reported, longest))
    }

    /// One flow per flow the tests that ran should have made, from the
    /// views its ends reported (the receiver's figure, the sender's, the
    /// worst noise either saw); one nobody reported says why it has none.
    fn join_views(&self, run: &[Test], size: u64, reported: &[Flow]) -> Vec<Flow> {
        let mut flows = Vec::new();
        for t in run {
            for want in network::failed(t, size, "") {
                let parts: Vec<&Flow> = reported
                    .iter()
                    .filter(|f| f.src == want.src && f.dst == want.dst)
                    .collect();
                if parts.is_empty() {
                    let reason = match (self.alive(t.src), self.alive(t.dst)) {
                        (false, _) => format!("{} during this step", self.lost_reason(t.src)),
                        (_, false) => format!("{} during this step", self.lost_reason(t.dst)),
                        _ => format!("rank {} reported no figure for it", t.src),
                    };
                    flows.push(Flow {
                        reason: Some(reason),
                        ..want
                    });
                    continue;
                }
                flows.push(joined(want, &parts));
            }
        }
        flows
    }
}

/// The flow `want` with the figures its ends reported in `parts`: each
/// figure from whichever end has it, the largest noise either saw, and a
/// reason when the receiver has no figure.
fn joined(want: Flow, parts: &[&Flow]) -> Flow {
    let recv_gbps = parts.iter().find_map(|f| f.recv_gbps);
    let most = |g: fn(&Flow) -> Option<f64>| parts.iter().filter_map(|f| g(f)).reduce(f64::max);
    Flow {
        foreign_cpus: most(|f| f.foreign_cpus),
        noise_slowdown: most(|f| f.noise_slowdown),
        send_gbps: parts.iter().find_map(|f| f.send_gbps),
        recv_gbps,
        bytes: parts.iter().find_map(|f| f.bytes),
        reason: if recv_gbps.is_none() {
            Some(
                parts
                    .iter()
                    .find_map(|f| f.reason.clone())
                    .unwrap_or_else(|| "the receiver reported no figure".into()),
            )
        } else {
            None
        },
        ..want
    }
}
