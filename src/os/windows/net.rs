//! `WSAPoll` and `GetAdaptersAddresses`. No process manager hands sockets
//! down by number here (MS-MPI's `mpiexec` sets `PMI_RANK`/`PMI_SIZE`).

use std::net::{Ipv4Addr, TcpListener};
use std::os::windows::io::AsRawSocket;
use std::time::Duration;

use windows_sys::Win32::NetworkManagement::IpHelper::{
    GetAdaptersAddresses, GAA_FLAG_SKIP_ANYCAST, GAA_FLAG_SKIP_DNS_SERVER, GAA_FLAG_SKIP_MULTICAST,
    IP_ADAPTER_ADDRESSES_LH,
};
use windows_sys::Win32::NetworkManagement::Ndis::IfOperStatusUp;
use windows_sys::Win32::Networking::WinSock::{
    WSAPoll, AF_INET, POLLRDNORM, SOCKADDR_IN, WSAPOLLFD,
};

use crate::os::net::Duplex;

/// Wait up to `ms` for a connection on `listener`.
pub fn wait_readable(listener: &TcpListener, ms: i32) -> bool {
    let mut p = WSAPOLLFD {
        fd: listener.as_raw_socket() as usize,
        events: POLLRDNORM,
        revents: 0,
    };
    // SAFETY: one valid WSAPOLLFD for the duration of the call (the
    // listener made std initialise Winsock).
    unsafe { WSAPoll(&mut p, 1, ms) > 0 }
}

/// The IPv4 addresses of adapters that are up.
pub fn local_ipv4_raw() -> Vec<Ipv4Addr> {
    let flags = GAA_FLAG_SKIP_ANYCAST | GAA_FLAG_SKIP_MULTICAST | GAA_FLAG_SKIP_DNS_SERVER;
    let mut len = 16u32 << 10;
    let mut buf: Vec<u64> = Vec::new();
    for _ in 0..3 {
        buf = vec![0u64; (len as usize).div_ceil(8)];
        // SAFETY: `buf` holds `len` bytes, 8-byte aligned.
        let r = unsafe {
            GetAdaptersAddresses(
                AF_INET as u32,
                flags,
                std::ptr::null(),
                buf.as_mut_ptr().cast(),
                &mut len,
            )
        };
        match r {
            0 => break,
            111 => continue, // ERROR_BUFFER_OVERFLOW: `len` now says how much
            _ => return Vec::new(),
        }
    }
    let mut out = Vec::new();
    let mut a = buf.as_ptr().cast::<IP_ADAPTER_ADDRESSES_LH>();
    // SAFETY: a list the call built inside `buf`, walked read-only.
    unsafe {
        while !a.is_null() {
            if (*a).OperStatus == IfOperStatusUp {
                let mut u = (*a).FirstUnicastAddress;
                while !u.is_null() {
                    let sa = (*u).Address.lpSockaddr;
                    if !sa.is_null() && (*sa).sa_family == AF_INET {
                        let sin = &*sa.cast::<SOCKADDR_IN>();
                        out.push(Ipv4Addr::from(u32::from_be(sin.sin_addr.S_un.S_addr)));
                    }
                    u = (*u).Next;
                }
            }
            a = (*a).Next;
        }
    }
    out
}

/// No inherited process manager sockets on Windows.
pub fn process_manager_socket(_fd: i32, _timeout: Duration) -> Option<Duplex> {
    None
}
