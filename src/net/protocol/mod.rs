//! The leader ↔ transponder wire protocol: control frames and the pure
//! decoder that turns bytes into them.
//!
//! Every control message is a frame: a 5-byte header (payload length as a
//! little-endian `u32`, then a kind byte) and the payload. A length above
//! [`MAX_FRAME`] or an unknown kind is rejected from the header alone, so a
//! peer can never make the other side allocate more than `MAX_FRAME` bytes.
//! Bulk data never travels in frames: after the handshake a data connection
//! carries raw bytes whose amount both ends know from [`Setup`].
//!
//! A session, per connection:
//! ```text
//! leader                                 transponder
//! Hello{magic, version}          ──►
//!                                ◄──     Welcome{version, auth, nonce} | Error
//! Auth{HMAC-SHA256(token, nonce)} ──►    (only when the server asks)
//!                                ◄──     AuthOk | Error
//! control:  Setup{...}           ──►
//!                                ◄──     Ready{cookie} | Busy | Error
//! data i:   Join{cookie, i}      ──►
//!                                ◄──     Joined | Error
//!                                ◄──     Started (control, when every stream joined)
//!           ... raw bytes on data connections, EOF ends a flow ...
//!                                ◄──     Report (control: the server's counts)
//! ```
//! The decoder ([`decode`]) is a pure function of a byte slice, so it is
//! property-tested over random input (`tests/net_proptest.rs`).

mod auth;

pub use auth::{auth_mac, auth_mac_as, auth_ok, auth_ok_as, random_bytes, SERVER_LABEL};

use crate::model::Op;

/// Protocol version spoken by this build; a peer with another is refused.
pub const VERSION: u16 = 1;
/// First bytes of every `Hello`: tells a bwscope leader from stray traffic.
pub const MAGIC: [u8; 4] = *b"BWSC";
/// Bytes in a frame header: `u32` length + kind.
pub const HEADER: usize = 5;
/// Largest frame payload either side accepts (a `Report` with
/// [`MAX_INTERVALS`] intervals fits).
pub const MAX_FRAME: usize = 64 * 1024;
/// Largest chunk (one request/answer unit or one write) the protocol allows.
pub const MAX_CHUNK: u64 = 1 << 30;
/// Most parallel streams in one test.
pub const MAX_STREAMS: u16 = 128;
/// Most receive intervals a `Report` carries.
pub const MAX_INTERVALS: usize = 3000;
/// Default TCP port of `bwscope net serve`.
pub const DEFAULT_PORT: u16 = 5280;
/// Length of the server's challenge and of the HMAC answer.
pub const NONCE_LEN: usize = 32;
/// Length of the secret that ties data connections to their test.
pub const COOKIE_LEN: usize = 16;

/// How data moves in a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Z. Smith's `bandwidth` request/answer: one chunk, then a 1-byte answer (or the
    /// chunk back, bidir), timed from the start of the send to the answer.
    Rr,
    /// Continuous writes for a duration or a byte count (like iperf3).
    Stream,
}

/// Which way bytes flow, from the leader's point of view: a field of the
/// wire protocol's setup (its code is on the wire). Not `Direction`: the
/// transfer suite's `transfer::Route` (what a device copy moves where) is
/// another question with a `bidir` of its own, and the two shared a name.
/// Its words are the model's ([`Op`]); a one-way test's flow is a record
/// whose op is that word, a `bidir` test's records name their flows
/// (`send` and `recv` streaming, `both` request/answer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Way {
    /// Leader → transponder.
    Send,
    /// Transponder → leader.
    Recv,
    /// Both at once.
    Bidir,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Rr => "rr",
            Mode::Stream => "stream",
        }
    }
    fn code(self) -> u8 {
        self as u8
    }
    fn from_code(c: u8) -> Option<Mode> {
        [Mode::Rr, Mode::Stream].get(c as usize).copied()
    }
}

impl serde::Serialize for Way {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl Way {
    /// The model's word for it.
    pub fn op(self) -> Op {
        match self {
            Way::Send => Op::Send,
            Way::Recv => Op::Recv,
            Way::Bidir => Op::Bidir,
        }
    }
    /// Its word (every way is one the model knows; a test checks each).
    pub fn name(self) -> &'static str {
        self.op().word().unwrap_or_default()
    }
    /// Does the leader send bytes in this direction?
    pub fn leader_sends(self) -> bool {
        self != Way::Recv
    }
    /// Does the leader receive bulk bytes in this direction?
    pub fn leader_receives(self) -> bool {
        self != Way::Send
    }
    fn code(self) -> u8 {
        self as u8
    }
    fn from_code(c: u8) -> Option<Way> {
        [Way::Send, Way::Recv, Way::Bidir].get(c as usize).copied()
    }
}

/// What the leader asks for in one test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setup {
    pub mode: Mode,
    pub direction: Way,
    pub streams: u16,
    pub chunk_bytes: u64,
    /// Measured duration after the omit window; 0 when `bytes` bounds it.
    pub time_ms: u32,
    /// Warm-up (slow start) excluded from rates.
    pub omit_ms: u32,
    /// Bytes per flow (all streams together) when not bounded by time; 0 = by time.
    pub bytes: u64,
    /// Receive-meter interval.
    pub interval_ms: u32,
    /// The last test of the leader's run: `serve --once` exits after it.
    pub last: bool,
}

/// One receive-meter interval: its length and the bytes that arrived in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interval {
    pub nanos: u64,
    pub bytes: u64,
}

/// The transponder's view of a finished test.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Report {
    /// Bytes it read from all data connections.
    pub received_bytes: u64,
    /// Bytes it wrote to all data connections.
    pub sent_bytes: u64,
    /// Request/answer rounds it completed.
    pub rounds: u64,
    /// From `Started` to the last flow's end, its clock.
    pub active_nanos: u64,
    /// Its receive-meter intervals after the omit window (empty when it
    /// received nothing).
    pub intervals: Vec<Interval>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    Hello {
        magic: [u8; 4],
        version: u16,
    },
    Welcome {
        version: u16,
        auth: bool,
        nonce: [u8; NONCE_LEN],
    },
    Auth {
        mac: [u8; NONCE_LEN],
    },
    AuthOk,
    Setup(Setup),
    Ready {
        cookie: [u8; COOKIE_LEN],
    },
    Join {
        cookie: [u8; COOKIE_LEN],
        index: u16,
    },
    Joined,
    Busy,
    Error(String),
    Started,
    Report(Report),
}

const K_HELLO: u8 = 1;
const K_WELCOME: u8 = 2;
const K_AUTH: u8 = 3;
const K_AUTH_OK: u8 = 4;
const K_SETUP: u8 = 5;
const K_READY: u8 = 6;
const K_JOIN: u8 = 7;
const K_JOINED: u8 = 8;
const K_BUSY: u8 = 9;
const K_ERROR: u8 = 10;
const K_STARTED: u8 = 11;
const K_REPORT: u8 = 12;

/// Why bytes are not a valid frame.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("frame of {0} bytes exceeds the protocol maximum of {MAX_FRAME}")]
    Oversized(u64),
    #[error("unknown frame kind {0}")]
    UnknownKind(u8),
    #[error("malformed {kind} frame: {what}")]
    Malformed {
        kind: &'static str,
        what: &'static str,
    },
}

/// Validate a header: `(kind, payload length)`.
pub fn parse_header(h: &[u8; HEADER]) -> Result<(u8, usize), DecodeError> {
    let len = u32::from_le_bytes([h[0], h[1], h[2], h[3]]) as u64;
    if len > MAX_FRAME as u64 {
        return Err(DecodeError::Oversized(len));
    }
    let kind = h[4];
    if !(K_HELLO..=K_REPORT).contains(&kind) {
        return Err(DecodeError::UnknownKind(kind));
    }
    Ok((kind, len as usize))
}

/// Decode one frame from the front of `buf`: `Ok(None)` when more bytes are
/// needed, else the frame and how many bytes it used. Never panics, never
/// allocates more than the payload it was given.
pub fn decode(buf: &[u8]) -> Result<Option<(Frame, usize)>, DecodeError> {
    if buf.len() < HEADER {
        return Ok(None);
    }
    let mut h = [0u8; HEADER];
    h.copy_from_slice(&buf[..HEADER]);
    let (kind, len) = parse_header(&h)?;
    if buf.len() < HEADER + len {
        return Ok(None);
    }
    let frame = decode_payload(kind, &buf[HEADER..HEADER + len])?;
    Ok(Some((frame, HEADER + len)))
}

/// A cursor over a payload that fails instead of panicking.
struct Rd<'a> {
    b: &'a [u8],
    kind: &'static str,
}

impl<'a> Rd<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if self.b.len() < n {
            return Err(DecodeError::Malformed {
                kind: self.kind,
                what: "truncated payload",
            });
        }
        let (a, rest) = self.b.split_at(n);
        self.b = rest;
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, DecodeError> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&mut self) -> Result<u32, DecodeError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes(b.try_into().unwrap_or([0; 4])))
    }
    fn u64(&mut self) -> Result<u64, DecodeError> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
    fn end(&self) -> Result<(), DecodeError> {
        if self.b.is_empty() {
            Ok(())
        } else {
            Err(DecodeError::Malformed {
                kind: self.kind,
                what: "trailing bytes",
            })
        }
    }
    fn bad(&self, what: &'static str) -> DecodeError {
        DecodeError::Malformed {
            kind: self.kind,
            what,
        }
    }
}

fn kind_name(kind: u8) -> &'static str {
    match kind {
        K_HELLO => "hello",
        K_WELCOME => "welcome",
        K_AUTH => "auth",
        K_AUTH_OK => "auth-ok",
        K_SETUP => "setup",
        K_READY => "ready",
        K_JOIN => "join",
        K_JOINED => "joined",
        K_BUSY => "busy",
        K_ERROR => "error",
        K_STARTED => "started",
        _ => "report",
    }
}

/// Decode the payload of a frame whose header was already validated.
pub fn decode_payload(kind: u8, payload: &[u8]) -> Result<Frame, DecodeError> {
    let mut r = Rd {
        b: payload,
        kind: kind_name(kind),
    };
    let f = match kind {
        K_HELLO => Frame::Hello {
            magic: r.array()?,
            version: r.u16()?,
        },
        K_WELCOME => {
            let version = r.u16()?;
            let auth = match r.u8()? {
                0 => false,
                1 => true,
                _ => return Err(r.bad("auth flag is not 0 or 1")),
            };
            Frame::Welcome {
                version,
                auth,
                nonce: r.array()?,
            }
        }
        K_AUTH => Frame::Auth { mac: r.array()? },
        K_AUTH_OK => Frame::AuthOk,
        K_SETUP => {
            let mode = Mode::from_code(r.u8()?).ok_or_else(|| r.bad("unknown mode"))?;
            let direction = Way::from_code(r.u8()?).ok_or_else(|| r.bad("unknown direction"))?;
            Frame::Setup(Setup {
                mode,
                direction,
                streams: r.u16()?,
                chunk_bytes: r.u64()?,
                time_ms: r.u32()?,
                omit_ms: r.u32()?,
                bytes: r.u64()?,
                interval_ms: r.u32()?,
                last: match r.u8()? {
                    0 => false,
                    1 => true,
                    _ => return Err(r.bad("last flag is not 0 or 1")),
                },
            })
        }
        K_READY => Frame::Ready { cookie: r.array()? },
        K_JOIN => Frame::Join {
            cookie: r.array()?,
            index: r.u16()?,
        },
        K_JOINED => Frame::Joined,
        K_BUSY => Frame::Busy,
        K_ERROR => {
            let s = std::str::from_utf8(r.take(payload.len())?)
                .map_err(|_| r.bad("message is not UTF-8"))?;
            // The peer's words reach this side's terminal and run files:
            // cleaned and bounded here, where they arrive, so no caller
            // can print them raw (terminal escapes, a 60 KB line).
            Frame::Error(crate::util::text::foreign_message(s))
        }
        K_STARTED => Frame::Started,
        K_REPORT => {
            let received_bytes = r.u64()?;
            let sent_bytes = r.u64()?;
            let rounds = r.u64()?;
            let active_nanos = r.u64()?;
            let n = r.u32()? as usize;
            if n > MAX_INTERVALS {
                return Err(r.bad("too many intervals"));
            }
            if r.b.len() != n * 16 {
                return Err(r.bad("interval count does not match the payload"));
            }
            let mut intervals = Vec::with_capacity(n);
            for _ in 0..n {
                intervals.push(Interval {
                    nanos: r.u64()?,
                    bytes: r.u64()?,
                });
            }
            Frame::Report(Report {
                received_bytes,
                sent_bytes,
                rounds,
                active_nanos,
                intervals,
            })
        }
        other => return Err(DecodeError::UnknownKind(other)),
    };
    r.end()?;
    Ok(f)
}

/// Encode a frame (header + payload).
pub fn encode(f: &Frame) -> Vec<u8> {
    let mut p: Vec<u8> = Vec::with_capacity(64);
    let kind = match f {
        Frame::Hello { magic, version } => {
            p.extend_from_slice(magic);
            p.extend_from_slice(&version.to_le_bytes());
            K_HELLO
        }
        Frame::Welcome {
            version,
            auth,
            nonce,
        } => {
            p.extend_from_slice(&version.to_le_bytes());
            p.push(*auth as u8);
            p.extend_from_slice(nonce);
            K_WELCOME
        }
        Frame::Auth { mac } => {
            p.extend_from_slice(mac);
            K_AUTH
        }
        Frame::AuthOk => K_AUTH_OK,
        Frame::Setup(s) => {
            p.push(s.mode.code());
            p.push(s.direction.code());
            p.extend_from_slice(&s.streams.to_le_bytes());
            p.extend_from_slice(&s.chunk_bytes.to_le_bytes());
            p.extend_from_slice(&s.time_ms.to_le_bytes());
            p.extend_from_slice(&s.omit_ms.to_le_bytes());
            p.extend_from_slice(&s.bytes.to_le_bytes());
            p.extend_from_slice(&s.interval_ms.to_le_bytes());
            p.push(s.last as u8);
            K_SETUP
        }
        Frame::Ready { cookie } => {
            p.extend_from_slice(cookie);
            K_READY
        }
        Frame::Join { cookie, index } => {
            p.extend_from_slice(cookie);
            p.extend_from_slice(&index.to_le_bytes());
            K_JOIN
        }
        Frame::Joined => K_JOINED,
        Frame::Busy => K_BUSY,
        Frame::Error(m) => {
            // Keep within MAX_FRAME on a char boundary.
            let mut end = m.len().min(MAX_FRAME);
            while !m.is_char_boundary(end) {
                end -= 1;
            }
            p.extend_from_slice(&m.as_bytes()[..end]);
            K_ERROR
        }
        Frame::Started => K_STARTED,
        Frame::Report(r) => {
            p.extend_from_slice(&r.received_bytes.to_le_bytes());
            p.extend_from_slice(&r.sent_bytes.to_le_bytes());
            p.extend_from_slice(&r.rounds.to_le_bytes());
            p.extend_from_slice(&r.active_nanos.to_le_bytes());
            let n = r.intervals.len().min(MAX_INTERVALS);
            p.extend_from_slice(&(n as u32).to_le_bytes());
            for i in &r.intervals[..n] {
                p.extend_from_slice(&i.nanos.to_le_bytes());
                p.extend_from_slice(&i.bytes.to_le_bytes());
            }
            K_REPORT
        }
    };
    let mut out = Vec::with_capacity(HEADER + p.len());
    out.extend_from_slice(&(p.len() as u32).to_le_bytes());
    out.push(kind);
    out.extend_from_slice(&p);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ways_spell_the_models_words() {
        for (w, s) in [
            (Way::Send, "send"),
            (Way::Recv, "recv"),
            (Way::Bidir, "bidir"),
        ] {
            assert_eq!(w.name(), s);
            assert_eq!(serde_json::to_value(w).unwrap(), serde_json::json!(s));
            assert_eq!(Way::from_code(w.code()), Some(w));
        }
    }

    fn roundtrip(f: Frame) {
        let b = encode(&f);
        assert_eq!(decode(&b).unwrap(), Some((f, b.len())));
        // Every strict prefix asks for more bytes.
        for cut in 0..b.len() {
            assert_eq!(decode(&b[..cut]).unwrap(), None, "prefix {}", cut);
        }
    }

    #[test]
    fn frames_roundtrip() {
        roundtrip(Frame::Hello {
            magic: MAGIC,
            version: VERSION,
        });
        roundtrip(Frame::Welcome {
            version: 1,
            auth: true,
            nonce: [7; 32],
        });
        roundtrip(Frame::Auth { mac: [9; 32] });
        roundtrip(Frame::AuthOk);
        roundtrip(Frame::Setup(Setup {
            mode: Mode::Stream,
            direction: Way::Bidir,
            streams: 4,
            chunk_bytes: 1 << 20,
            time_ms: 3000,
            omit_ms: 500,
            bytes: 0,
            interval_ms: 100,
            last: true,
        }));
        roundtrip(Frame::Ready { cookie: [1; 16] });
        roundtrip(Frame::Join {
            cookie: [2; 16],
            index: 3,
        });
        roundtrip(Frame::Joined);
        roundtrip(Frame::Busy);
        roundtrip(Frame::Error("nope ✓".into()));
        roundtrip(Frame::Started);
        roundtrip(Frame::Report(Report {
            received_bytes: 5,
            sent_bytes: 6,
            rounds: 7,
            active_nanos: 8,
            intervals: vec![Interval { nanos: 1, bytes: 2 }; 3],
        }));
    }

    #[test]
    fn rejects_bad_headers_and_payloads() {
        assert_eq!(
            decode(&[0xff, 0xff, 0xff, 0xff, 1]),
            Err(DecodeError::Oversized(0xffff_ffff))
        );
        assert_eq!(decode(&[0, 0, 0, 0, 99]), Err(DecodeError::UnknownKind(99)));
        // Hello with a missing byte of its version.
        assert!(matches!(
            decode(&[5, 0, 0, 0, K_HELLO, b'B', b'W', b'S', b'C', 1]),
            Err(DecodeError::Malformed { .. })
        ));
        // Busy with trailing garbage.
        assert!(matches!(
            decode(&[1, 0, 0, 0, K_BUSY, 0]),
            Err(DecodeError::Malformed { .. })
        ));
        // A report that claims more intervals than it carries.
        let mut b = encode(&Frame::Report(Report::default()));
        b[HEADER + 32] = 2;
        assert!(decode(&b).is_err());
    }

    #[test]
    fn hmac_answers_depend_on_token_and_nonce() {
        let n = random_bytes::<32>();
        let m = auth_mac(b"secret", &n);
        assert!(auth_ok(b"secret", &n, &m));
        assert!(!auth_ok(b"Secret", &n, &m));
        let n2 = random_bytes::<32>();
        assert_ne!(n, n2, "nonces repeat");
        assert!(!auth_ok(b"secret", &n2, &m));
    }
}
