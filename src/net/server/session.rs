//! One test session on the transponder's side (`test` is the protocol's
//! word for one measurement): validate the leader's setup, take
//! the single test slot, gather the data streams that join it, move the
//! bytes within the server's limits, and report.

use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

use super::{wire, Outcome, Pending, ServerConfig, Shared, SlotGuard};
use crate::net::flow::{self, Budget, FlowError, Limits};
use crate::net::protocol::{
    self, Frame, Mode, Report, Setup, COOKIE_LEN, MAX_CHUNK, MAX_INTERVALS, MAX_STREAMS,
};
use crate::net::write_frame;

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
    // Streams that could not be accepted would only time out in the join.
    if let Some((room, limit)) = super::stream_room(1) {
        if u64::from(st.streams) > room {
            return Err(format!(
                "setup: {} streams; this server can take {room} now, under its open-file limit (ulimit -n {limit}): ask for fewer --streams, or raise the limit where the server runs",
                st.streams
            ));
        }
    }
    Ok(())
}

/// A data connection joining the pending test.
pub(super) fn join(
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
pub(super) fn control(
    s: &mut TcpStream,
    sh: &Shared,
    peer: &str,
    setup: Setup,
) -> Result<Outcome, String> {
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
                let short = super::stream_room(1)
                    .filter(|(room, _)| *room == 0)
                    .map_or(String::new(), |(_, limit)| {
                        format!(" (the server is out of open files: ulimit -n {limit})")
                    });
                return Err(format!(
                    "only {} of {} streams joined within {:?}{short}",
                    have,
                    streams.len(),
                    t
                ));
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
    let received = AtomicU64::new(0);
    let sent = AtomicU64::new(0);
    let rounds = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let done = AtomicBool::new(false);
    let finished = Mutex::new(None);
    let failures = flow::Failures::new(&streams, &stop);
    let meter_on = setup.mode == Mode::Stream && setup.direction.leader_sends();
    let points = std::thread::scope(|sc| {
        let mut receivers = Vec::new();
        let meter =
            meter_on.then(|| sc.spawn(|| flow::meter(&received, t0, interval, &done, &finished)));
        for (i, st) in streams.into_iter().enumerate() {
            let (sendbuf, received, sent, rounds, stop, failures) =
                (&sendbuf, &received, &sent, &rounds, &stop, &failures);
            match setup.mode {
                Mode::Rr => receivers.push(sc.spawn(move || {
                    let totals = [received, sent, rounds];
                    rr_stream(st, setup, sendbuf, limits, idle, totals, failures)
                })),
                // The transponder sends what the leader receives.
                Mode::Stream => receivers.extend(flow::stream_threads(
                    sc,
                    st,
                    setup.direction.leader_receives().then(|| flow::SendSide {
                        buf: sendbuf,
                        budget: budget(i),
                        sent,
                        stop,
                    }),
                    setup.direction.leader_sends().then_some(flow::RecvSide {
                        received,
                        limits,
                        finished: &finished,
                    }),
                    idle,
                    failures,
                )),
            }
        }
        for h in receivers {
            let _ = h.join();
        }
        done.store(true, Ordering::Release);
        meter.map(|m| m.join().unwrap_or_default())
    });
    if let Some(e) = failures.into_first() {
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

/// One request/answer stream of the transponder: its bytes received, sent
/// and rounds are added to `totals` (in that order); a failure stops the
/// other streams.
fn rr_stream(
    mut st: TcpStream,
    setup: &Setup,
    sendbuf: &[u8],
    limits: Limits,
    idle: Duration,
    totals: [&AtomicU64; 3],
    failures: &flow::Failures,
) {
    let mut rb = vec![0u8; (setup.chunk_bytes as usize).clamp(1, flow::RECV_BUF)];
    let r = flow::rr_server(
        &mut st,
        setup.direction,
        setup.chunk_bytes,
        sendbuf,
        &mut rb,
        limits,
        idle,
    );
    match r {
        Ok((r, s, k)) => {
            for (total, n) in totals.iter().zip([r, s, k]) {
                total.fetch_add(n, Ordering::Relaxed);
            }
        }
        Err(e) => failures.fail(e),
    }
}
