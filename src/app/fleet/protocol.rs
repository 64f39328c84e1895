//! What the ranks of a fleet run say to each other: the hello every rank
//! gathers to rank 0, the commands rank 0 broadcasts, the replies it
//! gathers, and what a rank brings to the run. One fleet run's sequence is
//! in `run`; a rank's work in `rank`; rank 0's drive in `root`.

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::output::Outputs;
use super::plan::FleetPlan;
use crate::cluster::comm::Identity;
use crate::cluster::schedule::Test;
use crate::model::fleet::{Flow, Transport};
use crate::model::{Host, Run};

/// Exit code when `--fail-if-outlier` finds a failing node.
pub const EXIT_OUTLIER: u8 = 3;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Hello {
    pub(super) id: Identity,
    pub(super) local_rank: Option<u32>,
    /// The address peers test against, and the transponder's port.
    pub(super) ip: Option<IpAddr>,
    pub(super) port: Option<u16>,
    /// This node's phase estimate, seconds.
    pub(super) estimate_s: Option<f64>,
    /// Why this rank cannot run the per-node phase (flags vs its machine).
    pub(super) error: Option<String>,
    /// The plan this rank's own flags make: rank 0 refuses a fleet whose
    /// ranks were started with other flags than its own (they would run
    /// rank 0's plan while their records and estimates said otherwise).
    #[serde(default)]
    pub(super) plan: Option<Box<FleetPlan>>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Member {
    pub(super) rank: u32,
    pub(super) label: String,
    pub(super) data: Option<SocketAddr>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "cmd", rename_all = "snake_case")]
pub(super) enum Cmd {
    Go {
        plan: Box<FleetPlan>,
        members: Vec<Member>,
    },
    Measure {
        round: u32,
        ranks: Vec<u32>,
    },
    Step {
        transport: Transport,
        size: u64,
        step: u32,
        tests: Vec<Test>,
    },
    Done {
        code: u8,
    },
    /// Rank 0 refused the fleet before anything was measured.
    Refused {
        reason: String,
    },
}

/// A rank's reply to `Measure`: its node's run, or why there is none,
/// and how long it took.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct NodeReply {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) run: Option<Run>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) error: Option<String>,
    pub(super) seconds: f64,
}

/// A rank's reply to `Step`: its view of the step's flows.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct StepReply {
    pub(super) flows: Vec<Flow>,
    pub(super) seconds: f64,
}

/// One rank's gathered reply: `None` where it sent none, an error naming
/// it where the reply did not parse.
pub(super) type Gathered<T> = Option<Result<T, String>>;

/// A gathered reply read as `T`; one that does not parse is an error
/// naming the rank (never dropped).
pub(super) fn reply<T: serde::de::DeserializeOwned>(rank: u32, body: &Value) -> Result<T, String> {
    T::deserialize(body).map_err(|e| format!("rank {rank}'s reply did not parse: {e}"))
}

/// What a rank brings to the run.
pub struct Ctx<'a> {
    pub launch: &'a crate::cluster::launch::Launch,
    pub host: &'a Host,
    pub token: Option<Vec<u8>>,
    pub stop: &'static AtomicBool,
    /// Rank 0 only.
    pub out: Option<Outputs>,
    pub t0: Instant,
    pub started_at: String,
}

pub(super) fn to_value<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// Rank 0 refused the fleet: the error every rank ends with.
pub(super) fn refusal(reason: String) -> anyhow::Error {
    crate::error::UserError::BadInput {
        path: "bwscope fleet".into(),
        problem: reason,
    }
    .into()
}
