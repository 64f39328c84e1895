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
//! runs is answered `Busy` at once. Each test and each broken connection
//! produces one log line; connections that fail or are turned away before
//! their handshake ends (anyone can open them, thousands a second) are
//! logged [`HANDSHAKE_LINES`] a second at most, the rest counted in a line
//! once that second is over.
//!
//! This module is the accept loop and the limits on connections;
//! [`handshake`] takes a connection as far as setup or join, and
//! [`session`] runs the test a setup asks for.

mod handshake;
mod session;

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use super::protocol::{self, Frame, COOKIE_LEN};
use super::write_frame;
use handshake::{session, Handshaking};

/// A wire error as the line a session reports: what was being exchanged,
/// then the error (the handshake's and the session's frames alike).
fn wire(what: &str) -> impl Fn(super::WireError) -> String + '_ {
    move |e| format!("{}: {}", what, e)
}

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
    /// Lines about connections that never finished their handshake.
    unshaken: Mutex<Throttle>,
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

/// The descriptors one stream holds during a test (the accepted socket
/// and the copy that can abort it), and those kept for the listener, the
/// control connection, logging and a late arrival.
pub const FDS_PER_STREAM: u64 = 2;
const FDS_RESERVE: u64 = 6;

/// How many streams one test could have now, under the open-file limit
/// (None: no limit), and the limit. `held`: the descriptors of the
/// reserve the caller already holds (a control connection at its setup:
/// 1), which the count of free ones no longer includes; at start the
/// server said room for 4 streams under `ulimit -n 20` and then refused 4
/// at setup, counting its control connection twice.
pub fn stream_room(held: u64) -> Option<(u64, u64)> {
    crate::os::fds::free().map(|(free, limit)| {
        (
            (free + held).saturating_sub(FDS_RESERVE) / FDS_PER_STREAM,
            limit,
        )
    })
}

/// `accept` failures, logged at most once a second with a count of those
/// not shown; running out of descriptors is named with the limit.
#[derive(Default)]
struct AcceptFailures {
    last: Option<Instant>,
    unsaid: u64,
}

impl AcceptFailures {
    fn note(&mut self, log: &Log, e: &std::io::Error) {
        if self
            .last
            .is_some_and(|t| t.elapsed() < Duration::from_secs(1))
        {
            self.unsaid += 1;
            return;
        }
        let why = if crate::os::fds::is_exhausted(e) {
            // (Counting the open ones would need one more descriptor.)
            let limit = crate::os::fds::limit().map_or("no limit".into(), |l| {
                format!("all {l} of ulimit -n in use")
            });
            format!(
                "out of open files ({e}: {limit}): a connection waits until one closes; raise the limit where the server runs"
            )
        } else {
            e.to_string()
        };
        let more = match self.unsaid {
            0 => String::new(),
            n => format!(" ({n} more since the last line)"),
        };
        log(&format!("accept failed: {why}{more}"));
        self.last = Some(Instant::now());
        self.unsaid = 0;
    }

    /// An accept worked: say how many failures were not shown.
    fn flush(&mut self, log: &Log) {
        if self.unsaid > 0 {
            log(&format!(
                "accept failed {} more times before this connection",
                self.unsaid
            ));
        }
        *self = AcceptFailures::default();
    }
}

/// Most lines a second about connections that fail or are turned away
/// before their handshake ends.
pub const HANDSHAKE_LINES: u32 = 5;

/// Log lines about unauthenticated connections: [`HANDSHAKE_LINES`] in
/// each second, then a count of the rest when the second is over.
struct Throttle {
    since: Instant,
    said: u32,
    unsaid: u64,
    /// The lines not shown, counted by their cause (the text after the
    /// peer, up to its details), so the count still says what happened.
    causes: std::collections::BTreeMap<String, u64>,
}

/// "127.0.0.2:4711: refused, server full: 8 …" → "refused, server full";
/// a one-word stage before the cause is passed over: "…: handshake: timed
/// out waiting for the peer (2s)" → "timed out waiting for the peer".
fn cause_of(text: &str) -> &str {
    let mut rest = text.split_once(": ").map_or(text, |(_, r)| r);
    if let Some((stage, after)) = rest.split_once(": ") {
        if !stage.contains(' ') && !after.is_empty() {
            rest = after;
        }
    }
    rest.split([':', '(']).next().unwrap_or(rest).trim()
}

impl Throttle {
    fn new() -> Throttle {
        Throttle {
            since: Instant::now(),
            said: 0,
            unsaid: 0,
            causes: Default::default(),
        }
    }

    fn line(&mut self, log: &Log, text: &str) {
        self.tick(log);
        if self.said < HANDSHAKE_LINES {
            self.said += 1;
            log(text);
        } else {
            self.unsaid += 1;
            *self.causes.entry(cause_of(text).to_string()).or_default() += 1;
        }
    }

    /// Once the second is over: the count of lines not shown, and a new
    /// second.
    fn tick(&mut self, log: &Log) {
        if self.since.elapsed() >= Duration::from_secs(1) {
            self.flush(log);
        }
    }

    /// The count of lines not shown so far, now: when the server stops
    /// they must not be lost with the second they fell in.
    fn flush(&mut self, log: &Log) {
        let waited = self.since.elapsed();
        if self.unsaid > 0 {
            let causes: Vec<String> = self
                .causes
                .iter()
                .map(|(c, n)| format!("{n} {c}"))
                .collect();
            log(&format!(
                "{} more failed handshakes in the last {:.0} s (not shown one by one: {})",
                self.unsaid,
                waited.as_secs_f64(),
                causes.join("; ")
            ));
        }
        *self = Throttle::new();
    }
}

impl Shared {
    /// Log a line about a connection that never finished its handshake.
    fn unshaken(&self, text: &str) {
        if let Ok(mut t) = self.unshaken.lock() {
            t.line(&self.log, text);
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
                unshaken: Mutex::new(Throttle::new()),
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
        let mut failures = AcceptFailures::default();
        loop {
            let ended = stop.load(Ordering::Relaxed)
                || (self.shared.cfg.once && self.shared.run_ended.load(Ordering::Acquire));
            if ended {
                if let Ok(mut t) = self.shared.unshaken.lock() {
                    t.flush(&self.shared.log);
                }
                return Ok(());
            }
            let readable = crate::os::net::wait_readable(&self.listener, 100);
            if let Ok(mut t) = self.shared.unshaken.lock() {
                t.tick(&self.shared.log);
            }
            if !readable {
                continue; // timeout or EINTR: re-check the flags
            }
            let (s, peer) = match self.listener.accept() {
                Ok(x) => {
                    failures.flush(&self.shared.log);
                    x
                }
                Err(e) => {
                    // Out of descriptors, the connection stays queued and
                    // poll wakes at once: one line a second, not a hundred,
                    // and a longer pause.
                    let exhausted = crate::os::fds::is_exhausted(&e);
                    failures.note(&self.shared.log, &e);
                    std::thread::sleep(Duration::from_millis(if exhausted { 200 } else { 10 }));
                    continue;
                }
            };
            if self.shared.conns.fetch_add(1, Ordering::AcqRel) >= self.shared.cfg.max_conns {
                self.shared.conns.fetch_sub(1, Ordering::AcqRel);
                let why = format!(
                    "server full: {} connections already open; try again later",
                    self.shared.cfg.max_conns
                );
                self.shared.unshaken(&format!("{}: refused, {}", peer, why));
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
                self.shared.unshaken(&format!("{}: refused, {}", peer, why));
                turn_away(s, &why);
                continue;
            }
            let shared = self.shared.clone();
            let spawned = std::thread::Builder::new()
                .name("bwscope-conn".into())
                .spawn(move || {
                    let _g = ConnGuard(shared.clone());
                    handle(s, peer, &shared);
                });
            if let Err(e) = spawned {
                self.shared.conns.fetch_sub(1, Ordering::AcqRel);
                (self.shared.log)(&format!("{}: cannot start a handler thread: {}", peer, e));
            }
        }
    }
}

/// One connection, start to end; logs one line unless it joined a test.
/// `addr` is the peer as `accept` gave it: a peer that has already reset
/// the connection has no address to ask the socket for.
fn handle(mut s: TcpStream, addr: SocketAddr, sh: &Shared) {
    let peer = addr.to_string();
    let _ = s.set_nodelay(true);
    let ip = addr.ip();
    // The accept loop checked the count a moment ago; a race with another
    // connection from the same address is settled here.
    let Some(mut hs) = Handshaking::enter(sh, ip) else {
        let why = format!(
            "server full: {} connections from {} are still in the handshake; try again later",
            sh.cfg.max_handshakes_per_addr, ip
        );
        sh.unshaken(&format!("{}: refused, {}", peer, why));
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
            let line = format!("{}: {}", peer, msg);
            if hs.in_handshake() {
                sh.unshaken(&line);
            } else {
                (sh.log)(&line);
            }
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

#[cfg(test)]
mod tests {
    use super::cause_of;

    #[test]
    fn a_line_not_shown_is_counted_by_its_cause() {
        assert_eq!(
            cause_of("127.0.0.2:4711: refused, server full: 8 connections from 127.0.0.2"),
            "refused, server full"
        );
        assert_eq!(
            cause_of("[::1]:80: timed out waiting for the peer (5s)"),
            "timed out waiting for the peer"
        );
        assert_eq!(
            cause_of("127.0.0.2:4711: handshake: timed out waiting for the peer (2s)"),
            "timed out waiting for the peer"
        );
        assert_eq!(cause_of("no peer at all"), "no peer at all");
    }
}
