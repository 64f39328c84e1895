//! The result model: the leaf every other layer reads and none of it
//! imports anything else of the crate (a test in `tests/layers.rs` keeps it
//! so). A [`Run`] is the environment ([`Host`]) plus every [`Record`]; this
//! is the JSON wire format, documented field by field in `docs/schema.md`.

mod arm;
pub mod fleet;
mod host;
mod knees;
mod record;
mod run;
pub mod time;
mod uarch;
mod warning;

pub use arm::{ArmHost, CoreKind, Midr};
pub use host::{
    Cache, Ceiling, ClockProbe, Cpu, CpuIdent, CrossCheck, Environment, Features, Host, Node,
};
pub use knees::{CurvePoint, Knee, KneeProbe};
pub use record::{MemoryInfo, Noise, NoiseMethod, Placement, Record, Sample, Stats, Status};
pub use run::{Run, Tool, Units, BYTE_CONVENTION, SCHEMA_VERSION};
pub use uarch::{L1Rate, Uarch, UarchMatch};
pub use warning::{limits, Warning};
