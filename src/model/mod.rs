//! The result model: the leaf every other layer reads and none of it
//! imports anything else of the crate (a test in `tests/layers.rs` keeps it
//! so). A [`Run`] is the environment ([`Host`]) plus every [`Record`]; this
//! is the JSON wire format, documented field by field in `docs/schema.md`.

mod arm;
pub mod detail;
mod dram;
pub mod fleet;
pub mod fleet_past;
pub mod headline;
mod history;
mod host;
mod knees;
mod limit;
pub mod options;
pub mod plausible;
mod record;
mod run;
mod spells;
mod tiers;
pub mod time;
mod topology;
mod uarch;
mod warning;
mod watch;
mod words;

pub use arm::{ArmHost, CoreKind, Midr};
pub use detail::{CasePart, Detail, Nullable, OfSuite, RecordMetric, SuiteDetail, SuiteId};
pub use dram::{Dram, DramDevice};
pub use history::{Expected, HistoryContext, Standing, StoreProblem, RECENT};
pub use host::{
    Cache, Ceiling, ClockProbe, Cpu, CpuIdent, CrossCheck, Curve, Environment, Features, Host, Node,
};
pub use knees::{BandwidthKnee, CurvePoint, Knee, KneeProbe};
pub use limit::{BoundBy, Limit, LimitCase};
pub use record::{
    noise_slowdown, MemoryInfo, Noise, NoiseMethod, Placement, Record, Repeats, Sample, Stats,
    Status, Turn,
};
pub use run::{Run, Tool, Units, BYTE_CONVENTION, REVISION, SCHEMA_VERSION, VERSION_LINE};
pub use spells::{CoreReference, Probe, ShareCause, SpellBaseline, Spells};
pub use tiers::{HmatClaim, MemoryTiers, NodeKind, SideCache, TierNode};
pub use topology::{CpuPlace, Topology};
pub use uarch::{Basis, L1Rate, Uarch, UarchBasis, UarchMatch};
pub use warning::{limits, Warning};
pub use watch::{WatchSample, WatchState, WatchStatus};
pub use words::{AgentKind, Op, Pattern, Regime};
