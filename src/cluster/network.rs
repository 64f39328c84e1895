//! The network phase over bwscope's own TCP protocol (`crate::net`, the
//! same leader/transponder as `bwscope net`, token authentication
//! included): every rank runs a transponder for the whole fleet run; in
//! each step a rank leads the tests the schedule gives it.
//!
//! Each test is a streaming test of `--step-time` seconds after an
//! `--omit` window. A flow's headline (`recv_gbps`) is what the receiver
//! counted after the omit window over its own clock, as in `bwscope net`;
//! `send_gbps` is the sender's bytes over the sender's whole test (omit
//! window included), its view of the same flow.

use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::schedule::Test;
use crate::model::fleet::Flow;
use crate::net::client::{self, Outcome, Peer};
use crate::net::flow::interval_rate;
use crate::net::protocol::{Mode, Setup, Way};
use crate::net::server::{Server, ServerConfig};

/// What a step of TCP tests needs to know.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TcpParams {
    pub step_time_s: f64,
    pub omit_s: f64,
    pub streams: u16,
    /// Bound on every wait for a peer.
    pub timeout_s: f64,
}

impl TcpParams {
    /// How long one test lasts when all goes well.
    pub fn test_seconds(&self) -> f64 {
        self.step_time_s + self.omit_s
    }

    /// The bound on every single wait of a leader for its peer.
    pub fn peer_timeout(&self) -> Duration {
        Duration::from_secs_f64(self.timeout_s.clamp(1.0, 30.0))
    }

    /// The longest a leader's test can take when its peer stops answering
    /// (a stopped or hung rank): the test itself, one peer timeout for the
    /// data phase to give up (`net::client`'s idle bound), one more for the
    /// transponder's report. Rank 0 waits at least this long for a
    /// leader's flows, or a healthy leader paired with a hung peer would be
    /// marked lost with it.
    pub fn leader_bound_s(&self) -> f64 {
        self.test_seconds() + 2.0 * self.peer_timeout().as_secs_f64()
    }

    fn setup(&self, size: u64, bidir: bool) -> Setup {
        Setup {
            mode: Mode::Stream,
            direction: if bidir { Way::Bidir } else { Way::Send },
            streams: self.streams,
            chunk_bytes: size,
            time_ms: (self.step_time_s * 1000.0).round() as u32,
            omit_ms: (self.omit_s * 1000.0).round() as u32,
            bytes: 0,
            // Ten or more meter intervals per test.
            interval_ms: ((self.step_time_s * 100.0).round() as u32).clamp(10, 1000),
            last: false,
        }
    }
}

/// This rank's transponder, serving until dropped.
pub struct Transponder {
    pub port: u16,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Transponder {
    pub fn start(port: u16, token: Option<Vec<u8>>, p: &TcpParams) -> anyhow::Result<Transponder> {
        let mut cfg = ServerConfig::new(SocketAddr::from(([0, 0, 0, 0], port)));
        cfg.token = token;
        cfg.max_time = Duration::from_secs_f64(p.test_seconds() + 5.0);
        cfg.timeout = Duration::from_secs_f64(p.timeout_s.clamp(1.0, 30.0));
        // Its log lines would interleave on every rank's stderr; the
        // leader's error already carries the transponder's reason.
        let server = Server::bind(cfg, Arc::new(|_: &str| {})).map_err(|e| {
            crate::error::UserError::flag(
                "--net-port",
                format!("cannot listen on port {port} for the pair tests: {e}"),
            )
        })?;
        let port = server.local_addr()?.port();
        let stop = Arc::new(AtomicBool::new(false));
        let s2 = stop.clone();
        let thread = std::thread::Builder::new()
            .name("fleet-transponder".into())
            .spawn(move || {
                let _ = server.serve(&s2);
            })?;
        Ok(Transponder {
            port,
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Transponder {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Why a flow of a test that ran to its end has no figure.
pub const NO_SAMPLE: &str =
    "no complete sample after the omit window: raise --step-time or lower --omit";

/// Why a flow has no figure when Ctrl-C (or SIGTERM) cut its test short.
pub const INTERRUPTED: &str = "interrupted (Ctrl-C or SIGTERM) before a complete sample";

/// The flows of one finished test; `cut` when a stop signal ended it
/// early (then a missing figure is the interruption's doing, not the
/// step's length).
fn flows_of(t: &Test, size: u64, o: &Outcome, cut: bool) -> Vec<Flow> {
    let rate = |bytes: u64, secs: f64| (secs > 0.0).then(|| bytes as f64 / secs / 1e9);
    let received = |iv: &[crate::net::protocol::Interval]| iv.iter().map(|i| i.bytes).sum::<u64>();
    let no_sample = if cut { INTERRUPTED } else { NO_SAMPLE };
    let mut out = vec![Flow {
        src: t.src,
        dst: t.dst,
        size_bytes: size,
        send_gbps: rate(o.sent, o.seconds),
        recv_gbps: interval_rate(&o.server.intervals).map(|b| b / 1e9),
        bytes: Some(received(&o.server.intervals)),
        ..Flow::default()
    }];
    if t.bidir {
        out.push(Flow {
            src: t.dst,
            dst: t.src,
            size_bytes: size,
            send_gbps: rate(o.server.sent_bytes, o.server.active_nanos as f64 / 1e9),
            recv_gbps: interval_rate(&o.recv_intervals).map(|b| b / 1e9),
            bytes: Some(received(&o.recv_intervals)),
            ..Flow::default()
        });
    }
    for f in &mut out {
        if f.recv_gbps.is_none() {
            f.reason = Some(no_sample.into());
        }
    }
    out
}

/// Flows that could not be measured, with the reason.
pub fn failed(t: &Test, size: u64, reason: &str) -> Vec<Flow> {
    let mut v = vec![(t.src, t.dst)];
    if t.bidir {
        v.push((t.dst, t.src));
    }
    v.into_iter()
        .map(|(src, dst)| Flow {
            src,
            dst,
            size_bytes: size,
            reason: Some(reason.to_string()),
            ..Flow::default()
        })
        .collect()
}

/// Run the tests this rank leads in one step. `addr(rank)` is a peer's
/// transponder. Returns the flows and the longest test's duration.
pub fn run_step(
    me: u32,
    tests: &[Test],
    size: u64,
    p: &TcpParams,
    addr: &dyn Fn(u32) -> Option<SocketAddr>,
    token: Option<&[u8]>,
    stop: &AtomicBool,
) -> (Vec<Flow>, f64) {
    let mut flows = Vec::new();
    let mut longest = 0.0f64;
    for t in tests.iter().filter(|t| t.src == me) {
        let Some(a) = addr(t.dst) else {
            flows.extend(failed(t, size, "the peer has no address for pair tests"));
            continue;
        };
        let peer = Peer {
            addr: a,
            token: token.map(<[u8]>::to_vec),
            timeout: p.peer_timeout(),
        };
        let t0 = Instant::now();
        let outcome = client::run_test(&peer, &p.setup(size, t.bidir), stop);
        let cut = stop.load(std::sync::atomic::Ordering::Relaxed);
        match outcome {
            Ok(o) => flows.extend(flows_of(t, size, &o, cut)),
            Err(_) if cut => flows.extend(failed(t, size, INTERRUPTED)),
            Err(e) => flows.extend(failed(t, size, &format!("{a}: {e}"))),
        }
        longest = longest.max(t0.elapsed().as_secs_f64());
    }
    (flows, longest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> TcpParams {
        TcpParams {
            step_time_s: 0.3,
            omit_s: 0.1,
            streams: 1,
            timeout_s: 5.0,
        }
    }

    #[test]
    fn a_step_on_loopback_measures_both_views() {
        let tr = Transponder::start(0, Some(b"secret".to_vec()), &params()).unwrap();
        let port = tr.port;
        let addr = move |_: u32| Some(SocketAddr::from(([127, 0, 0, 1], port)));
        let tests = [Test {
            src: 0,
            dst: 1,
            bidir: true,
        }];
        let stop = AtomicBool::new(false);
        let (flows, secs) = run_step(
            0,
            &tests,
            128 << 10,
            &params(),
            &addr,
            Some(b"secret"),
            &stop,
        );
        assert_eq!(flows.len(), 2);
        assert!(secs >= 0.39, "{secs}");
        for f in &flows {
            assert!(f.recv_gbps.unwrap() > 0.0, "{f:?}");
            assert!(f.send_gbps.unwrap() > 0.0, "{f:?}");
            assert!(f.bytes.unwrap() > 0);
            assert_eq!(f.reason, None);
        }
        assert_eq!((flows[1].src, flows[1].dst), (1, 0));
        // Not mine to lead: nothing happens.
        let (none, _) = run_step(1, &tests, 1 << 20, &params(), &addr, Some(b"secret"), &stop);
        assert!(none.is_empty());
        // A wrong token: both flows null, with the reason.
        let (bad, _) = run_step(0, &tests, 1 << 20, &params(), &addr, Some(b"wrong"), &stop);
        assert!(bad.iter().all(|f| f.recv_gbps.is_none()));
        assert!(
            bad[0].reason.as_deref().unwrap().contains("authentication"),
            "{bad:?}"
        );
    }

    #[test]
    fn an_unreachable_peer_is_a_null_cell_with_a_reason() {
        let free = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let addr = move |_: u32| Some(free);
        let t = [Test {
            src: 0,
            dst: 1,
            bidir: false,
        }];
        let (flows, _) = run_step(
            0,
            &t,
            1 << 20,
            &params(),
            &addr,
            None,
            &AtomicBool::new(false),
        );
        assert_eq!(flows.len(), 1);
        assert_eq!(flows[0].recv_gbps, None);
        assert!(
            flows[0].reason.as_deref().unwrap().contains("refused"),
            "{flows:?}"
        );
    }

    #[test]
    fn a_test_cut_by_ctrl_c_says_so() {
        let p = TcpParams {
            step_time_s: 1.0,
            omit_s: 0.8,
            ..params()
        };
        let tr = Transponder::start(0, None, &p).unwrap();
        let port = tr.port;
        let addr = move |_: u32| Some(SocketAddr::from(([127, 0, 0, 1], port)));
        // One way: the leader's sending is what Ctrl-C stops.
        let t = [Test {
            src: 0,
            dst: 1,
            bidir: false,
        }];
        let stop = AtomicBool::new(false);
        let (flows, _) = std::thread::scope(|sc| {
            sc.spawn(|| {
                std::thread::sleep(Duration::from_millis(300));
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
            });
            run_step(0, &t, 64 << 10, &p, &addr, None, &stop)
        });
        assert_eq!(flows.len(), 1);
        assert_eq!(flows[0].recv_gbps, None, "{flows:?}");
        assert_eq!(flows[0].reason.as_deref(), Some(INTERRUPTED), "{flows:?}");
    }

    #[test]
    fn the_leader_bound_covers_every_wait_for_a_hung_peer() {
        let p = params();
        // Data phase idle bound and the report wait, each one peer timeout.
        assert_eq!(p.leader_bound_s(), p.test_seconds() + 2.0 * 5.0);
        let long = TcpParams {
            timeout_s: 600.0,
            ..p
        };
        assert_eq!(long.peer_timeout(), Duration::from_secs(30));
    }
}
