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

impl NodeReply {
    /// `self` as rank 0 may keep it: the run's names from the rank's
    /// machine cut to one line, and every record plausible (the check a
    /// run file gets, `report::plausible`): a rank's `threads: 0` or
    /// `gbps` of 1e308 made `inf` in tables and a 309-digit OpenMetrics
    /// value. A run that fails is the rank's error, named.
    pub(super) fn checked(mut self, rank: u32) -> Result<NodeReply, String> {
        self.error = self.error.map(|e| crate::util::text::foreign_message(&e));
        if let Some(run) = self.run.as_mut() {
            crate::report::json::clean_names(&mut run.host);
            crate::report::plausible::check(run)
                .map_err(|p| format!("rank {rank}'s run is not plausible: {p}"))?;
        }
        Ok(self)
    }
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
/// naming the rank (never dropped). Every string in it is cleaned first
/// (`util::text::clean_value`): a rank's error text, kernel or CPU names
/// reach rank 0's terminal and files, and any user on that rank's
/// machine may have written them.
pub(super) fn reply<T: serde::de::DeserializeOwned>(rank: u32, body: &Value) -> Result<T, String> {
    let mut body = body.clone();
    crate::util::text::clean_value(&mut body);
    T::deserialize(body).map_err(|e| format!("rank {rank}'s reply did not parse: {e}"))
}

/// The longest per-node phase estimate a hello may give, seconds (a
/// week): rank 0 waits twice the estimate, and a hello of 1e300 or of a
/// negative number made that wait a panic that ended the whole fleet.
pub(super) const MAX_ESTIMATE_S: f64 = 7.0 * 24.0 * 3600.0;

impl Hello {
    /// A rank's gathered hello, cleaned like every reply and range-checked:
    /// an estimate that is not a number of seconds from 0 to a week is
    /// dropped (rank 0 then assumes 1 s and waits its `--timeout` on top).
    pub(super) fn decode(rank: u32, body: &Value) -> Option<Hello> {
        let mut h: Hello = reply(rank, body).ok()?;
        h.error = h.error.map(|e| crate::util::text::foreign_message(&e));
        h.estimate_s = h
            .estimate_s
            .filter(|s| s.is_finite() && (0.0..=MAX_ESTIMATE_S).contains(s));
        Some(h)
    }
}

/// `seconds` as a wait, never a panic: not a number or negative is no
/// wait, beyond a week is a week.
pub(super) fn wait_of(seconds: f64) -> std::time::Duration {
    let s = if seconds.is_nan() { 0.0 } else { seconds };
    std::time::Duration::from_secs_f64(s.clamp(0.0, 2.0 * MAX_ESTIMATE_S))
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
    /// Where rank 0 records the fleet and finds its past (`--history`).
    pub history: &'a crate::app::history::Settings,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn hello(estimate: serde_json::Value) -> Value {
        let id = Identity::this(1, 2, None);
        serde_json::json!({
            "id": id,
            "local_rank": null,
            "ip": null,
            "port": null,
            "estimate_s": estimate,
            "error": "x\u{1b}[2J",
        })
    }

    #[test]
    fn a_hello_with_an_estimate_no_node_could_take_loses_it() {
        for bad in [
            serde_json::json!(1e300),
            serde_json::json!(-1e9),
            serde_json::json!(8.0 * 24.0 * 3600.0),
        ] {
            let h = Hello::decode(1, &hello(bad.clone())).expect("still a hello");
            assert_eq!(h.estimate_s, None, "{bad}");
            assert_eq!(h.error.as_deref(), Some("x�[2J"));
        }
        let h = Hello::decode(1, &hello(serde_json::json!(12.5))).unwrap();
        assert_eq!(h.estimate_s, Some(12.5));
        // Whatever reaches a wait cannot panic it.
        assert_eq!(wait_of(f64::NAN), std::time::Duration::ZERO);
        assert_eq!(wait_of(-5.0), std::time::Duration::ZERO);
        assert!(wait_of(1e300) <= std::time::Duration::from_secs(15 * 24 * 3600));
    }

    #[test]
    fn a_host_name_with_a_newline_is_one_line_once_decoded() {
        let mut v = hello(serde_json::json!(1.0));
        v["id"]["hostname"] = "x\nvictim-node-07".into();
        let h = Hello::decode(1, &v).unwrap();
        assert_eq!(h.id.hostname, "x�victim-node-07");
        let id: Identity = serde_json::from_value(v["id"].clone()).unwrap();
        assert_eq!(id.hostname, "x�victim-node-07");
    }

    #[test]
    fn a_node_run_that_is_not_plausible_is_the_ranks_error() {
        let mut run: Run =
            serde_json::from_str(include_str!("../../../tests/fixtures/cache-quick.json")).unwrap();
        run.host.cpu.model_name = "CPU\n\u{1b}]0;x\u{7}".into();
        let ok = NodeReply {
            run: Some(run.clone()),
            error: None,
            seconds: 1.0,
        }
        .checked(3)
        .unwrap();
        assert_eq!(ok.run.unwrap().host.cpu.model_name, "CPU��]0;x�");
        run.records[0].threads = 0;
        let e = NodeReply {
            run: Some(run.clone()),
            error: None,
            seconds: 1.0,
        }
        .checked(3)
        .unwrap_err();
        assert!(e.starts_with("rank 3's run is not plausible"), "{e}");
        run.records[0].threads = 1;
        if let Some(g) = run.records[0].gbps.as_mut() {
            g.best = 1e308;
        }
        assert!(NodeReply {
            run: Some(run),
            error: None,
            seconds: 1.0,
        }
        .checked(3)
        .is_err());
    }
}
