//! Sockets beyond what `std::net` says: waiting on a listener with a
//! timeout, this machine's IPv4 addresses, and a socket a process manager
//! handed down.

use std::io::{Read, Write};

pub use super::imp::net::{local_ipv4_raw, process_manager_socket, wait_readable};

/// Both ends of an inherited stream: its reader and its writer.
pub type Duplex = (Box<dyn Read + Send>, Box<dyn Write + Send>);

/// This machine's IPv4 addresses on interfaces that are up: others first,
/// loopback last (rank 0 advertises them in this order); loopback alone
/// when none can be listed.
pub fn local_ipv4() -> Vec<std::net::Ipv4Addr> {
    let mut out = local_ipv4_raw();
    out.sort_by_key(|ip| ip.is_loopback());
    out.dedup();
    if out.is_empty() {
        out.push(std::net::Ipv4Addr::LOCALHOST);
    }
    out
}
