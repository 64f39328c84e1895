//! The handshake of one connection: hello, auth, then setup (a leader's
//! control connection) or join (one of its data streams), all within one
//! deadline however slowly the peer drips its bytes.

use std::net::{IpAddr, TcpStream};
use std::time::Instant;

use super::session::{control, join};
use super::{wire, Outcome, Shared};
use crate::net::protocol::{self, Frame};
use crate::net::{read_frame_until, write_frame};

/// A connection counted against its address until its handshake ends.
pub(super) struct Handshaking<'a> {
    sh: &'a Shared,
    ip: IpAddr,
    counted: bool,
}

impl<'a> Handshaking<'a> {
    /// Count one more handshake from `ip`; `None` when it already has the
    /// most allowed.
    pub(super) fn enter(sh: &'a Shared, ip: IpAddr) -> Option<Handshaking<'a>> {
        let mut m = sh.handshaking.lock().ok()?;
        let n = m.entry(ip).or_insert(0);
        if *n >= sh.cfg.max_handshakes_per_addr {
            return None;
        }
        *n += 1;
        Some(Handshaking {
            sh,
            ip,
            counted: true,
        })
    }

    /// Still in the handshake (not yet set up or joined)?
    pub(super) fn in_handshake(&self) -> bool {
        self.counted
    }

    /// The handshake is over (however it ended).
    pub(super) fn leave(&mut self) {
        if std::mem::take(&mut self.counted) {
            if let Ok(mut m) = self.sh.handshaking.lock() {
                if let Some(n) = m.get_mut(&self.ip) {
                    *n -= 1;
                    if *n == 0 {
                        m.remove(&self.ip);
                    }
                }
            }
        }
    }
}

impl Drop for Handshaking<'_> {
    fn drop(&mut self) {
        self.leave();
    }
}

pub(super) fn session(
    s: &mut TcpStream,
    sh: &Shared,
    peer: &str,
    hs: &mut Handshaking,
) -> Result<Outcome, String> {
    let t = sh.cfg.timeout;
    // One deadline for hello, auth and setup/join together.
    let deadline = Instant::now() + t;
    match read_frame_until(s, deadline).map_err(wire("handshake"))? {
        Frame::Hello { magic, version } => {
            if magic != protocol::MAGIC {
                return Err("handshake: not a bwscope leader (bad magic)".into());
            }
            if version != protocol::VERSION {
                return Err(format!(
                    "handshake: leader speaks protocol v{}, this server v{}; use the same bwscope release on both ends",
                    version,
                    protocol::VERSION
                ));
            }
        }
        other => return Err(format!("handshake: expected hello, got {:?}", kind(&other))),
    }
    let nonce = protocol::random_bytes::<{ protocol::NONCE_LEN }>();
    let welcome = Frame::Welcome {
        version: protocol::VERSION,
        auth: sh.cfg.token.is_some(),
        nonce,
    };
    write_frame(s, &welcome, t).map_err(wire("handshake"))?;
    if let Some(token) = &sh.cfg.token {
        match read_frame_until(s, deadline).map_err(wire("auth"))? {
            Frame::Auth { mac } if protocol::auth_ok(token, &nonce, &mac) => {
                write_frame(s, &Frame::AuthOk, t).map_err(wire("auth"))?;
            }
            Frame::Auth { .. } => return Err("authentication failed: wrong token".into()),
            other => return Err(format!("auth: expected auth, got {}", kind(&other))),
        }
    }
    let frame = read_frame_until(s, deadline).map_err(wire("setup"))?;
    hs.leave();
    match frame {
        Frame::Setup(setup) => control(s, sh, peer, setup),
        Frame::Join { cookie, index } => join(s, sh, cookie, index),
        other => Err(format!(
            "setup: expected setup or join, got {}",
            kind(&other)
        )),
    }
}

fn kind(f: &Frame) -> &'static str {
    match f {
        Frame::Hello { .. } => "hello",
        Frame::Welcome { .. } => "welcome",
        Frame::Auth { .. } => "auth",
        Frame::AuthOk => "auth-ok",
        Frame::Setup(_) => "setup",
        Frame::Ready { .. } => "ready",
        Frame::Join { .. } => "join",
        Frame::Joined => "joined",
        Frame::Busy => "busy",
        Frame::Error(_) => "error",
        Frame::Started => "started",
        Frame::Report(_) => "report",
    }
}
