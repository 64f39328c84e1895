//! How the ranks talk: rank 0 broadcasts what happens next and gathers
//! what each rank measured. Two implementations: [`super::tcp`] (the
//! default build: a star of TCP connections to rank 0, tolerant of lost
//! ranks) and `super::mpi` (`--features mpi`).
//!
//! Every rank runs the same sequence of [`Comm::bcast`] / [`Comm::gather`]
//! calls (SPMD), so both ends count collectives the same way and a late
//! answer from a rank already given up on is recognised and dropped.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::model::fleet::FLEET_SCHEMA_VERSION;
use crate::model::SCHEMA_VERSION;
use crate::util::text::{de_foreign_name as foreign_name, de_foreign_name_opt as foreign_name_opt};

/// Version of the rank ↔ rank 0 conversation (framing, messages, order).
/// 2: rank 0 sends `Alive` every second.
pub const PROTOCOL: u32 = 2;

/// Who a rank is, sent first so rank 0 can refuse a mixed fleet before
/// anything is measured.
///
/// Its names come from another machine, where any user can set a host
/// name with a newline or a terminal escape (`unshare -Ur --uts`): they
/// are cut to one bounded line as they are decoded
/// (`util::text::foreign_name`), so no `Identity` holds a raw one.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Identity {
    pub rank: u32,
    pub size: u32,
    #[serde(deserialize_with = "foreign_name")]
    pub hostname: String,
    /// `/proc/sys/kernel/random/boot_id`: ranks sharing it share a kernel.
    #[serde(deserialize_with = "foreign_name")]
    pub machine: String,
    #[serde(deserialize_with = "foreign_name")]
    pub version: String,
    pub protocol: u32,
    pub schema_version: u32,
    pub fleet_schema_version: u32,
    #[serde(default, deserialize_with = "foreign_name_opt")]
    pub job: Option<String>,
}

impl Identity {
    pub fn this(rank: u32, size: u32, job: Option<String>) -> Identity {
        Identity {
            rank,
            size,
            hostname: crate::util::text::foreign_name(&hostname()),
            machine: crate::util::text::foreign_name(&machine_id()),
            version: env!("CARGO_PKG_VERSION").into(),
            protocol: PROTOCOL,
            schema_version: SCHEMA_VERSION,
            fleet_schema_version: FLEET_SCHEMA_VERSION,
            job,
        }
    }

    fn release(&self) -> String {
        format!(
            "bwscope {} (schema {}, fleet schema {}, protocol {})",
            self.version, self.schema_version, self.fleet_schema_version, self.protocol
        )
    }
}

/// The host name (`uname -n`).
pub fn hostname() -> String {
    crate::os::system::hostname()
}

/// The kernel instance: containers and network namespaces on one machine
/// share it, and share its memory bandwidth.
pub fn machine_id() -> String {
    crate::os::system::machine_id()
}

/// Refuse a fleet whose ranks run different releases, naming the hosts of
/// each release (the largest group first).
pub fn check_identities(ids: &[Identity]) -> Result<(), String> {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for id in ids {
        let who = format!("{} (rank {})", id.hostname, id.rank);
        match groups.iter_mut().find(|g| g.0 == id.release()) {
            Some(g) => g.1.push(who),
            None => groups.push((id.release(), vec![who])),
        }
    }
    if groups.len() <= 1 {
        return Ok(());
    }
    groups.sort_by_key(|g| std::cmp::Reverse(g.1.len()));
    let parts: Vec<String> = groups
        .iter()
        .map(|(rel, hosts)| {
            let shown: Vec<&str> = hosts.iter().take(8).map(String::as_str).collect();
            let more = hosts.len().saturating_sub(shown.len());
            format!(
                "{rel} on {}{}",
                shown.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            )
        })
        .collect();
    Err(format!(
        "the ranks run different bwscope releases, nothing was measured: {}; install the same bwscope on every node",
        parts.join("; ")
    ))
}

/// A rank rank 0 gave up on, and when.
#[derive(Debug, Clone, PartialEq)]
pub struct Lost {
    pub rank: u32,
    /// `startup`, `node`, `network`, `finish`.
    pub phase: String,
    pub reason: String,
}

pub trait Comm {
    fn rank(&self) -> u32;
    fn size(&self) -> u32;
    /// How the ranks talk: TCP or MPI.
    fn kind(&self) -> crate::model::fleet::Transport;
    /// Rank 0: every rank's identity (None for ranks that never joined);
    /// other ranks: their own only.
    fn identities(&self) -> Vec<Option<Identity>>;
    /// Rank 0 sends `body` to every live rank and gets it back; the others
    /// wait for it. Errors end this rank's part (rank 0 gone, refused).
    fn bcast(&mut self, body: Option<Value>) -> anyhow::Result<Value>;
    /// Every rank contributes `body`. Rank 0 gets one entry per rank (its
    /// own included; None for a rank lost now or before), waiting at most
    /// `wait` for the slowest; a rank silent that long is lost in `phase`.
    /// The others get an empty vector.
    fn gather(
        &mut self,
        body: Value,
        phase: &str,
        wait: Duration,
    ) -> anyhow::Result<Vec<Option<Value>>>;
    /// Rank 0: the ranks given up on so far.
    fn lost(&self) -> Vec<Lost>;
    /// The address this rank reached rank 0 from (rank 0: the one the
    /// others reached it at): its address on the fleet's network.
    fn fleet_ip(&self) -> Option<std::net::IpAddr>;
    /// MPI point-to-point tests of one step (`window` messages of `size`
    /// bytes in flight per flow for `seconds`): this rank's flows and its
    /// longest test. None where the channel is not MPI.
    fn mpi_step(
        &mut self,
        _tests: &[super::schedule::Test],
        _size: u64,
        _window: u32,
        _seconds: f64,
    ) -> Option<(Vec<crate::model::fleet::Flow>, f64)> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(rank: u32, host: &str, version: &str) -> Identity {
        Identity {
            rank,
            size: 3,
            hostname: host.into(),
            machine: "m".into(),
            version: version.into(),
            protocol: PROTOCOL,
            schema_version: SCHEMA_VERSION,
            fleet_schema_version: FLEET_SCHEMA_VERSION,
            job: None,
        }
    }

    #[test]
    fn a_mixed_fleet_is_refused_naming_hosts() {
        assert!(check_identities(&[id(0, "a", "1.0"), id(1, "b", "1.0")]).is_ok());
        let e = check_identities(&[id(0, "a", "1.0"), id(1, "b", "0.9"), id(2, "c", "1.0")])
            .unwrap_err();
        assert!(e.contains("bwscope 1.0"), "{e}");
        assert!(e.contains("bwscope 0.9") && e.contains("b (rank 1)"), "{e}");
        assert!(e.find("1.0").unwrap() < e.find("0.9").unwrap(), "{e}");
    }

    #[test]
    fn identity_of_this_process() {
        let me = Identity::this(0, 1, None);
        assert!(!me.hostname.is_empty());
        assert!(!me.machine.is_empty());
        assert_eq!(me.protocol, PROTOCOL);
    }
}
