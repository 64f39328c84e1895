//! Net agents: one TCP stream test of the `net` protocol per phase,
//! against a transponder (`bwscope net serve`) or, for `loopback`, a
//! transponder this process runs on 127.0.0.1. The bytes counted are the
//! leader's: received for `recv`, written for `send` (and loopback, whose
//! both ends are here). A test lasts the phase's planned length, so a
//! transponder that sends stops by itself when the phase ends.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::agents::{
    AgentId,     AgentType, Body, Counted, Counter, Figure, Footprint, Gate, Running, Start,
};
use super::records;
use crate::model::{AgentKind, Host, Record};
use crate::net::client::{self, Peer, Progress};
use crate::net::protocol::{Way, Mode, Setup};
use crate::net::server::{Server, ServerConfig};

/// Where a net agent's bytes go.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NetTarget {
    /// A TCP flow to this process's own listener on 127.0.0.1.
    Loopback,
    /// A `bwscope net serve` transponder.
    Remote {
        addr: SocketAddr,
        /// This host sends (`send`) or receives (`recv`).
        send: bool,
    },
}

/// A TCP flow (`--net`). Not probed for spells: its bytes are moved by
/// the kernel's network stack and the NIC on whatever cpus they run, not
/// by a thread whose core the probe could read (docs/noise.md).
#[derive(Debug, Clone, serde::Serialize)]
pub struct NetAgent {
    #[serde(flatten)]
    pub id: AgentId,
    pub target: NetTarget,
}

impl AgentType for NetAgent {
    fn kind(&self) -> AgentKind {
        AgentKind::Net
    }

    fn id(&self) -> &AgentId {
        &self.id
    }

    fn footprint(&self) -> Footprint {
        Footprint {
            faulted: 0,
            host: 8 << 20,
            copies: 0,
        }
    }

    fn options(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("plain data")
    }

    fn start(&self, s: &Start) -> Result<Running, String> {
        start(self, s.token.clone())
    }

    fn describe(&self, r: &mut Record, _: &Figure, _: &Host) {
        r.op = crate::model::fleet::Transport::Tcp.into();
        r.threads = 1;
        let d = records::detail_of(r);
        d.peer = Some(match &self.target {
            NetTarget::Loopback => "loopback".into(),
            NetTarget::Remote { addr, .. } => addr.to_string(),
        });
        d.dma = Some(!matches!(self.target, NetTarget::Loopback));
        d.byte_convention = Some(byte_convention(&self.target).into());
    }
}

/// How net bytes are counted, per target.
pub fn byte_convention(t: &NetTarget) -> &'static str {
    match t {
        NetTarget::Loopback => {
            "payload bytes the sending end wrote to the socket (both ends in this process)"
        }
        NetTarget::Remote { send: true, .. } => "payload bytes this host wrote to the sockets",
        NetTarget::Remote { send: false, .. } => "payload bytes this host read from the sockets",
    }
}

/// What a test lasts beyond the phase's planned length.
const TEST_MARGIN_MS: u32 = 300;
/// The longest test the loopback transponder accepts.
const MAX_TEST_S: u64 = 120;
/// Streams per flow and the size of each write.
const STREAMS: u16 = 1;
const CHUNK: u64 = 128 << 10;

/// The net agent's thread (a loopback transponder beside it).
fn start(agent: &NetAgent, token: Option<Vec<u8>>) -> Result<Running, String> {
    let target = agent.target.clone();
    Running::spawn(&agent.id.name, move || {
        let (addr, server, direction) = match target {
            NetTarget::Loopback => {
                let (addr, s) = loopback()?;
                (addr, Some(s), Way::Send)
            }
            NetTarget::Remote { addr, send } => (
                addr,
                None,
                if send {
                    Way::Send
                } else {
                    Way::Recv
                },
            ),
        };
        // The token is for transponders elsewhere; this process's own
        // loopback one asks for none.
        let token = if server.is_some() { None } else { token };
        let peer = Peer {
            addr,
            token,
            timeout: Duration::from_secs(5),
        };
        let body: Body = Box::new(move |gate: &Arc<Gate>| {
            // The server thread lives as long as the body.
            let _keep = &server;
            phase(&peer, direction, gate)
        });
        Ok(body)
    })
}

/// A quiet transponder on 127.0.0.1 for this process's own flows, served
/// on a thread until the agent ends.
fn loopback() -> Result<(SocketAddr, LoopServer), String> {
    let mut cfg = ServerConfig::new(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)));
    cfg.max_time = Duration::from_secs(MAX_TEST_S);
    let server = Server::bind(cfg, Arc::new(|_: &str| {}))
        .map_err(|e| format!("cannot listen on 127.0.0.1: {e}"))?;
    let addr = server
        .local_addr()
        .map_err(|e| format!("cannot read the loopback address: {e}"))?;
    let stop = Arc::new(AtomicBool::new(false));
    let st = stop.clone();
    let handle = std::thread::Builder::new()
        .name("contend-loopback".into())
        .spawn(move || {
            let _ = server.serve(&st);
        })
        .map_err(|e| format!("cannot start the loopback server: {e}"))?;
    Ok((
        addr,
        LoopServer {
            stop,
            handle: Some(handle),
        },
    ))
}

/// The loopback transponder's thread, stopped when dropped.
struct LoopServer {
    stop: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Drop for LoopServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// One phase: a stream test started at the gate and stopped with it; the
/// leader's running byte count is read every half millisecond.
fn phase(peer: &Peer, direction: Way, gate: &Arc<Gate>) -> Counted {
    let setup = Setup {
        mode: Mode::Stream,
        direction,
        streams: STREAMS,
        chunk_bytes: CHUNK,
        time_ms: gate.length.as_millis().min(MAX_TEST_S as u128 * 1000) as u32 + TEST_MARGIN_MS,
        omit_ms: 0,
        bytes: 0,
        interval_ms: 100,
        last: false,
    };
    let progress = Progress::default();
    let stop = AtomicBool::new(false);
    let finished = AtomicBool::new(false);
    gate.arrive();
    std::thread::scope(|sc| {
        let test = sc.spawn(|| {
            let r = client::run_test_watched(peer, &setup, &stop, &progress);
            finished.store(true, Ordering::Release);
            r
        });
        let count = || match direction {
            Way::Send => progress.sent.load(Ordering::Relaxed),
            _ => progress.received.load(Ordering::Relaxed),
        };
        let mut c = Counter::start();
        let mut seen = 0;
        while !gate.stopped() && !finished.load(Ordering::Acquire) {
            std::thread::sleep(Duration::from_micros(500));
            let now = count();
            c.add(now - seen);
            seen = now;
        }
        let log = c.finish();
        stop.store(true, Ordering::Relaxed);
        let ended = match test.join() {
            Ok(Ok(_)) if gate.stopped() => None,
            Ok(Ok(_)) => Some("the flow ended before the phase did".to_string()),
            // A flow stopped by the phase may end with its peer closing.
            Ok(Err(_)) if gate.stopped() => None,
            Ok(Err(e)) => Some(e.to_string()),
            Err(_) => Some("the flow's thread panicked".into()),
        };
        Counted::one(log, ended)
    })
}
