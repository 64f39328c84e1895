//! The network suite: `bwscope net run HOST[:PORT]` (the leader), over
//! `crate::net`; the transponder (`net serve`) is a command of the app.
//!
//! The leader runs one test per chunk size and turns each into records:
//! one per flow (a bidirectional stream test has a `send` and a `recv`
//! flow). The headline rate is receiver-side: bytes the receiving end read
//! after the omit window, over its own clock, so a sender filling socket
//! buffers is never mistaken for throughput. In request/answer mode the
//! leader times each round from the start of the send to the answer (Z.
//! Smith's `bandwidth` defines it so), so small chunks measure latency and large ones
//! bandwidth. Both ends' counts are kept in the record.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::time::Duration;

use super::estimate::Estimate;
use super::{Ctx, Descriptor, Flow, Suite};
use crate::error::UserError;
use crate::model::{Record, SuiteId};
use crate::net::client::{self, ClientError, Peer};
use crate::net::protocol::{
    Way, Mode, Setup, DEFAULT_PORT, MAX_CHUNK, MAX_STREAMS,
};
use crate::util::units::{self, format_bytes};
pub use records::{kernel_name, records};
use records::case_detail;

mod records;

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
    pub direction: Way,
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
    pub direction: Way,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::detail::NetDetail;
    use crate::model::Status;
    use crate::net::client::Outcome;
    use crate::net::protocol::{Interval, Report};

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

    fn outcome(mode: Mode, direction: Way) -> Outcome {
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
        let recs = records(&outcome(Mode::Stream, Way::Bidir), "p:1");
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
}
