//! Loopback tests of the leader and the transponder in one process: every
//! mode and direction with sane results, and a server that survives
//! garbage, truncated and oversized frames, wrong versions and tokens,
//! stalled and vanished peers, and a second leader (told "busy").
//!
//! Only 127.0.0.1 is ever contacted. Every wait is bounded.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bwscope::model::detail::NetDetail;
use bwscope::model::{Status, SuiteId};
use bwscope::net::client::{self, ClientError, Peer};
use bwscope::net::protocol::{self, Frame, Mode, Setup, Way};
use bwscope::net::server::{Server, ServerConfig};
use bwscope::net::{read_frame, write_frame};

/// A transponder on an ephemeral loopback port, stopped on drop.
struct TestServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    logs: Arc<Mutex<Vec<String>>>,
    thread: Option<JoinHandle<()>>,
}

impl TestServer {
    fn start(tweak: impl FnOnce(&mut ServerConfig)) -> TestServer {
        let mut cfg = ServerConfig::new("127.0.0.1:0".parse().unwrap());
        cfg.timeout = Duration::from_secs(5);
        tweak(&mut cfg);
        let logs = Arc::new(Mutex::new(Vec::new()));
        let l2 = logs.clone();
        let server = Server::bind(
            cfg,
            Arc::new(move |line: &str| l2.lock().unwrap().push(line.to_string())),
        )
        .unwrap();
        let addr = server.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let s2 = stop.clone();
        let thread = std::thread::spawn(move || server.serve(&s2).unwrap());
        TestServer {
            addr,
            stop,
            logs,
            thread: Some(thread),
        }
    }

    fn peer(&self) -> Peer {
        Peer {
            addr: self.addr,
            token: None,
            timeout: Duration::from_secs(5),
        }
    }

    fn logs(&self) -> Vec<String> {
        self.logs.lock().unwrap().clone()
    }

    /// Wait (bounded) until `n` log lines exist; returns them.
    fn wait_logs(&self, n: usize, within: Duration) -> Vec<String> {
        let t0 = Instant::now();
        while t0.elapsed() < within {
            let l = self.logs();
            if l.len() >= n {
                return l;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.logs()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn setup(mode: Mode, direction: Way, streams: u16, chunk: u64) -> Setup {
    Setup {
        mode,
        direction,
        streams,
        chunk_bytes: chunk,
        time_ms: 400,
        omit_ms: 100,
        bytes: 0,
        interval_ms: 50,
        last: false,
    }
}

static NO_STOP: AtomicBool = AtomicBool::new(false);

/// A real test works against this server right now.
fn assert_serves(srv: &TestServer) {
    let o = client::run_test(
        &srv.peer(),
        &setup(Mode::Stream, Way::Send, 1, 64 << 10),
        &NO_STOP,
    )
    .expect("server still serves");
    assert!(o.server.received_bytes > 0);
    assert_eq!(o.server.received_bytes, o.sent);
}

#[test]
fn every_mode_and_direction_gives_sane_records() {
    let srv = TestServer::start(|_| {});
    let cases = [
        (Mode::Rr, Way::Send, 1, 4096),
        (Mode::Rr, Way::Recv, 1, 64 << 10),
        (Mode::Rr, Way::Bidir, 2, 1 << 20),
        (Mode::Stream, Way::Send, 1, 128 << 10),
        (Mode::Stream, Way::Recv, 2, 128 << 10),
        (Mode::Stream, Way::Bidir, 1, 256 << 10),
    ];
    for (i, &(mode, dir, streams, chunk)) in cases.iter().enumerate() {
        let st = setup(mode, dir, streams, chunk);
        let o = client::run_test(&srv.peer(), &st, &NO_STOP)
            .unwrap_or_else(|e| panic!("{:?} {:?}: {}", mode, dir, e));
        let recs = bwscope::suites::net::records(&o, &srv.addr.to_string());
        let flows = if mode == Mode::Stream && dir == Way::Bidir {
            2
        } else {
            1
        };
        assert_eq!(recs.len(), flows, "{:?} {:?}", mode, dir);
        for r in &recs {
            let ctx = format!("{:?} {:?} {}", mode, dir, r.kernel);
            assert_eq!(r.status, Status::Ok, "{}: {:?}", ctx, r.reason);
            assert_eq!(r.suite(), SuiteId::Net);
            let d = r.detail.get::<NetDetail>().unwrap();
            assert_eq!(d.mode.as_deref(), Some(mode.name()));
            assert_eq!(d.direction.as_deref(), Some(dir.name()));
            assert_eq!(d.streams, Some(streams as u64));
            assert_eq!(d.chunk_bytes, Some(chunk));
            assert_eq!(d.peer, Some(srv.addr.to_string()));
            let sender = d.sender_bytes.unwrap();
            let receiver = d.receiver_bytes.unwrap();
            assert!(sender > 0, "{}", ctx);
            // Every byte sent before the clean EOF is received.
            assert_eq!(sender, receiver, "{}", ctx);
            let rate = d.receiver_gbps.value().unwrap();
            // Positive, and below a bound no loopback reaches (1 TB/s).
            assert!(rate > 0.0 && rate < 1000.0, "{}: {} GB/s", ctx, rate);
            let g = r.gbps.unwrap();
            assert!(g.best >= g.median && g.median > 0.0, "{}", ctx);
            assert!(!r.samples.is_empty(), "{}", ctx);
            // Receiver-side samples lie after the omit window: their time
            // adds up to at most the measured part of the test.
            let secs: f64 = r.samples.iter().map(|s| s.seconds).sum();
            assert!(secs > 0.0 && secs < 0.4 + 2.0, "{}: {} s", ctx, secs);
            // Both ends' views are recorded.
            assert!(d.leader.unwrap().seconds > 0.0);
            assert!(d.transponder.unwrap().seconds > 0.0);
        }
        if mode == Mode::Rr {
            assert!(o.rounds > 0);
            assert_eq!(o.rounds, o.server.rounds, "both ends count the same rounds");
            let d = recs[0].detail.get::<NetDetail>().unwrap();
            assert!(d.rtt_us.value().unwrap() > 0.0);
        }
        // One log line per test.
        let logs = srv.wait_logs(i + 1, Duration::from_secs(3));
        assert_eq!(logs.len(), i + 1, "{:?}", logs);
        assert!(
            logs[i].contains(&format!("test {} {}", mode.name(), dir.name())),
            "{}",
            logs[i]
        );
    }
}

#[test]
fn bytes_bound_moves_exactly_that_many() {
    let srv = TestServer::start(|_| {});
    for dir in [Way::Send, Way::Recv] {
        let mut st = setup(Mode::Stream, dir, 3, 100_000);
        st.time_ms = 0;
        st.omit_ms = 0;
        st.bytes = 20_000_001;
        let o = client::run_test(&srv.peer(), &st, &NO_STOP).unwrap();
        let (s, r) = match dir {
            Way::Send => (o.sent, o.server.received_bytes),
            _ => (o.server.sent_bytes, o.received),
        };
        assert_eq!(s, 20_000_001);
        assert_eq!(r, 20_000_001);
    }
}

#[test]
fn second_leader_is_told_busy_and_first_finishes() {
    let srv = TestServer::start(|_| {});
    let peer = srv.peer();
    let first = std::thread::spawn(move || {
        let mut st = setup(Mode::Stream, Way::Send, 1, 64 << 10);
        st.time_ms = 1500;
        client::run_test(&peer, &st, &NO_STOP)
    });
    std::thread::sleep(Duration::from_millis(400));
    let t0 = Instant::now();
    let second = client::run_test(&srv.peer(), &setup(Mode::Rr, Way::Send, 1, 1024), &NO_STOP);
    assert!(matches!(second, Err(ClientError::Busy)), "{:?}", second);
    assert!(
        t0.elapsed() < Duration::from_secs(2),
        "busy answer took {:?}",
        t0.elapsed()
    );
    assert!(first.join().unwrap().is_ok());
    let logs = srv.wait_logs(2, Duration::from_secs(3));
    assert!(logs.iter().any(|l| l.contains("busy")), "{:?}", logs);
    assert_serves(&srv);
}

#[test]
fn token_auth_accepts_the_right_token_only() {
    let srv = TestServer::start(|c| c.token = Some(b"s3cret".to_vec()));
    let st = setup(Mode::Rr, Way::Send, 1, 1024);
    let mut p = srv.peer();
    p.token = Some(b"wrong".to_vec());
    let e = client::run_test(&p, &st, &NO_STOP).unwrap_err();
    assert!(matches!(e, ClientError::Auth(_)), "{}", e);
    p.token = None;
    let e = client::run_test(&p, &st, &NO_STOP).unwrap_err();
    assert!(e.to_string().contains("--token-file"), "{}", e);
    p.token = Some(b"s3cret".to_vec());
    client::run_test(&p, &st, &NO_STOP).unwrap();
    let logs = srv.wait_logs(3, Duration::from_secs(3));
    assert_eq!(logs.len(), 3, "{:?}", logs);
    assert!(
        logs.iter().any(|l| l.contains("authentication failed")),
        "{:?}",
        logs
    );
}

/// Send raw bytes, then read whatever the server answers until it closes
/// (bounded); returns the answer.
fn poke(addr: SocketAddr, bytes: &[u8], shutdown: bool) -> Vec<u8> {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let _ = s.write_all(bytes);
    if shutdown {
        let _ = s.shutdown(std::net::Shutdown::Write);
    }
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    out
}

fn answer_is_error(b: &[u8]) -> Option<String> {
    match protocol::decode(b) {
        Ok(Some((Frame::Error(m), _))) => Some(m),
        _ => None,
    }
}

#[test]
fn garbage_truncated_oversized_and_wrong_version_are_survived() {
    let srv = TestServer::start(|_| {});
    // Garbage: a valid header length but an unknown kind.
    let mut g = bwscope::net::flow::data_buffer(4096, 99);
    g[4] = 0xee;
    g[0..4].copy_from_slice(&16u32.to_le_bytes());
    let a = poke(srv.addr, &g, false);
    assert!(answer_is_error(&a).unwrap().contains("unknown frame kind"));
    // Oversized: a header announcing 4 GiB.
    let a = poke(srv.addr, &[0xff, 0xff, 0xff, 0xff, 1], false);
    assert!(answer_is_error(&a).unwrap().contains("exceeds"));
    // Truncated: a hello header for 6 bytes, 3 sent, then EOF.
    let a = poke(srv.addr, &[6, 0, 0, 0, 1, b'B', b'W', b'S'], true);
    assert!(answer_is_error(&a).is_some());
    // Bad magic and a wrong version.
    let a = poke(
        srv.addr,
        &protocol::encode(&Frame::Hello {
            magic: *b"HTTP",
            version: 1,
        }),
        false,
    );
    assert!(answer_is_error(&a).unwrap().contains("magic"));
    let a = poke(
        srv.addr,
        &protocol::encode(&Frame::Hello {
            magic: protocol::MAGIC,
            version: 99,
        }),
        false,
    );
    assert!(answer_is_error(&a).unwrap().contains("v99"));
    // Plain text, like a browser.
    let a = poke(srv.addr, b"GET / HTTP/1.0\r\n\r\n", true);
    assert!(answer_is_error(&a).is_some());
    let logs = srv.wait_logs(6, Duration::from_secs(3));
    assert_eq!(logs.len(), 6, "one line per bad peer: {:?}", logs);
    assert!(
        logs.iter().any(|l| l.contains("in the middle of a frame")),
        "{:?}",
        logs
    );
    assert_serves(&srv);
}

#[test]
fn stalled_handshake_times_out_without_blocking_others() {
    let srv = TestServer::start(|c| c.timeout = Duration::from_millis(700));
    let t0 = Instant::now();
    let mut silent = TcpStream::connect(srv.addr).unwrap();
    // Meanwhile a real leader is served.
    assert_serves(&srv);
    silent
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut out = Vec::new();
    let _ = silent.read_to_end(&mut out);
    assert!(t0.elapsed() < Duration::from_secs(4));
    assert!(answer_is_error(&out).unwrap().contains("timed out"));
    let logs = srv.wait_logs(2, Duration::from_secs(3));
    assert!(logs.iter().any(|l| l.contains("timed out")), "{:?}", logs);
}

/// Handshake and set up a test by hand; returns (control, data streams).
fn manual_test(addr: SocketAddr, st: &Setup) -> (TcpStream, Vec<TcpStream>) {
    let t = Duration::from_secs(3);
    let hello = |s: &mut TcpStream| {
        write_frame(
            s,
            &Frame::Hello {
                magic: protocol::MAGIC,
                version: protocol::VERSION,
            },
            t,
        )
        .unwrap();
        assert!(matches!(
            read_frame(s, t).unwrap(),
            Frame::Welcome { auth: false, .. }
        ));
    };
    let mut c = TcpStream::connect(addr).unwrap();
    hello(&mut c);
    write_frame(&mut c, &Frame::Setup(*st), t).unwrap();
    let Frame::Ready { cookie } = read_frame(&mut c, t).unwrap() else {
        panic!("no ready")
    };
    let mut data = Vec::new();
    for i in 0..st.streams {
        let mut d = TcpStream::connect(addr).unwrap();
        hello(&mut d);
        write_frame(&mut d, &Frame::Join { cookie, index: i }, t).unwrap();
        assert_eq!(read_frame(&mut d, t).unwrap(), Frame::Joined);
        data.push(d);
    }
    assert_eq!(read_frame(&mut c, t).unwrap(), Frame::Started);
    (c, data)
}

#[test]
fn stalled_and_vanished_leaders_mid_test_are_dropped() {
    let srv = TestServer::start(|c| c.timeout = Duration::from_millis(600));
    // Stalled: half a chunk, then silence.
    let st = setup(Mode::Rr, Way::Send, 1, 1 << 20);
    let (mut c, mut d) = manual_test(srv.addr, &st);
    d[0].write_all(&[7u8; 1000]).unwrap();
    let t0 = Instant::now();
    let f = read_frame(&mut c, Duration::from_secs(5)).unwrap();
    assert!(
        matches!(&f, Frame::Error(m) if m.contains("stalled")),
        "{:?}",
        f
    );
    assert!(t0.elapsed() < Duration::from_secs(3));
    drop((c, d));
    // Vanished: half a chunk, then the connections close.
    let (mut c, mut d) = manual_test(srv.addr, &st);
    d[0].write_all(&[7u8; 1000]).unwrap();
    drop(d);
    let f = read_frame(&mut c, Duration::from_secs(5)).unwrap();
    assert!(
        matches!(&f, Frame::Error(m) if m.contains("vanished")),
        "{:?}",
        f
    );
    drop(c);
    // Stream mode, the leader disappears entirely (control too).
    let st = setup(Mode::Stream, Way::Recv, 2, 64 << 10);
    let (c, d) = manual_test(srv.addr, &st);
    drop((c, d));
    let logs = srv.wait_logs(3, Duration::from_secs(5));
    assert_eq!(logs.len(), 3, "{:?}", logs);
    assert!(logs.iter().all(|l| l.contains("failed")), "{:?}", logs);
    assert_serves(&srv);
}

#[test]
fn server_limits_and_unknown_joins_are_refused() {
    let srv = TestServer::start(|c| {
        c.max_time = Duration::from_secs(2);
        c.max_bytes = 1 << 20;
    });
    let mut st = setup(Mode::Stream, Way::Send, 1, 65536);
    st.time_ms = 5000;
    let e = client::run_test(&srv.peer(), &st, &NO_STOP).unwrap_err();
    assert!(e.to_string().contains("allows up to 2 s"), "{}", e);
    st.time_ms = 0;
    st.bytes = 2 << 20;
    let e = client::run_test(&srv.peer(), &st, &NO_STOP).unwrap_err();
    assert!(e.to_string().contains("--max-bytes"), "{}", e);
    // By time, but more bytes than the limit: the server cuts the test.
    st.bytes = 0;
    st.time_ms = 1000;
    let e = client::run_test(&srv.peer(), &st, &NO_STOP).unwrap_err();
    assert!(matches!(e, ClientError::Test(_)), "{}", e);
    assert!(e.to_string().contains("limit"), "{}", e);
    // As a sender the server stops at its byte limit too.
    st.direction = Way::Recv;
    let o = client::run_test(&srv.peer(), &st, &NO_STOP).unwrap();
    assert_eq!(o.server.sent_bytes, 1 << 20);
    assert_eq!(o.received, 1 << 20);
    // A join with a made-up cookie.
    let t = Duration::from_secs(2);
    let mut s = TcpStream::connect(srv.addr).unwrap();
    write_frame(
        &mut s,
        &Frame::Hello {
            magic: protocol::MAGIC,
            version: protocol::VERSION,
        },
        t,
    )
    .unwrap();
    read_frame(&mut s, t).unwrap();
    write_frame(
        &mut s,
        &Frame::Join {
            cookie: [0; 16],
            index: 0,
        },
        t,
    )
    .unwrap();
    assert!(matches!(read_frame(&mut s, t).unwrap(), Frame::Error(_)));
    let logs = srv.wait_logs(5, Duration::from_secs(3));
    assert_eq!(logs.len(), 5, "{:?}", logs);
}
