//! Spells: what the machine was going through while a sample was taken.
//!
//! In a cloud guest other tenants decide much of a figure and nothing in
//! the guest shows it: a busy SMT sibling on the host halves a core's L1
//! load throughput at an unchanged clock, with no steal and no foreign
//! load in the guest; other guests' traffic moves DRAM by 2–3× within a
//! run. Two fixed probes run between the samples of every sampled case
//! (`measure::probe`): a core-share probe (L1 load bytes per core cycle,
//! as a share of what the core's load ports allow) and a memory probe (an
//! idle-latency chase over a DRAM-sized set). Each sample carries its
//! [`Probe`]; each record its [`Spells`]: how many of its samples fell in
//! each kind of spell and what it measured in the clean ones. See
//! `docs/noise.md`.

use serde::{Deserialize, Serialize};

use super::Stats;

/// The probes' readings right after one sample.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default)]
pub struct Probe {
    /// L1 load bytes per core cycle the core-share probe reached (the
    /// slowest of the record's workers); null where it could not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_bytes_per_cycle: Option<f64>,
    /// Nanoseconds per load of the memory probe's chase over a DRAM-sized
    /// set; null where it could not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chase_ns: Option<f64>,
}

/// What the probes are judged against, for a whole run.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default)]
pub struct SpellBaseline {
    /// Bytes per cycle the core-share probe reaches on a core of its own:
    /// the core's L1 load ports at the probe kernel's width where the
    /// microarchitecture table knows them, or the 90th percentile of what
    /// the probe read in this run where that is higher or the table does
    /// not know the core.
    pub core_bytes_per_cycle: Option<f64>,
    /// Where `core_bytes_per_cycle` comes from.
    pub core_reference: Option<CoreReference>,
    /// The memory probe's quiet reading in this run (the 10th percentile
    /// of its readings), ns per load.
    pub chase_ns: Option<f64>,
}

/// Where the core-share probe's reference comes from.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CoreReference {
    /// The core's L1 load ports (the microarchitecture table).
    Limit,
    /// The 90th percentile of the probe's readings in this run (no table
    /// row, or a row the probe beat).
    RunBest,
}

/// Why a core was shared, as far as the guest can tell.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ShareCause {
    /// The hypervisor stole time from this guest in the same window.
    Steal,
    /// Other processes in this guest were busy (on an SMT sibling the
    /// guest sees, or sharing the caches).
    GuestLoad,
    /// Nothing the guest can see: another tenant on the host core's SMT
    /// sibling (the guest shows one thread per core, no steal, no load).
    Invisible,
}

impl ShareCause {
    pub fn label(self) -> &'static str {
        match self {
            ShareCause::Steal => "the hypervisor stole time",
            ShareCause::GuestLoad => "other processes in this machine were busy",
            ShareCause::Invisible => "another tenant shared it (nothing in this guest shows it)",
        }
    }
}

/// The spells one record's samples were taken in.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Spells {
    /// Samples with a probe reading.
    pub probed: u32,
    /// Of those, samples taken while the core was shared: the core-share
    /// probe below [`limits::CORE_SHARED`](super::limits::CORE_SHARED) of
    /// the baseline.
    pub core_shared: u32,
    /// Of those, samples taken while the memory was loaded from outside:
    /// the memory probe above
    /// [`limits::MEMORY_LOADED`](super::limits::MEMORY_LOADED) × the
    /// baseline.
    pub memory_contended: u32,
    /// The median share of its core the probe found (1 = its own core).
    pub core_share_median: Option<f64>,
    /// The median memory probe reading, ns per load.
    pub chase_ns_median: Option<f64>,
    /// What the machine can do: best and median over the samples taken in
    /// clean spells (neither shared nor contended), in the record's own
    /// unit (GB/s); null where no sample was clean or the record is not a
    /// bandwidth.
    pub clean: Option<Stats>,
    /// What the guest could see of why its core was shared; null when it
    /// was not.
    pub cause: Option<ShareCause>,
    /// The baseline the samples were judged against.
    pub baseline: SpellBaseline,
}

impl Spells {
    /// The fraction of the probed samples taken while the core was shared.
    pub fn shared_fraction(&self) -> f64 {
        self.core_shared as f64 / self.probed.max(1) as f64
    }

    /// The fraction of the probed samples taken while the memory was
    /// contended.
    pub fn contended_fraction(&self) -> f64 {
        self.memory_contended as f64 / self.probed.max(1) as f64
    }
}
