//! The rank ↔ rank 0 conversation on a TCP connection. Frames are a
//! little-endian `u32` length and a JSON message; before a rank is
//! accepted a frame may be at most 64 KiB.
//!
//! Joining: `Join{identity}` → `Challenge{nonce}` → `Auth{HMAC(token,
//! nonce)}` (the same challenge as `bwscope net`; the token never crosses
//! the wire) → `Accepted`, or `Refused{reason}` at any point.
//!
//! A rank that holds a token asks rank 0 to prove it holds it too before
//! it answers: `Prove{nonce}` ahead of `Join`, answered by `Proof{HMAC}`
//! (another domain label) right after the challenge. Without it, anyone
//! who got a rank to connect (a squatted `--coordinator` port, a planted
//! rendezvous note) would receive that rank's results; a rank 0 that asks
//! for no token, or cannot prove it, is refused by the rank.

use std::io::{self, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::comm::Identity;
use super::rendezvous;
use crate::net::protocol::{
    auth_mac, auth_mac_as, auth_ok, auth_ok_as, random_bytes, NONCE_LEN, SERVER_LABEL,
};

pub const MAGIC: &str = "bwscope-fleet";
/// Largest frame before a rank is accepted.
const PRE_AUTH_MAX: usize = 64 << 10;
/// Largest frame after: a node run with every raw sample.
pub const MAX_FRAME: usize = 1 << 30;
/// Bound on each step of a join.
const HANDSHAKE: Duration = Duration::from_secs(10);
/// Bound on every write to a rank.
const WRITE: Duration = Duration::from_secs(10);

/// One message. `Join` keeps this shape in every protocol version, so rank
/// 0 can always name the release a rank runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum Wire {
    Join {
        magic: String,
        id: Identity,
    },
    Challenge {
        nonce: Option<String>,
    },
    Auth {
        mac: String,
    },
    Accepted,
    Refused {
        /// Shown on the rank's terminal: cleaned as it is decoded.
        #[serde(deserialize_with = "crate::util::text::de_foreign_message")]
        reason: String,
    },
    Data {
        seq: u64,
        body: Value,
    },
    /// Rank 0 was interrupted: stop measuring and deliver what you have.
    Stop,
    /// A rank with a token, before `Join`: prove you hold it too.
    Prove {
        nonce: String,
    },
    /// Rank 0's answer to `Prove`, after `Challenge`.
    Proof {
        mac: String,
    },
    /// Rank 0 is alive: sent every second, so a rank waiting for its next
    /// command can tell a long phase from a rank 0 that is stopped, hung
    /// or cut off (its connection stays open either way).
    Alive,
}

/// 32 bytes from hex, if that is what `text` is.
fn nonce_of(text: &str) -> Option<[u8; NONCE_LEN]> {
    rendezvous::from_hex(text).and_then(|v| <[u8; NONCE_LEN]>::try_from(v).ok())
}

pub fn write_msg(s: &mut TcpStream, m: &Wire) -> io::Result<()> {
    let body = serde_json::to_vec(m)?;
    let mut frame = Vec::with_capacity(body.len() + 4);
    frame.extend_from_slice(&(body.len() as u32).to_le_bytes());
    frame.extend_from_slice(&body);
    s.set_write_timeout(Some(WRITE))?;
    s.write_all(&frame)
}

/// One message of at most `max` bytes; `timeout` None waits for ever.
pub fn read_msg(s: &mut TcpStream, max: usize, timeout: Option<Duration>) -> Result<Wire, String> {
    s.set_read_timeout(timeout).map_err(|e| e.to_string())?;
    let mut len = [0u8; 4];
    match crate::net::read_exact_or_eof(s, &mut len) {
        Ok(true) => {}
        Ok(false) => return Err("the peer closed the connection".into()),
        Err(e) => return Err(e.to_string()),
    }
    let len = u32::from_le_bytes(len) as usize;
    if len > max {
        return Err(format!("a frame of {len} bytes (at most {max} here)"));
    }
    let mut buf = vec![0u8; len];
    match crate::net::read_exact_or_eof(s, &mut buf) {
        Ok(true) => {}
        Ok(false) if len == 0 => {}
        _ => return Err("the peer closed the connection in the middle of a frame".into()),
    }
    decode_msg(&buf)
}

/// One message's body (the bytes after its length) as a [`Wire`]; what
/// [`read_msg`] does with a frame, on its own so it can be fuzzed
/// (`fuzz/fuzz_targets/fleet_wire.rs`).
pub fn decode_msg(buf: &[u8]) -> Result<Wire, String> {
    // serde's error quotes what it could not take (`unknown variant
    // `…``), and rank 0 prints it: cleaned like the peer's own words.
    serde_json::from_slice(buf).map_err(|e| {
        format!(
            "bad message: {}",
            crate::util::text::foreign_message(&e.to_string())
        )
    })
}

/// Rank 0's side of one join: read the identity, challenge, accept.
pub(super) fn admit(
    mut s: TcpStream,
    token: Option<&[u8]>,
    size: u32,
) -> Result<(TcpStream, Identity), String> {
    let _ = s.set_nodelay(true);
    let mut first = read_msg(&mut s, PRE_AUTH_MAX, Some(HANDSHAKE))?;
    let mut asked = None;
    if let Wire::Prove { nonce } = &first {
        asked = Some(nonce_of(nonce).ok_or("a bad proof request")?);
        first = read_msg(&mut s, PRE_AUTH_MAX, Some(HANDSHAKE))?;
    }
    let id = match first {
        Wire::Join { magic, id } if magic == MAGIC => id,
        _ => return Err("not a bwscope fleet rank".into()),
    };
    let refuse = |s: &mut TcpStream, reason: String| {
        let _ = write_msg(
            s,
            &Wire::Refused {
                reason: reason.clone(),
            },
        );
        Err(reason)
    };
    if id.size != size || id.rank == 0 || id.rank >= size {
        return refuse(
            &mut s,
            format!(
                "rank {} of {} does not belong to this fleet of {} (two jobs share a rendezvous file? give --rendezvous DIR)",
                id.rank, id.size, size
            ),
        );
    }
    let nonce = token.map(|_| random_bytes::<NONCE_LEN>());
    write_msg(
        &mut s,
        &Wire::Challenge {
            nonce: nonce.map(|n| rendezvous::to_hex(&n)),
        },
    )
    .map_err(|e| e.to_string())?;
    if let (Some(token), Some(theirs)) = (token, asked) {
        let mac = auth_mac_as(SERVER_LABEL, token, &theirs);
        write_msg(
            &mut s,
            &Wire::Proof {
                mac: rendezvous::to_hex(&mac),
            },
        )
        .map_err(|e| e.to_string())?;
    }
    if let (Some(token), Some(nonce)) = (token, nonce) {
        let good = match read_msg(&mut s, PRE_AUTH_MAX, Some(HANDSHAKE))? {
            Wire::Auth { mac } => rendezvous::from_hex(&mac)
                .and_then(|m| <[u8; NONCE_LEN]>::try_from(m).ok())
                .is_some_and(|m| auth_ok(token, &nonce, &m)),
            _ => false,
        };
        if !good {
            return refuse(
                &mut s,
                "authentication failed: wrong token (every rank needs the same --token-file)"
                    .into(),
            );
        }
    }
    write_msg(&mut s, &Wire::Accepted).map_err(|e| e.to_string())?;
    Ok((s, id))
}

/// A rank's side of the join, each step bounded by `within` (the rank's
/// startup time left) and at most [`HANDSHAKE`]. `Err(Ok(reason))`:
/// refused (final); `Err(Err(e))`: could not talk (retry).
pub(super) fn join(
    addr: SocketAddr,
    id: &Identity,
    token: Option<&[u8]>,
    within: Duration,
) -> Result<TcpStream, Result<String, String>> {
    let step = Some(within.clamp(Duration::from_millis(100), HANDSHAKE));
    let mut c = TcpStream::connect_timeout(&addr, Duration::from_secs(2))
        .map_err(|e| Err(e.to_string()))?;
    let _ = c.set_nodelay(true);
    let talk = |e: String| Err(e);
    let mine = token.map(|_| random_bytes::<NONCE_LEN>());
    if let Some(n) = mine {
        write_msg(
            &mut c,
            &Wire::Prove {
                nonce: rendezvous::to_hex(&n),
            },
        )
        .map_err(|e| talk(e.to_string()))?;
    }
    write_msg(
        &mut c,
        &Wire::Join {
            magic: MAGIC.into(),
            id: id.clone(),
        },
    )
    .map_err(|e| talk(e.to_string()))?;
    match read_msg(&mut c, PRE_AUTH_MAX, step).map_err(talk)? {
        Wire::Challenge { nonce: None } if token.is_some() => {
            return Err(Ok(format!(
                "the rank 0 at {addr} asks for no token while this rank has one: it is not your fleet's rank 0, or the ranks were given different --token-file"
            )));
        }
        Wire::Challenge { nonce: None } => {}
        Wire::Challenge { nonce: Some(n) } => {
            let nonce = nonce_of(&n).ok_or_else(|| talk("a bad challenge".into()))?;
            let Some(token) = token else {
                return Err(Ok(
                    "rank 0 requires a token: give every rank the same --token-file".into(),
                ));
            };
            // Rank 0 proves it holds the token before this rank answers.
            let proven = match read_msg(&mut c, PRE_AUTH_MAX, step).map_err(talk)? {
                Wire::Proof { mac } => nonce_of(&mac).is_some_and(|m| {
                    mine.is_some_and(|mine| auth_ok_as(SERVER_LABEL, token, &mine, &m))
                }),
                Wire::Refused { reason } => return Err(Ok(reason)),
                _ => false,
            };
            if !proven {
                return Err(Ok(format!(
                    "the rank 0 at {addr} could not prove it holds the token: another process is posing as rank 0, or the ranks were given different --token-file"
                )));
            }
            write_msg(
                &mut c,
                &Wire::Auth {
                    mac: rendezvous::to_hex(&auth_mac(token, &nonce)),
                },
            )
            .map_err(|e| talk(e.to_string()))?;
        }
        Wire::Refused { reason } => return Err(Ok(reason)),
        _ => return Err(talk("an unexpected answer".into())),
    }
    match read_msg(&mut c, PRE_AUTH_MAX, step).map_err(talk)? {
        Wire::Accepted => Ok(c),
        Wire::Refused { reason } => Err(Ok(reason)),
        _ => Err(talk("an unexpected answer".into())),
    }
}

/// One join over loopback with the other side scripted: `peer` is every
/// byte that side sends (then it closes its half and reads to the end),
/// and this side is rank 0 of a fleet of 2 ([`admit`]) or rank 1
/// ([`join`]), holding `token` or none. Ok: the join was accepted. For
/// fuzzing the conversation (`fuzz/fuzz_targets/hmac_join.rs`) and its
/// tests: a script never learns the MAC of a nonce drawn for this join,
/// so with a token neither side may ever accept it.
pub fn scripted_join(as_rank_0: bool, token: Option<&[u8]>, peer: &[u8]) -> Result<(), String> {
    let l = std::net::TcpListener::bind(("127.0.0.1", 0)).map_err(|e| e.to_string())?;
    let addr = l.local_addr().map_err(|e| e.to_string())?;
    let script = |mut s: TcpStream| {
        let _ = s.set_write_timeout(Some(HANDSHAKE));
        let _ = s.write_all(peer);
        let _ = s.shutdown(std::net::Shutdown::Write);
        let _ = s.set_read_timeout(Some(HANDSHAKE));
        let _ = io::copy(&mut s, &mut io::sink());
    };
    std::thread::scope(|sc| {
        if as_rank_0 {
            sc.spawn(|| {
                if let Ok(s) = TcpStream::connect(addr) {
                    script(s);
                }
            });
            let (s, _) = l.accept().map_err(|e| e.to_string())?;
            admit(s, token, 2).map(|_| ())
        } else {
            sc.spawn(|| {
                if let Ok((s, _)) = l.accept() {
                    script(s);
                }
            });
            let id = Identity::this(1, 2, None);
            join(addr, &id, token, Duration::from_secs(2))
                .map(|_| ())
                .map_err(|e| e.unwrap_or_else(|e| e))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(m: &Wire) -> Vec<u8> {
        let body = serde_json::to_vec(m).unwrap();
        let mut f = (body.len() as u32).to_le_bytes().to_vec();
        f.extend(body);
        f
    }

    /// A scripted peer is accepted where no token is asked, and never
    /// where one is: it cannot answer a nonce drawn for the join.
    #[test]
    fn a_scripted_peer_joins_only_without_a_token() {
        let join = frame(&Wire::Join {
            magic: MAGIC.into(),
            id: Identity::this(1, 2, None),
        });
        let mut rank = join.clone();
        rank.extend(frame(&Wire::Auth {
            mac: rendezvous::to_hex(&[7u8; NONCE_LEN]),
        }));
        assert_eq!(scripted_join(true, None, &join), Ok(()));
        assert!(scripted_join(true, Some(b"secret"), &rank).is_err());
        let mut root = frame(&Wire::Challenge { nonce: None });
        root.extend(frame(&Wire::Accepted));
        assert_eq!(scripted_join(false, None, &root), Ok(()));
        let mut root = frame(&Wire::Challenge {
            nonce: Some(rendezvous::to_hex(&[1u8; NONCE_LEN])),
        });
        root.extend(frame(&Wire::Proof {
            mac: rendezvous::to_hex(&[2u8; NONCE_LEN]),
        }));
        root.extend(frame(&Wire::Accepted));
        let e = scripted_join(false, Some(b"secret"), &root).unwrap_err();
        assert!(e.contains("could not prove it holds the token"), "{e}");
        // Bytes that are no conversation end it at once, refused.
        assert!(scripted_join(true, None, b"\xff\xff\xff\xffjunk").is_err());
        assert!(scripted_join(false, None, b"").is_err());
    }
}
