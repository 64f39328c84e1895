//! `bwscope net serve`: the transponder. It answers leaders until stopped;
//! it measures nothing itself, so it is a command, not a suite.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use crate::cli::NetServeArgs;
use crate::error::{UserError, EXIT_INTERRUPTED, EXIT_OK};
use crate::net::protocol::{self, DEFAULT_PORT};
use crate::net::server::{Server, ServerConfig};
use crate::suites::net::secs;
use crate::util::units::{self, format_bytes};

/// The transponder's listening address from `--bind` and `--port`.
fn bind_addr(bind: Option<&str>, port: Option<u16>) -> Result<SocketAddr, UserError> {
    let ip = match bind {
        None => IpAddr::V4(Ipv4Addr::LOCALHOST),
        Some(b) => b
            .trim_matches(|c| c == '[' || c == ']')
            .parse::<IpAddr>()
            .map_err(|_| {
                UserError::flag(
                    "--bind",
                    format!(
                        "'{}' is not an IP address: write e.g. 127.0.0.1, 0.0.0.0 or ::1",
                        b
                    ),
                )
            })?,
    };
    Ok(SocketAddr::new(ip, port.unwrap_or(DEFAULT_PORT)))
}

/// Explain a failed bind in terms of the flags.
fn bind_error(addr: SocketAddr, e: &std::io::Error) -> UserError {
    match e.kind() {
        std::io::ErrorKind::AddrInUse => UserError::flag(
            "--port",
            format!("port {} is already in use on {}: stop the other server or pick another --port", addr.port(), addr.ip()),
        ),
        std::io::ErrorKind::PermissionDenied => UserError::flag(
            "--port",
            format!("port {} is privileged (below 1024 needs root or CAP_NET_BIND_SERVICE): pick a port of 1024 or above", addr.port()),
        ),
        std::io::ErrorKind::AddrNotAvailable => UserError::flag(
            "--bind",
            format!("{} is not an address of this machine: use one of its addresses (0.0.0.0 for all)", addr.ip()),
        ),
        _ => UserError::flag("--bind", format!("cannot listen on {}: {}", addr, e)),
    }
}

/// A server others can reach must either check a token or be told
/// explicitly that it need not.
fn check_exposure(addr: SocketAddr, token: bool, no_auth: bool) -> Result<(), UserError> {
    if addr.ip().is_loopback() || token || no_auth {
        return Ok(());
    }
    Err(UserError::flag(
        "--bind",
        format!(
            "{} is reachable from other machines and no --token-file is given: anyone reaching it could run tests (up to --max-time and --max-bytes each); give --token-file FILE, or --no-auth to serve without one",
            addr.ip()
        ),
    ))
}

pub fn serve(a: &NetServeArgs) -> anyhow::Result<u8> {
    let addr = bind_addr(a.bind.as_deref(), a.port)?;
    check_exposure(addr, a.token_file.is_some(), a.no_auth)?;
    let mut cfg = ServerConfig::new(addr);
    cfg.once = a.once;
    cfg.token = a
        .token_file
        .as_deref()
        .map(crate::net::token::read)
        .transpose()?;
    cfg.max_time = secs("--max-time", a.max_time, 0.1, 86_400.0)?;
    cfg.timeout = secs("--timeout", a.timeout, 0.1, 3_600.0)?;
    cfg.max_bytes = units::parse_size(&a.max_bytes)
        .map_err(|e| UserError::flag("--max-bytes", e.to_string()))?;
    let log: crate::net::server::Log =
        Arc::new(|line: &str| eprintln!("{} {}", crate::model::time::now_rfc3339(), line));
    crate::os::fds::raise_limit();
    let server = Server::bind(cfg.clone(), log).map_err(|e| bind_error(addr, &e))?;
    let local = server.local_addr()?;
    // How many streams a test may have here, said now rather than found
    // as connections that never join.
    let most = u64::from(protocol::MAX_STREAMS);
    let room = match crate::net::server::stream_room(0) {
        Some((n, limit)) if n < most => format!(", room for {n} streams (ulimit -n {limit})"),
        _ => format!(", room for {most} streams"),
    };
    eprintln!(
        "bwscope net serve: listening on {}{} (protocol v{}, auth {}, limits {:.0} s and {} per test{}{room}); Ctrl-C stops",
        local,
        if local.ip().is_unspecified() { " (all interfaces)" } else { "" },
        protocol::VERSION,
        if cfg.token.is_some() {
            "on (token)"
        } else if local.ip().is_loopback() {
            "off (this machine only)"
        } else {
            "OFF (--no-auth)"
        },
        cfg.max_time.as_secs_f64(),
        format_bytes(cfg.max_bytes),
        if cfg.once { ", exits after one test" } else { "" }
    );
    let stop = crate::os::signal::install();
    server.serve(stop)?;
    // Stopped by a signal: 128 + its number, as every long-running
    // command ends (README, "Exit codes"); `--once` after its test: 0.
    Ok(if crate::os::signal::stopped() {
        EXIT_INTERRUPTED
    } else {
        EXIT_OK
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bind_addresses() {
        assert_eq!(
            bind_addr(None, None).unwrap(),
            "127.0.0.1:5280".parse().unwrap()
        );
        let any: SocketAddr = "0.0.0.0:5280".parse().unwrap();
        assert!(check_exposure(any, false, false).is_err());
        assert!(check_exposure(any, true, false).is_ok());
        assert!(check_exposure(any, false, true).is_ok());
        assert!(check_exposure("[::1]:1".parse().unwrap(), false, false).is_ok());
        assert_eq!(
            bind_addr(Some("::1"), Some(0)).unwrap(),
            "[::1]:0".parse().unwrap()
        );
        assert!(bind_addr(Some("host.example"), None).is_err());
    }
}
