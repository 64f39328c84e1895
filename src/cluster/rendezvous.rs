//! How the ranks find rank 0 without MPI: rank 0 listens on a free port
//! and writes its addresses (and, unless `--token-file` gives one, a fresh
//! token) into a file in a directory every rank sees (`--rendezvous DIR`,
//! default the working directory, which launchers keep across nodes on a
//! shared file system); or, with `--coordinator HOST:PORT`, everyone is
//! told where rank 0 listens.
//!
//! The file is mode 0600, so only the user running the job can read the
//! token; it is deleted once every rank has joined.
//!
//! The folder may be shared (`/tmp`, a scratch file system), so a rank
//! trusts a note only when it is a regular file (not a link, FIFO or
//! device), owned by the rank's own user or root, readable and writable by
//! nobody else, and written for this job; anything else is refused with one
//! line naming the file ([`read_checked`]). Otherwise another user could
//! copy their own rank 0's note there and collect this fleet's results.
//! Rank 0 refuses to replace the note of another fleet still starting
//! with the same name (two jobs without a job name from the launcher).

use std::io::Write as _;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Largest note read (a few addresses and a token).
const MAX_NOTE: u64 = 64 << 10;

/// What rank 0 publishes.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Note {
    pub version: String,
    pub protocol: u32,
    pub job: Option<String>,
    pub size: u32,
    pub addrs: Vec<SocketAddr>,
    /// Hex; null when the ranks share `--token-file` instead.
    pub token: Option<String>,
    /// Who wrote it, so a second rank 0 can tell a fleet still starting
    /// from a note a crashed one left: the kernel (boot id), the pid and
    /// its start time, and when the wait for ranks ends (Unix seconds).
    #[serde(default)]
    pub writer: Option<Writer>,
}

/// The rank 0 that wrote a note.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Writer {
    pub machine: String,
    pub host: String,
    pub pid: u32,
    /// `/proc/PID/stat` field 22: start time in clock ticks since boot.
    pub pid_start: Option<u64>,
    pub until_unix: u64,
}

/// A process's start time (ticks since boot), if it runs.
pub fn start_time(pid: u32) -> Option<u64> {
    crate::os::process::start_time(pid)
}

fn now_unix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Writer {
    /// This process, waiting for its ranks for `wait_s` seconds.
    pub fn this(wait_s: f64) -> Writer {
        let pid = std::process::id();
        Writer {
            machine: super::comm::machine_id(),
            host: super::comm::hostname(),
            pid,
            pid_start: start_time(pid),
            until_unix: now_unix() + wait_s.ceil() as u64 + 1,
        }
    }

    /// Is that rank 0 still waiting for its ranks? On this machine its
    /// process must still run (same pid, same start time); elsewhere only
    /// its deadline tells.
    pub fn still_starting(&self) -> bool {
        if now_unix() > self.until_unix {
            return false;
        }
        if self.machine == super::comm::machine_id() {
            return self.pid != std::process::id()
                && start_time(self.pid).is_some_and(|t| Some(t) == self.pid_start);
        }
        true
    }
}

/// `DIR/.bwscope-fleet-<job>.json`, the job name made safe for a file name.
pub fn path(dir: &Path, job: Option<&str>) -> PathBuf {
    let key: String = job
        .unwrap_or("default")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .take(100)
        .collect();
    dir.join(format!(".bwscope-fleet-{key}.json"))
}

/// Publish the note: written to a private temp file with a random name
/// (created exclusively, never through a link), then renamed, so a rank
/// never reads half of it. A note another fleet still starting left at
/// this name is not replaced: its rank 0 is named in the error.
pub fn publish(file: &Path, note: &Note) -> Result<(), String> {
    let old = read_checked(file, note.job.as_deref());
    if let (Err(e), Some(owner)) = (&old, crate::os::fs::owner_at(file)) {
        if !owner.is_me {
            return Err(e.clone());
        }
    }
    if let Ok(Some(old)) = old {
        if let Some(w) = old.writer.filter(Writer::still_starting) {
            return Err(format!(
                "another fleet is starting with the same rendezvous file {} (rank 0 is pid {} on {}); two jobs without a job name from the launcher cannot share a rendezvous folder: give each its own --rendezvous DIR, or --coordinator HOST:PORT",
                file.display(),
                w.pid,
                w.host
            ));
        }
    }
    let mut tmp = file.as_os_str().to_owned();
    let salt = to_hex(&crate::net::protocol::random_bytes::<8>());
    tmp.push(format!(".{salt}.partial"));
    let tmp = PathBuf::from(tmp);
    let write = || -> std::io::Result<()> {
        let mut f = crate::os::fs::create_new(&tmp, 0o600)?;
        f.write_all(&serde_json::to_vec(note)?)?;
        f.sync_all()?;
        std::fs::rename(&tmp, file)
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!(
            "cannot write {}: {e}; give a directory every rank can read (--rendezvous DIR) or --coordinator HOST:PORT",
            file.display()
        )
    })
}

/// The note, if the file is there and whole, read with the bounded reader
/// (a regular file, not a link; never waiting) but with no other check:
/// rank 0 looks whether its own note is still there, tests and tools.
pub fn read(file: &Path) -> Option<Note> {
    use crate::os::input::{read_regular, Rules};
    let rules = Rules {
        max: MAX_NOTE,
        follow: false,
    };
    serde_json::from_slice(&read_regular(file, rules).ok()?.0).ok()
}

/// The note a rank may trust (see the module comment): `Ok(None)` while
/// there is none, `Err` naming the file and what is wrong with it.
pub fn read_checked(file: &Path, job: Option<&str>) -> Result<Option<Note>, String> {
    use crate::os::input::{read_regular, InputError, Rules};
    let rules = Rules {
        max: MAX_NOTE,
        follow: false,
    };
    let name = file.display();
    let (bytes, m) = match read_regular(file, rules) {
        Ok(x) => x,
        Err(InputError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(InputError::Io(e)) if crate::os::fs::is_link_refused(&e) => {
            return Err(format!(
                "the rendezvous file {name} is a symbolic link, which rank 0 never writes: someone else put it there; give a folder only you can write (--rendezvous DIR)"
            ))
        }
        Err(InputError::Io(e)) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            let owner = crate::os::fs::owner_at(file)
                .map_or(String::new(), |o| format!(" (it belongs to {})", o.name));
            return Err(format!(
                "the rendezvous file {name} cannot be read{owner}: another user's fleet may be using this folder; give a folder only you can write (--rendezvous DIR)"
            ));
        }
        Err(e) => return Err(format!("the rendezvous file {name} {e}")),
    };
    let owner = &m.owner;
    if !owner.trusted() {
        return Err(format!(
            "the rendezvous file {name} belongs to {}, not to you ({}): another user's fleet could be posing as this one's rank 0; give a folder only you can write (--rendezvous DIR)",
            owner.name,
            crate::os::fs::me()
        ));
    }
    if let Some(mode) = &m.others_may_access {
        return Err(format!(
            "the rendezvous file {name} has {mode}, and rank 0 writes it 0600: others could read its token or change it; give a folder only you can write (--rendezvous DIR)"
        ));
    }
    let note: Note = serde_json::from_slice(&bytes).map_err(|e| {
        format!("the rendezvous file {name} is not one bwscope wrote ({e}); remove it, or give another --rendezvous DIR")
    })?;
    if note.job.as_deref() != job {
        return Err(format!(
            "the rendezvous file {name} belongs to job {}, not to this one ({}); give each job its own --rendezvous DIR",
            note.job.as_deref().unwrap_or("(none)"),
            job.unwrap_or("(none)")
        ));
    }
    Ok(Some(note))
}

/// This machine's IPv4 addresses on interfaces that are up: others first,
/// loopback last (rank 0 advertises them in this order).
pub fn local_ipv4() -> Vec<Ipv4Addr> {
    crate::os::net::local_ipv4()
}

/// `10.1.0.0/16` → (network, prefix length).
pub fn parse_cidr(text: &str) -> Option<(Ipv4Addr, u32)> {
    let (ip, len) = text.split_once('/')?;
    let ip: Ipv4Addr = ip.trim().parse().ok()?;
    let len: u32 = len.trim().parse().ok().filter(|&l| l <= 32)?;
    Some((ip, len))
}

pub fn in_subnet(ip: Ipv4Addr, (net, len): (Ipv4Addr, u32)) -> bool {
    let mask = if len == 0 { 0 } else { u32::MAX << (32 - len) };
    u32::from(ip) & mask == u32::from(net) & mask
}

/// This rank's address in `subnet`, if it has one.
pub fn address_in(subnet: (Ipv4Addr, u32)) -> Option<IpAddr> {
    local_ipv4()
        .into_iter()
        .find(|&ip| in_subnet(ip, subnet))
        .map(IpAddr::V4)
}

pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn from_hex(text: &str) -> Option<Vec<u8>> {
    if text.len() % 2 != 0 {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips() {
        let b = [0u8, 1, 0xab, 0xff];
        assert_eq!(to_hex(&b), "0001abff");
        assert_eq!(from_hex("0001abff").unwrap(), b);
        assert_eq!(from_hex("abc"), None);
        assert_eq!(from_hex("zz"), None);
    }

    #[test]
    fn subnets() {
        let s = parse_cidr("10.250.0.0/16").unwrap();
        assert!(in_subnet("10.250.3.4".parse().unwrap(), s));
        assert!(!in_subnet("10.251.0.1".parse().unwrap(), s));
        assert!(in_subnet(
            "1.2.3.4".parse().unwrap(),
            parse_cidr("0.0.0.0/0").unwrap()
        ));
        assert_eq!(parse_cidr("10.0.0.0/33"), None);
        assert_eq!(parse_cidr("10.0.0.0"), None);
    }

    #[test]
    fn note_file_is_private_and_whole() {
        let d = tempfile::tempdir().unwrap();
        let f = path(d.path(), Some("job 7/step"));
        assert!(f.ends_with(".bwscope-fleet-job_7_step.json"), "{f:?}");
        let n = Note {
            version: "x".into(),
            protocol: 1,
            job: None,
            size: 2,
            addrs: vec!["127.0.0.1:9".parse().unwrap()],
            token: Some("00".into()),
            writer: Some(Writer::this(10.0)),
        };
        // This process's own note is replaced (the same rank 0 again).
        publish(&f, &n).unwrap();
        publish(&f, &n).unwrap();
        assert_eq!(read(&f), Some(n.clone()));
        assert_eq!(read_checked(&f, None), Ok(Some(n.clone())));
        assert!(read_checked(&f, Some("other"))
            .unwrap_err()
            .contains("belongs to job"));
        let rules = crate::os::input::Rules {
            max: MAX_NOTE,
            follow: false,
        };
        let facts = crate::os::input::read_regular(&f, rules).unwrap().1;
        assert_eq!(facts.others_may_access, None);
        // What rank 0 reads back before removing its note: a FIFO put in
        // its place is no note, at once (it used to wait for a writer).
        std::fs::remove_file(&f).unwrap();
        if crate::os::fs::make_fifo(&f).is_ok() {
            let t0 = std::time::Instant::now();
            assert_eq!(read(&f), None);
            assert!(t0.elapsed().as_secs() < 5);
        }
    }

    #[test]
    fn notes_of_others_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let f = path(d.path(), None);
        assert_eq!(read_checked(&f, None), Ok(None));
        std::fs::write(&f, "{}").unwrap();
        crate::os::fs::set_permissions(&f, 0o644).unwrap();
        assert!(read_checked(&f, None)
            .unwrap_err()
            .contains("others could read its token"));
        crate::os::fs::set_permissions(&f, 0o600).unwrap();
        assert!(read_checked(&f, None)
            .unwrap_err()
            .contains("not one bwscope wrote"));
        std::fs::remove_file(&f).unwrap();
        if crate::os::system::emulator().is_some() {
            eprintln!("links are not tested under an emulator (wine stores a Windows target in a Unix link)");
            return;
        }
        crate::os::fs::symlink(std::path::Path::new("/etc/hostname"), &f).unwrap();
        assert!(read_checked(&f, None)
            .unwrap_err()
            .contains("symbolic link"));
    }

    #[test]
    fn a_live_writer_is_told_from_a_dead_one() {
        // Our parent runs: a note it wrote is a fleet still starting.
        let ppid = crate::os::process::parent_pid();
        if start_time(ppid).is_none() {
            eprintln!("skipped: this process's parent is no process of this system (wine runs it from a Linux one)");
            return;
        }
        let mut w = Writer::this(30.0);
        w.pid = ppid;
        w.pid_start = start_time(ppid);
        assert!(w.still_starting());
        // The same pid with another start time is a recycled pid.
        w.pid_start = w.pid_start.map(|t| t + 1);
        assert!(!w.still_starting());
        // Past its deadline, nothing is starting.
        let mut w = Writer::this(30.0);
        w.pid = ppid;
        w.pid_start = start_time(ppid);
        w.until_unix = 1;
        assert!(!w.still_starting());
        // Our own note is ours to replace.
        assert!(!Writer::this(30.0).still_starting());
    }

    #[test]
    fn loopback_comes_last() {
        let ips = local_ipv4();
        assert!(!ips.is_empty());
        if let Some(i) = ips.iter().position(|ip| ip.is_loopback()) {
            assert!(ips[i..].iter().all(|ip| ip.is_loopback()));
        }
    }
}
