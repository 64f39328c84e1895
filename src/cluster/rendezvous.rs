//! How the ranks find rank 0 without MPI: rank 0 listens on a free port
//! and writes its addresses (and, unless `--token-file` gives one, a fresh
//! token) into a file in a directory every rank sees (`--rendezvous DIR`,
//! default the working directory, which launchers keep across nodes on a
//! shared file system); or, with `--coordinator HOST:PORT`, everyone is
//! told where rank 0 listens.
//!
//! The file is mode 0600, so only the user running the job can read the
//! token; it is deleted once every rank has joined.

use std::io::Write as _;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

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

/// Publish the note: written to a private temp file, then renamed, so a
/// rank never reads half of it.
pub fn publish(file: &Path, note: &Note) -> std::io::Result<()> {
    let mut tmp = file.as_os_str().to_owned();
    tmp.push(format!(".{}.partial", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)?;
    f.write_all(&serde_json::to_vec(note)?)?;
    f.sync_all()?;
    std::fs::rename(&tmp, file)
}

/// The note, if the file is there and whole.
pub fn read(file: &Path) -> Option<Note> {
    serde_json::from_slice(&std::fs::read(file).ok()?).ok()
}

/// This machine's IPv4 addresses on interfaces that are up: others first,
/// loopback last (rank 0 advertises them in this order).
pub fn local_ipv4() -> Vec<Ipv4Addr> {
    let mut out = Vec::new();
    let mut ifa: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs allocates a list we walk read-only and free once.
    unsafe {
        if libc::getifaddrs(&mut ifa) != 0 {
            return vec![Ipv4Addr::LOCALHOST];
        }
        let mut p = ifa;
        while !p.is_null() {
            let a = &*p;
            let up = a.ifa_flags & libc::IFF_UP as u32 != 0;
            if up && !a.ifa_addr.is_null() && (*a.ifa_addr).sa_family as i32 == libc::AF_INET {
                let sin = &*(a.ifa_addr as *const libc::sockaddr_in);
                out.push(Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr)));
            }
            p = a.ifa_next;
        }
        libc::freeifaddrs(ifa);
    }
    out.sort_by_key(|ip| ip.is_loopback());
    out.dedup();
    if out.is_empty() {
        out.push(Ipv4Addr::LOCALHOST);
    }
    out
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
        };
        publish(&f, &n).unwrap();
        publish(&f, &n).unwrap();
        assert_eq!(read(&f), Some(n));
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&f).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "{mode:o}");
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
