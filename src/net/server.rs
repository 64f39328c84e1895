//! The transponder (`bwscope net serve`): accepts leaders, runs one test at
//! a time, and survives anything a peer sends.
//!
//! Every connection gets its own thread (at most [`ServerConfig::max_conns`]
//! at once) so a stalled peer never blocks the accept loop. The handshake
//! (hello, auth, setup or join) has one deadline, `timeout` from the
//! accept, however slowly the peer drips its bytes; every later frame has
//! its own. One address may hold at most
//! [`ServerConfig::max_handshakes_per_addr`] connections in the handshake,
//! so a single host cannot fill every slot with connections that never
//! authenticate; whoever is turned away gets a `server full` error frame.
//! A test is bounded in duration and bytes. A leader arriving while a test
//! runs is answered `Busy` at once. Each test and each refused or broken
//! connection produces exactly one log line.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use super::flow::{self, Budget, FlowError, Limits};
use super::protocol::{
    self, Frame, Mode, Report, Setup, COOKIE_LEN, MAX_CHUNK, MAX_INTERVALS, MAX_STREAMS,
};
use super::{peer_name, read_frame_until, write_frame, WireError};

/// Where log lines go (stderr in the CLI, a vector in tests).
pub type Log = Arc<dyn Fn(&str) + Send + Sync>;

#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub bind: SocketAddr,
    /// Pre-shared token; `None` = no authentication.
    pub token: Option<Vec<u8>>,
    /// Exit after the last test of one leader run (`Setup::last`) or after
    /// a failed test; refusals don't count.
    pub once: bool,
    /// Longest test accepted (omit window included).
    pub max_time: Duration,
    /// Most bytes (both directions) one test may move.
    pub max_bytes: u64,
    /// Read/write timeout on every socket operation: a peer silent this long
    /// is dropped.
    pub timeout: Duration,
    /// Most connections handled at once; more are turned away on arrival.
    pub max_conns: usize,
    /// Most connections from one address still in the handshake (not yet
    /// authenticated and set up or joined). A leader handshakes one
    /// connection at a time.
    pub max_handshakes_per_addr: usize,
}

impl ServerConfig {
    pub fn new(bind: SocketAddr) -> ServerConfig {
        ServerConfig {
            bind,
            token: None,
            once: false,
            max_time: Duration::from_secs(60),
            max_bytes: 1 << 40,
            timeout: Duration::from_secs(10),
            max_conns: 64,
            max_handshakes_per_addr: 8,
        }
    }
}

/// The test in progress: its secret cookie and where joining data
/// connections are handed over.
struct Pending {
    cookie: [u8; COOKIE_LEN],
    joined: Vec<bool>,
    tx: mpsc::Sender<(u16, TcpStream)>,
}

struct Shared {
    cfg: ServerConfig,
    log: Log,
    pending: Mutex<Option<Pending>>,
    conns: AtomicUsize,
    /// Connections in the handshake, per peer address.
    handshaking: Mutex<HashMap<IpAddr, usize>>,
    tests: AtomicU64,
    /// A run ended (its last test, or a failure): `once` may exit.
    run_ended: AtomicBool,
}

pub struct Server {
    listener: TcpListener,
    shared: Arc<Shared>,
}

/// Clears the busy slot when a test ends, however it ends.
struct SlotGuard<'a>(&'a Shared);

impl Drop for SlotGuard<'_> {
    fn drop(&mut self) {
        if let Ok(mut p) = self.0.pending.lock() {
            *p = None;
        }
    }
}

/// A connection counted against its address until its handshake ends.
struct Handshaking<'a> {
    sh: &'a Shared,
    ip: IpAddr,
    counted: bool,
}

impl<'a> Handshaking<'a> {
    /// Count one more handshake from `ip`; `None` when it already has the
    /// most allowed.
    fn enter(sh: &'a Shared, ip: IpAddr) -> Option<Handshaking<'a>> {
        let mut m = sh.handshaking.lock().ok()?;
        let n = m.entry(ip).or_insert(0);
        if *n >= sh.cfg.max_handshakes_per_addr {
            return None;
        }
        *n += 1;
        Some(Handshaking {
            sh,
            ip,
            counted: true,
        })
    }

    /// The handshake is over (however it ended).
    fn leave(&mut self) {
        if std::mem::take(&mut self.counted) {
            if let Ok(mut m) = self.sh.handshaking.lock() {
                if let Some(n) = m.get_mut(&self.ip) {
                    *n -= 1;
                    if *n == 0 {
                        m.remove(&self.ip);
                    }
                }
            }
        }
    }
}

impl Drop for Handshaking<'_> {
    fn drop(&mut self) {
        self.leave();
    }
}

/// Turn a connection away from the accept loop without blocking it: the
/// error frame fits an empty socket buffer, so a non-blocking write sends
/// it whole; FIN follows, and what the peer already sent is read so that
/// closing does not reset the connection before the frame arrives.
fn turn_away(mut s: TcpStream, why: &str) {
    use std::io::{Read, Write};
    let _ = s.set_nonblocking(true);
    let _ = s.write_all(&protocol::encode(&Frame::Error(why.to_string())));
    let _ = s.shutdown(std::net::Shutdown::Write);
    let mut sink = [0u8; 4096];
    for _ in 0..16 {
        match s.read(&mut sink) {
            Ok(n) if n > 0 => {}
            _ => break,
        }
    }
}

/// Decrements the connection count when a handler ends.
struct ConnGuard(Arc<Shared>);

impl Drop for ConnGuard {
    fn drop(&mut self) {
        self.0.conns.fetch_sub(1, Ordering::AcqRel);
    }
}

enum Outcome {
    /// A test ran; the line describes it.
    Test(String),
    /// A data connection was handed to its test (logged with the test).
    Joined,
    /// Refused because another test runs.
    Busy,
}

impl Server {
    /// Bind the listening socket (errors are the caller's to explain).
    pub fn bind(cfg: ServerConfig, log: Log) -> std::io::Result<Server> {
        let listener = TcpListener::bind(cfg.bind)?;
        Ok(Server {
            listener,
            shared: Arc::new(Shared {
                cfg,
                log,
                pending: Mutex::new(None),
                conns: AtomicUsize::new(0),
                handshaking: Mutex::new(HashMap::new()),
                tests: AtomicU64::new(0),
                run_ended: AtomicBool::new(false),
            }),
        })
    }

    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Tests run so far.
    pub fn tests(&self) -> u64 {
        self.shared.tests.load(Ordering::Acquire)
    }

    /// Accept until `stop` (polled every 100 ms) or, with `once`, until the
    /// first leader run ended.
    pub fn serve(&self, stop: &AtomicBool) -> std::io::Result<()> {
        let fd = self.listener.as_raw_fd();
        loop {
            if stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            if self.shared.cfg.once && self.shared.run_ended.load(Ordering::Acquire) {
                return Ok(());
            }
            let mut pfd = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd for the duration of the call.
            let r = unsafe { libc::poll(&mut pfd, 1, 100) };
            if r <= 0 {
                continue; // timeout or EINTR: re-check the flags
            }
            let (s, peer) = match self.listener.accept() {
                Ok(x) => x,
                Err(e) => {
                    (self.shared.log)(&format!("accept failed: {}", e));
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                }
            };
            if self.shared.conns.fetch_add(1, Ordering::AcqRel) >= self.shared.cfg.max_conns {
                self.shared.conns.fetch_sub(1, Ordering::AcqRel);
                let why = format!(
                    "server full: {} connections already open; try again later",
                    self.shared.cfg.max_conns
                );
                (self.shared.log)(&format!("{}: refused, {}", peer, why));
                turn_away(s, &why);
                continue;
            }
            let busy_addr = {
                let m = self.shared.handshaking.lock();
                m.is_ok_and(|m| {
                    m.get(&peer.ip()).copied().unwrap_or(0)
                        >= self.shared.cfg.max_handshakes_per_addr
                })
            };
            if busy_addr {
                self.shared.conns.fetch_sub(1, Ordering::AcqRel);
                let why = format!(
                    "server full: {} connections from {} are still in the handshake; try again later",
                    self.shared.cfg.max_handshakes_per_addr,
                    peer.ip()
                );
                (self.shared.log)(&format!("{}: refused, {}", peer, why));
                turn_away(s, &why);
                continue;
            }
            let shared = self.shared.clone();
            let spawned = std::thread::Builder::new()
                .name("bwscope-conn".into())
                .spawn(move || {
                    let _g = ConnGuard(shared.clone());
                    handle(s, &shared);
                });
            if let Err(e) = spawned {
                self.shared.conns.fetch_sub(1, Ordering::AcqRel);
                (self.shared.log)(&format!("{}: cannot start a handler thread: {}", peer, e));
            }
        }
    }
}

/// One connection, start to end; logs one line unless it joined a test.
fn handle(mut s: TcpStream, sh: &Shared) {
    let peer = peer_name(&s);
    let _ = s.set_nodelay(true);
    let ip = s
        .peer_addr()
        .map_or(IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED), |a| a.ip());
    // The accept loop checked the count a moment ago; a race with another
    // connection from the same address is settled here.
    let Some(mut hs) = Handshaking::enter(sh, ip) else {
        let why = format!(
            "server full: {} connections from {} are still in the handshake; try again later",
            sh.cfg.max_handshakes_per_addr, ip
        );
        (sh.log)(&format!("{}: refused, {}", peer, why));
        turn_away(s, &why);
        return;
    };
    match session(&mut s, sh, &peer, &mut hs) {
        Ok(Outcome::Test(line)) => (sh.log)(&line),
        Ok(Outcome::Joined) => {}
        Ok(Outcome::Busy) => (sh.log)(&format!("{}: busy, refused (a test is running)", peer)),
        Err(msg) => {
            // Tell the peer why when the socket still takes it; ignore failure.
            let _ = write_frame(
                &mut s,
                &Frame::Error(msg.clone()),
                Duration::from_millis(500),
            );
            (sh.log)(&format!("{}: {}", peer, msg));
            linger(&mut s);
        }
    }
}

/// Close gracefully: closing with unread input would send a reset, which
/// can destroy the error frame before the peer reads it. So send FIN, then
/// drain (bounded in bytes and time) until the peer closes too.
fn linger(s: &mut TcpStream) {
    use std::io::Read;
    let _ = s.shutdown(std::net::Shutdown::Write);
    let _ = s.set_read_timeout(Some(Duration::from_millis(200)));
    let mut sink = [0u8; 16 << 10];
    let t0 = Instant::now();
    let mut drained = 0usize;
    while t0.elapsed() < Duration::from_millis(500) && drained < (4 << 20) {
        match s.read(&mut sink) {
            Ok(0) | Err(_) => break,
            Ok(n) => drained += n,
        }
    }
}

fn wire(what: &str) -> impl Fn(WireError) -> String + '_ {
    move |e| format!("{}: {}", what, e)
}

fn session(
    s: &mut TcpStream,
    sh: &Shared,
    peer: &str,
    hs: &mut Handshaking,
) -> Result<Outcome, String> {
    let t = sh.cfg.timeout;
    // One deadline for hello, auth and setup/join together.
    let deadline = Instant::now() + t;
    match read_frame_until(s, deadline).map_err(wire("handshake"))? {
        Frame::Hello { magic, version } => {
            if magic != protocol::MAGIC {
                return Err("handshake: not a bwscope leader (bad magic)".into());
            }
            if version != protocol::VERSION {
                return Err(format!(
                    "handshake: leader speaks protocol v{}, this server v{}; use the same bwscope release on both ends",
                    version,
                    protocol::VERSION
                ));
            }
        }
        other => return Err(format!("handshake: expected hello, got {:?}", kind(&other))),
    }
    let nonce = protocol::random_bytes::<{ protocol::NONCE_LEN }>();
    let welcome = Frame::Welcome {
        version: protocol::VERSION,
        auth: sh.cfg.token.is_some(),
        nonce,
    };
    write_frame(s, &welcome, t).map_err(wire("handshake"))?;
    if let Some(token) = &sh.cfg.token {
        match read_frame_until(s, deadline).map_err(wire("auth"))? {
            Frame::Auth { mac } if protocol::auth_ok(token, &nonce, &mac) => {
                write_frame(s, &Frame::AuthOk, t).map_err(wire("auth"))?;
            }
            Frame::Auth { .. } => return Err("authentication failed: wrong token".into()),
            other => return Err(format!("auth: expected auth, got {}", kind(&other))),
        }
    }
    let frame = read_frame_until(s, deadline).map_err(wire("setup"))?;
    hs.leave();
    match frame {
        Frame::Setup(setup) => control(s, sh, peer, setup),
        Frame::Join { cookie, index } => join(s, sh, cookie, index),
        other => Err(format!(
            "setup: expected setup or join, got {}",
            kind(&other)
        )),
    }
}

fn kind(f: &Frame) -> &'static str {
    match f {
        Frame::Hello { .. } => "hello",
        Frame::Welcome { .. } => "welcome",
        Frame::Auth { .. } => "auth",
        Frame::AuthOk => "auth-ok",
        Frame::Setup(_) => "setup",
        Frame::Ready { .. } => "ready",
        Frame::Join { .. } => "join",
        Frame::Joined => "joined",
        Frame::Busy => "busy",
        Frame::Error(_) => "error",
        Frame::Started => "started",
        Frame::Report(_) => "report",
    }
}

/// Refuse a setup the server will not run, with the reason.
fn validate(st: &Setup, cfg: &ServerConfig) -> Result<(), String> {
    if st.streams == 0 || st.streams > MAX_STREAMS {
        return Err(format!(
            "setup: {} streams; this server takes 1 to {}",
            st.streams, MAX_STREAMS
        ));
    }
    if st.chunk_bytes == 0 || st.chunk_bytes > MAX_CHUNK {
        return Err(format!(
            "setup: chunk of {} bytes; the protocol allows 1 to {}",
            st.chunk_bytes, MAX_CHUNK
        ));
    }
    if !(10..=10_000).contains(&st.interval_ms) {
        return Err("setup: interval must be 10 to 10000 ms".into());
    }
    let asked = Duration::from_millis(st.time_ms as u64 + st.omit_ms as u64);
    if st.bytes == 0 && st.time_ms == 0 {
        return Err(
            "setup: a test of 0 s: give a positive --time on the leader, or --bytes".into(),
        );
    }
    if st.bytes == 0 && asked > cfg.max_time {
        return Err(format!(
            "setup: a test of {:.1} s; this server allows up to {:.0} s (--max-time on the server)",
            asked.as_secs_f64(),
            cfg.max_time.as_secs_f64()
        ));
    }
    if st.bytes > cfg.max_bytes {
        return Err(format!(
            "setup: {} bytes asked; this server allows up to {} per test (--max-bytes on the server)",
            st.bytes, cfg.max_bytes
        ));
    }
    Ok(())
}

/// A data connection joining the pending test.
fn join(
    s: &mut TcpStream,
    sh: &Shared,
    cookie: [u8; COOKIE_LEN],
    index: u16,
) -> Result<Outcome, String> {
    let mut p = sh
        .pending
        .lock()
        .map_err(|_| "internal: poisoned lock".to_string())?;
    let Some(pending) = p.as_mut() else {
        return Err("join: no test is waiting for streams".into());
    };
    if pending.cookie != cookie {
        return Err("join: unknown test cookie".into());
    }
    let i = index as usize;
    if i >= pending.joined.len() || pending.joined[i] {
        return Err(format!("join: stream {} is not expected", index));
    }
    write_frame(s, &Frame::Joined, sh.cfg.timeout).map_err(wire("join"))?;
    pending.joined[i] = true;
    let dup = s.try_clone().map_err(|e| format!("join: {}", e))?;
    // The handler's copy closes when it returns; the test owns the clone.
    let _ = pending.tx.send((index, dup));
    Ok(Outcome::Joined)
}

/// The control connection of one test: take the slot, gather the streams,
/// run, report.
fn control(s: &mut TcpStream, sh: &Shared, peer: &str, setup: Setup) -> Result<Outcome, String> {
    let t = sh.cfg.timeout;
    validate(&setup, &sh.cfg)?;
    let (tx, rx) = mpsc::channel();
    let cookie = protocol::random_bytes::<COOKIE_LEN>();
    {
        let mut p = sh
            .pending
            .lock()
            .map_err(|_| "internal: poisoned lock".to_string())?;
        if p.is_some() {
            drop(p);
            let _ = write_frame(s, &Frame::Busy, t);
            return Ok(Outcome::Busy);
        }
        *p = Some(Pending {
            cookie,
            joined: vec![false; setup.streams as usize],
            tx,
        });
    }
    let slot = SlotGuard(sh);
    // From here on the test counts for --once, however it ends.
    let result = run_control(s, sh, &setup, cookie, rx, slot);
    sh.tests.fetch_add(1, Ordering::AcqRel);
    if setup.last || result.is_err() {
        sh.run_ended.store(true, Ordering::Release);
    }
    let what = format!(
        "{} {} {} stream{} chunk {}",
        setup.mode.name(),
        setup.direction.name(),
        setup.streams,
        if setup.streams == 1 { "" } else { "s" },
        crate::util::units::format_bytes(setup.chunk_bytes)
    );
    match result {
        Ok(r) => {
            let secs = r.active_nanos as f64 / 1e9;
            let rate = |b: u64| {
                if secs > 0.0 {
                    b as f64 * 8.0 / secs / 1e9
                } else {
                    0.0
                }
            };
            Ok(Outcome::Test(format!(
                "{}: test {}: received {} B ({:.3} Gbit/s), sent {} B ({:.3} Gbit/s) in {:.2} s{}",
                peer,
                what,
                r.received_bytes,
                rate(r.received_bytes),
                r.sent_bytes,
                rate(r.sent_bytes),
                secs,
                if setup.mode == Mode::Rr {
                    format!(", {} rounds", r.rounds)
                } else {
                    String::new()
                }
            )))
        }
        Err(e) => Err(format!("test {} failed: {}", what, e)),
    }
}

fn run_control(
    s: &mut TcpStream,
    sh: &Shared,
    setup: &Setup,
    cookie: [u8; COOKIE_LEN],
    rx: mpsc::Receiver<(u16, TcpStream)>,
    slot: SlotGuard<'_>,
) -> Result<Report, String> {
    let t = sh.cfg.timeout;
    write_frame(s, &Frame::Ready { cookie }, t).map_err(wire("ready"))?;
    let mut streams: Vec<Option<TcpStream>> = (0..setup.streams).map(|_| None).collect();
    let join_deadline = Instant::now() + t;
    let mut have = 0;
    while have < streams.len() {
        let left = join_deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok((i, st)) => {
                streams[i as usize] = Some(st);
                have += 1;
            }
            Err(_) => {
                return Err(format!(
                    "only {} of {} streams joined within {:?}",
                    have,
                    streams.len(),
                    t
                ))
            }
        }
    }
    let streams: Vec<TcpStream> = streams.into_iter().flatten().collect();
    write_frame(s, &Frame::Started, t).map_err(wire("start"))?;
    let report = data_phase(setup, streams, &sh.cfg).map_err(|e| e.to_string())?;
    // Free the slot before the leader can see the report: a sweep's next
    // point must not find the server still "busy" with this one.
    drop(slot);
    write_frame(s, &Frame::Report(report.clone()), t).map_err(wire("report"))?;
    Ok(report)
}

/// Move the bytes of one test on the transponder's side.
fn data_phase(
    setup: &Setup,
    streams: Vec<TcpStream>,
    cfg: &ServerConfig,
) -> Result<Report, FlowError> {
    let t0 = Instant::now();
    let idle = cfg.timeout;
    let asked = Duration::from_millis(setup.time_ms as u64 + setup.omit_ms as u64);
    let by_time = setup.bytes == 0;
    // A receiver still busy past this is cut off: the asked duration plus a
    // timeout's grace, never beyond the server's limit.
    let deadline = t0
        + if by_time {
            (asked + idle).min(cfg.max_time + idle)
        } else {
            cfg.max_time
        };
    let limits = Limits {
        deadline: Some(deadline),
        max_bytes: Some(cfg.max_bytes),
    };
    let n = streams.len() as u64;
    let share = |i: usize| setup.bytes / n + u64::from((i as u64) < setup.bytes % n);
    // As a sender the server also keeps within --max-bytes (its share per
    // stream) when the test is bounded by time.
    let budget = |i: usize| Budget {
        until: by_time.then(|| t0 + asked.min(cfg.max_time)),
        bytes: Some(if by_time { cfg.max_bytes / n } else { share(i) }),
    };
    let interval = Duration::from_millis(setup.interval_ms as u64);
    let sendbuf = if setup.direction.leader_receives() {
        flow::data_buffer(flow::piece_len(setup.chunk_bytes), 0x7e57)
    } else {
        Vec::new()
    };
    let recv_len = (setup.chunk_bytes as usize).clamp(1, flow::RECV_BUF);
    let received = AtomicU64::new(0);
    let sent = AtomicU64::new(0);
    let rounds = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let done = AtomicBool::new(false);
    let finished = Mutex::new(None);
    let aborts: Vec<TcpStream> = streams.iter().filter_map(|s| s.try_clone().ok()).collect();
    let first_err: Mutex<Option<FlowError>> = Mutex::new(None);
    let fail = |e: FlowError| {
        stop.store(true, Ordering::Relaxed);
        for a in &aborts {
            let _ = a.shutdown(std::net::Shutdown::Both);
        }
        if let Ok(mut f) = first_err.lock() {
            f.get_or_insert(e);
        }
    };
    let meter_on = setup.mode == Mode::Stream && setup.direction.leader_sends();
    let points = std::thread::scope(|sc| {
        let mut receivers = Vec::new();
        let meter =
            meter_on.then(|| sc.spawn(|| flow::meter(&received, t0, interval, &done, &finished)));
        for (i, st) in streams.into_iter().enumerate() {
            let (sendbuf, received, sent, rounds, stop, finished, fail) =
                (&sendbuf, &received, &sent, &rounds, &stop, &finished, &fail);
            match setup.mode {
                Mode::Rr => receivers.push(sc.spawn(move || {
                    let mut st = st;
                    let mut rb = vec![0u8; recv_len];
                    match flow::rr_server(
                        &mut st,
                        setup.direction,
                        setup.chunk_bytes,
                        sendbuf,
                        &mut rb,
                        limits,
                        idle,
                    ) {
                        Ok((r, s, k)) => {
                            received.fetch_add(r, Ordering::Relaxed);
                            sent.fetch_add(s, Ordering::Relaxed);
                            rounds.fetch_add(k, Ordering::Relaxed);
                        }
                        Err(e) => fail(e),
                    }
                })),
                Mode::Stream => {
                    if setup.direction.leader_receives() {
                        let mut w = match st.try_clone() {
                            Ok(w) => w,
                            Err(e) => {
                                fail(FlowError::Io(e));
                                continue;
                            }
                        };
                        let b = budget(i);
                        receivers.push(sc.spawn(move || {
                            if let Err(e) = flow::send_stream(&mut w, sendbuf, b, sent, stop, idle)
                            {
                                fail(e);
                            }
                        }));
                    }
                    if setup.direction.leader_sends() {
                        receivers.push(sc.spawn(move || {
                            let mut st = st;
                            let mut rb = vec![0u8; flow::RECV_BUF];
                            if let Err(e) = flow::recv_stream(
                                &mut st, &mut rb, received, limits, idle, finished,
                            ) {
                                fail(e);
                            }
                        }));
                    }
                }
            }
        }
        for h in receivers {
            let _ = h.join();
        }
        done.store(true, Ordering::Release);
        meter.map(|m| m.join().unwrap_or_default())
    });
    if let Some(e) = first_err.into_inner().ok().flatten() {
        return Err(e);
    }
    let mut intervals = points.map_or_else(Vec::new, |p| {
        flow::window(&p, Duration::from_millis(setup.omit_ms as u64), interval)
    });
    intervals.truncate(MAX_INTERVALS);
    Ok(Report {
        received_bytes: received.load(Ordering::Relaxed),
        sent_bytes: sent.load(Ordering::Relaxed),
        rounds: rounds.load(Ordering::Relaxed),
        active_nanos: t0.elapsed().as_nanos() as u64,
        intervals,
    })
}
