//! Meeting the fleet: rank 0 listens, publishes where it is, waits for
//! every rank and checks them; the other ranks find rank 0 and join.

use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{spawn_reader, Alive, Incoming, Settings, TcpComm, ALIVE_EVERY};
use crate::cluster::comm::{check_identities, Identity, Lost};
use crate::cluster::rendezvous::{self, Note};
use crate::cluster::wire::{admit, join, write_msg, Wire};
use crate::error::UserError;
use crate::net::protocol::random_bytes;
use crate::os::time::now_ns;

/// Descriptors rank 0 holds per rank (the connection, its reader's
/// clone, the `Alive` thread's clone).
const FDS_PER_RANK: u64 = 3;
/// Descriptors rank 0 needs besides: its listener, outputs, lock files,
/// the transponder and the flows of its own pair tests.
const FDS_OF_ITS_OWN: u64 = 64;

/// The open files a job of `size` ranks needs at rank 0.
fn descriptors_needed(size: u32) -> u64 {
    FDS_PER_RANK * u64::from(size) + FDS_OF_ITS_OWN
}

/// Rank 0 ran out of open files while ranks joined: a hard `ulimit -n`
/// too small for the job ended it with a bare "Too many open files"
/// (exit 1). Now the fleet is refused, saying what the job needs.
fn out_of_descriptors(size: u32) -> UserError {
    let need = descriptors_needed(size);
    let limit = crate::os::fds::limit().map_or("unlimited".to_string(), |l| l.to_string());
    UserError::flag(
        "ulimit -n",
        format!(
            "rank 0 ran out of open files (its limit is {limit}): a fleet of {size} ranks needs about {need} ({FDS_PER_RANK} per rank and {FDS_OF_ITS_OWN} of its own); raise the hard limit (`ulimit -n {need}` as root, or limits.conf) or run fewer ranks"
        ),
    )
}

/// Say before anyone joins when the job will not fit under the limit
/// (the refusal follows only when ranks do join: a job whose ranks never
/// come needs no descriptors for them).
fn warn_descriptors(size: u32) {
    let need = descriptors_needed(size);
    if let Some((free, limit)) = crate::os::fds::free().filter(|(free, _)| *free < need) {
        eprintln!(
            "bwscope fleet: warning: ulimit -n: {free} of rank 0's {limit} open files are free, and {size} ranks need about {need}: the fleet is refused if more than about {} of them join",
            free.saturating_sub(FDS_OF_ITS_OWN) / FDS_PER_RANK
        );
    }
}

/// A rank busy in a flow or a measurement waits for no message, so a
/// rank 0 stopped meanwhile was noticed only after the flow's own
/// timeouts and then a whole `--timeout` more (15 s at `--timeout 5`).
/// This thread asks the rank to stop (as rank 0's `Stop` would) once rank
/// 0 has been silent for `silence`; its next wait for rank 0 then ends at
/// once, saying for how long. It ends with the rank's connection (`heard`
/// gone).
fn watch_rank_0(heard: std::sync::Weak<AtomicU64>, silence: Duration, stop: &'static AtomicBool) {
    let limit = silence.as_nanos().min(u128::from(u64::MAX)) as u64;
    let _ = std::thread::Builder::new()
        .name("fleet-watch".into())
        .spawn(move || loop {
            std::thread::sleep(Duration::from_millis(200));
            let Some(h) = heard.upgrade() else { return };
            if now_ns().saturating_sub(h.load(Ordering::Relaxed)) > limit {
                stop.store(true, Ordering::SeqCst);
                return;
            }
        });
}

pub(super) fn root(
    s: &Settings,
    stop: &'static AtomicBool,
) -> anyhow::Result<(TcpComm, Option<Vec<u8>>)> {
    let size = s.launch.size;
    // Rank 0 holds a connection per rank: a fleet of a thousand nodes
    // needs more than the usual soft limit of 1024.
    crate::os::fds::raise_limit();
    warn_descriptors(size);
    let (port, from) = match &s.coordinator {
        Some((c, from)) => (
            check_coordinator(c).map_err(|m| UserError::flag(from, m))?,
            *from,
        ),
        None => (0, "--coordinator"),
    };
    let listener = TcpListener::bind(("0.0.0.0", port))
        .map_err(|e| UserError::flag(from, format!("rank 0 cannot listen on port {port}: {e}")))?;
    let port = listener.local_addr()?.port();
    let token = session_token(s, port);
    let note_path = rendezvous::path(&s.rendezvous_dir, s.launch.job.as_deref());
    let writer = rendezvous::Writer::this(s.startup.as_secs_f64());
    if s.coordinator.is_none() {
        publish_note(s, port, token.as_deref(), &writer, &note_path)?;
    }
    // Ranks that joined wait for the others: they hear `Alive` meanwhile.
    let writing = Arc::new(Mutex::new(Vec::new()));
    let alive = Alive::start(writing.clone())?;
    let (streams, ids, exhausted) = gather(&listener, s, token.as_deref(), stop, &writing);
    // Remove the note, unless another rank 0 has replaced it meanwhile.
    if s.coordinator.is_none()
        && rendezvous::read(&note_path).is_some_and(|n| n.writer.as_ref() == Some(&writer))
    {
        let _ = std::fs::remove_file(&note_path);
    }
    let joined = match exhausted {
        false => read_joined(&streams, s, stop),
        true => Err(out_of_descriptors(size).into()),
    };
    let (rx, lost, ips) = match joined {
        Ok(j) => j,
        Err(e) => {
            // The ranks that joined are told, rather than left to their
            // own --timeout.
            let reason = format!("{e:#}");
            for c in streams.into_iter().flatten() {
                let mut c = c;
                let _ = write_msg(
                    &mut c,
                    &Wire::Refused {
                        reason: reason.clone(),
                    },
                );
            }
            return Err(e);
        }
    };
    let mut comm = TcpComm {
        rank: 0,
        size,
        seq: 0,
        peers: streams,
        ids,
        lost,
        up: None,
        rx,
        ip: most_common(&ips),
        stop,
        stop_sent: false,
        phase: "startup".into(),
        silence: s.startup,
        heard: Arc::new(AtomicU64::new(0)),
        writing,
        _alive: Some(alive),
    };
    let present: Vec<Identity> = comm.ids.iter().flatten().cloned().collect();
    if let Err(reason) = check_identities(&present) {
        comm.refuse_all(&reason);
        return Err(UserError::BadInput {
            path: "bwscope fleet".into(),
            problem: reason,
        }
        .into());
    }
    Ok((comm, token))
}

/// Writes the rendezvous note the other ranks find rank 0 by: its
/// addresses, and the session token unless the ranks share one already.
fn publish_note(
    s: &Settings,
    port: u16,
    token: Option<&[u8]>,
    writer: &rendezvous::Writer,
    note_path: &std::path::Path,
) -> anyhow::Result<()> {
    let note = Note {
        version: env!("CARGO_PKG_VERSION").into(),
        protocol: crate::cluster::comm::PROTOCOL,
        job: s.launch.job.clone(),
        size: s.launch.size,
        addrs: rendezvous::local_ipv4()
            .into_iter()
            .map(|ip| SocketAddr::new(IpAddr::V4(ip), port))
            .collect(),
        token: token.filter(|_| s.token.is_none()).map(rendezvous::to_hex),
        writer: Some(writer.clone()),
    };
    rendezvous::publish(note_path, &note).map_err(|e| UserError::flag("--rendezvous", e))?;
    Ok(())
}

/// A reader thread per rank that joined, all feeding one channel; the
/// ranks that never joined, as lost at start-up; and the addresses rank 0
/// was reached on.
#[allow(clippy::type_complexity)]
fn read_joined(
    streams: &[Option<TcpStream>],
    s: &Settings,
    stop: &AtomicBool,
) -> anyhow::Result<(Receiver<(u32, Incoming)>, Vec<Lost>, Vec<IpAddr>)> {
    let (tx, rx) = mpsc::channel();
    let mut lost = Vec::new();
    let mut ips: Vec<IpAddr> = Vec::new();
    for r in 1..s.launch.size {
        match &streams[r as usize] {
            Some(c) => {
                if let Ok(a) = c.local_addr() {
                    ips.push(a.ip());
                }
                let c = c.try_clone().map_err(|e| -> anyhow::Error {
                    if crate::os::fds::is_exhausted(&e) {
                        out_of_descriptors(s.launch.size).into()
                    } else {
                        e.into()
                    }
                })?;
                spawn_reader(c, r, tx.clone(), None, None);
            }
            None => lost.push(Lost {
                rank: r,
                phase: "startup".into(),
                reason: if stop.load(Ordering::Relaxed) {
                    "interrupted before it joined".into()
                } else {
                    format!(
                        "never joined within {:.0} s (--timeout)",
                        s.startup.as_secs_f64()
                    )
                },
            }),
        }
    }
    Ok((rx, lost, ips))
}

/// The session's token: the ranks' shared one, else a fresh one for the
/// rendezvous file; with --coordinator and no --token-file there is none
/// to share, and the user is told.
fn session_token(s: &Settings, port: u16) -> Option<Vec<u8>> {
    let token: Option<Vec<u8>> = match (&s.token, &s.coordinator) {
        (Some(t), _) => Some(t.clone()),
        (None, None) => Some(random_bytes::<32>().to_vec()),
        (None, Some(_)) => None,
    };
    if token.is_none() {
        // As `net serve` says its auth state: nobody should learn it later.
        eprintln!(
            "bwscope fleet: warning: --coordinator without --token-file: the ranks and the pair tests are not authenticated, so anyone who reaches port {port} can join as a rank; give every rank the same --token-file FILE"
        );
    }
    token
}

/// Admit ranks until all have joined, the start-up time is over or the
/// user stops: each connection is authenticated on its own thread, so one
/// slow peer does not hold up the others. Returns the connections and
/// identities by rank (rank 0 is this process), and whether rank 0 ran
/// out of open files (then it stops admitting: `accept` would fail at
/// once, for ever).
fn gather(
    listener: &TcpListener,
    s: &Settings,
    token: Option<&[u8]>,
    stop: &AtomicBool,
    writing: &Mutex<Vec<TcpStream>>,
) -> (Vec<Option<TcpStream>>, Vec<Option<Identity>>, bool) {
    let size = s.launch.size;
    let (jtx, jrx) = mpsc::channel();
    let deadline = Instant::now() + s.startup;
    let mut ids: Vec<Option<Identity>> = vec![None; size as usize];
    ids[0] = Some(Identity::this(0, size, s.launch.job.clone()));
    let mut streams: Vec<Option<TcpStream>> = (0..size).map(|_| None).collect();
    let mut joined = 1;
    while joined < size && Instant::now() < deadline && !stop.load(Ordering::Relaxed) {
        if crate::os::net::wait_readable(listener, 50) {
            match listener.accept() {
                Ok((c, _)) => {
                    let (jtx, token) = (jtx.clone(), token.map(<[u8]>::to_vec));
                    std::thread::spawn(move || {
                        let _ = jtx.send(admit(c, token.as_deref(), size));
                    });
                }
                Err(e) if crate::os::fds::is_exhausted(&e) => return (streams, ids, true),
                Err(_) => {}
            }
        }
        while let Ok(r) = jrx.try_recv() {
            match r {
                Ok((mut c, id)) => {
                    let r = id.rank as usize;
                    if streams[r].is_some() {
                        let _ = write_msg(
                            &mut c,
                            &Wire::Refused {
                                reason: format!("rank {r} joined twice"),
                            },
                        );
                        continue;
                    }
                    match c.try_clone() {
                        Ok(a) => writing.lock().unwrap_or_else(|e| e.into_inner()).push(a),
                        Err(e) if crate::os::fds::is_exhausted(&e) => {
                            streams[r] = Some(c);
                            return (streams, ids, true);
                        }
                        Err(_) => {}
                    }
                    streams[r] = Some(c);
                    ids[r] = Some(id);
                    joined += 1;
                }
                Err(e) => eprintln!("bwscope fleet: refused a connection: {e}"),
            }
        }
    }
    (streams, ids, false)
}

/// The port of `HOST:PORT` (`[::1]:5290` too), or why it is none: every
/// rank checks it before it starts, so a typo in a manifest is one line at
/// once, not a minute of waiting for a rank 0 that cannot be there.
pub fn check_coordinator(c: &str) -> Result<u16, String> {
    let bad = || {
        format!("'{c}' is not HOST:PORT (e.g. node001:5290, or under the MPI Operator <job>-worker-0.<job>:5290)")
    };
    let (host, port) = c.rsplit_once(':').ok_or_else(bad)?;
    let port: u16 = port.parse().map_err(|_| bad())?;
    if host.trim_matches(['[', ']']).is_empty() {
        return Err(bad());
    }
    if port == 0 {
        return Err(format!(
            "'{c}' has port 0: rank 0 would listen on a port nobody knows; give a fixed port (e.g. 5290)"
        ));
    }
    Ok(port)
}

/// Rank 0's addresses, or why there are none yet. A pod's DNS name
/// appears only once Kubernetes has started it (the MPI Operator's
/// headless service publishes a pod when it is ready), so a name that does
/// not resolve is waited on like a rank 0 not yet listening; the resolver's
/// own words go into the message a rank ends with.
fn resolve(c: &str) -> Result<Vec<SocketAddr>, String> {
    match c.to_socket_addrs() {
        Ok(a) => {
            let a: Vec<SocketAddr> = a.collect();
            if a.is_empty() {
                Err(format!("{c} resolves to no address yet"))
            } else {
                Ok(a)
            }
        }
        Err(e) => Err(format!("{c} does not resolve yet ({e})")),
    }
}

fn most_common(ips: &[IpAddr]) -> Option<IpAddr> {
    let mut best: Option<(IpAddr, usize)> = None;
    for ip in ips {
        let n = ips.iter().filter(|x| *x == ip).count();
        if best.is_none_or(|(_, m)| n > m) {
            best = Some((*ip, n));
        }
    }
    best.map(|(ip, _)| ip)
}

/// How long a rank waits for rank 0 before it says what it waits for.
const SAY_WAITING_AFTER: Duration = Duration::from_secs(5);

/// Rank 0's addresses and the token to answer its challenge with.
type Target = (Vec<SocketAddr>, Option<Vec<u8>>);

/// Where rank 0 is: `Ok(Ok(target))`, `Ok(Err(why not yet))` to wait on,
/// `Err` for a rendezvous file this rank must not trust.
fn target(s: &Settings) -> Result<Result<Target, String>, UserError> {
    if let Some((c, from)) = &s.coordinator {
        check_coordinator(c).map_err(|m| UserError::flag(from, m))?;
        return Ok(resolve(c).map(|addrs| (addrs, s.token.clone())));
    }
    let path = rendezvous::path(&s.rendezvous_dir, s.launch.job.as_deref());
    let note = rendezvous::read_checked(&path, s.launch.job.as_deref())
        .map_err(|e| UserError::flag("--rendezvous", e))?;
    let Some(n) = note else {
        return Ok(Err("rank 0 has not published its address yet".into()));
    };
    if n.size != s.launch.size {
        // A note an earlier run of another size left: rank 0 replaces it.
        return Ok(Err(format!(
            "{} is for a fleet of {}, this one has {} ranks (left by an earlier run?)",
            path.display(),
            n.size,
            s.launch.size
        )));
    }
    let token = match (&s.token, &n.token) {
        (Some(t), _) => Some(t.clone()),
        (None, Some(h)) => rendezvous::from_hex(h),
        (None, None) => None,
    };
    Ok(Ok((n.addrs, token)))
}

pub(super) fn leaf(
    s: &Settings,
    stop: &'static AtomicBool,
) -> anyhow::Result<(TcpComm, Option<Vec<u8>>)> {
    let id = Identity::this(s.launch.rank, s.launch.size, s.launch.job.clone());
    let started = Instant::now();
    let deadline = started + s.startup;
    let mut last = String::from("rank 0 has not published its address yet");
    let mut said = false;
    loop {
        if stop.load(Ordering::Relaxed) {
            anyhow::bail!("interrupted while waiting for rank 0");
        }
        let found = target(s)?;
        if let Err(why) = &found {
            last.clone_from(why);
        }
        if let Ok((addrs, token)) = found {
            for a in addrs {
                let left = deadline.saturating_duration_since(Instant::now());
                match join(a, &id, token.as_deref(), left) {
                    Ok(c) => {
                        let (tx, rx) = mpsc::channel();
                        let heard = Arc::new(AtomicU64::new(now_ns()));
                        spawn_reader(c.try_clone()?, 0, tx, Some(stop), Some(heard.clone()));
                        let silence = s.startup.max(ALIVE_EVERY * 3);
                        watch_rank_0(Arc::downgrade(&heard), silence, stop);
                        let ip = c.local_addr().ok().map(|a| a.ip());
                        let comm = TcpComm {
                            rank: s.launch.rank,
                            size: s.launch.size,
                            seq: 0,
                            peers: Vec::new(),
                            ids: vec![Some(id)],
                            lost: Vec::new(),
                            up: Some(c),
                            rx,
                            ip,
                            stop,
                            stop_sent: false,
                            phase: "startup".into(),
                            // Rank 0's `Alive` comes every second.
                            silence,
                            heard,
                            writing: Arc::new(Mutex::new(Vec::new())),
                            _alive: None,
                        };
                        return Ok((comm, token));
                    }
                    // A stale note can carry an old token: refusals are
                    // final only with a token of our own.
                    Err(Ok(reason)) if s.token.is_some() || s.coordinator.is_some() => {
                        return Err(refused(reason));
                    }
                    Err(Ok(reason)) | Err(Err(reason)) => last = format!("{a}: {reason}"),
                }
            }
        }
        if !said && started.elapsed() >= SAY_WAITING_AFTER && Instant::now() < deadline {
            // Once, so a pod's log says what its rank waits for (a name
            // the DNS does not know yet, a port nobody listens on).
            said = true;
            eprintln!(
                "bwscope fleet: rank {} still waiting for rank 0 (for up to {:.0} s, --timeout): {last}",
                s.launch.rank,
                s.startup.as_secs_f64()
            );
        }
        if Instant::now() >= deadline {
            let how = match &s.coordinator {
                Some((c, from)) => format!(
                    "at {c} ({from}; is rank 0 running and the name right? a longer --timeout waits longer for a name that resolves late)"
                ),
                None => format!(
                    "through {} (is it on a file system every rank shares? else give --rendezvous DIR or --coordinator HOST:PORT)",
                    rendezvous::path(&s.rendezvous_dir, s.launch.job.as_deref()).display()
                ),
            };
            return Err(UserError::flag(
                "--timeout",
                format!(
                    "rank {} found no rank 0 {how} within {:.0} s; last: {last}",
                    s.launch.rank,
                    s.startup.as_secs_f64()
                ),
            )
            .into());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

pub(super) fn refused(reason: String) -> anyhow::Error {
    UserError::BadInput {
        path: "bwscope fleet".into(),
        problem: format!("rank 0 refused this rank: {reason}"),
    }
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinators_are_host_port_with_a_real_port() {
        for ok in [
            "node001:5290",
            "bwscope-fleet-worker-0.bwscope-fleet:5290",
            "10.0.0.1:1",
            "[::1]:5290",
        ] {
            assert!(check_coordinator(ok).is_ok(), "{ok}");
        }
        for bad in [
            "node001",
            "node001:",
            ":5290",
            "[]:5290",
            "node:65536",
            "node:x",
        ] {
            assert!(
                check_coordinator(bad)
                    .unwrap_err()
                    .contains("is not HOST:PORT"),
                "{bad}"
            );
        }
        assert!(check_coordinator("node:0").unwrap_err().contains("port 0"));
    }

    #[test]
    fn a_name_that_does_not_resolve_is_waited_on_with_the_resolvers_words() {
        assert_eq!(
            resolve("127.0.0.1:5290"),
            Ok(vec!["127.0.0.1:5290".parse().unwrap()])
        );
        let e = resolve("no-such-rank-0.invalid:5290").unwrap_err();
        assert!(
            e.starts_with("no-such-rank-0.invalid:5290 does not resolve yet ("),
            "{e}"
        );
    }
}
