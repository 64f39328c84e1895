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

use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::comm::{check_identities, Comm, Identity, Lost};
use super::launch::Launch;
use super::rendezvous::{self, Note};
use super::wire::{admit, join, read_msg, write_msg, Wire, MAX_FRAME};
use crate::error::UserError;
use crate::net::protocol::random_bytes;

/// How long rank 0 still waits for partial results after a Ctrl-C.
const AFTER_STOP: Duration = Duration::from_secs(15);

/// How often rank 0 says it is alive.
const ALIVE_EVERY: Duration = Duration::from_secs(1);

/// How to meet rank 0.
#[derive(Debug, Clone)]
pub struct Settings {
    pub launch: Launch,
    pub rendezvous_dir: PathBuf,
    /// `HOST:PORT` from `--coordinator`.
    pub coordinator: Option<String>,
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
) {
    std::thread::Builder::new()
        .name(format!("fleet-read-{rank}"))
        .spawn(move || loop {
            match read_msg(&mut s, MAX_FRAME, None) {
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

fn root(s: &Settings, stop: &'static AtomicBool) -> anyhow::Result<(TcpComm, Option<Vec<u8>>)> {
    let size = s.launch.size;
    // Rank 0 holds a connection per rank: a fleet of a thousand nodes
    // needs more than the usual soft limit of 1024.
    crate::os::fds::raise_limit();
    let port = match &s.coordinator {
        Some(c) => coordinator_port(c)?,
        None => 0,
    };
    let listener = TcpListener::bind(("0.0.0.0", port)).map_err(|e| {
        UserError::flag(
            "--coordinator",
            format!("rank 0 cannot listen on port {port}: {e}"),
        )
    })?;
    let port = listener.local_addr()?.port();
    let token = session_token(s, port);
    let note_path = rendezvous::path(&s.rendezvous_dir, s.launch.job.as_deref());
    let writer = rendezvous::Writer::this(s.startup.as_secs_f64());
    if s.coordinator.is_none() {
        publish_note(s, port, token.as_deref(), &writer, &note_path)?;
    }
    // Ranks that joined wait for the others: they hear `Alive` meanwhile.
    let writing = Arc::new(Mutex::new(Vec::new()));
    let alive = Alive::start(writing.clone())?;
    let (streams, ids) = gather(&listener, s, token.as_deref(), stop, &writing);
    // Remove the note, unless another rank 0 has replaced it meanwhile.
    if s.coordinator.is_none()
        && rendezvous::read(&note_path).is_some_and(|n| n.writer.as_ref() == Some(&writer))
    {
        let _ = std::fs::remove_file(&note_path);
    }
    let (rx, lost, ips) = read_joined(&streams, s, stop)?;
    let mut comm = TcpComm {
        rank: 0,
        size,
        seq: 0,
        peers: streams,
        ids,
        lost,
        up: None,
        rx,
        ip: most_common(&ips),
        stop,
        stop_sent: false,
        phase: "startup".into(),
        silence: s.startup,
        writing,
        _alive: Some(alive),
    };
    let present: Vec<Identity> = comm.ids.iter().flatten().cloned().collect();
    if let Err(reason) = check_identities(&present) {
        comm.refuse_all(&reason);
        return Err(UserError::BadInput {
            path: "bwscope fleet".into(),
            problem: reason,
        }
        .into());
    }
    Ok((comm, token))
}

/// Writes the rendezvous note the other ranks find rank 0 by: its
/// addresses, and the session token unless the ranks share one already.
fn publish_note(
    s: &Settings,
    port: u16,
    token: Option<&[u8]>,
    writer: &rendezvous::Writer,
    note_path: &std::path::Path,
) -> anyhow::Result<()> {
    let note = Note {
        version: env!("CARGO_PKG_VERSION").into(),
        protocol: super::comm::PROTOCOL,
        job: s.launch.job.clone(),
        size: s.launch.size,
        addrs: rendezvous::local_ipv4()
            .into_iter()
            .map(|ip| SocketAddr::new(IpAddr::V4(ip), port))
            .collect(),
        token: token.filter(|_| s.token.is_none()).map(rendezvous::to_hex),
        writer: Some(writer.clone()),
    };
    rendezvous::publish(note_path, &note).map_err(|e| UserError::flag("--rendezvous", e))?;
    Ok(())
}

/// A reader thread per rank that joined, all feeding one channel; the
/// ranks that never joined, as lost at start-up; and the addresses rank 0
/// was reached on.
#[allow(clippy::type_complexity)]
fn read_joined(
    streams: &[Option<TcpStream>],
    s: &Settings,
    stop: &AtomicBool,
) -> anyhow::Result<(Receiver<(u32, Incoming)>, Vec<Lost>, Vec<IpAddr>)> {
    let (tx, rx) = mpsc::channel();
    let mut lost = Vec::new();
    let mut ips: Vec<IpAddr> = Vec::new();
    for r in 1..s.launch.size {
        match &streams[r as usize] {
            Some(c) => {
                if let Ok(a) = c.local_addr() {
                    ips.push(a.ip());
                }
                spawn_reader(c.try_clone()?, r, tx.clone(), None);
            }
            None => lost.push(Lost {
                rank: r,
                phase: "startup".into(),
                reason: if stop.load(Ordering::Relaxed) {
                    "interrupted before it joined".into()
                } else {
                    format!(
                        "never joined within {:.0} s (--timeout)",
                        s.startup.as_secs_f64()
                    )
                },
            }),
        }
    }
    Ok((rx, lost, ips))
}

/// The session's token: the ranks' shared one, else a fresh one for the
/// rendezvous file; with --coordinator and no --token-file there is none
/// to share, and the user is told.
fn session_token(s: &Settings, port: u16) -> Option<Vec<u8>> {
    let token: Option<Vec<u8>> = match (&s.token, &s.coordinator) {
        (Some(t), _) => Some(t.clone()),
        (None, None) => Some(random_bytes::<32>().to_vec()),
        (None, Some(_)) => None,
    };
    if token.is_none() {
        // As `net serve` says its auth state: nobody should learn it later.
        eprintln!(
            "bwscope fleet: warning: --coordinator without --token-file: the ranks and the pair tests are not authenticated, so anyone who reaches port {port} can join as a rank; give every rank the same --token-file FILE"
        );
    }
    token
}

/// Admit ranks until all have joined, the start-up time is over or the
/// user stops: each connection is authenticated on its own thread, so one
/// slow peer does not hold up the others. Returns the connections and
/// identities by rank (rank 0 is this process).
fn gather(
    listener: &TcpListener,
    s: &Settings,
    token: Option<&[u8]>,
    stop: &AtomicBool,
    writing: &Mutex<Vec<TcpStream>>,
) -> (Vec<Option<TcpStream>>, Vec<Option<Identity>>) {
    let size = s.launch.size;
    let (jtx, jrx) = mpsc::channel();
    let deadline = Instant::now() + s.startup;
    let mut ids: Vec<Option<Identity>> = vec![None; size as usize];
    ids[0] = Some(Identity::this(0, size, s.launch.job.clone()));
    let mut streams: Vec<Option<TcpStream>> = (0..size).map(|_| None).collect();
    let mut joined = 1;
    while joined < size && Instant::now() < deadline && !stop.load(Ordering::Relaxed) {
        if crate::os::net::wait_readable(listener, 50) {
            if let Ok((c, _)) = listener.accept() {
                let (jtx, token) = (jtx.clone(), token.map(<[u8]>::to_vec));
                std::thread::spawn(move || {
                    let _ = jtx.send(admit(c, token.as_deref(), size));
                });
            }
        }
        while let Ok(r) = jrx.try_recv() {
            match r {
                Ok((mut c, id)) => {
                    let r = id.rank as usize;
                    if streams[r].is_some() {
                        let _ = write_msg(
                            &mut c,
                            &Wire::Refused {
                                reason: format!("rank {r} joined twice"),
                            },
                        );
                        continue;
                    }
                    if let Ok(a) = c.try_clone() {
                        writing.lock().unwrap_or_else(|e| e.into_inner()).push(a);
                    }
                    streams[r] = Some(c);
                    ids[r] = Some(id);
                    joined += 1;
                }
                Err(e) => eprintln!("bwscope fleet: refused a connection: {e}"),
            }
        }
    }
    (streams, ids)
}

fn coordinator_port(c: &str) -> Result<u16, UserError> {
    c.rsplit_once(':')
        .and_then(|(_, p)| p.parse::<u16>().ok())
        .ok_or_else(|| {
            UserError::flag(
                "--coordinator",
                format!("'{c}' is not HOST:PORT (e.g. node001:5290)"),
            )
        })
}

fn most_common(ips: &[IpAddr]) -> Option<IpAddr> {
    let mut best: Option<(IpAddr, usize)> = None;
    for ip in ips {
        let n = ips.iter().filter(|x| *x == ip).count();
        if best.is_none_or(|(_, m)| n > m) {
            best = Some((*ip, n));
        }
    }
    best.map(|(ip, _)| ip)
}

/// Rank 0's addresses and the token to answer its challenge with.
type Target = (Vec<SocketAddr>, Option<Vec<u8>>);

/// Where rank 0 is: `Ok(Ok(target))`, `Ok(Err(why not yet))` to wait on,
/// `Err` for a rendezvous file this rank must not trust.
fn target(s: &Settings) -> Result<Result<Target, String>, UserError> {
    if let Some(c) = &s.coordinator {
        coordinator_port(c)?;
        let addrs: Vec<SocketAddr> = c.to_socket_addrs().map(|a| a.collect()).unwrap_or_default();
        if addrs.is_empty() {
            return Ok(Err(format!("{c} does not resolve")));
        }
        return Ok(Ok((addrs, s.token.clone())));
    }
    let path = rendezvous::path(&s.rendezvous_dir, s.launch.job.as_deref());
    let note = rendezvous::read_checked(&path, s.launch.job.as_deref())
        .map_err(|e| UserError::flag("--rendezvous", e))?;
    let Some(n) = note else {
        return Ok(Err("rank 0 has not published its address yet".into()));
    };
    if n.size != s.launch.size {
        // A note an earlier run of another size left: rank 0 replaces it.
        return Ok(Err(format!(
            "{} is for a fleet of {}, this one has {} ranks (left by an earlier run?)",
            path.display(),
            n.size,
            s.launch.size
        )));
    }
    let token = match (&s.token, &n.token) {
        (Some(t), _) => Some(t.clone()),
        (None, Some(h)) => rendezvous::from_hex(h),
        (None, None) => None,
    };
    Ok(Ok((n.addrs, token)))
}

fn leaf(s: &Settings, stop: &'static AtomicBool) -> anyhow::Result<(TcpComm, Option<Vec<u8>>)> {
    let id = Identity::this(s.launch.rank, s.launch.size, s.launch.job.clone());
    let deadline = Instant::now() + s.startup;
    let mut last = String::from("rank 0 has not published its address yet");
    loop {
        if stop.load(Ordering::Relaxed) {
            anyhow::bail!("interrupted while waiting for rank 0");
        }
        let found = target(s)?;
        if let Err(why) = &found {
            last.clone_from(why);
        }
        if let Ok((addrs, token)) = found {
            for a in addrs {
                let left = deadline.saturating_duration_since(Instant::now());
                match join(a, &id, token.as_deref(), left) {
                    Ok(c) => {
                        let (tx, rx) = mpsc::channel();
                        spawn_reader(c.try_clone()?, 0, tx, Some(stop));
                        let ip = c.local_addr().ok().map(|a| a.ip());
                        let comm = TcpComm {
                            rank: s.launch.rank,
                            size: s.launch.size,
                            seq: 0,
                            peers: Vec::new(),
                            ids: vec![Some(id)],
                            lost: Vec::new(),
                            up: Some(c),
                            rx,
                            ip,
                            stop,
                            stop_sent: false,
                            phase: "startup".into(),
                            // Rank 0's `Alive` comes every second.
                            silence: s.startup.max(ALIVE_EVERY * 3),
                            writing: Arc::new(Mutex::new(Vec::new())),
                            _alive: None,
                        };
                        return Ok((comm, token));
                    }
                    // A stale note can carry an old token: refusals are
                    // final only with a token of our own.
                    Err(Ok(reason)) if s.token.is_some() || s.coordinator.is_some() => {
                        return Err(refused(reason));
                    }
                    Err(Ok(reason)) | Err(Err(reason)) => last = format!("{a}: {reason}"),
                }
            }
        }
        if Instant::now() >= deadline {
            let how = match &s.coordinator {
                Some(c) => format!("at {c} (--coordinator)"),
                None => format!(
                    "through {} (is it on a file system every rank shares? else give --rendezvous DIR or --coordinator HOST:PORT)",
                    rendezvous::path(&s.rendezvous_dir, s.launch.job.as_deref()).display()
                ),
            };
            return Err(UserError::flag(
                "--timeout",
                format!(
                    "rank {} found no rank 0 {how} within {:.0} s; last: {last}",
                    s.launch.rank,
                    s.startup.as_secs_f64()
                ),
            )
            .into());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn refused(reason: String) -> anyhow::Error {
    UserError::BadInput {
        path: "bwscope fleet".into(),
        problem: format!("rank 0 refused this rank: {reason}"),
    }
    .into()
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
        // Every message (rank 0's `Alive` each second) restarts the wait.
        loop {
            match self.rx.recv_timeout(self.silence) {
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
                    self.silence.as_secs_f64()
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
