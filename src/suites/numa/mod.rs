//! NUMA (`bwscope numa`): where memory sits relative to the cores.
//!
//! Three modes share one placement protocol:
//! - **matrix** (default): for every cpu node × memory node, a team on the
//!   cpu node's cores with every buffer bound to the memory node by
//!   `mbind(MPOL_BIND)`; bandwidth per traffic mix, and the pointer-chase
//!   latency of one thread. After each cell `move_pages(…, NULL, …)` counts
//!   where the pages really are (`placement.verified_fraction`).
//! - **`--scenario write-pair`**: the AMD guide's experiment. Two write-only
//!   threads on node 0, memory local/local vs local/remote, same work,
//!   total time and percent difference; then the same with readers.
//! - **`--load N@NODE`**: N load threads stream at a controlled intensity
//!   (a delay after every 4 KiB) while a probe thread measures latency (or
//!   bandwidth): MLC's loaded-latency curve.
//!
//! On a one-node machine the matrix is 1×1 with a note, not an error.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::estimate::Estimate;
use super::record::{noise_warnings, sampled, spread_warnings};
use super::{Ctx, Descriptor, Flow, Plan, Sampling};
use crate::error::UserError;
use crate::measure::mix::{self, Mix, MixKernels, MixWork};
use crate::measure::team::Team;
use crate::measure::workers::Workers;
use crate::measure::{Failure, Measured, SampleOpts, Sampler};
use crate::memory::{numa, PageKind};
use crate::model::detail::NumaDetail;
use crate::model::{Curve, Detail, Host, Placement, Record, SuiteId, Warning};
use crate::stats;
use crate::util::units::format_bytes;

pub const DESCRIPTOR: Descriptor = Descriptor {
    id: SuiteId::Numa,
    about: "cpu-node × memory-node matrix, read/write mixes, write-pair scenario, loaded latency",
    reads_clock: false,
    quick: None,
    key: None,
};

/// Default injection steps: ns of delay after every 4 KiB a load thread
/// streams (0 = flat out; 20 µs ≈ 0.2 GB/s per thread).
pub const DEFAULT_DELAYS_NS: &[u64] = &[0, 100, 200, 500, 1000, 2000, 5000, 20000];

/// What a loaded-latency probe measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Probe {
    #[default]
    Latency,
    Bandwidth,
}

/// What a NUMA run is asked for. Node, cpu, mix and load lists keep the
/// small languages documented in `docs/numa.md` and are parsed (and checked
/// against this machine) by [`plan`].
#[derive(Debug, Clone, Default)]
pub struct NumaOptions {
    pub cpu_nodes: Option<String>,
    pub memory_nodes: Option<String>,
    pub threads: Option<usize>,
    pub cpus: Option<String>,
    /// Bytes per thread.
    pub size: Option<u64>,
    pub mix: Option<String>,
    pub roles: Option<String>,
    pub no_latency: bool,
    /// `--scenario write-pair`.
    pub write_pair: bool,
    pub load: Option<String>,
    pub delays: Option<String>,
    pub load_mix: Option<String>,
    pub probe: Probe,
    pub probe_cpu: Option<u32>,
    pub oversubscribe: bool,
    pub memory: PageKind,
    pub sampling: Sampling,
    /// `--tiers`: every initiator × memory node beside its HMAT claim,
    /// loaded curves, the interleave sweep.
    pub tiers: bool,
    /// `--interleave FAST,SLOW`: the interleave sweep over two nodes.
    pub interleave: Option<String>,
}

#[derive(Debug, Clone, serde::Serialize)]
#[serde(tag = "mode", rename_all = "kebab-case")]
pub enum Mode {
    Matrix {
        /// Traffic of every thread, one measurement per mix.
        mixes: Vec<Mix>,
        /// Per-thread roles instead (thread i runs roles[i]).
        roles: Option<Vec<Mix>>,
        latency: bool,
    },
    WritePair,
    Load {
        cpus: Vec<u32>,
        description: String,
        delays_ns: Vec<u64>,
        load_mix: Mix,
        probe_cpu: u32,
        probe: Probe,
    },
}

/// Resolved options.
#[derive(Debug, Clone, serde::Serialize)]
pub struct NumaPlan {
    pub mode: Mode,
    pub cpu_nodes: Vec<u32>,
    pub memory_nodes: Vec<u32>,
    /// Cpus of a cell per cpu node.
    pub cell_cpus: Vec<(u32, Vec<u32>)>,
    pub size: u64,
    pub samples: usize,
    pub min_sample_ms: f64,
    pub memory: PageKind,
    pub numa_balancing: Option<u32>,
    /// What `--tiers` / `--interleave` add; null without them.
    pub tiers: Option<TiersPlan>,
}

impl NumaPlan {
    fn opts(&self) -> SampleOpts {
        SampleOpts::new(self.samples, self.min_sample_ms)
    }
}

mod cell;
mod interleave;
mod load;
mod matrix;
mod pair;
mod plan;
mod tiers;

use cell::Refusals;
pub use cell::CHASE_KERNEL;
pub use interleave::proportional;
use load::run_load;
use matrix::run_matrix;
use pair::run_pair;
use plan::node_of;
pub(crate) use plan::parse_team;
pub use plan::plan;
pub use tiers::{survey_tiers, TiersPlan, TIER_MIXES};

/// How long the plan will take (see `suites::estimate` for the rule).
fn estimate(p: &NumaPlan) -> Estimate {
    let cells = p.cell_cpus.len() * p.memory_nodes.len();
    let threads = p.cell_cpus.iter().map(|(_, c)| c.len()).max().unwrap_or(1);
    let (cases, faulted) = match &p.mode {
        Mode::Matrix {
            mixes,
            roles,
            latency,
        } => {
            let sets = if roles.is_some() { 1 } else { mixes.len() };
            (
                cells * (sets + usize::from(*latency)),
                cells * (threads + usize::from(*latency)),
            )
        }
        // Two pairs (write, read), local/local and one per remote node.
        Mode::WritePair => (2 * p.memory_nodes.len(), 4 * p.memory_nodes.len()),
        Mode::Load { delays_ns, .. } => (delays_ns.len() + 1, 1 + threads),
    };
    Estimate::sampled(cases, p.samples, p.min_sample_ms)
        .faulting((faulted as u64 * p.size) as f64, "buffers")
}

impl Plan for NumaPlan {
    const ID: SuiteId = SuiteId::Numa;

    fn estimate(&self) -> Estimate {
        let base = estimate(self);
        match &self.tiers {
            Some(t) => tiers::estimate(self, t, base),
            None => base,
        }
    }

    fn execute(&self, cx: &mut Ctx) -> anyhow::Result<Flow> {
        let mut refusals = Refusals {
            any_ok: false,
            first: None,
        };
        let flow = match self.mode {
            Mode::Matrix { .. } => match &self.tiers {
                Some(t) => tiers::run_tiers(self, t, cx, &mut refusals)?,
                None => run_matrix(self, cx, &mut refusals)?,
            },
            Mode::WritePair => run_pair(self, cx, &mut refusals)?,
            Mode::Load { .. } => return run_load(self, cx),
        };
        if flow == Flow::Done && !refusals.any_ok {
            if let Some(e) = refusals.first {
                // Nothing could be placed at all: the flag is wrong for
                // this machine, not one cell. Records are already pushed.
                return Err(UserError::flag(
                    "--memory-nodes",
                    format!(
                        "no cell could be placed: {}",
                        e.trim_start_matches("--memory-nodes: ")
                    ),
                )
                .into());
            }
        }
        Ok(flow)
    }
}
