//! `bwscope contend`: many agents sharing one memory system at once.
//!
//! Agents: pinned CPU teams streaming a mix over their own buffers
//! (`--cpu`), host ↔ device copy streams through the transfer backends
//! (`--device`), TCP flows (`--net`), and a bystander probe on a free cpu
//! (`--probe`). The run is a list of phases — each agent alone, every
//! pair, all together by default — and in each phase every agent is
//! prepared, released by one gate, and counts its bytes with timestamps
//! of the one monotonic clock (`os::time::now_ns`). After a warm-up the
//! coordinator opens a window of `--samples` × `--min-sample-ms`; each
//! agent's bytes inside it are interpolated between its own counts at the
//! window's edges, and an agent whose counts do not cover the window (it
//! started late or ended early) makes the phase invalid, with its reason,
//! while the others keep their figures.

use std::time::Duration;

use super::{Ctx, Descriptor, Flow, Key, Planned, Sampling};
use crate::measure::mix::Mix;
use crate::memory::PageKind;
use crate::model::{Host, SuiteId};
use crate::transfer::Api;

mod agents;
mod device;
mod net;
mod phase;
mod plan;
mod records;
mod team;

pub use agents::{Agent, AgentType};
pub use net::NetTarget;
pub use plan::plan;
pub use team::CpuWork;

pub const DESCRIPTOR: Descriptor = Descriptor {
    id: SuiteId::Contend,
    about: "many agents at once (CPU teams, device copies, TCP flows, a probe): each one's share on one timeline",
    reads_clock: false,
    quick: None,
    key: Some(Key {
        about: "the default agents alone and together: aggregate vs the sum of the alones",
        plan: key_plan,
    }),
};

fn key_plan(host: &Host, sampling: Sampling) -> Planned {
    let o = ContendOptions {
        sampling,
        ..ContendOptions::default()
    };
    Ok(Box::new(plan(&o, host)?))
}

/// What a bystander probe measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BystanderKind {
    /// Pointer-chase latency, ns per dependent load.
    Latency,
    /// One thread's read bandwidth.
    Bandwidth,
}

/// What a contend run is asked for (the flags, unparsed where the plan
/// checks them against this machine).
#[derive(Debug, Clone, Default)]
pub struct ContendOptions {
    /// `--cpu N@NODE[:MIX]` or `cpus:LIST[:MIX]`, one per team.
    pub cpu: Vec<String>,
    /// `--device BACKEND[#INDEX]:DIR[:HOSTKIND]`.
    pub device: Vec<String>,
    /// `--net loopback|HOST[:PORT][/DIR]`.
    pub net: Vec<String>,
    pub bystander: Option<BystanderKind>,
    pub bystander_cpu: Option<u32>,
    /// `--phases`: alone, pairs, all, or NAME+NAME groups.
    pub phases: Option<String>,
    /// Bytes per CPU thread.
    pub size: Option<u64>,
    /// Bytes per device copy.
    pub device_size: Option<u64>,
    pub memory: PageKind,
    pub sampling: Sampling,
    /// `--token-file`: the transponders' shared secret (`net serve
    /// --token-file`), for remote flows.
    pub token_file: Option<String>,
}

/// The bystander.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BystanderPlan {
    pub kind: BystanderKind,
    pub cpu: u32,
    pub bytes: u64,
}

/// One phase: the agents (indices into `agents`) that run together.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Phase {
    pub name: String,
    pub agents: Vec<usize>,
}

/// Resolved options, stored in the run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ContendPlan {
    #[serde(serialize_with = "agents::agents_json")]
    pub agents: Vec<Agent>,
    pub bystander: Option<BystanderPlan>,
    pub phases: Vec<Phase>,
    /// Released agents run this long before the window opens.
    pub warmup_seconds: f64,
    /// The counting window: `slices` × `slice_seconds`.
    pub slices: usize,
    pub slice_seconds: f64,
    pub memory: PageKind,
    pub dram_peak_gbps: Option<f64>,
    /// What the plan chose on its own, in words (the default agents).
    pub notes: Vec<String>,
    /// Agents that cannot run here (name, spec, why): skipped records.
    pub skipped: Vec<(String, String, String)>,
    /// The token remote flows prove to their transponder; never stored.
    #[serde(skip)]
    pub token: Option<Vec<u8>>,
}

/// Warm-up before every window: long enough for a copy engine's queue
/// and a TCP window to reach their pace.
const WARMUP: Duration = Duration::from_millis(300);
/// Default window: 5 slices of 200 ms.
const DEFAULT_SLICES: usize = 5;
const DEFAULT_SLICE_MS: f64 = 200.0;
/// Preparing a phase (waking teams, opening flows) and joining it.
const PHASE_OVERHEAD_S: f64 = 0.3;

impl ContendPlan {
    pub fn window_seconds(&self) -> f64 {
        self.slices as f64 * self.slice_seconds
    }
}

impl super::Plan for ContendPlan {
    const ID: SuiteId = SuiteId::Contend;

    fn estimate(&self) -> super::estimate::Estimate {
        let per = self.warmup_seconds + self.window_seconds() + PHASE_OVERHEAD_S;
        let bytes: u64 = self
            .agents
            .iter()
            .map(|a| a.footprint().faulted)
            .sum::<u64>()
            + self.bystander.as_ref().map_or(0, |p| p.bytes);
        super::estimate::Estimate {
            seconds: self.phases.len() as f64 * per,
            rule: format!(
                "{} phases × ({:.1} s warm-up + {:.1} s window + ~{PHASE_OVERHEAD_S} s to prepare and join)",
                self.phases.len(),
                self.warmup_seconds,
                self.window_seconds()
            ),
        }
        .faulting(bytes as f64, "agents' buffers")
    }

    fn execute(&self, cx: &mut Ctx) -> anyhow::Result<Flow> {
        phase::run(self, cx)
    }
}
