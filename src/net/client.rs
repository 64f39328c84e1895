//! The leader's side of one test: connect, authenticate, set up, open the
//! data streams, move bytes, and collect the transponder's report.

use std::io;
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::flow::{self, Batch, Budget, FlowError, Limits};
use super::protocol::{self, Frame, Interval, Mode, Report, Setup, COOKIE_LEN};
use super::{read_frame, write_frame, WireError};

/// How to reach the transponder.
#[derive(Debug, Clone)]
pub struct Peer {
    pub addr: SocketAddr,
    pub token: Option<Vec<u8>>,
    /// Connect timeout and the bound on every wait for the peer.
    pub timeout: Duration,
}

/// Why a test could not run. [`ClientError::is_setup`] errors happen before
/// any byte moved: the leader stops (exit 2); others fail one point.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("connection refused by {0}: is `bwscope net serve` running there, on that port?")]
    Refused(SocketAddr),
    #[error("{0} is unreachable: {1}")]
    Unreachable(SocketAddr, String),
    #[error("no answer from {0} within {1:?}; check the address or raise --timeout")]
    ConnectTimeout(SocketAddr, Duration),
    #[error("cannot connect to {0}: {1}")]
    Connect(SocketAddr, io::Error),
    #[error("the server is busy with another test; try again when it ends")]
    Busy,
    #[error("authentication failed: {0}")]
    Auth(String),
    #[error("the server refused: {0}")]
    Refusal(String),
    #[error("protocol error during {0}: {1}")]
    Handshake(&'static str, String),
    #[error("test failed: {0}")]
    Test(String),
}

impl ClientError {
    /// Errors before the test started: bad address, no server, busy,
    /// wrong token or version, refused options.
    pub fn is_setup(&self) -> bool {
        !matches!(self, ClientError::Test(_))
    }
}

/// The leader's view plus the transponder's report of one test.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub setup: Setup,
    /// Bytes the leader wrote / read on all data connections.
    pub sent: u64,
    pub received: u64,
    /// Request/answer rounds the leader completed.
    pub rounds: u64,
    /// Request/answer batches the leader timed (rr mode), all streams.
    pub batches: Vec<Vec<Batch>>,
    /// Leader receive-meter intervals after the omit window (stream mode).
    pub recv_intervals: Vec<Interval>,
    /// From `Started` to the end of the last flow, leader's clock.
    pub seconds: f64,
    pub server: Report,
}

fn connect(p: &Peer) -> Result<TcpStream, ClientError> {
    let s = TcpStream::connect_timeout(&p.addr, p.timeout).map_err(|e| match e.kind() {
        io::ErrorKind::ConnectionRefused => ClientError::Refused(p.addr),
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => {
            ClientError::ConnectTimeout(p.addr, p.timeout)
        }
        io::ErrorKind::NetworkUnreachable | io::ErrorKind::HostUnreachable => {
            ClientError::Unreachable(p.addr, e.to_string())
        }
        _ => ClientError::Connect(p.addr, e),
    })?;
    let _ = s.set_nodelay(true);
    Ok(s)
}

fn hs(step: &'static str) -> impl Fn(WireError) -> ClientError {
    move |e| ClientError::Handshake(step, e.to_string())
}

/// Hello → Welcome → (Auth → AuthOk).
fn handshake(s: &mut TcpStream, p: &Peer) -> Result<(), ClientError> {
    let t = p.timeout;
    write_frame(
        s,
        &Frame::Hello {
            magic: protocol::MAGIC,
            version: protocol::VERSION,
        },
        t,
    )
    .map_err(hs("hello"))?;
    let nonce = match read_frame(s, t).map_err(hs("hello"))? {
        Frame::Welcome { auth: false, .. } => return Ok(()),
        Frame::Welcome {
            auth: true, nonce, ..
        } => nonce,
        Frame::Error(m) => return Err(ClientError::Refusal(m)),
        other => {
            return Err(ClientError::Handshake(
                "hello",
                format!("unexpected {:?}", other),
            ))
        }
    };
    let Some(token) = &p.token else {
        return Err(ClientError::Auth(
            "the server requires a token; pass --token-file".into(),
        ));
    };
    write_frame(
        s,
        &Frame::Auth {
            mac: protocol::auth_mac(token, &nonce),
        },
        t,
    )
    .map_err(hs("auth"))?;
    match read_frame(s, t) {
        Ok(Frame::AuthOk) => Ok(()),
        // The server says "authentication failed: wrong token"; our own
        // Display adds the first half, so keep only the reason.
        Ok(Frame::Error(m)) => Err(ClientError::Auth(format!(
            "{}; both ends need the same token",
            m.strip_prefix("authentication failed: ").unwrap_or(&m)
        ))),
        Ok(other) => Err(ClientError::Handshake(
            "auth",
            format!("unexpected {:?}", other),
        )),
        Err(e) => Err(ClientError::Auth(e.to_string())),
    }
}

/// Set up the test on a fresh control connection: returns it and the cookie.
fn setup_control(p: &Peer, setup: &Setup) -> Result<(TcpStream, [u8; COOKIE_LEN]), ClientError> {
    let mut c = connect(p)?;
    handshake(&mut c, p)?;
    write_frame(&mut c, &Frame::Setup(*setup), p.timeout).map_err(hs("setup"))?;
    match read_frame(&mut c, p.timeout).map_err(hs("setup"))? {
        Frame::Ready { cookie } => Ok((c, cookie)),
        Frame::Busy => Err(ClientError::Busy),
        Frame::Error(m) => Err(ClientError::Refusal(m)),
        other => Err(ClientError::Handshake(
            "setup",
            format!("unexpected {:?}", other),
        )),
    }
}

fn join(p: &Peer, cookie: [u8; COOKIE_LEN], index: u16) -> Result<TcpStream, ClientError> {
    let mut s = connect(p)?;
    handshake(&mut s, p)?;
    write_frame(&mut s, &Frame::Join { cookie, index }, p.timeout).map_err(hs("join"))?;
    match read_frame(&mut s, p.timeout).map_err(hs("join"))? {
        Frame::Joined => Ok(s),
        Frame::Error(m) => Err(ClientError::Refusal(m)),
        other => Err(ClientError::Handshake(
            "join",
            format!("unexpected {:?}", other),
        )),
    }
}

/// Bytes the leader has written and read so far in a running test, for
/// whoever watches it from another thread (`bwscope contend` counts a
/// flow's bytes on its own clock with them).
#[derive(Debug, Default)]
pub struct Progress {
    pub sent: AtomicU64,
    pub received: AtomicU64,
}

/// Run one test against the transponder. `stop` ends the sending early
/// (SIGINT); what was measured until then is still reported.
pub fn run_test(p: &Peer, setup: &Setup, stop: &AtomicBool) -> Result<Outcome, ClientError> {
    run_test_watched(p, setup, stop, &Progress::default())
}

/// [`run_test`], counting the leader's bytes into `progress` (fresh, at
/// zero) as they move.
pub fn run_test_watched(
    p: &Peer,
    setup: &Setup,
    stop: &AtomicBool,
    progress: &Progress,
) -> Result<Outcome, ClientError> {
    let (mut ctrl, cookie) = setup_control(p, setup)?;
    let mut streams = Vec::with_capacity(setup.streams as usize);
    for i in 0..setup.streams {
        streams.push(join(p, cookie, i)?);
    }
    match read_frame(&mut ctrl, p.timeout).map_err(hs("start"))? {
        Frame::Started => {}
        Frame::Error(m) => return Err(ClientError::Refusal(m)),
        other => {
            return Err(ClientError::Handshake(
                "start",
                format!("unexpected {:?}", other),
            ))
        }
    }
    let t0 = Instant::now();
    let data = data_phase(p, setup, streams, t0, stop, progress);
    // The server's report, or its reason for failing the test.
    let wait = if data.is_ok() {
        p.timeout
    } else {
        Duration::from_secs(2).min(p.timeout)
    };
    let report = read_report(&mut ctrl, wait, stop);
    let leader = data.map_err(|e| match &report {
        Ok(Frame::Error(m)) => ClientError::Test(format!("{} (server: {})", e, m)),
        _ => ClientError::Test(e.to_string()),
    })?;
    let server = match report {
        Ok(Frame::Report(r)) => r,
        Ok(Frame::Error(m)) => return Err(ClientError::Test(format!("server: {}", m))),
        Ok(other) => {
            return Err(ClientError::Test(format!(
                "unexpected {:?} instead of the report",
                other
            )))
        }
        Err(e) => {
            return Err(ClientError::Test(format!(
                "no report from the server: {}",
                e
            )))
        }
    };
    Ok(Outcome { server, ..leader })
}

/// How long the report is still waited for once a stop is asked: a
/// server answers a test cut short at once; one that does not is stopped
/// itself (a fleet's rank 0 under SIGSTOP) and never will.
const REPORT_GRACE: Duration = Duration::from_millis(500);

/// The server's report within `wait`, given up [`REPORT_GRACE`] after a
/// stop request (the control connection shut down under the read): a
/// fleet rank whose rank 0 fell silent waited out the whole `--timeout`
/// for the report of a rank 0 that was stopped, after its data phase
/// had already waited as long (issue 49, K9).
fn read_report(
    ctrl: &mut TcpStream,
    wait: Duration,
    stop: &AtomicBool,
) -> Result<Frame, WireError> {
    let Ok(sock) = ctrl.try_clone() else {
        return read_frame(ctrl, wait);
    };
    let done = AtomicBool::new(false);
    std::thread::scope(|sc| {
        sc.spawn(|| {
            let mut asked: Option<Instant> = None;
            while !done.load(Ordering::Acquire) {
                if stop.load(Ordering::Relaxed)
                    && asked.get_or_insert_with(Instant::now).elapsed() >= REPORT_GRACE
                {
                    let _ = sock.shutdown(std::net::Shutdown::Both);
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        let r = read_frame(ctrl, wait);
        done.store(true, Ordering::Release);
        r
    })
}

/// Move the bytes of one test on the leader's side.
fn data_phase(
    p: &Peer,
    setup: &Setup,
    streams: Vec<TcpStream>,
    t0: Instant,
    stop: &AtomicBool,
    progress: &Progress,
) -> Result<Outcome, FlowError> {
    let idle = p.timeout;
    let asked = Duration::from_millis(setup.time_ms as u64 + setup.omit_ms as u64);
    let by_time = setup.bytes == 0;
    let n = streams.len() as u64;
    let share = |i: usize| setup.bytes / n + u64::from((i as u64) < setup.bytes % n);
    let budget = |i: usize| Budget {
        until: by_time.then(|| t0 + asked),
        bytes: (!by_time).then(|| share(i)),
    };
    let interval = Duration::from_millis(setup.interval_ms as u64);
    let omit = Duration::from_millis(setup.omit_ms as u64);
    let sendbuf = if setup.direction.leader_sends() {
        flow::data_buffer(flow::piece_len(setup.chunk_bytes), 0x1eade7)
    } else {
        Vec::new()
    };
    // The leader never waits for bytes much past the asked duration.
    let limits = Limits {
        deadline: by_time.then(|| t0 + asked + idle),
        max_bytes: None,
    };
    let (sent, received) = (&progress.sent, &progress.received);
    let done = AtomicBool::new(false);
    let finished = Mutex::new(None);
    let stop_all = AtomicBool::new(false);
    let failures = flow::Failures::new(&streams, &stop_all);
    // SIGINT and a failing stream both stop the senders.
    let stopper = AtomicBool::new(false);
    let meter_on = setup.mode == Mode::Stream && setup.direction.leader_receives();
    let (points, batches, rounds) = std::thread::scope(|sc| {
        let mut handles = Vec::new();
        let mut rr = Vec::new();
        let meter =
            meter_on.then(|| sc.spawn(|| flow::meter(received, t0, interval, &done, &finished)));
        let watcher = sc.spawn(|| watch(&done, &[stop, &stop_all], &stopper));
        for (i, st) in streams.into_iter().enumerate() {
            let (sendbuf, failures, stopper) = (&sendbuf, &failures, &stopper);
            match setup.mode {
                Mode::Rr => rr.push(sc.spawn(move || {
                    let shared = Shared {
                        sent,
                        received,
                        failures,
                        stopper,
                    };
                    rr_stream(st, setup, sendbuf, budget(i), t0, idle, &shared)
                })),
                Mode::Stream => handles.extend(flow::stream_threads(
                    sc,
                    st,
                    setup.direction.leader_sends().then(|| flow::SendSide {
                        buf: sendbuf,
                        budget: budget(i),
                        sent,
                        stop: stopper,
                    }),
                    setup.direction.leader_receives().then_some(flow::RecvSide {
                        received,
                        limits,
                        finished: &finished,
                    }),
                    idle,
                    failures,
                )),
            }
        }
        for h in handles {
            let _ = h.join();
        }
        let (batches, rounds) = join_rr(rr, omit);
        done.store(true, Ordering::Release);
        let _ = watcher.join();
        (meter.map(|m| m.join().unwrap_or_default()), batches, rounds)
    });
    if let Some(e) = failures.into_first() {
        return Err(e);
    }
    let seconds = t0.elapsed().as_secs_f64();
    Ok(Outcome {
        setup: *setup,
        sent: sent.load(Ordering::Relaxed),
        received: received.load(Ordering::Relaxed),
        rounds,
        batches,
        recv_intervals: points.map_or_else(Vec::new, |p| flow::window(&p, omit, interval)),
        seconds,
        server: Report::default(),
    })
}

/// What every stream thread of the leader adds to and stops on.
struct Shared<'a, 'f> {
    sent: &'a AtomicU64,
    received: &'a AtomicU64,
    failures: &'a flow::Failures<'f>,
    stopper: &'a AtomicBool,
}

/// One request/answer stream of the leader: its rounds are added to the
/// shared totals, and a failure stops the other streams.
fn rr_stream(
    mut st: TcpStream,
    setup: &Setup,
    sendbuf: &[u8],
    budget: Budget,
    t0: Instant,
    idle: Duration,
    sh: &Shared,
) -> RrResult {
    let mut rb = vec![0u8; (setup.chunk_bytes as usize).clamp(1, flow::RECV_BUF)];
    let batch = Duration::from_millis(setup.interval_ms as u64);
    let r = flow::rr_leader(
        &mut st,
        setup.direction,
        setup.chunk_bytes,
        sendbuf,
        &mut rb,
        t0,
        budget,
        batch,
        sh.stopper,
        idle,
    );
    match r {
        Ok(o) => {
            sh.sent.fetch_add(o.sent, Ordering::Relaxed);
            sh.received.fetch_add(o.received, Ordering::Relaxed);
            Some((o.batches, o.rounds))
        }
        Err(e) => {
            sh.failures.fail(e);
            None
        }
    }
}

/// Until `done`, raise `stopper` once any of `causes` is set: the user's
/// stop (SIGINT) or a failed stream. The senders poll only `stopper`.
fn watch(done: &AtomicBool, causes: &[&AtomicBool], stopper: &AtomicBool) {
    while !done.load(Ordering::Acquire) {
        if causes.iter().any(|c| c.load(Ordering::Relaxed)) {
            stopper.store(true, Ordering::Relaxed);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// What one request/answer stream gives back: its batches and rounds, or
/// nothing when it failed (its error is in the failures).
type RrResult = Option<(Vec<Batch>, u64)>;

/// The request/answer streams' batches (those of the omitted start-up
/// dropped) and their rounds in all; a stream that failed adds none.
fn join_rr(
    rr: Vec<std::thread::ScopedJoinHandle<'_, RrResult>>,
    omit: Duration,
) -> (Vec<Vec<Batch>>, u64) {
    let mut batches = Vec::new();
    let mut rounds = 0;
    for h in rr {
        if let Ok(Some((mut b, r))) = h.join() {
            b.retain(|x| x.start + Duration::from_micros(500) >= omit);
            batches.push(b);
            rounds += r;
        }
    }
    (batches, rounds)
}
