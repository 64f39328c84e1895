//! The `contend` suite's records: one per agent and phase (a CPU team, a
//! device copy stream, a TCP flow, the bystander), and one
//! `aggregate` record per phase. Every agent of a phase counts its bytes
//! over the same window of the one monotonic clock.

use serde::{Deserialize, Serialize};

use super::latency::latency_headline;
use super::{case_parts, CasePart, RecordMetric, Judged, Nullable, SuiteDetail};
use crate::model::headline::Quantity;
use crate::model::{AgentKind, Record, Stats};

/// A `contend` record.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ContendDetail {
    /// The phase: its agents joined by `+` (`cpu0`, `cpu0+dev0`), `idle`
    /// for the bystander alone (compare key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_phase: Option<String>,
    /// The agent's name (`cpu0`, `dev0`, `net0`, `bystander`), or `aggregate`
    /// for the phase's total (compare key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_agent: Option<String>,
    /// What the agent is: `cpu`, `device`, `net`, `bystander` or `aggregate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_kind: Option<AgentKind>,
    /// The agent as asked for (`cpus:0-1:read`, `opencl:h2d:host-ptr`,
    /// `loopback`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The agents that ran in the phase (the probe not among them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase_agents: Option<Vec<String>>,
    /// The phase's counting window on the one clock, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_seconds: Option<f64>,
    /// Bytes the agent moved inside the window (interpolated between its
    /// own timestamped counts at the window's edges), by its convention
    /// (`byte_convention`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_bytes: Option<u64>,
    /// `window_bytes` over `window_seconds`, GB/s: the agent's figure in
    /// the phase; null where it did not run through the window.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub window_gbps: Nullable<f64>,
    /// The agent's first count, seconds from the window's start (at or
    /// below 0 when it ran before the window opened).
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub covered_from_seconds: Nullable<f64>,
    /// The agent's last count, seconds from the window's end (at or above
    /// 0 when it ran until the window closed).
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub covered_to_seconds: Nullable<f64>,
    /// The agent ran through the whole window (checked from its counts);
    /// on an aggregate record: every agent of the phase did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid: Option<bool>,
    /// Why the agent stopped before the window closed (present only then);
    /// on an aggregate record, which agent ended and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<String>,
    /// The agent's rate in its alone phase, GB/s; null without one.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub alone_gbps: Nullable<f64>,
    /// Alone rate over this phase's rate (1.0 = unaffected, 2.0 = half
    /// speed); null without an alone phase.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub slowdown: Nullable<f64>,
    /// The agent's part of the phase's aggregate, 0..1.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub share: Nullable<f64>,
    /// Aggregate record: the sum of the phase's agents' rates, GB/s.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub aggregate_gbps: Nullable<f64>,
    /// Aggregate record: the sum of the same agents' alone rates, GB/s.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub sum_alone_gbps: Nullable<f64>,
    /// Aggregate record: how far the aggregate falls below the sum of the
    /// alones, percent (0 = no interference).
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub loss_percent: Nullable<f64>,
    /// The DRAM peak (SMBIOS or `--dram-peak`), GB/s; null when unknown.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub dram_peak_gbps: Nullable<f64>,
    /// Aggregate record: the aggregate as a percentage of the DRAM peak.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub percent_of_dram_peak: Nullable<f64>,
    /// A device agent's link limit (PCIe generation × width), GB/s; null
    /// when unknown.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub link_theoretical_gbps: Nullable<f64>,
    /// The probe's latency in this phase, ns per dependent load (on the
    /// probe's and the aggregate records); null without a latency probe.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    #[serde(alias = "probe_latency_ns")]
    pub bystander_latency_ns: Nullable<f64>,
    /// A latency probe's ns per load, per slice of the window.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub latency_ns: Nullable<Stats>,
    /// How the agent's bytes are counted, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub byte_convention: Option<String>,
    /// A CPU team's or bandwidth probe's mix (`read`, `copy`, `3:1`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix: Option<String>,
    /// The asm kernels a CPU agent ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernels: Option<Vec<String>>,
    /// The node a CPU agent's memory was bound to; null when not bound.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub memory_node: Nullable<u32>,
    /// A device agent's API (`cuda`, `opencl`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
    /// A device agent's device name as the API reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// A device agent's host memory kind (`pinned`, `host-ptr`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_kind: Option<String>,
    /// A device agent's direction (`h2d`, `d2h`, `bidir`, `h2d-sm`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<String>,
    /// The OpenCL device is the CPU itself (PoCL): its "copies" are the
    /// host's own memcpy on host cores, not DMA.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_is_cpu: Option<bool>,
    /// The agent's bytes cross a DMA engine or a device's SMs (false for
    /// CPU teams, CPU-device copies and loopback flows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dma: Option<bool>,
    /// A net agent's peer (`loopback` or HOST:PORT).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer: Option<String>,
}

impl ContendDetail {
    /// What the record is: its `agent_kind`, or where a file has none,
    /// what its name says (`aggregate`, `bystander` or the older `probe`).
    pub fn kind(&self) -> Option<AgentKind> {
        self.agent_kind
            .clone()
            .or_else(|| match AgentKind::parse(self.case_agent.as_deref()?) {
                k @ (AgentKind::Aggregate | AgentKind::Bystander) => Some(k),
                _ => None,
            })
    }

    /// A phase's aggregate record.
    pub fn is_aggregate(&self) -> bool {
        self.kind() == Some(AgentKind::Aggregate)
    }

    /// The bystander's record.
    pub fn is_bystander(&self) -> bool {
        self.kind() == Some(AgentKind::Bystander)
    }

    /// An agent's record (not the bystander's, not the aggregate's).
    pub fn is_agent(&self) -> bool {
        self.kind().is_none_or(|k| k.is_agent())
    }
}

impl SuiteDetail for ContendDetail {
    fn case(&self) -> Vec<CasePart> {
        case_parts([
            CasePart::of("phase", self.case_phase.as_ref()),
            CasePart::of("agent", self.case_agent.as_ref()),
        ])
    }

    fn metric(&self) -> Option<RecordMetric> {
        latency_headline(&self.latency_ns)
    }

    /// `contend_all_gbps`: the aggregate of the phase with the most
    /// agents (every default agent together).
    fn judged<'a>(records: &[&'a Record]) -> Vec<Judged<'a>> {
        let all = records
            .iter()
            .filter_map(|r| Some((r.detail.get::<ContendDetail>()?, *r)))
            .filter(|(d, _)| d.is_aggregate())
            .max_by_key(|(d, _)| d.phase_agents.as_ref().map_or(0, |a| a.len()));
        let Some((d, record)) = all else {
            return Vec::new();
        };
        let what = format!(
            "every contend agent together ({}): aggregate bandwidth",
            d.phase_agents.clone().unwrap_or_default().join("+")
        );
        d.aggregate_gbps
            .value()
            .map(|value| Judged {
                metric: "contend_all_gbps".into(),
                quantity: Quantity::Bandwidth,
                higher_is_better: true,
                family: "contend_aggregate".into(),
                labels: Vec::new(),
                value,
                what,
                record,
            })
            .into_iter()
            .collect()
    }
}
