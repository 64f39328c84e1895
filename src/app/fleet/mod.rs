//! `bwscope fleet`: run under `mpirun`/`srun` across a cluster, measure
//! every node and the pair network, and say which node or link is slow.
//!
//! - `crate::cluster`: how the ranks find and talk to each other (launch,
//!   rendezvous, TCP or MPI control) and the pair tests of the network
//!   phase (schedule, network);
//! - [`node`]: the per-node phase ([`node::plan`], the one call
//!   into the suites);
//! - [`run`]: one fleet run as every rank lives it (rank 0's side in
//!   `root`); [`output`]: the files rank 0 writes (the verdicts and
//!   the reference file are `crate::report::fleet`'s);
//! - [`plan`]: flags → plan, and the time estimate.

pub mod node;
pub mod output;
mod past;
pub mod plan;
mod protocol;
mod rank;
mod root;
pub mod run;

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use crate::cli::{FleetArgs, OutputArgs};
use crate::cluster::{comm, launch, tcp};
use crate::error::{UserError, EXIT_OK};
use crate::model::fleet::Transport;

/// Ctrl-C and SIGTERM (what `mpirun` and `srun` send when they are
/// interrupted) both ask for an orderly stop that keeps every finished
/// record.
fn signals() -> &'static AtomicBool {
    crate::os::signal::install_for_fleet()
}

fn dry_run(
    p: &plan::FleetPlan,
    l: Option<&launch::Launch>,
    nodes: Option<u32>,
) -> anyhow::Result<u8> {
    let (n, rank) = match (l, nodes) {
        (_, Some(0)) => {
            return Err(UserError::flag("--nodes", "0 nodes is no fleet: give 1 or more").into())
        }
        (_, Some(n)) if n > launch::MAX_RANKS => {
            return Err(UserError::flag(
                "--nodes",
                format!(
                    "{n} is more nodes than a fleet can have: give at most {}",
                    launch::MAX_RANKS
                ),
            )
            .into())
        }
        (_, Some(n)) => (n, l.map_or(0, |l| l.rank)),
        (Some(l), None) => (l.size, l.rank),
        _ => return Err(UserError::flag(
            "--nodes",
            "outside a launcher, say how many nodes to plan for: bwscope fleet --dry-run --nodes N",
        )
        .into()),
    };
    if rank == 0 {
        let host = crate::platform::detect_host(false);
        print!("{}", plan::describe(p, &host, n, 1)?);
    }
    Ok(EXIT_OK)
}

/// Where rank 0 listens, when a manifest says it rather than a flag: a
/// Kubernetes pod shares no folder with the others, so the rendezvous file
/// cannot work there, but the MPI Operator's headless service gives rank
/// 0's pod a DNS name a manifest can write down.
pub const COORDINATOR_VAR: &str = "BWSCOPE_COORDINATOR";

/// The token file, when a manifest names it (a mounted Secret).
pub const TOKEN_FILE_VAR: &str = "BWSCOPE_TOKEN_FILE";

/// A flag's value, else the variable's (set and not empty), with the name
/// of where it came from for the messages.
fn flag_or_env(
    flag: Option<&str>,
    name: &'static str,
    var: &'static str,
) -> Option<(String, &'static str)> {
    match flag {
        Some(v) => Some((v.to_string(), name)),
        None => std::env::var(var)
            .ok()
            .filter(|v| !v.trim().is_empty())
            .map(|v| (v, var)),
    }
}

/// `--token-file`, else `BWSCOPE_TOKEN_FILE`: read and checked now, also
/// in a dry run, and an error names where the path came from.
fn token(a: &FleetArgs) -> Result<Option<Vec<u8>>, UserError> {
    let Some((path, from)) = flag_or_env(a.token_file.as_deref(), "--token-file", TOKEN_FILE_VAR)
    else {
        return Ok(None);
    };
    crate::net::token::read(&path)
        .map(Some)
        .map_err(|e| match e {
            UserError::BadFlag { message, .. } if from == TOKEN_FILE_VAR => {
                UserError::flag(TOKEN_FILE_VAR, message)
            }
            e => e,
        })
}

pub fn command(cx: &super::Context, a: &FleetArgs, out: &OutputArgs) -> anyhow::Result<u8> {
    let plan = plan::resolve(a)?;
    let launch = launch::from_env().map_err(|m| UserError::BadInput {
        path: "bwscope fleet".into(),
        problem: m,
    })?;
    // Files given by flag fail now, also in a dry run, not after the run.
    let token = token(a)?;
    let coordinator = flag_or_env(a.coordinator.as_deref(), "--coordinator", COORDINATOR_VAR);
    if let Some((c, from)) = &coordinator {
        tcp::check_coordinator(c).map_err(|m| UserError::flag(from, m))?;
    }
    if let Some(r) = &plan.reference {
        crate::report::fleet::reference::load(r)?;
    }
    if a.dry_run {
        return dry_run(&plan, launch.as_ref(), a.nodes);
    }
    let Some(mut launch) = launch else {
        return Err(UserError::BadInput {
            path: "bwscope fleet".into(),
            problem: format!("no launcher found: {}", launch::HOW_TO_LAUNCH),
        }
        .into());
    };
    if launch.job.is_none() && plan.control != Transport::Mpi && coordinator.is_none() {
        // Hydra names no job in the environment: ask its process manager
        // (MPI asks it itself under --control mpi), so each job meets
        // through a rendezvous file of its own.
        launch.job = launch::pmi_kvsname();
    }
    let t0 = Instant::now();
    let started_at = crate::model::time::now_rfc3339();
    let stop = signals();
    let outputs = if launch.rank == 0 {
        Some(output::Outputs::prepare(a, out)?)
    } else {
        None
    };
    // A fleet refused before it wrote anything (other flags, a second rank
    // 0, mixed releases) leaves no empty results folder behind.
    let _folder = outputs
        .as_ref()
        .map(|o| crate::report::outfile::RemoveIfEmpty(o.folder.clone()));
    // The clock is measured later, at the rank's turn: ranks sharing a
    // machine would otherwise measure it against each other.
    let host = crate::platform::detect_host(false);
    let (mut comm, token): (Box<dyn comm::Comm>, Option<Vec<u8>>) = match plan.control {
        #[cfg(feature = "mpi")]
        Transport::Mpi => {
            let (c, t) = crate::cluster::mpi::connect(&launch, token, stop)?;
            (Box::new(c), t)
        }
        _ => {
            let settings = tcp::Settings {
                launch: launch.clone(),
                rendezvous_dir: a
                    .rendezvous
                    .as_ref()
                    .map_or_else(|| PathBuf::from("."), PathBuf::from),
                coordinator,
                token,
                startup: Duration::from_secs_f64(plan.timeout_s),
            };
            let (c, t) = tcp::connect(&settings, stop)?;
            (Box::new(c), t)
        }
    };
    let code = run::run(
        comm.as_mut(),
        &plan,
        run::Ctx {
            launch: &launch,
            host: &host,
            token,
            stop,
            out: outputs,
            t0,
            started_at,
            history: &cx.history,
        },
    )?;
    Ok(code)
}

/// What rank 0 makes of a body a rank sent (`bytes`, JSON): as a hello,
/// a node reply and a step reply, each through the decoding the fleet
/// uses. For the fuzz targets (`fuzz/`): the decoders are this module's
/// own, and a fuzzer must reach them from outside the crate.
#[doc(hidden)]
pub fn decode_rank_body(bytes: &[u8]) {
    let Ok(body) = serde_json::from_slice::<serde_json::Value>(bytes) else {
        return;
    };
    let _ = protocol::Hello::decode(1, &body);
    let _ = protocol::reply::<protocol::NodeReply>(1, &body).and_then(|n| n.checked(1));
    let _ = protocol::reply::<protocol::StepReply>(1, &body);
}
