//! `bwscope fleet` flags → the plan every rank follows (rank 0's copy is
//! the one broadcast), and how long it will take.

use serde::{Deserialize, Serialize};

use super::node::{self, NodeOptions};
use crate::cli::{ControlArg, FleetArgs, PairsAtOnceArg, ScheduleArg, TurnsArg};
use crate::cluster::network::TcpParams;
use crate::cluster::schedule::{self, Schedule};
use crate::error::UserError;
use crate::model::fleet::Transport;
use crate::model::Host;
use crate::net::protocol::{MAX_CHUNK, MAX_STREAMS};
use crate::util::units::{self, format_bytes};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NetPlan {
    pub schedule: Schedule,
    /// `tcp`, `mpi`, in the order they run.
    pub transports: Vec<Transport>,
    pub sizes: Vec<u64>,
    pub tcp: TcpParams,
    /// MPI messages in flight per flow.
    pub window: u32,
    pub net_port: u16,
    pub subnet: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FleetPlan {
    pub node: NodeOptions,
    /// `auto`, `all`, `one`.
    pub turns: String,
    pub network: Option<NetPlan>,
    /// `tcp` or `mpi`.
    pub control: Transport,
    pub timeout_s: f64,
    pub outlier_z: f64,
    pub outlier_pct: f64,
    /// `--past-pct`: a fleet median this much worse than the fleet's
    /// recent runs' is a fleet-wide drop.
    #[serde(default)]
    pub past_pct: f64,
    pub reference: Option<String>,
    pub fail_if_outlier: bool,
}

/// Setup and gather time per synchronised step (connect, handshake,
/// broadcast, gather): an allowance for the estimate, not a measurement.
const STEP_OVERHEAD_S: f64 = 0.05;

/// What rank 0 allows a leader beyond its own bound: the leader starts its
/// test after receiving the step's broadcast and may wait for a cpu on a
/// loaded machine.
const LEADER_GRACE_S: f64 = 2.0;

fn range(flag: &'static str, v: f64, lo: f64, hi: f64, unit: &str) -> Result<f64, UserError> {
    if v.is_finite() && v >= lo && v <= hi {
        Ok(v)
    } else {
        Err(UserError::flag(
            flag,
            format!("{v} is out of range: give {lo} to {hi} {unit}"),
        ))
    }
}

pub fn mpi_built() -> bool {
    cfg!(feature = "mpi")
}

fn needs_mpi(flag: &'static str) -> UserError {
    UserError::flag(
        flag,
        "MPI needs a build with MPI: cargo build --release --features mpi (an MPI library, a C compiler and libclang; see README)",
    )
}

/// Check the flags (nothing here needs the machine).
pub fn resolve(a: &FleetArgs) -> Result<FleetPlan, UserError> {
    let suites = node::parse_suites(&a.suites)?;
    if let Some(n) = a.sample.samples {
        if n == 0 {
            return Err(UserError::flag("--samples", "must be at least 1"));
        }
    }
    let control = match a.control {
        ControlArg::Auto if mpi_built() => Transport::Mpi,
        ControlArg::Auto | ControlArg::Tcp => Transport::Tcp,
        ControlArg::Mpi if mpi_built() => Transport::Mpi,
        ControlArg::Mpi => return Err(needs_mpi("--control")),
    };
    let timeout_s = range("--timeout", a.timeout, 1.0, 86_400.0, "seconds")?;
    let network = net_plan(a, control, timeout_s)?;
    range("--outlier-z", a.outlier_z, 0.1, 1000.0, "")?;
    range("--outlier-pct", a.outlier_pct, 0.0, 100.0, "percent")?;
    range("--past-pct", a.past_pct, 0.0, 100.0, "percent")?;
    if let Some(m) = a.scale_max {
        range("--scale-max", m, 1e-9, 1e9, "GB/s")?;
    }
    Ok(FleetPlan {
        node: NodeOptions {
            suites,
            samples: a.sample.samples,
            min_sample_ms: a.sample.min_sample_ms,
        },
        turns: match a.turns {
            TurnsArg::Auto => "auto",
            TurnsArg::All => "all",
            TurnsArg::One => "one",
        }
        .into(),
        network,
        control,
        timeout_s,
        outlier_z: a.outlier_z,
        outlier_pct: a.outlier_pct,
        past_pct: a.past_pct,
        reference: a.reference.clone(),
        fail_if_outlier: a.fail_if_outlier,
    })
}

/// The network phase's plan from its flags, or None with `--schedule none`.
fn net_plan(
    a: &FleetArgs,
    control: Transport,
    timeout_s: f64,
) -> Result<Option<NetPlan>, UserError> {
    let Some(schedule) = schedule(a)? else {
        return Ok(None);
    };
    let transports = transports(a, control)?;
    let sizes = msg_sizes(a)?;
    flow_limits(a)?;
    Ok(Some(NetPlan {
        schedule,
        transports,
        sizes,
        tcp: TcpParams {
            step_time_s: range("--step-time", a.step_time, 0.05, 600.0, "seconds")?,
            omit_s: range("--omit", a.omit, 0.0, 60.0, "seconds")?,
            streams: a.streams as u16,
            timeout_s,
        },
        window: a.window,
        net_port: a.net_port,
        subnet: a.net_subnet.clone(),
    }))
}

/// `--schedule` (with `--pairs-at-once`, `--peers`, `--seed`) as the
/// schedule of pair tests; None for `none`.
fn schedule(a: &FleetArgs) -> Result<Option<Schedule>, UserError> {
    Ok(Some(match a.schedule {
        ScheduleArg::None => return Ok(None),
        ScheduleArg::Shift => Schedule::Shift,
        ScheduleArg::Pairs => Schedule::Pairs {
            all_at_once: a.pairs_at_once == PairsAtOnceArg::Half,
        },
        _ => {
            if a.peers == 0 {
                return Err(UserError::flag("--peers", "must be at least 1"));
            }
            Schedule::Sample {
                peers: a.peers,
                seed: a.seed,
            }
        }
    }))
}

/// `--transport` as the transports to measure, each once, in the order
/// given; MPI ones need an MPI build and the MPI control.
fn transports(a: &FleetArgs, control: Transport) -> Result<Vec<Transport>, UserError> {
    let mut transports: Vec<Transport> = Vec::new();
    for t in a
        .transport
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        let t = match Transport::parse(t) {
            Some(Transport::Mpi) if !mpi_built() => return Err(needs_mpi("--transport")),
            Some(t) => t,
            None => {
                return Err(UserError::flag(
                    "--transport",
                    format!("unknown transport '{t}': use tcp, mpi or tcp,mpi"),
                ))
            }
        };
        if !transports.contains(&t) {
            transports.push(t);
        }
    }
    if transports.contains(&Transport::Mpi) && control != Transport::Mpi {
        return Err(UserError::flag(
            "--transport",
            "mpi pair tests run over the MPI control: drop --control tcp",
        ));
    }
    if transports.is_empty() {
        return Err(UserError::flag(
            "--transport",
            "give tcp, mpi or tcp,mpi (or --schedule none)",
        ));
    }
    Ok(transports)
}

/// `--msg-sizes`, none above the largest message the protocol carries.
fn msg_sizes(a: &FleetArgs) -> Result<Vec<u64>, UserError> {
    let sizes = units::parse_size_list(&a.msg_sizes)
        .map_err(|e| UserError::flag("--msg-sizes", e.to_string()))?;
    if let Some(&big) = sizes.iter().find(|&&s| s > MAX_CHUNK) {
        return Err(UserError::flag(
            "--msg-sizes",
            format!(
                "{} is above the largest message of {}",
                format_bytes(big),
                format_bytes(MAX_CHUNK)
            ),
        ));
    }
    Ok(sizes)
}

/// The per-flow flags in their ranges: `--streams`, `--window`,
/// `--net-subnet`.
fn flow_limits(a: &FleetArgs) -> Result<(), UserError> {
    if a.streams == 0 || a.streams > MAX_STREAMS as u32 {
        return Err(UserError::flag(
            "--streams",
            format!("give 1 to {MAX_STREAMS} connections per flow"),
        ));
    }
    if a.window == 0 || a.window > 1024 {
        return Err(UserError::flag(
            "--window",
            "give 1 to 1024 messages in flight",
        ));
    }
    if let Some(s) = &a.net_subnet {
        if crate::cluster::rendezvous::parse_cidr(s).is_none() {
            return Err(UserError::flag(
                "--net-subnet",
                format!("'{s}' is not an IPv4 network like 10.1.0.0/16"),
            ));
        }
    }
    Ok(())
}

impl NetPlan {
    /// Seconds one synchronised step takes on `transport`.
    pub fn step_seconds(&self, transport: Transport) -> f64 {
        let omit = if transport == Transport::Tcp {
            self.tcp.omit_s
        } else {
            0.0
        };
        self.tcp.step_time_s + omit + STEP_OVERHEAD_S
    }

    /// How long rank 0 waits for a step's flows on `transport` before a
    /// silent rank is lost: the step plus `--timeout`, and over TCP never
    /// less than a leader's own bound with a hung peer plus a grace for
    /// scheduling (see `TcpParams::leader_bound_s`), so only the hung rank
    /// is lost, not the healthy rank testing against it.
    pub fn step_patience(&self, transport: Transport) -> f64 {
        let plain = self.step_seconds(transport) + self.tcp.timeout_s;
        if transport == Transport::Tcp {
            plain.max(self.tcp.leader_bound_s() + STEP_OVERHEAD_S + LEADER_GRACE_S)
        } else {
            plain
        }
    }

    /// (steps, flows, seconds) of the whole network phase for `n` ranks.
    pub fn cost(&self, n: u64) -> (u64, u64, f64) {
        let (steps, flows) = schedule::size_of(self.schedule, n);
        let per = self.sizes.len() as u64;
        let secs: f64 = self
            .transports
            .iter()
            .map(|t| (steps * per) as f64 * self.step_seconds(*t))
            .sum();
        let k = self.transports.len() as u64;
        (steps * per * k, flows * per * k, secs)
    }
}

/// The plan in words, with how long it should take on `n` ranks (node
/// phase from this machine's caches; `rounds` turns of it).
pub fn describe(p: &FleetPlan, host: &Host, n: u32, rounds: u32) -> Result<String, UserError> {
    let node_s = node::plan(&p.node, host)?.estimate_s();
    let mut s = String::new();
    s.push_str(&format!(
        "bwscope fleet: {n} ranks, control {}\n",
        p.control
    ));
    let suites = if p.node.suites.is_empty() {
        "none".to_string()
    } else {
        p.node.suites.join(", ")
    };
    s.push_str(&format!(
        "  per-node phase: {suites}: about {:.0} s per node here ({}, {} cores); {}\n",
        node_s,
        host.cpu.model_name.trim(),
        host.physical_cores,
        match p.turns.as_str() {
            "one" => format!("one rank at a time: {} rounds", n),
            "all" => "every rank at once".to_string(),
            _ => format!(
                "every machine at once, ranks sharing a machine take turns ({rounds} round{})",
                if rounds == 1 { "" } else { "s" }
            ),
        }
    ));
    let rounds = if p.turns == "one" { n } else { rounds };
    let mut total = node_s * rounds as f64;
    match &p.network {
        None => s.push_str("  network phase: none (--schedule none)\n"),
        Some(net) => {
            let (steps, flows, secs) = net.cost(n as u64);
            total += secs;
            s.push_str(&format!(
                "  network phase: {} over {}, sizes {}: {steps} steps, {flows} flows, about {:.0} s\n",
                net.schedule.name(),
                net.transports
                    .iter()
                    .map(|t| t.name())
                    .collect::<Vec<_>>()
                    .join(" and "),
                net.sizes.iter().map(|&b| format_bytes(b)).collect::<Vec<_>>().join(", "),
                secs
            ));
            if net.schedule == Schedule::Shift || matches!(net.schedule, Schedule::Pairs { .. }) {
                for big in [100u64, 1000] {
                    if big > n as u64 {
                        let (st, _, se) = net.cost(big);
                        s.push_str(&format!(
                            "    ({big} nodes: {st} steps, about {})\n",
                            duration(se)
                        ));
                    }
                }
            }
        }
    }
    s.push_str(&format!(
        "  total: about {} (startup and gathering add a little)\n",
        duration(total)
    ));
    Ok(s)
}

/// `95 s`, `12 min`, `3.1 h`.
pub fn duration(s: f64) -> String {
    if s < 120.0 {
        format!("{s:.0} s")
    } else if s < 7200.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn args(extra: &[&str]) -> FleetArgs {
        let mut v = vec!["bwscope", "fleet"];
        v.extend_from_slice(extra);
        match crate::cli::Cli::parse_from(v).command {
            Some(crate::cli::Command::Fleet(a)) => a,
            _ => unreachable!(),
        }
    }

    #[test]
    fn defaults_resolve() {
        let p = resolve(&args(&[])).unwrap();
        assert_eq!(p.node.suites, vec!["info", "cache", "latency", "threads"]);
        let n = p.network.unwrap();
        assert_eq!(n.schedule, Schedule::Shift);
        assert_eq!(n.transports, vec![Transport::Tcp]);
        assert_eq!(n.sizes, vec![1 << 20]);
        let want = if mpi_built() {
            Transport::Mpi
        } else {
            Transport::Tcp
        };
        assert_eq!(p.control, want);
    }

    #[test]
    fn bad_flags_name_themselves() {
        for (flags, flag) in [
            (vec!["--suites", "foo"], "--suites"),
            (vec!["--step-time", "0"], "--step-time"),
            (vec!["--transport", "ib"], "--transport"),
            (vec!["--msg-sizes", "2GiB"], "--msg-sizes"),
            (vec!["--streams", "0"], "--streams"),
            (vec!["--net-subnet", "10.0.0.1"], "--net-subnet"),
            (vec!["--outlier-pct", "101"], "--outlier-pct"),
            (vec!["--schedule", "sample", "--peers", "0"], "--peers"),
            (vec!["--samples", "0"], "--samples"),
        ] {
            let e = resolve(&args(&flags)).unwrap_err().to_string();
            assert!(e.starts_with(flag), "{flags:?}: {e}");
        }
        if !mpi_built() {
            let e = resolve(&args(&["--transport", "tcp,mpi"]))
                .unwrap_err()
                .to_string();
            assert!(e.contains("--features mpi"), "{e}");
        }
    }

    #[test]
    fn sample_cost_is_linear_and_shift_quadratic() {
        let p = resolve(&args(&["--schedule", "sample", "--peers", "4"])).unwrap();
        let net = p.network.unwrap();
        let (s1, f1, t1) = net.cost(100);
        let (s2, f2, t2) = net.cost(1000);
        assert_eq!((s1, s2), (4, 4));
        assert_eq!(f2, 10 * f1);
        assert_eq!(t1, t2);
        let p = resolve(&args(&["--schedule", "shift"])).unwrap();
        let (s, f, _) = p.network.unwrap().cost(1000);
        assert_eq!((s, f), (999, 999_000));
        assert_eq!(duration(30.0), "30 s");
        assert_eq!(duration(600.0), "10 min");
        assert_eq!(duration(36000.0), "10.0 h");
    }
}
