//! The loops that move bulk bytes, used by both ends, and the receive meter.
//!
//! Each loop owns one connection and reuses one buffer: nothing is
//! allocated per chunk. Bytes are counted from what `write`/`read` returned,
//! into a shared counter the meter samples. Senders stop on a deadline or a
//! byte budget and then shut down their write half, so the receiver sees a
//! clean EOF at the end of the flow.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::protocol::{Interval, Way};
use super::read_exact_or_eof;

/// Largest single buffer a flow uses; larger chunks go out in pieces.
pub const MAX_PIECE: usize = 16 << 20;
/// Receive buffer size: big enough that a fast loopback read does not
/// become a syscall-per-64-KiB loop.
pub const RECV_BUF: usize = 1 << 20;

/// A buffer of pseudo-random bytes (real data, never zero pages).
pub fn data_buffer(len: usize, seed: u64) -> Vec<u8> {
    let mut g = crate::util::rng::XorShift64::new(seed);
    let mut v = vec![0u8; len];
    for c in v.chunks_mut(8) {
        let x = g.next_u64().to_le_bytes();
        c.copy_from_slice(&x[..c.len()]);
    }
    v
}

/// Size of the sending buffer for a chunk size.
pub fn piece_len(chunk: u64) -> usize {
    (chunk as usize).clamp(1, MAX_PIECE)
}

/// When a sender stops.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Stop writing at this instant.
    pub until: Option<Instant>,
    /// Stop after this many bytes on this connection.
    pub bytes: Option<u64>,
}

/// What a receiver refuses.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Give up (error) when still receiving at this instant.
    pub deadline: Option<Instant>,
    /// Give up when the shared counter passes this.
    pub max_bytes: Option<u64>,
}

/// Why a flow ended early.
#[derive(Debug, thiserror::Error)]
pub enum FlowError {
    #[error("peer stalled: no data for {0:?}")]
    Stalled(Duration),
    #[error("peer vanished in the middle of a chunk")]
    Vanished,
    #[error("peer closed the connection")]
    Closed,
    #[error("test exceeded the server's limit of {0}")]
    Limit(String),
    #[error("{0}")]
    Io(io::Error),
}

impl FlowError {
    fn io(e: io::Error, idle: Duration) -> FlowError {
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => FlowError::Stalled(idle),
            io::ErrorKind::UnexpectedEof => FlowError::Vanished,
            io::ErrorKind::ConnectionReset
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::ConnectionAborted => FlowError::Closed,
            _ => FlowError::Io(e),
        }
    }
}

/// The first failure among a test's streams. Failing stops them all: it
/// raises `stop` and shuts every socket down, so no stream waits on a peer
/// that is gone; the first error is the test's.
pub struct Failures<'a> {
    stop: &'a AtomicBool,
    sockets: Vec<TcpStream>,
    first: Mutex<Option<FlowError>>,
}

impl<'a> Failures<'a> {
    /// For the test on `streams`, stopping through `stop`.
    pub fn new(streams: &[TcpStream], stop: &'a AtomicBool) -> Failures<'a> {
        Failures {
            stop,
            sockets: streams.iter().filter_map(|s| s.try_clone().ok()).collect(),
            first: Mutex::new(None),
        }
    }

    pub fn fail(&self, e: FlowError) {
        self.stop.store(true, Ordering::Relaxed);
        for s in &self.sockets {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
        if let Ok(mut f) = self.first.lock() {
            f.get_or_insert(e);
        }
    }

    /// The first failure, if any stream failed.
    pub fn into_first(self) -> Option<FlowError> {
        self.first.into_inner().ok().flatten()
    }
}

/// The sending half of a stream-mode connection.
#[derive(Clone, Copy)]
pub struct SendSide<'a> {
    pub buf: &'a [u8],
    pub budget: Budget,
    pub sent: &'a AtomicU64,
    pub stop: &'a AtomicBool,
}

/// The receiving half of a stream-mode connection.
#[derive(Clone, Copy)]
pub struct RecvSide<'a> {
    pub received: &'a AtomicU64,
    pub limits: Limits,
    pub finished: &'a Mutex<Option<Instant>>,
}

/// The threads of one stream-mode connection, on either end: a sender
/// when this end sends, a receiver when it receives (both for `bidir`).
/// A connection that cannot be split in two fails the test.
pub fn stream_threads<'scope, 'env>(
    sc: &'scope std::thread::Scope<'scope, 'env>,
    st: TcpStream,
    send: Option<SendSide<'env>>,
    recv: Option<RecvSide<'env>>,
    idle: Duration,
    failures: &'env Failures<'env>,
) -> Vec<std::thread::ScopedJoinHandle<'scope, ()>> {
    let mut out = Vec::new();
    if let Some(s) = send {
        match st.try_clone() {
            Ok(mut w) => out.push(sc.spawn(move || {
                if let Err(e) = send_stream(&mut w, s.buf, s.budget, s.sent, s.stop, idle) {
                    failures.fail(e);
                }
            })),
            Err(e) => {
                failures.fail(FlowError::Io(e));
                return out;
            }
        }
    }
    if let Some(r) = recv {
        out.push(sc.spawn(move || {
            let mut st = st;
            let mut rb = vec![0u8; RECV_BUF];
            if let Err(e) = recv_stream(&mut st, &mut rb, r.received, r.limits, idle, r.finished) {
                failures.fail(e);
            }
        }));
    }
    out
}

/// Write `buf` over and over until the budget or `stop`, then shut down
/// the write half. Returns the bytes written.
pub fn send_stream(
    s: &mut TcpStream,
    buf: &[u8],
    budget: Budget,
    counter: &AtomicU64,
    stop: &AtomicBool,
    idle: Duration,
) -> Result<u64, FlowError> {
    s.set_write_timeout(Some(idle)).map_err(FlowError::Io)?;
    let mut sent = 0u64;
    loop {
        if stop.load(Ordering::Relaxed) || budget.until.is_some_and(|u| Instant::now() >= u) {
            break;
        }
        let mut n = buf.len();
        if let Some(b) = budget.bytes {
            if sent >= b {
                break;
            }
            n = n.min((b - sent) as usize);
        }
        match s.write(&buf[..n]) {
            Ok(0) => return Err(FlowError::Closed),
            Ok(w) => {
                sent += w as u64;
                counter.fetch_add(w as u64, Ordering::Relaxed);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(FlowError::io(e, idle)),
        }
    }
    let _ = s.shutdown(std::net::Shutdown::Write);
    Ok(sent)
}

/// Read until EOF, counting into `counter`; `finished` gets the time of
/// the last byte (the latest over all receivers).
pub fn recv_stream(
    s: &mut TcpStream,
    buf: &mut [u8],
    counter: &AtomicU64,
    limits: Limits,
    idle: Duration,
    finished: &Mutex<Option<Instant>>,
) -> Result<u64, FlowError> {
    s.set_read_timeout(Some(idle)).map_err(FlowError::Io)?;
    let mut got = 0u64;
    loop {
        match s.read(buf) {
            Ok(0) => break,
            Ok(n) => {
                got += n as u64;
                let total = counter.fetch_add(n as u64, Ordering::Relaxed) + n as u64;
                if let Some(m) = limits.max_bytes {
                    if total > m {
                        return Err(FlowError::Limit(format!("{} bytes", m)));
                    }
                }
                if let Some(d) = limits.deadline {
                    if Instant::now() > d {
                        return Err(FlowError::Limit("test duration".into()));
                    }
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(FlowError::io(e, idle)),
        }
    }
    mark_finished(finished);
    Ok(got)
}

fn mark_finished(finished: &Mutex<Option<Instant>>) {
    let now = Instant::now();
    if let Ok(mut f) = finished.lock() {
        if f.is_none_or(|t| t < now) {
            *f = Some(now);
        }
    }
}

/// Write `len` bytes taken from `buf` (repeated as needed).
fn write_len(s: &mut TcpStream, buf: &[u8], len: u64) -> io::Result<()> {
    let mut left = len;
    while left > 0 {
        let n = (left as usize).min(buf.len());
        s.write_all(&buf[..n])?;
        left -= n as u64;
    }
    Ok(())
}

/// Read exactly `len` bytes into `buf` (reused). `Ok(false)` on a clean
/// EOF before the first byte.
fn read_len(s: &mut TcpStream, buf: &mut [u8], len: u64) -> io::Result<bool> {
    let mut left = len;
    let mut first = true;
    while left > 0 {
        let n = (left as usize).min(buf.len());
        if !read_exact_or_eof(s, &mut buf[..n])? {
            if first {
                return Ok(false);
            }
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        first = false;
        left -= n as u64;
    }
    Ok(true)
}

/// One request/answer batch the leader timed.
#[derive(Debug, Clone, Copy)]
pub struct Batch {
    /// When the batch started, from the common start.
    pub start: Duration,
    pub seconds: f64,
    /// Payload bytes that crossed the wire in the batch (both ways for bidir).
    pub bytes: u64,
    pub rounds: u64,
}

/// The leader's counts of one request/answer connection.
#[derive(Debug, Clone, Default)]
pub struct RrOutcome {
    pub batches: Vec<Batch>,
    pub sent: u64,
    pub received: u64,
    pub rounds: u64,
}

/// The leader's request/answer loop: per round send a chunk and wait for
/// the 1-byte answer (send), ask with 1 byte and read a chunk (recv), or
/// send a chunk and read it back (bidir). Rounds are grouped into batches
/// of at least `batch` so each timed sample dwarfs the clock's resolution.
#[allow(clippy::too_many_arguments)]
pub fn rr_leader(
    s: &mut TcpStream,
    dir: Way,
    chunk: u64,
    sendbuf: &[u8],
    recvbuf: &mut [u8],
    t0: Instant,
    budget: Budget,
    batch: Duration,
    stop: &AtomicBool,
    idle: Duration,
) -> Result<RrOutcome, FlowError> {
    s.set_read_timeout(Some(idle)).map_err(FlowError::Io)?;
    s.set_write_timeout(Some(idle)).map_err(FlowError::Io)?;
    let mut out = RrOutcome::default();
    let per_round = match dir {
        Way::Bidir => 2 * chunk,
        _ => chunk,
    };
    let mut one = [0u8; 1];
    'outer: loop {
        let b0 = Instant::now();
        let mut rounds = 0u64;
        loop {
            if stop.load(Ordering::Relaxed)
                || budget.until.is_some_and(|u| Instant::now() >= u)
                || budget
                    .bytes
                    .is_some_and(|b| out.sent.max(out.received) >= b)
            {
                if rounds > 0 {
                    push_batch(&mut out, t0, b0, rounds, per_round);
                }
                break 'outer;
            }
            let io = (|| -> io::Result<()> {
                match dir {
                    Way::Send => {
                        write_len(s, sendbuf, chunk)?;
                        if !read_exact_or_eof(s, &mut one)? {
                            return Err(io::ErrorKind::ConnectionReset.into());
                        }
                    }
                    Way::Recv => {
                        s.write_all(&one)?;
                        if !read_len(s, recvbuf, chunk)? {
                            return Err(io::ErrorKind::ConnectionReset.into());
                        }
                    }
                    Way::Bidir => {
                        write_len(s, sendbuf, chunk)?;
                        if !read_len(s, recvbuf, chunk)? {
                            return Err(io::ErrorKind::ConnectionReset.into());
                        }
                    }
                }
                Ok(())
            })();
            io.map_err(|e| FlowError::io(e, idle))?;
            rounds += 1;
            match dir {
                Way::Send => {
                    out.sent += chunk;
                    out.received += 1;
                }
                Way::Recv => {
                    out.sent += 1;
                    out.received += chunk;
                }
                Way::Bidir => {
                    out.sent += chunk;
                    out.received += chunk;
                }
            }
            out.rounds += 1;
            if b0.elapsed() >= batch {
                push_batch(&mut out, t0, b0, rounds, per_round);
                break;
            }
        }
    }
    let _ = s.shutdown(std::net::Shutdown::Write);
    Ok(out)
}

fn push_batch(out: &mut RrOutcome, t0: Instant, b0: Instant, rounds: u64, per_round: u64) {
    out.batches.push(Batch {
        start: b0.duration_since(t0),
        seconds: b0.elapsed().as_secs_f64(),
        bytes: rounds * per_round,
        rounds,
    });
}

/// The transponder's side of request/answer: answer every round until the
/// leader's clean EOF. Returns (received, sent, rounds).
pub fn rr_server(
    s: &mut TcpStream,
    dir: Way,
    chunk: u64,
    sendbuf: &[u8],
    recvbuf: &mut [u8],
    limits: Limits,
    idle: Duration,
) -> Result<(u64, u64, u64), FlowError> {
    s.set_read_timeout(Some(idle)).map_err(FlowError::Io)?;
    s.set_write_timeout(Some(idle)).map_err(FlowError::Io)?;
    let (mut received, mut sent, mut rounds) = (0u64, 0u64, 0u64);
    let mut one = [1u8; 1];
    loop {
        if limits.deadline.is_some_and(|d| Instant::now() > d) {
            return Err(FlowError::Limit("test duration".into()));
        }
        if limits.max_bytes.is_some_and(|m| received + sent > m) {
            return Err(FlowError::Limit("bytes per test".into()));
        }
        let step = (|| -> io::Result<bool> {
            match dir {
                Way::Send => {
                    if !read_len(s, recvbuf, chunk)? {
                        return Ok(false);
                    }
                    received += chunk;
                    s.write_all(&one)?;
                    sent += 1;
                }
                Way::Recv => {
                    if !read_exact_or_eof(s, &mut one)? {
                        return Ok(false);
                    }
                    received += 1;
                    write_len(s, sendbuf, chunk)?;
                    sent += chunk;
                }
                Way::Bidir => {
                    if !read_len(s, recvbuf, chunk)? {
                        return Ok(false);
                    }
                    received += chunk;
                    write_len(s, sendbuf, chunk)?;
                    sent += chunk;
                }
            }
            Ok(true)
        })();
        match step {
            Ok(true) => rounds += 1,
            Ok(false) => break,
            Err(e) => return Err(FlowError::io(e, idle)),
        }
    }
    Ok((received, sent, rounds))
}

/// Samples a byte counter at a fixed interval until `done`, then adds a
/// last point at the moment the last byte arrived.
pub fn meter(
    counter: &AtomicU64,
    t0: Instant,
    interval: Duration,
    done: &AtomicBool,
    finished: &Mutex<Option<Instant>>,
) -> Vec<(Duration, u64)> {
    let mut points = vec![(Duration::ZERO, 0u64)];
    let mut next = t0 + interval;
    loop {
        let now = Instant::now();
        if done.load(Ordering::Acquire) {
            break;
        }
        if now >= next {
            points.push((now.duration_since(t0), counter.load(Ordering::Relaxed)));
            next += interval;
            continue;
        }
        // Wake at the tick (or every 20 ms to notice `done`): a few
        // wake-ups per interval, nothing per byte.
        std::thread::sleep((next - now).min(Duration::from_millis(20)));
    }
    let end = finished
        .lock()
        .ok()
        .and_then(|f| *f)
        .unwrap_or_else(Instant::now);
    let end = end.saturating_duration_since(t0);
    // Points taken after the last byte add nothing; drop them.
    points.retain(|p| p.0 <= end);
    points.push((end, counter.load(Ordering::Relaxed)));
    points
}

/// Intervals from meter points, keeping those that start at or after the
/// omit window; a final partial interval shorter than a fifth of the
/// nominal one is dropped (too short to time well).
pub fn window(points: &[(Duration, u64)], omit: Duration, interval: Duration) -> Vec<Interval> {
    let mut out = Vec::new();
    for w in points.windows(2) {
        let (t0, b0) = w[0];
        let (t1, b1) = w[1];
        if t0 + Duration::from_micros(500) < omit || t1 <= t0 {
            continue;
        }
        let d = t1 - t0;
        if d < interval / 5 {
            continue;
        }
        out.push(Interval {
            nanos: d.as_nanos() as u64,
            bytes: b1.saturating_sub(b0),
        });
    }
    out
}

/// The rate over intervals, bytes per second.
pub fn interval_rate(iv: &[Interval]) -> Option<f64> {
    let ns: u64 = iv.iter().map(|i| i.nanos).sum();
    let b: u64 = iv.iter().map(|i| i.bytes).sum();
    (ns > 0).then(|| b as f64 / (ns as f64 / 1e9))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_skips_omit_and_short_tail() {
        let ms = Duration::from_millis;
        let pts = vec![
            (ms(0), 0),
            (ms(100), 10),
            (ms(200), 30),
            (ms(300), 60),
            (ms(310), 61),
        ];
        let w = window(&pts, ms(100), ms(100));
        assert_eq!(w.len(), 2);
        assert_eq!(w[0].bytes, 20);
        assert_eq!(w[1].bytes, 30);
        let r = interval_rate(&w).unwrap();
        assert!((r - 250.0).abs() < 1e-6, "{}", r);
    }

    #[test]
    fn data_buffer_is_not_zero() {
        let b = data_buffer(1000, 1);
        assert_eq!(b.len(), 1000);
        assert!(b.iter().filter(|&&x| x == 0).count() < 50);
    }
}
