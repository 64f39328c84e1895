//! Network bandwidth between a leader (`bwscope net run`) and a transponder
//! (`bwscope net serve`) over TCP.
//!
//! - [`protocol`]: frames, the pure decoder, the HMAC challenge.
//! - [`flow`]: the loops that move bulk bytes (shared by both ends) and the
//!   receive meter.
//! - [`server`]: the transponder: one test at a time, limits, one log line
//!   per test.
//! - [`client`]: the leader's side of one test.
//! - [`token`]: `--token-file`, bounded and private.
//! - [`args`]: the command-line arguments of `net serve` / `net run`.
//!
//! Framing and timeouts live here so that every read of a control frame has
//! a deadline and a size bound.

pub mod client;
pub mod flow;
pub mod protocol;
pub mod server;
pub mod token;

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use protocol::{DecodeError, Frame, HEADER};

/// What went wrong on a connection, in words a log line or the leader's
/// error message can use as is.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    #[error("timed out waiting for the peer ({0:?})")]
    Timeout(Duration),
    #[error("the peer closed the connection")]
    Closed,
    #[error("the peer closed the connection in the middle of a frame")]
    Truncated,
    #[error("bad frame: {0}")]
    Decode(#[from] DecodeError),
    #[error("{0}")]
    Io(io::Error),
}

impl WireError {
    pub fn from_io(e: io::Error, timeout: Duration) -> WireError {
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => WireError::Timeout(timeout),
            io::ErrorKind::UnexpectedEof => WireError::Truncated,
            io::ErrorKind::ConnectionReset | io::ErrorKind::BrokenPipe => WireError::Closed,
            _ => WireError::Io(e),
        }
    }
}

/// Read exactly `buf.len()` bytes. `Ok(false)` when the peer closed before
/// the first byte (a clean end), `Truncated` when it closed in the middle.
pub fn read_exact_or_eof(s: &mut TcpStream, buf: &mut [u8]) -> io::Result<bool> {
    read_exact_with(s, buf, |_| Ok(()))
}

/// Read exactly `buf.len()` bytes before `deadline`: each `read()` may
/// wait only for the time left, so a peer dripping one byte at a time
/// cannot stretch the wait. Results as [`read_exact_or_eof`].
fn read_exact_by(s: &mut TcpStream, buf: &mut [u8], deadline: Instant) -> io::Result<bool> {
    read_exact_with(s, buf, |s| {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        s.set_read_timeout(Some(left))
    })
}

/// The read loop of both: `before` runs ahead of every `read()`.
fn read_exact_with(
    s: &mut TcpStream,
    buf: &mut [u8],
    mut before: impl FnMut(&mut TcpStream) -> io::Result<()>,
) -> io::Result<bool> {
    let mut got = 0;
    while got < buf.len() {
        before(s)?;
        match s.read(&mut buf[got..]) {
            Ok(0) if got == 0 => return Ok(false),
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// Read one control frame within `timeout`: one deadline for the whole
/// frame, header and payload.
pub fn read_frame(s: &mut TcpStream, timeout: Duration) -> Result<Frame, WireError> {
    read_frame_until(s, Instant::now() + timeout)
}

/// Read one control frame, all of it before `deadline` (a handshake of
/// several frames shares one deadline).
pub fn read_frame_until(s: &mut TcpStream, deadline: Instant) -> Result<Frame, WireError> {
    let allowed = deadline.saturating_duration_since(Instant::now());
    let mut h = [0u8; HEADER];
    match read_exact_by(s, &mut h, deadline) {
        Ok(true) => {}
        Ok(false) => return Err(WireError::Closed),
        Err(e) => return Err(WireError::from_io(e, allowed)),
    }
    let (kind, len) = protocol::parse_header(&h)?;
    let mut payload = vec![0u8; len];
    match read_exact_by(s, &mut payload, deadline) {
        Ok(true) => {}
        Ok(false) if len == 0 => {}
        Ok(false) => return Err(WireError::Truncated),
        Err(e) => return Err(WireError::from_io(e, allowed)),
    }
    Ok(protocol::decode_payload(kind, &payload)?)
}

/// Write one control frame within `timeout`.
pub fn write_frame(s: &mut TcpStream, f: &Frame, timeout: Duration) -> Result<(), WireError> {
    s.set_write_timeout(Some(timeout)).map_err(WireError::Io)?;
    s.write_all(&protocol::encode(f))
        .map_err(|e| WireError::from_io(e, timeout))
}

/// Render a peer address for logs and records (`127.0.0.1:5280`).
pub fn peer_name(s: &TcpStream) -> String {
    s.peer_addr().map_or_else(|_| "?".into(), |a| a.to_string())
}
