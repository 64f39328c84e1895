//! `poll`, `getifaddrs`, and a Unix socket in an inherited descriptor.

use std::net::{Ipv4Addr, TcpListener};
use std::os::fd::{AsRawFd, FromRawFd};
use std::time::Duration;

use crate::os::net::Duplex;

/// Wait up to `ms` for a connection on `listener`: true when `accept`
/// will not block (false on timeout or an interrupting signal, so the
/// caller re-checks its flags).
pub fn wait_readable(listener: &TcpListener, ms: i32) -> bool {
    let mut pfd = libc::pollfd {
        fd: listener.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd for the duration of the call.
    unsafe { libc::poll(&mut pfd, 1, ms) > 0 }
}

/// The IPv4 addresses of interfaces that are up, in the system's order.
pub fn local_ipv4_raw() -> Vec<Ipv4Addr> {
    let mut out = Vec::new();
    let mut ifa: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs allocates a list we walk read-only and free once.
    unsafe {
        if libc::getifaddrs(&mut ifa) != 0 {
            return out;
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
    out
}

/// The socket a process manager left in descriptor `fd` (MPICH's Hydra:
/// `PMI_FD`), as a reader and a writer with `timeout` on both; None when
/// `fd` is not an open socket. A copy of the descriptor is used, so `fd`
/// itself stays open as the process manager expects until we exit.
pub fn process_manager_socket(fd: i32, timeout: Duration) -> Option<Duplex> {
    // SAFETY: fstat into plain data; any number is safe to ask about.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if fd < 0
        // SAFETY: as above; `st` is a local of the right type.
        || unsafe { libc::fstat(fd, &mut st) } != 0
        || st.st_mode & libc::S_IFMT != libc::S_IFSOCK
    {
        return None; // not a process manager's socket
    }
    // SAFETY: dup of a descriptor checked to be open.
    let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
    if dup < 0 {
        return None;
    }
    // SAFETY: `dup` is a fresh descriptor nobody else owns.
    let sock = unsafe { std::os::unix::net::UnixStream::from_raw_fd(dup) };
    sock.set_read_timeout(Some(timeout)).ok()?;
    sock.set_write_timeout(Some(timeout)).ok()?;
    let w = sock.try_clone().ok()?;
    Some((Box::new(sock), Box::new(w)))
}
