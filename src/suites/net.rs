//! The network suite: `bwscope net run HOST[:PORT]` (the leader), over
//! `crate::net`; the transponder (`net serve`) is a command of the app.
//!
//! The leader runs one test per chunk size and turns each into records:
//! one per flow (a bidirectional stream test has a `send` and a `recv`
//! flow). The headline rate is receiver-side: bytes the receiving end read
//! after the omit window, over its own clock, so a sender filling socket
//! buffers is never mistaken for throughput. In request/answer mode the
//! leader times each round from the start of the send to the answer (the
//! seed's definition), so small chunks measure latency and large ones
//! bandwidth. Both ends' counts are kept in the record.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::time::Duration;

use super::estimate::Estimate;
use super::{Ctx, Descriptor, Flow, Suite};
use crate::error::UserError;
use crate::model::detail::{NetDetail, PeerView};
use crate::model::{limits, Warning};
use crate::model::{Detail, Record, Sample, Status, SuiteId};
use crate::net::client::{self, ClientError, Outcome, Peer};
use crate::net::flow::{interval_rate, Batch};
use crate::net::protocol::{
    Direction, Interval, Mode, Setup, DEFAULT_PORT, MAX_CHUNK, MAX_STREAMS,
};
use crate::stats;
use crate::util::units::{self, format_bytes};

/// `v` seconds checked against `min..=max`, naming `flag`.
pub fn secs(flag: &'static str, v: f64, min: f64, max: f64) -> Result<Duration, UserError> {
    if !(v.is_finite() && v >= min && v <= max) {
        return Err(UserError::flag(
            flag,
            format!("{} is out of range: give {} to {} seconds", v, min, max),
        ));
    }
    Ok(Duration::from_secs_f64(v))
}

/// What a leader run is asked for.
#[derive(Debug, Clone)]
pub struct NetOptions {
    /// The transponder: HOST, HOST:PORT, IP or [IPv6]:PORT.
    pub host: String,
    pub port: Option<u16>,
    pub mode: Mode,
    pub direction: Direction,
    pub streams: u32,
    pub chunks: Option<Vec<u64>>,
    pub time: Option<f64>,
    pub bytes: Option<u64>,
    pub omit: Option<f64>,
    pub interval_ms: u32,
    pub token_file: Option<String>,
    pub timeout: f64,
}

/// Resolved options of a leader run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct NetPlan {
    pub host: String,
    pub peer: SocketAddr,
    pub mode: Mode,
    pub direction: Direction,
    pub streams: u16,
    pub chunks: Vec<u64>,
    pub time_seconds: Option<f64>,
    pub bytes: Option<u64>,
    pub omit_seconds: f64,
    pub interval_ms: u32,
    pub timeout_seconds: f64,
    pub auth: bool,
}

/// Resolve `HOST[:PORT]` (IPv6 as `[::1]:P` or bare `::1`).
pub(crate) fn resolve_peer(host: &str, port: Option<u16>) -> Result<SocketAddr, UserError> {
    let port = port.unwrap_or(DEFAULT_PORT);
    if let Ok(sa) = host.parse::<SocketAddr>() {
        return Ok(sa);
    }
    if let Ok(ip) = host
        .trim_matches(|c| c == '[' || c == ']')
        .parse::<IpAddr>()
    {
        return Ok(SocketAddr::new(ip, port));
    }
    let (name, port) = match host.rsplit_once(':') {
        Some((h, p)) => (
            h,
            p.parse::<u16>().map_err(|_| {
                UserError::flag(
                    "HOST[:PORT]",
                    format!("'{}' is not a port number in '{}'", p, host),
                )
            })?,
        ),
        None => (host, port),
    };
    if name.is_empty() {
        return Err(UserError::flag(
            "HOST[:PORT]",
            "the host is empty: give a name or an address",
        ));
    }
    (name, port)
        .to_socket_addrs()
        .ok()
        .and_then(|mut it| it.next())
        .ok_or_else(|| {
            UserError::flag(
                "HOST[:PORT]",
                format!(
                    "cannot resolve '{}': check the name or give an IP address",
                    name
                ),
            )
        })
}

pub fn plan(a: &NetOptions) -> Result<NetSuite, UserError> {
    if a.streams == 0 {
        return Err(UserError::flag("--streams", "must be at least 1"));
    }
    if a.streams > MAX_STREAMS as u32 {
        return Err(UserError::flag(
            "--streams",
            format!(
                "{} is above the protocol maximum of {}",
                a.streams, MAX_STREAMS
            ),
        ));
    }
    let chunks = match &a.chunks {
        Some(c) if c.is_empty() => return Err(UserError::flag("--chunk", "the list is empty")),
        Some(c) => c.clone(),
        None => match a.mode {
            Mode::Rr => units::geometric(1 << 10, 64 << 20, 4.0),
            Mode::Stream => vec![128 << 10],
        },
    };
    if let Some(&big) = chunks.iter().find(|&&c| c > MAX_CHUNK) {
        return Err(UserError::flag(
            "--chunk",
            format!(
                "{} is above the protocol maximum of {}: use smaller chunks",
                format_bytes(big),
                format_bytes(MAX_CHUNK)
            ),
        ));
    }
    let bytes = a.bytes;
    let time = match (a.time, bytes) {
        (Some(t), _) => Some(secs("--time", t, 0.05, 3_600.0)?.as_secs_f64()),
        (None, Some(_)) => None,
        (None, None) => Some(match a.mode {
            Mode::Rr => 1.0,
            Mode::Stream => 5.0,
        }),
    };
    let omit = match a.omit {
        Some(o) => secs("--omit", o, 0.0, 600.0)?.as_secs_f64(),
        None if bytes.is_some() => 0.0,
        None => match a.mode {
            Mode::Rr => 0.2,
            Mode::Stream => 1.0,
        },
    };
    if !(10..=10_000).contains(&a.interval_ms) {
        return Err(UserError::flag("--interval-ms", "must be 10 to 10000"));
    }
    let timeout = secs("--timeout", a.timeout, 0.1, 3_600.0)?.as_secs_f64();
    let peer = resolve_peer(&a.host, a.port)?;
    let token = a
        .token_file
        .as_deref()
        .map(crate::net::token::read)
        .transpose()?;
    let plan = NetPlan {
        host: a.host.clone(),
        peer,
        mode: a.mode,
        direction: a.direction,
        streams: a.streams as u16,
        chunks,
        time_seconds: time,
        bytes,
        omit_seconds: omit,
        interval_ms: a.interval_ms,
        timeout_seconds: timeout,
        auth: a.token_file.is_some(),
    };
    Ok(NetSuite { plan, token })
}

impl NetPlan {
    pub fn setup(&self, chunk: u64, last: bool) -> Setup {
        Setup {
            mode: self.mode,
            direction: self.direction,
            streams: self.streams,
            chunk_bytes: chunk,
            time_ms: self.time_seconds.map_or(0, |t| (t * 1000.0).round() as u32),
            omit_ms: (self.omit_seconds * 1000.0).round() as u32,
            bytes: self.bytes.unwrap_or(0),
            interval_ms: self.interval_ms,
            last,
        }
    }
}

/// The error that ends a leader run, naming the server where the client's
/// own message does not (a server lost between two points reads "the peer
/// closed the connection": the run's `incomplete_reason` must say which).
fn user_error(e: ClientError, peer: std::net::SocketAddr) -> UserError {
    let named = match &e {
        ClientError::Refused(_)
        | ClientError::Unreachable(..)
        | ClientError::ConnectTimeout(..)
        | ClientError::Connect(..) => e.to_string(),
        _ => format!("{peer}: {e}"),
    };
    match e {
        ClientError::Auth(_) => UserError::flag("--token-file", named),
        _ => UserError::flag("HOST[:PORT]", named),
    }
}

/// A planned leader run and its token (never stored in the run).
pub struct NetSuite {
    pub plan: NetPlan,
    token: Option<Vec<u8>>,
}

pub const DESCRIPTOR: Descriptor = Descriptor {
    id: SuiteId::Net,
    about:
        "network bandwidth over TCP between a leader (`net run`) and a transponder (`net serve`)",
    reads_clock: false,
    quick: None,
    key: None,
};

/// How long the plan will take (see `suites::estimate` for the rule).
fn estimate(p: &NetPlan) -> Estimate {
    let per_point = p.time_seconds.unwrap_or(0.0) + p.omit_seconds;
    Estimate {
        seconds: p.chunks.len() as f64 * per_point,
        rule: format!(
            "{} points × ({} s + {} s omitted){}",
            p.chunks.len(),
            p.time_seconds.unwrap_or(0.0),
            p.omit_seconds,
            if p.bytes.is_some() {
                ", --bytes points not counted"
            } else {
                ""
            }
        ),
    }
}

impl Suite for NetSuite {
    fn id(&self) -> SuiteId {
        SuiteId::Net
    }

    fn estimate(&self) -> Estimate {
        estimate(&self.plan)
    }

    fn options(&self) -> serde_json::Value {
        serde_json::to_value(&self.plan).expect("plain data")
    }

    /// One test per chunk size. A failure to set up the test (refused,
    /// unauthenticated, busy) ends the run with a user error after the
    /// records already measured; a failure inside one test is an error
    /// record and the sweep goes on.
    fn run(&self, cx: &mut Ctx) -> anyhow::Result<Flow> {
        let plan = &self.plan;
        let peer = Peer {
            addr: plan.peer,
            token: self.token.clone(),
            timeout: Duration::from_secs_f64(plan.timeout_seconds),
        };
        cx.plan_steps(plan.chunks.len() as u64);
        for (i, &chunk) in plan.chunks.iter().enumerate() {
            if cx.stopped() {
                return Ok(Flow::Stopped);
            }
            cx.step(&format!("{} {}", plan.mode.name(), format_bytes(chunk)));
            let setup = plan.setup(chunk, i + 1 == plan.chunks.len());
            match client::run_test(&peer, &setup, cx.stop) {
                Ok(o) => {
                    for r in records(&o, &plan.peer.to_string()) {
                        cx.push(r)?;
                    }
                }
                Err(e) if e.is_setup() => return Err(user_error(e, plan.peer).into()),
                Err(e) => {
                    let mut r =
                        Record::error(SuiteId::Net, &kernel_name(&setup, None), e.to_string());
                    r.size_bytes = Some(chunk);
                    r.threads = setup.streams as u32;
                    r.detail = case_detail(&setup, None, &plan.peer.to_string()).into();
                    cx.push(r)?;
                }
            }
        }
        Ok(if cx.stopped() {
            Flow::Stopped
        } else {
            Flow::Done
        })
    }
}

/// `tcp_<mode>_<direction>[_<flow>]`: the flow is named only for
/// bidirectional streaming, which yields two records per point.
pub fn kernel_name(s: &Setup, flow: Option<&str>) -> String {
    let mut k = format!("tcp_{}_{}", s.mode.name(), s.direction.name());
    if let (Some(f), Mode::Stream, Direction::Bidir) = (flow, s.mode, s.direction) {
        k.push('_');
        k.push_str(f);
    }
    k
}

/// What a record of `s` says of its point, before any figure.
fn case_detail(s: &Setup, flow: Option<&str>, peer: &str) -> NetDetail {
    NetDetail {
        mode: Some(s.mode.name().into()),
        direction: Some(s.direction.name().into()),
        flow: flow.map(String::from).into(),
        streams: Some(s.streams as u64),
        chunk_bytes: Some(s.chunk_bytes),
        peer: Some(peer.into()),
        time_seconds: (s.time_ms > 0).then(|| s.time_ms as f64 / 1000.0).into(),
        bytes_asked: (s.bytes > 0).then_some(s.bytes).into(),
        omit_seconds: Some(s.omit_ms as f64 / 1000.0),
        ..NetDetail::default()
    }
}

/// The net detail of a record this suite made.
fn detail_of(r: &mut Record) -> &mut NetDetail {
    match &mut r.detail {
        Detail::Net(d) => d,
        other => unreachable!("a net record with a {} detail", other.suite()),
    }
}

/// The records of one test: one per flow.
pub fn records(o: &Outcome, peer: &str) -> Vec<Record> {
    let s = &o.setup;
    let rr = s.mode == Mode::Rr;
    let leader = PeerView {
        sent_bytes: o.sent,
        received_bytes: o.received,
        rounds: rr.then_some(o.rounds),
        seconds: o.seconds,
    };
    let transponder = PeerView {
        sent_bytes: o.server.sent_bytes,
        received_bytes: o.server.received_bytes,
        rounds: rr.then_some(o.server.rounds),
        seconds: o.server.active_nanos as f64 / 1e9,
    };
    let mut out = Vec::new();
    match s.mode {
        Mode::Stream => {
            if s.direction.leader_sends() {
                out.push(flow_record(
                    o,
                    "send",
                    o.sent,
                    o.server.received_bytes,
                    &o.server.intervals,
                    peer,
                ));
            }
            if s.direction.leader_receives() {
                out.push(flow_record(
                    o,
                    "recv",
                    o.server.sent_bytes,
                    o.received,
                    &o.recv_intervals,
                    peer,
                ));
            }
        }
        Mode::Rr => out.push(rr_record(o, peer)),
    }
    for r in &mut out {
        let d = detail_of(r);
        d.leader = Some(leader);
        d.transponder = Some(transponder);
    }
    out
}

fn base(o: &Outcome, flow: &str, peer: &str) -> Record {
    let s = &o.setup;
    Record {
        kernel: kernel_name(s, Some(flow)),
        op: flow.into(),
        size_bytes: Some(s.chunk_bytes),
        threads: s.streams as u32,
        ..Record::new(case_detail(s, Some(flow), peer))
    }
}

/// Why a flow with bytes has no sample after the omit window.
fn why_no_sample(o: &Outcome, flow: &str) -> String {
    let s = &o.setup;
    let asked = (s.time_ms as f64 + s.omit_ms as f64) / 1000.0;
    let server_s = o.server.active_nanos as f64 / 1e9;
    // The server sends (the leader's recv flow) and stopped well before
    // the time asked: one of its per-test limits cut the test short, and
    // more --time would change nothing.
    if flow == "recv" && s.bytes == 0 && server_s < asked * 0.9 {
        return format!(
            "the server stopped sending after {} in {server_s:.2} s of the {asked:.2} s asked, before the omit window ended: its --max-bytes (or --max-time) limit cut the test (its first log line gives them); ask for --bytes within the limit, or raise it on the server",
            format_bytes(o.server.sent_bytes)
        );
    }
    NO_SAMPLE.into()
}

const NO_SAMPLE: &str =
    "no complete sample after the omit window: lengthen --time or shorten --omit";

fn finish(
    r: &mut Record,
    samples: Vec<Sample>,
    (sender, receiver): (u64, u64),
    rate: Option<f64>,
    why_empty: impl FnOnce() -> String,
) {
    let rates: Vec<f64> = samples
        .iter()
        .filter(|x| x.seconds > 0.0)
        .map(|x| x.bytes as f64 / x.seconds / 1e9)
        .collect();
    r.gbps = stats::summarize(&rates, true);
    r.payload_gbps = r.gbps;
    r.samples = samples;
    let d = detail_of(r);
    d.sender_bytes = Some(sender);
    d.receiver_bytes = Some(receiver);
    d.receiver_gbps = rate.map(|b| b / 1e9).into();
    d.receiver_gbitps = rate.map(|b| b * 8.0 / 1e9).into();
    match (rate, r.gbps) {
        (Some(_), Some(g)) => {
            if g.cv > limits::CV {
                r.warnings.push(Warning::HighCv { cv: g.cv });
            }
        }
        _ => {
            r.status = Status::Error;
            r.reason = Some(why_empty());
        }
    }
}

fn flow_record(
    o: &Outcome,
    flow: &str,
    sender: u64,
    receiver: u64,
    iv: &[Interval],
    peer: &str,
) -> Record {
    let mut r = base(o, flow, peer);
    let samples = iv
        .iter()
        .map(|i| Sample {
            seconds: i.nanos as f64 / 1e9,
            bytes: i.bytes,
        })
        .collect();
    finish(
        &mut r,
        samples,
        (sender, receiver),
        interval_rate(iv),
        || why_no_sample(o, flow),
    );
    r
}

/// Batches of all streams combined by position: bytes add up, the time is
/// the slowest stream's (streams run concurrently).
fn combine(batches: &[Vec<Batch>]) -> Vec<Sample> {
    let n = batches.iter().map(|b| b.len()).min().unwrap_or(0);
    (0..n)
        .map(|k| Sample {
            seconds: batches.iter().map(|b| b[k].seconds).fold(0.0, f64::max),
            bytes: batches.iter().map(|b| b[k].bytes).sum(),
        })
        .collect()
}

fn rr_record(o: &Outcome, peer: &str) -> Record {
    let s = &o.setup;
    let flow = match s.direction {
        Direction::Bidir => "both",
        d => d.name(),
    };
    let mut r = base(o, flow, peer);
    let samples = combine(&o.batches);
    let secs: f64 = samples.iter().map(|x| x.seconds).sum();
    let bytes: u64 = samples.iter().map(|x| x.bytes).sum();
    let rate = (secs > 0.0).then(|| bytes as f64 / secs);
    // Round-trip time of one request/answer, median over stream 0's batches.
    let rtts: Vec<f64> = o
        .batches
        .first()
        .map(|b| {
            b.iter()
                .filter(|x| x.rounds > 0)
                .map(|x| x.seconds / x.rounds as f64 * 1e6)
                .collect()
        })
        .unwrap_or_default();
    detail_of(&mut r).rtt_us = stats::summarize(&rtts, false).map(|x| x.median).into();
    let (sender, receiver) = match s.direction {
        Direction::Send => (o.sent, o.server.received_bytes),
        Direction::Recv => (o.server.sent_bytes, o.received),
        Direction::Bidir => (
            o.sent + o.server.sent_bytes,
            o.server.received_bytes + o.received,
        ),
    };
    finish(&mut r, samples, (sender, receiver), rate, || {
        NO_SAMPLE.into()
    });
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::protocol::Report;

    #[test]
    fn peers_and_binds_parse() {
        assert_eq!(
            resolve_peer("127.0.0.1", None).unwrap(),
            "127.0.0.1:5280".parse().unwrap()
        );
        assert_eq!(
            resolve_peer("127.0.0.1:9", Some(7)).unwrap(),
            "127.0.0.1:9".parse().unwrap()
        );
        assert_eq!(
            resolve_peer("::1", Some(7)).unwrap(),
            "[::1]:7".parse().unwrap()
        );
        assert_eq!(
            resolve_peer("[::1]:8", None).unwrap(),
            "[::1]:8".parse().unwrap()
        );
        assert!(resolve_peer("127.0.0.1:x", None).is_err());
        assert!(resolve_peer(":5", None).is_err());
    }

    fn outcome(mode: Mode, direction: Direction) -> Outcome {
        Outcome {
            setup: Setup {
                mode,
                direction,
                streams: 1,
                chunk_bytes: 1000,
                time_ms: 1000,
                omit_ms: 0,
                bytes: 0,
                interval_ms: 100,
                last: true,
            },
            sent: 5000,
            received: 7000,
            rounds: 0,
            batches: Vec::new(),
            recv_intervals: vec![
                Interval {
                    nanos: 500_000_000,
                    bytes: 3500
                };
                2
            ],
            seconds: 1.0,
            server: Report {
                received_bytes: 5000,
                sent_bytes: 7000,
                rounds: 0,
                active_nanos: 1_000_000_000,
                intervals: Vec::new(),
            },
        }
    }

    #[test]
    fn stream_records_take_the_receivers_view() {
        let recs = records(&outcome(Mode::Stream, Direction::Bidir), "p:1");
        assert_eq!(recs.len(), 2);
        // send flow: the transponder received but reported no interval.
        assert_eq!(recs[0].kernel, "tcp_stream_bidir_send");
        assert_eq!(recs[0].status, Status::Error);
        let d = |i: usize| recs[i].detail.get::<NetDetail>().unwrap();
        assert_eq!(d(0).sender_bytes, Some(5000));
        assert_eq!(d(0).receiver_bytes, Some(5000));
        // recv flow: 7000 B in 1 s at the leader = 7e-6 GB/s = 5.6e-5 Gbit/s.
        assert_eq!(recs[1].status, Status::Ok);
        let g = d(1).receiver_gbps.value().unwrap();
        assert!((g - 7e-6).abs() < 1e-12, "{}", g);
        let gbit = d(1).receiver_gbitps.value().unwrap();
        assert!((gbit - 5.6e-5).abs() < 1e-12, "{}", gbit);
        assert_eq!(d(1).transponder.unwrap().sent_bytes, 7000);
        assert_eq!(d(1).leader.unwrap().received_bytes, 7000);
    }

    #[test]
    fn rr_streams_combine_by_position() {
        let b = |secs: f64, bytes: u64| Batch {
            start: Duration::ZERO,
            seconds: secs,
            bytes,
            rounds: 10,
        };
        let s = combine(&[vec![b(0.1, 100), b(0.2, 100)], vec![b(0.3, 50)]]);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].bytes, 150);
        assert!((s[0].seconds - 0.3).abs() < 1e-12);
    }
}
