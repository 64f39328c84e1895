//! The MPI build (`--features mpi`): MPI carries rank 0's broadcasts and
//! gathers, and measures pair bandwidth with MPI point-to-point.
//!
//! Waiting is done by probing and sleeping a millisecond, never inside a
//! blocking MPI call: Open MPI and MPICH spin while they wait, and a
//! spinning rank would steal the cpu a co-located rank is measuring on.
//! The pair tests poll their requests and yield the cpu between polls.
//!
//! Pair tests follow mpiGraph and OSU `osu_bw`: per iteration, after a
//! barrier of the step's ranks, each flow moves `window` messages of
//! `size` bytes posted at once, and each end stamps (`MPI_Wtime`) when all
//! its sends / all its receives completed: the sender's and the
//! receiver's view (see [`pairs`]). Iterations go on for `--step-time` (at
//! least two; the first is the warm-up and not counted).
//!
//! Limits: MPI decides what happens when a rank dies (Open MPI ends the
//! job), and a rank that hangs keeps `MPI_Finalize` waiting after rank 0
//! has written the results; the TCP control (`--control tcp`) tolerates
//! both.

use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mpi::environment::Universe;
use mpi::point_to_point::MatchedReceiveVec;
use mpi::request::{Request, Scope};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Threading;
use serde_json::{json, Value};

use super::comm::{check_identities, Comm, Identity, Lost};
use super::launch::Launch;
use super::rendezvous;
use super::schedule::Test;
use crate::error::UserError;
use crate::model::fleet::Flow;

const TAG_ID: i32 = 11;
const TAG_BCAST: i32 = 12;
const TAG_GATHER: i32 = 13;
const TAG_DATA: i32 = 20;
const TAG_BARRIER: i32 = 21;
const TAG_GO: i32 = 22;
const POLL: Duration = Duration::from_millis(1);

pub struct MpiComm {
    // Dropped last: MPI_Finalize.
    _universe: Universe,
    world: SimpleCommunicator,
    rank: u32,
    size: u32,
    seq: u64,
    ids: Vec<Option<Identity>>,
    lost: Vec<Lost>,
    stop: &'static AtomicBool,
    stopped_at: Option<Instant>,
}

fn send(world: &SimpleCommunicator, to: u32, tag: i32, v: &Value) {
    let bytes = serde_json::to_vec(v).unwrap_or_default();
    world
        .process_at_rank(to as i32)
        .send_with_tag(&bytes[..], tag);
}

/// Wait (probing, not spinning) for a message from `from` with `tag`.
fn recv_from(world: &SimpleCommunicator, from: u32, tag: i32) -> Value {
    let p = world.process_at_rank(from as i32);
    loop {
        if let Some(m) = p.immediate_matched_probe_with_tag(tag) {
            let (bytes, _) = m.matched_receive_vec::<u8>();
            return serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        }
        std::thread::sleep(POLL);
    }
}

/// Start MPI and check that it agrees with the launcher and that every
/// rank runs the same release. Returns the channel and the token the
/// transponders use (rank 0 makes one when no `--token-file` is given and
/// sends it over MPI).
pub fn connect(
    launch: &Launch,
    token: Option<Vec<u8>>,
    stop: &'static AtomicBool,
) -> anyhow::Result<(MpiComm, Option<Vec<u8>>)> {
    let (universe, _) = mpi::initialize_with_threading(Threading::Funneled)
        .ok_or_else(|| anyhow::anyhow!("MPI was already initialised"))?;
    let world = universe.world();
    let (rank, size) = (world.rank() as u32, world.size() as u32);
    if rank != launch.rank || size != launch.size {
        return Err(UserError::BadInput {
            path: "bwscope fleet".into(),
            problem: format!(
                "MPI says rank {rank} of {size} but {} says rank {} of {}: the MPI library does not know this launcher (with srun try --mpi=pmix), or run with --control tcp",
                launch.launcher, launch.rank, launch.size
            ),
        }
        .into());
    }
    let id = Identity::this(rank, size, launch.job.clone());
    let mut comm = MpiComm {
        _universe: universe,
        world,
        rank,
        size,
        seq: 0,
        ids: vec![None; size as usize],
        lost: Vec::new(),
        stop,
        stopped_at: None,
    };
    if rank != 0 {
        send(&comm.world, 0, TAG_ID, &serde_json::to_value(&id)?);
        let answer = recv_from(&comm.world, 0, TAG_ID);
        if let Some(reason) = answer.get("refused").and_then(Value::as_str) {
            return Err(UserError::BadInput {
                path: "bwscope fleet".into(),
                problem: format!("rank 0 refused this rank: {reason}"),
            }
            .into());
        }
        let token = token.or_else(|| {
            answer
                .get("token")
                .and_then(Value::as_str)
                .and_then(rendezvous::from_hex)
        });
        comm.ids[rank as usize] = Some(id);
        return Ok((comm, token));
    }
    comm.ids[0] = Some(id);
    for r in 1..size {
        let v = recv_from(&comm.world, r, TAG_ID);
        comm.ids[r as usize] = serde_json::from_value(v).ok();
    }
    let present: Vec<Identity> = comm.ids.iter().flatten().cloned().collect();
    if let Err(reason) = check_identities(&present) {
        for r in 1..size {
            send(&comm.world, r, TAG_ID, &json!({ "refused": reason }));
        }
        return Err(UserError::BadInput {
            path: "bwscope fleet".into(),
            problem: reason,
        }
        .into());
    }
    let token = token.unwrap_or_else(|| crate::net::protocol::random_bytes::<32>().to_vec());
    for r in 1..size {
        send(
            &comm.world,
            r,
            TAG_ID,
            &json!({ "token": rendezvous::to_hex(&token) }),
        );
    }
    Ok((comm, Some(token)))
}

impl MpiComm {
    fn live(&self) -> Vec<u32> {
        (1..self.size)
            .filter(|r| !self.lost.iter().any(|l| l.rank == *r))
            .collect()
    }
}

impl Comm for MpiComm {
    fn rank(&self) -> u32 {
        self.rank
    }

    fn size(&self) -> u32 {
        self.size
    }

    fn kind(&self) -> crate::model::fleet::Transport {
        crate::model::fleet::Transport::Mpi
    }

    fn identities(&self) -> Vec<Option<Identity>> {
        self.ids.clone()
    }

    fn bcast(&mut self, body: Option<Value>) -> anyhow::Result<Value> {
        self.seq += 1;
        if self.rank == 0 {
            let body = body.unwrap_or(Value::Null);
            for r in self.live() {
                send(&self.world, r, TAG_BCAST, &body);
            }
            return Ok(body);
        }
        Ok(recv_from(&self.world, 0, TAG_BCAST))
    }

    fn gather(
        &mut self,
        body: Value,
        phase: &str,
        wait: Duration,
    ) -> anyhow::Result<Vec<Option<Value>>> {
        self.seq += 1;
        if self.rank != 0 {
            send(
                &self.world,
                0,
                TAG_GATHER,
                &json!({"seq": self.seq, "body": body}),
            );
            return Ok(Vec::new());
        }
        let mut out: Vec<Option<Value>> = vec![None; self.size as usize];
        out[0] = Some(body);
        let mut pending = self.live();
        let t0 = Instant::now();
        while !pending.is_empty() {
            if self.stop.load(Ordering::Relaxed) && self.stopped_at.is_none() {
                self.stopped_at = Some(Instant::now());
            }
            let late = self
                .stopped_at
                .is_some_and(|t| t.elapsed() > Duration::from_secs(15));
            if t0.elapsed() > wait || late {
                break;
            }
            match self
                .world
                .any_process()
                .immediate_matched_probe_with_tag(TAG_GATHER)
            {
                Some(m) => {
                    let (bytes, status) = m.matched_receive_vec::<u8>();
                    let r = status.source_rank() as u32;
                    let v: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
                    if v.get("seq").and_then(Value::as_u64) == Some(self.seq)
                        && pending.contains(&r)
                    {
                        out[r as usize] = v.get("body").cloned();
                        pending.retain(|&x| x != r);
                    }
                }
                None => std::thread::sleep(POLL),
            }
        }
        let waited = t0.elapsed().as_secs_f64();
        for r in pending {
            self.lost.push(Lost {
                rank: r,
                phase: phase.into(),
                reason: format!("silent for {waited:.0} s (--timeout)"),
            });
        }
        Ok(out)
    }

    fn lost(&self) -> Vec<Lost> {
        self.lost.clone()
    }

    fn fleet_ip(&self) -> Option<IpAddr> {
        rendezvous::local_ipv4().first().copied().map(IpAddr::V4)
    }

    fn mpi_step(
        &mut self,
        tests: &[Test],
        size: u64,
        window: u32,
        seconds: f64,
    ) -> Option<(Vec<Flow>, f64)> {
        let me = self.rank;
        let (mut outs, mut ins) = (Vec::new(), Vec::new());
        for t in tests {
            if t.src == me {
                outs.push(t.dst);
                if t.bidir {
                    ins.push(t.dst);
                }
            }
            if t.dst == me {
                ins.push(t.src);
                if t.bidir {
                    outs.push(t.src);
                }
            }
        }
        let mut parties: Vec<u32> = tests.iter().flat_map(|t| [t.src, t.dst]).collect();
        parties.sort_unstable();
        parties.dedup();
        if me != 0 && !parties.contains(&me) {
            return Some((Vec::new(), 0.0));
        }
        Some(pairs(
            &self.world,
            me,
            &parties,
            &outs,
            &ins,
            size as usize,
            window as usize,
            seconds,
        ))
    }
}

/// Bytes and seconds summed over the measured iterations of one flow.
#[derive(Default, Clone, Copy)]
struct Tally {
    bytes: f64,
    secs: f64,
}

impl Tally {
    fn gbps(&self) -> Option<f64> {
        (self.secs > 0.0).then(|| self.bytes / self.secs / 1e9)
    }
}

/// Test every request, keep the unfinished; true when none is left.
fn poll<'a, S: Scope<'a>>(reqs: &mut Vec<Request<'a, [u8], S>>) -> bool {
    let v = std::mem::take(reqs);
    *reqs = v.into_iter().filter_map(|r| r.test().err()).collect();
    reqs.is_empty()
}

/// The step's barrier, through rank 0 (the only rank every rank is known
/// to reach; a collective would also need the pairs that may not
/// connect): every party sends its vote, rank 0 answers all of them with
/// whether any voted to go on. Waiting yields the cpu between probes.
fn barrier(world: &SimpleCommunicator, me: u32, parties: &[u32], vote: bool) -> bool {
    let byte = [u8::from(vote)];
    if me != 0 {
        world
            .process_at_rank(0)
            .send_with_tag(&byte[..], TAG_BARRIER);
        let p = world.process_at_rank(0);
        loop {
            if let Some(m) = p.immediate_matched_probe_with_tag(TAG_GO) {
                let (v, _) = m.matched_receive_vec::<u8>();
                return v.first() == Some(&1);
            }
            std::thread::yield_now();
        }
    }
    let mut go = vote && parties.contains(&0);
    let mut waiting = parties.iter().filter(|&&r| r != 0).count();
    while waiting > 0 {
        match world
            .any_process()
            .immediate_matched_probe_with_tag(TAG_BARRIER)
        {
            Some(m) => {
                let (v, _) = m.matched_receive_vec::<u8>();
                go |= v.first() == Some(&1);
                waiting -= 1;
            }
            None => std::thread::yield_now(),
        }
    }
    let answer = [u8::from(go)];
    for &r in parties.iter().filter(|&&r| r != 0) {
        world
            .process_at_rank(r as i32)
            .send_with_tag(&answer[..], TAG_GO);
    }
    go
}

/// This rank's flows of one step: sends to every rank in `outs`, receives
/// from every rank in `ins`, all at once, as mpiGraph does: a barrier of
/// the step's parties (rank 0 always among them, it runs the barrier),
/// then `w` receives and `w` sends per flow posted at once, each end
/// stamping when all its sends and when all its receives completed. The
/// barrier starts every flow together, so a flow's clock never counts a
/// peer still busy with another. Iterations go on while any sender wants
/// more: the first is the warm-up, then until `seconds` have passed.
#[allow(clippy::too_many_arguments)]
fn pairs(
    world: &SimpleCommunicator,
    me: u32,
    parties: &[u32],
    outs: &[u32],
    ins: &[u32],
    size: usize,
    w: usize,
    seconds: f64,
) -> (Vec<Flow>, f64) {
    let mut rng = crate::util::rng::XorShift64::new(0xf1ee7 ^ me as u64);
    let sendbuf: Vec<u8> = (0..size).map(|_| rng.next_u64() as u8).collect();
    let mut recvbuf = vec![0u8; size * w * ins.len()];
    let mut sent = vec![Tally::default(); outs.len()];
    let mut got = vec![Tally::default(); ins.len()];
    let t0 = mpi::time();
    let mut iter = 0u64;
    while barrier(
        world,
        me,
        parties,
        !outs.is_empty() && (iter < 2 || mpi::time() - t0 < seconds),
    ) {
        let start = mpi::time();
        let (ts, tr) = mpi::request::scope(|sc| {
            let mut recvs: Vec<Request<'_, [u8], _>> = recvbuf
                .chunks_mut(size)
                .enumerate()
                .map(|(k, chunk)| {
                    world
                        .process_at_rank(ins[k / w] as i32)
                        .immediate_receive_into_with_tag(sc, chunk, TAG_DATA)
                })
                .collect();
            let mut sends: Vec<Request<'_, [u8], _>> = Vec::new();
            for &d in outs {
                for _ in 0..w {
                    sends.push(world.process_at_rank(d as i32).immediate_send_with_tag(
                        sc,
                        &sendbuf[..],
                        TAG_DATA,
                    ));
                }
            }
            let (mut ts, mut tr) = (None, None);
            while ts.is_none() || tr.is_none() {
                if ts.is_none() && poll(&mut sends) {
                    ts = Some(mpi::time());
                }
                if tr.is_none() && poll(&mut recvs) {
                    tr = Some(mpi::time());
                }
                // Polling, like MPI_Waitall, but giving the cpu away
                // between polls: with more ranks than cpus (one-box tests,
                // oversubscribed jobs) a spinning rank starves the one it
                // waits for; alone on a core it costs nothing.
                std::thread::yield_now();
            }
            (ts.unwrap_or(start), tr.unwrap_or(start))
        });
        if iter > 0 {
            let per = (w * size) as f64;
            for t in sent.iter_mut() {
                t.bytes += per;
                t.secs += ts - start;
            }
            for t in got.iter_mut() {
                t.bytes += per;
                t.secs += tr - start;
            }
        }
        iter += 1;
    }
    let mut flows: Vec<Flow> = outs
        .iter()
        .zip(&sent)
        .map(|(&d, t)| Flow {
            src: me,
            dst: d,
            size_bytes: size as u64,
            send_gbps: t.gbps(),
            ..Flow::default()
        })
        .collect();
    flows.extend(ins.iter().zip(&got).map(|(&s, t)| Flow {
        src: s,
        dst: me,
        size_bytes: size as u64,
        recv_gbps: t.gbps(),
        bytes: Some(t.bytes as u64),
        ..Flow::default()
    }));
    (flows, mpi::time() - t0)
}
