//! Rank 0's side of a fleet run: build the roster from the hellos, drive
//! the per-node rounds and the network steps, keep `fleet.json` current,
//! judge, and end every rank with one exit code. The network phase's steps
//! are in [`net_phase`].

mod net_phase;
mod remeasure;

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::plan::FleetPlan;
use super::protocol::{
    reply, to_value, wait_of, Cmd, Ctx, Gathered, Hello, Member, NodeReply, EXIT_OUTLIER,
};
use super::rank::measure;
use crate::cluster::comm::{Comm, Identity};
use crate::error::{EXIT_INTERRUPTED, EXIT_OK};
use crate::model::fleet::{FleetNode, FleetRun, Launch, NodeStatus, Timings};
use crate::model::{Tool, Warning, SCHEMA_VERSION};

/// How many lost ranks one call of `note_lost` names on stderr.
const SAY_LOST: usize = 8;

/// The network phase rewrites fleet.json at most this often.
const SAVE_EVERY: Duration = Duration::from_secs(10);

/// Rank 0's state.
pub(super) struct Root<'a> {
    comm: &'a mut dyn Comm,
    plan: &'a FleetPlan,
    cx: Ctx<'a>,
    hellos: Vec<Option<Hello>>,
    /// This rank's node phase, planned at startup.
    node_plan: Option<super::node::NodePlan>,
    members: Vec<Member>,
    fleet: FleetRun,
    last_save: Instant,
    /// When each rank's node phase round started, seconds since the start.
    measured_at: Vec<Option<f64>>,
}

/// Unique labels: the host name, or `host:rank` where ranks share one.
/// Linear in the job size: a job of 30,000 ranks that never joined took
/// minutes when every name was compared with every other.
fn labels(ids: &[Option<Identity>], size: u32) -> Vec<String> {
    let names: Vec<String> = (0..size as usize)
        .map(|r| {
            ids[r]
                .as_ref()
                .map_or_else(|| format!("rank{r}"), |i| i.hostname.clone())
        })
        .collect();
    let mut count: std::collections::HashMap<&str, u32> = std::collections::HashMap::new();
    for n in &names {
        *count.entry(n).or_default() += 1;
    }
    names
        .iter()
        .enumerate()
        .map(|(r, n)| {
            if count[n.as_str()] > 1 {
                format!("{n}:{r}")
            } else {
                n.clone()
            }
        })
        .collect()
}

impl<'a> Root<'a> {
    pub(super) fn new(
        comm: &'a mut dyn Comm,
        plan: &'a FleetPlan,
        cx: Ctx<'a>,
        gathered: Vec<Option<Value>>,
        node_plan: Option<super::node::NodePlan>,
    ) -> Root<'a> {
        let size = comm.size();
        let hellos: Vec<Option<Hello>> = gathered
            .into_iter()
            .enumerate()
            .map(|(r, v)| v.and_then(|v| Hello::decode(r as u32, &v)))
            .collect();
        let mut ids = comm.identities();
        for (r, h) in hellos.iter().enumerate() {
            if let Some(h) = h {
                ids[r] = Some(h.id.clone());
            }
        }
        let labels = labels(&ids, size);
        let members: Vec<Member> = (0..size)
            .map(|r| {
                let h = hellos[r as usize].as_ref();
                Member {
                    rank: r,
                    label: labels[r as usize].clone(),
                    data: h.and_then(|h| Some(SocketAddr::new(h.ip?, h.port?))),
                }
            })
            .collect();
        let nodes: Vec<FleetNode> = (0..size)
            .map(|r| {
                let id = ids[r as usize].as_ref();
                let h = hellos[r as usize].as_ref();
                FleetNode {
                    rank: r,
                    label: labels[r as usize].clone(),
                    hostname: id.map_or_else(String::new, |i| i.hostname.clone()),
                    machine: id.map_or_else(String::new, |i| i.machine.clone()),
                    local_rank: h.and_then(|h| h.local_rank),
                    address: members[r as usize].data.map(|a| a.to_string()),
                    status: if h.and_then(|h| h.error.as_ref()).is_some() {
                        NodeStatus::Error
                    } else {
                        NodeStatus::Ok
                    },
                    reason: h.and_then(|h| h.error.clone()),
                    ..FleetNode::default()
                }
            })
            .collect();
        let mut machines: Vec<&str> = nodes
            .iter()
            .map(|n| n.machine.as_str())
            .filter(|m| !m.is_empty())
            .collect();
        machines.sort_unstable();
        machines.dedup();
        let fleet = FleetRun {
            kind: crate::model::fleet::FLEET_KIND.into(),
            fleet_schema_version: crate::model::fleet::FLEET_SCHEMA_VERSION,
            schema_version: SCHEMA_VERSION,
            tool: Tool::this(),
            command_line: std::env::args().collect(),
            options: to_value(plan),
            launch: Launch {
                launcher: cx.launch.launcher.into(),
                control: comm.kind().name().into(),
                ranks: size,
                machines: machines.len() as u32,
                job: cx.launch.job.clone(),
            },
            started_at: cx.started_at.clone(),
            finished_at: None,
            complete: false,
            interrupted: false,
            nodes,
            network: Vec::new(),
            verdicts: None,
            timings: Timings::default(),
            warnings: Vec::new(),
        };
        let mut root = Root {
            comm,
            plan,
            cx,
            hellos,
            node_plan,
            members,
            fleet,
            last_save: Instant::now(),
            measured_at: vec![None; size as usize],
        };
        root.note_lost();
        root
    }

    /// Copy the channel's lost ranks into the nodes.
    /// Mark the ranks the channel has lost since the last call, each named
    /// on stderr up to [`SAY_LOST`] at a time, the rest counted in one line
    /// (a job of thousands that never started is not thousands of lines).
    fn note_lost(&mut self) {
        let mut said = 0;
        for l in self.comm.lost() {
            let n = &mut self.fleet.nodes[l.rank as usize];
            if n.status != NodeStatus::Lost {
                n.status = NodeStatus::Lost;
                n.lost_in = Some(l.phase.clone());
                n.reason = Some(l.reason.clone());
                said += 1;
                if said <= SAY_LOST {
                    eprintln!(
                        "bwscope fleet: {} (rank {}) lost in the {} phase: {}",
                        n.label, l.rank, l.phase, l.reason
                    );
                }
            }
        }
        if said > SAY_LOST {
            eprintln!(
                "bwscope fleet: … and {} more ranks lost (fleet.json names each and why)",
                said - SAY_LOST
            );
        }
    }

    fn alive(&self, r: u32) -> bool {
        self.fleet.nodes[r as usize].status != NodeStatus::Lost
    }

    fn stopped(&self) -> bool {
        self.cx.stop.load(Ordering::Relaxed)
    }

    fn save(&mut self) {
        self.fleet.timings.total_seconds = self.cx.t0.elapsed().as_secs_f64();
        if let Some(o) = &self.cx.out {
            if let Err(e) = o.save_json(&self.fleet) {
                eprintln!("bwscope fleet: {e}");
            }
        }
        self.last_save = Instant::now();
    }

    pub(super) fn drive(mut self) -> anyhow::Result<u8> {
        self.fleet.timings.startup_seconds = self.cx.t0.elapsed().as_secs_f64();
        self.shared_machines_warning();
        let go = Cmd::Go {
            plan: Box::new(self.plan.clone()),
            members: self.members.clone(),
        };
        self.comm.bcast(Some(to_value(&go)))?;
        self.note_lost();
        self.save();
        eprintln!(
            "bwscope fleet: {} of {} ranks joined in {:.1} s ({} machine{}, control {})",
            self.fleet
                .nodes
                .iter()
                .filter(|n| n.status != NodeStatus::Lost)
                .count(),
            self.fleet.nodes.len(),
            self.fleet.timings.startup_seconds,
            self.fleet.launch.machines,
            if self.fleet.launch.machines == 1 {
                ""
            } else {
                "s"
            },
            self.fleet.launch.control
        );
        eprintln!("bwscope fleet: {}", self.expected());
        self.node_phase()?;
        if !self.stopped() {
            self.network_phase()?;
            // Last, so a passing disturbance has had the network phase's
            // seconds to pass.
            self.remeasure()?;
        }
        self.finish()
    }

    /// How long the run should take from here, in one line.
    fn expected(&self) -> String {
        let rounds = if self.plan.node.suites.is_empty() {
            0
        } else {
            self.rounds().len()
        };
        let node = self
            .hellos
            .iter()
            .flatten()
            .filter_map(|h| h.estimate_s)
            .fold(0.0f64, f64::max);
        let live = self
            .fleet
            .nodes
            .iter()
            .filter(|n| n.status != NodeStatus::Lost)
            .count();
        let net = self
            .plan
            .network
            .as_ref()
            .map_or(0.0, |n| n.cost(live as u64).2);
        let node_total = node * rounds as f64;
        format!(
            "expect about {}: per-node phase {} ({rounds} round{} of about {:.0} s), network phase {}",
            super::plan::duration(node_total + net),
            super::plan::duration(node_total),
            if rounds == 1 { "" } else { "s" },
            node,
            super::plan::duration(net)
        )
    }

    fn shared_machines_warning(&mut self) {
        let n = self.fleet.nodes.len() as u32;
        let m = self.fleet.launch.machines;
        if m > 0 && m < n {
            self.fleet.warnings.push(Warning::Other {
                message: format!("{n} ranks run on {m} machine{} (ranks sharing a kernel share its memory)", if m == 1 { "" } else { "s" }),
                hint: "one rank per node is the usual launch (srun --ntasks-per-node=1, mpirun --map-by ppr:1:node); with --turns auto ranks sharing a machine took turns".into(),
            });
        }
    }

    /// Rounds of the per-node phase.
    fn rounds(&self) -> Vec<Vec<u32>> {
        let ready: Vec<u32> = self
            .fleet
            .nodes
            .iter()
            .filter(|n| n.status == NodeStatus::Ok)
            .map(|n| n.rank)
            .collect();
        match self.plan.turns.as_str() {
            "all" => vec![ready],
            "one" => ready.into_iter().map(|r| vec![r]).collect(),
            _ => {
                let mut groups: Vec<(String, Vec<u32>)> = Vec::new();
                for r in ready {
                    let m = self.fleet.nodes[r as usize].machine.clone();
                    match groups.iter_mut().find(|g| g.0 == m) {
                        Some(g) => g.1.push(r),
                        None => groups.push((m, vec![r])),
                    }
                }
                let depth = groups.iter().map(|g| g.1.len()).max().unwrap_or(0);
                (0..depth)
                    .map(|i| groups.iter().filter_map(|g| g.1.get(i).copied()).collect())
                    .collect()
            }
        }
    }

    /// Measure the nodes of `ranks` (a round of the node phase, or a
    /// second turn): tell them, measure this rank's own node when it is
    /// among them, wait for their replies (twice the estimate `est` plus
    /// the timeout). Each asked rank with its reply: `None` where it sent
    /// none (lost), an error naming it where the reply did not parse.
    fn measure_on(
        &mut self,
        round: u32,
        ranks: &[u32],
        est: f64,
    ) -> anyhow::Result<Vec<(u32, Gathered<NodeReply>)>> {
        let cmd = Cmd::Measure {
            round,
            ranks: ranks.to_vec(),
        };
        self.comm.bcast(Some(to_value(&cmd)))?;
        let mine = if ranks.contains(&0) {
            to_value(&measure(self.plan, self.node_plan.as_ref(), self.cx.stop))
        } else {
            Value::Null
        };
        let wait = wait_of(est * 2.0 + self.plan.timeout_s);
        let got = self.comm.gather(mine, "node", wait)?;
        Ok(ranks
            .iter()
            .map(|&r| {
                let body = got[r as usize].as_ref();
                (
                    r,
                    body.map(|b| reply(r, b).and_then(|n: NodeReply| n.checked(r))),
                )
            })
            .collect())
    }

    fn node_phase(&mut self) -> anyhow::Result<()> {
        if self.plan.node.suites.is_empty() {
            return Ok(());
        }
        let t0 = Instant::now();
        let rounds = self.rounds();
        for (i, ranks) in rounds.iter().enumerate() {
            if self.stopped() {
                break;
            }
            let ranks: Vec<u32> = ranks.iter().copied().filter(|&r| self.alive(r)).collect();
            let est = ranks
                .iter()
                .filter_map(|&r| self.hellos[r as usize].as_ref().and_then(|h| h.estimate_s))
                .fold(1.0f64, f64::max);
            eprintln!(
                "bwscope fleet: per-node phase, round {} of {}: {} rank{} (about {:.0} s)",
                i + 1,
                rounds.len(),
                ranks.len(),
                if ranks.len() == 1 { "" } else { "s" },
                est
            );
            let at = self.cx.t0.elapsed().as_secs_f64();
            for &r in &ranks {
                self.measured_at[r as usize] = Some(at);
            }
            let replies = self.measure_on(i as u32, &ranks, est)?;
            let mut longest = 0.0f64;
            for (r, got) in replies {
                let n = &mut self.fleet.nodes[r as usize];
                match got {
                    None => {}
                    Some(Ok(NodeReply {
                        run: Some(run),
                        seconds,
                        ..
                    })) => {
                        n.node_seconds = Some(seconds);
                        longest = longest.max(seconds);
                        if run.interrupted {
                            n.status = NodeStatus::Interrupted;
                        }
                        n.run = Some(run);
                    }
                    Some(Ok(NodeReply {
                        run: None,
                        error,
                        seconds,
                    })) => {
                        n.node_seconds = Some(seconds);
                        longest = longest.max(seconds);
                        n.status = NodeStatus::Error;
                        n.reason = error;
                    }
                    Some(Err(e)) => {
                        n.status = NodeStatus::Error;
                        n.reason = Some(e);
                    }
                }
            }
            self.fleet.timings.node_measure_seconds += longest;
            self.note_lost();
            self.save();
        }
        // Nodes that never got their turn.
        for n in self.fleet.nodes.iter_mut() {
            if n.status == NodeStatus::Ok && n.run.is_none() {
                n.status = NodeStatus::Interrupted;
            }
        }
        self.fleet.timings.node_phase_seconds = t0.elapsed().as_secs_f64();
        Ok(())
    }

    fn finish(mut self) -> anyhow::Result<u8> {
        let interrupted = self.stopped();
        if interrupted {
            for n in self.fleet.nodes.iter_mut() {
                if n.status == NodeStatus::Ok
                    && n.run.is_none()
                    && !self.plan.node.suites.is_empty()
                {
                    n.status = NodeStatus::Interrupted;
                }
            }
        }
        self.fleet.interrupted = interrupted;
        self.fleet.complete = !interrupted;
        self.fleet.finished_at = Some(crate::model::time::now_rfc3339());
        let t = &mut self.fleet.timings;
        t.total_seconds = self.cx.t0.elapsed().as_secs_f64();
        let measuring = t.node_measure_seconds + t.network_measure_seconds;
        t.overhead_fraction = if t.total_seconds > 0.0 {
            (1.0 - measuring / t.total_seconds).max(0.0)
        } else {
            0.0
        };
        let reference = match &self.plan.reference {
            Some(p) => Some((p.clone(), crate::report::fleet::reference::load(p)?)),
            None => None,
        };
        if let Some((_, r)) = &reference {
            crate::report::fleet::reference::restate_dram(r, &mut self.fleet);
        }
        let verdicts = crate::report::fleet::verdict::judge(
            &self.fleet,
            &crate::report::fleet::verdict::Settings {
                z: self.plan.outlier_z,
                pct: self.plan.outlier_pct,
                reference,
            },
        );
        // A complete run only: an interrupted one is neither judged
        // against the fleet's past nor part of it.
        let mut verdicts = verdicts;
        if !interrupted {
            super::past::against_past(&self.fleet, &mut verdicts, self.plan, self.cx.history);
        }
        let failing = verdicts.nodes.iter().any(|v| v.drain);
        self.fleet.verdicts = Some(verdicts);
        let code = if interrupted {
            EXIT_INTERRUPTED
        } else if failing && self.plan.fail_if_outlier {
            EXIT_OUTLIER
        } else {
            EXIT_OK
        };
        // Everyone ends with rank 0's code, so the launcher reports it.
        self.comm.bcast(Some(to_value(&Cmd::Done { code })))?;
        if let Some(o) = &self.cx.out {
            o.save_all(&self.fleet, self.plan.outlier_pct)?;
        }
        Ok(code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_unique() {
        let id = |r: u32, h: &str| {
            let mut i = Identity::this(r, 4, None);
            i.hostname = h.into();
            Some(i)
        };
        let l = labels(&[id(0, "a"), id(1, "b"), id(2, "b"), None], 4);
        assert_eq!(l, vec!["a", "b:1", "b:2", "rank3"]);
    }
}
