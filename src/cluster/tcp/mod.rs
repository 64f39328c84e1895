//! The default control channel: every rank keeps one TCP connection to
//! rank 0 (a star), framed and joined as [`super::wire`] says. Rank 0
//! checks that every rank runs the same release and refuses the whole
//! fleet otherwise.
//!
//! Rank 0 reads every connection on its own thread, so a rank that dies is
//! noticed by its closed connection and a rank that hangs by the gather's
//! deadline; either is marked lost and the fleet goes on without it. The
//! other way round, rank 0 sends `Alive` every second from a thread of its
//! own, and a rank that hears nothing from it for `--timeout` ends: a rank
//! 0 that is stopped or hung keeps its connections open, and its ranks
//! waited for their next command without bound.

use std::net::{IpAddr, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::comm::{Comm, Identity, Lost};
use super::launch::Launch;
use super::wire::{read_msg, write_msg, Wire, MAX_FRAME};
use crate::os::time::now_ns;
pub use start::check_coordinator;
use start::{leaf, refused, root};

mod start;

/// How long rank 0 still waits for partial results after a Ctrl-C.
const AFTER_STOP: Duration = Duration::from_secs(15);

/// How often rank 0 says it is alive.
const ALIVE_EVERY: Duration = Duration::from_secs(1);

/// How to meet rank 0.
#[derive(Debug, Clone)]
pub struct Settings {
    pub launch: Launch,
    pub rendezvous_dir: PathBuf,
    /// `HOST:PORT`, and where it came from (`--coordinator` or the
    /// variable a manifest fills) for the messages.
    pub coordinator: Option<(String, &'static str)>,
    /// From `--token-file`.
    pub token: Option<Vec<u8>>,
    /// How long rank 0 waits for every rank to join, and a rank for rank 0.
    pub startup: Duration,
}

enum Incoming {
    Msg(Wire),
    Closed(String),
}

pub struct TcpComm {
    rank: u32,
    size: u32,
    seq: u64,
    /// Rank 0: write halves by rank (None: lost or never joined).
    peers: Vec<Option<TcpStream>>,
    ids: Vec<Option<Identity>>,
    lost: Vec<Lost>,
    /// Other ranks: the connection to rank 0.
    up: Option<TcpStream>,
    rx: Receiver<(u32, Incoming)>,
    ip: Option<IpAddr>,
    stop: &'static AtomicBool,
    stop_sent: bool,
    phase: String,
    /// Other ranks: how long rank 0 may be silent (`--timeout`).
    silence: Duration,
    /// Other ranks: when anything from rank 0 was last read
    /// (`os::time::now_ns`), by the reader thread, which reads while this
    /// rank is busy in a flow. The wait for rank 0 counts from there: a
    /// rank whose flow outlasted a stopped rank 0 waited its whole
    /// `--timeout` again after the flow, 15 s at `--timeout 5`.
    heard: Arc<AtomicU64>,
    /// Rank 0: the ranks the `Alive` thread writes to, locked for every
    /// write to a rank so its frames never interleave with a command's.
    writing: Arc<Mutex<Vec<TcpStream>>>,
    /// Rank 0: ends the `Alive` thread when dropped.
    _alive: Option<Alive>,
}

/// Rank 0's `Alive` thread, ended when this is dropped.
struct Alive(Arc<AtomicBool>);

impl Alive {
    /// Say `Alive` to every rank in `to` each [`ALIVE_EVERY`]; a rank whose
    /// connection fails is dropped from the list (the gathers mark it
    /// lost).
    fn start(to: Arc<Mutex<Vec<TcpStream>>>) -> std::io::Result<Alive> {
        let done = Arc::new(AtomicBool::new(false));
        let end = done.clone();
        std::thread::Builder::new()
            .name("fleet-alive".into())
            .spawn(move || {
                while !end.load(Ordering::Relaxed) {
                    std::thread::sleep(ALIVE_EVERY);
                    let mut to = to.lock().unwrap_or_else(|e| e.into_inner());
                    to.retain_mut(|p| write_msg(p, &Wire::Alive).is_ok());
                }
            })?;
        Ok(Alive(done))
    }
}

impl Drop for Alive {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Join the fleet: rank 0 listens and waits for everyone, the others
/// connect. Returns the channel and the token the fleet authenticates
/// with (rank 0 makes one when no `--token-file` is given).
pub fn connect(
    s: &Settings,
    stop: &'static AtomicBool,
) -> anyhow::Result<(TcpComm, Option<Vec<u8>>)> {
    if s.launch.rank == 0 {
        root(s, stop)
    } else {
        leaf(s, stop)
    }
}

fn spawn_reader(
    mut s: TcpStream,
    rank: u32,
    tx: Sender<(u32, Incoming)>,
    stop: Option<&'static AtomicBool>,
    heard: Option<Arc<AtomicU64>>,
) {
    std::thread::Builder::new()
        .name(format!("fleet-read-{rank}"))
        .spawn(move || loop {
            let got = read_msg(&mut s, MAX_FRAME, None);
            if let (Ok(_), Some(h)) = (&got, &heard) {
                h.store(now_ns(), Ordering::Relaxed);
            }
            match got {
                Ok(Wire::Stop) => {
                    if let Some(f) = stop {
                        f.store(true, Ordering::SeqCst);
                    }
                }
                Ok(m) => {
                    if tx.send((rank, Incoming::Msg(m))).is_err() {
                        return;
                    }
                }
                Err(e) => {
                    let _ = tx.send((rank, Incoming::Closed(e)));
                    return;
                }
            }
        })
        .expect("spawn a reader thread");
}

impl TcpComm {
    fn refuse_all(&mut self, reason: &str) {
        let _w = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        for p in self.peers.iter_mut().flatten() {
            let _ = write_msg(
                p,
                &Wire::Refused {
                    reason: reason.to_string(),
                },
            );
        }
    }

    fn mark_lost(&mut self, rank: u32, reason: String) {
        if let Some(p) = self.peers[rank as usize].take() {
            // The rank (if alive) reads EOF and ends.
            let _ = p.shutdown(std::net::Shutdown::Both);
            self.lost.push(Lost {
                rank,
                phase: self.phase.clone(),
                reason,
            });
        }
    }

    fn live(&self) -> Vec<u32> {
        (1..self.size)
            .filter(|&r| self.peers[r as usize].is_some())
            .collect()
    }

    fn send_stop(&mut self) {
        self.stop_sent = true;
        let _w = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        for r in self.live() {
            if let Some(p) = self.peers[r as usize].as_mut() {
                let _ = write_msg(p, &Wire::Stop);
            }
        }
    }
}

impl Comm for TcpComm {
    fn rank(&self) -> u32 {
        self.rank
    }

    fn size(&self) -> u32 {
        self.size
    }

    fn kind(&self) -> crate::model::fleet::Transport {
        crate::model::fleet::Transport::Tcp
    }

    fn identities(&self) -> Vec<Option<Identity>> {
        self.ids.clone()
    }

    fn bcast(&mut self, body: Option<Value>) -> anyhow::Result<Value> {
        self.seq += 1;
        if self.rank == 0 {
            let body = body.unwrap_or(Value::Null);
            let msg = Wire::Data {
                seq: self.seq,
                body: body.clone(),
            };
            for r in self.live() {
                let failed = match self.peers[r as usize].as_mut() {
                    Some(p) => {
                        let _w = self.writing.lock().unwrap_or_else(|e| e.into_inner());
                        write_msg(p, &msg).err()
                    }
                    None => None,
                };
                if let Some(e) = failed {
                    // Rank 0's `Alive` may be what met a dead rank's reset
                    // first: then the command's write finds the pipe broken.
                    use std::io::ErrorKind::{BrokenPipe, ConnectionAborted, ConnectionReset};
                    let why = match e.kind() {
                        BrokenPipe | ConnectionReset | ConnectionAborted => {
                            format!("its connection closed ({e}): the process died or was killed")
                        }
                        _ => format!("cannot send to it: {e}"),
                    };
                    self.mark_lost(r, why);
                }
            }
            return Ok(body);
        }
        // Every message (rank 0's `Alive` each second) restarts the wait,
        // counted from when the reader read it (see `heard`).
        loop {
            let quiet =
                Duration::from_nanos(now_ns().saturating_sub(self.heard.load(Ordering::Relaxed)));
            match self.rx.recv_timeout(self.silence.saturating_sub(quiet)) {
                Ok((_, Incoming::Msg(Wire::Data { body, .. }))) => return Ok(body),
                Ok((_, Incoming::Msg(Wire::Refused { reason }))) => return Err(refused(reason)),
                Ok((_, Incoming::Msg(_))) => continue,
                Ok((_, Incoming::Closed(e))) => anyhow::bail!(
                    "rank {}: lost contact with rank 0 ({e}); rank 0 went on without this rank or ended",
                    self.rank
                ),
                Err(RecvTimeoutError::Timeout) => anyhow::bail!(
                    "rank {}: rank 0 has been silent for {:.0} s (--timeout): it is stopped, hung or cut off from this node; ending this rank",
                    self.rank,
                    Duration::from_nanos(now_ns().saturating_sub(self.heard.load(Ordering::Relaxed)))
                        .as_secs_f64()
                ),
                Err(RecvTimeoutError::Disconnected) => {
                    anyhow::bail!("rank {}: lost contact with rank 0", self.rank)
                }
            }
        }
    }

    fn gather(
        &mut self,
        body: Value,
        phase: &str,
        wait: Duration,
    ) -> anyhow::Result<Vec<Option<Value>>> {
        self.seq += 1;
        self.phase = phase.to_string();
        if self.rank != 0 {
            let up = self.up.as_mut().expect("a rank has a connection to rank 0");
            write_msg(
                up,
                &Wire::Data {
                    seq: self.seq,
                    body,
                },
            )
            .map_err(|e| anyhow::anyhow!("rank {}: cannot reach rank 0: {e}", self.rank))?;
            return Ok(Vec::new());
        }
        let mut out: Vec<Option<Value>> = vec![None; self.size as usize];
        out[0] = Some(body);
        let mut pending = self.live();
        let t0 = Instant::now();
        let mut deadline = t0 + wait;
        while !pending.is_empty() {
            if self.stop.load(Ordering::Relaxed) && !self.stop_sent {
                self.send_stop();
                deadline = deadline.min(Instant::now() + AFTER_STOP);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            match self.rx.recv_timeout(left.min(Duration::from_millis(100))) {
                Ok((r, Incoming::Msg(Wire::Data { seq, body }))) => {
                    if seq == self.seq && pending.contains(&r) {
                        out[r as usize] = Some(body);
                        pending.retain(|&x| x != r);
                    }
                }
                Ok((r, Incoming::Closed(e))) => {
                    if pending.contains(&r) || self.peers[r as usize].is_some() {
                        self.mark_lost(
                            r,
                            format!("its connection closed ({e}): the process died or was killed"),
                        );
                        pending.retain(|&x| x != r);
                    }
                }
                Ok(_) | Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        let waited = t0.elapsed().as_secs_f64();
        for r in pending {
            self.mark_lost(r, format!("silent for {waited:.0} s (--timeout)"));
        }
        Ok(out)
    }

    fn lost(&self) -> Vec<Lost> {
        self.lost.clone()
    }

    fn fleet_ip(&self) -> Option<IpAddr> {
        self.ip
    }
}
