//! How time is taken: the one measurement protocol ([`Sampler`] over a
//! [`Workload`], see `sampler`), noise (statistics are `crate::stats`), and the workers that
//! run kernels — a team of pinned threads (`team`), a team of forked
//! processes (`procs`), both behind one `workers::Workers` — with the
//! workloads built on them: streaming
//! kernels over private or shared buffers (`kernel`), read/write mixes
//! (`mix`), the pointer chase (`chase`) and register loops (`regs`).

pub mod c2c;
pub mod chase;
pub mod kernel;
pub mod mix;
pub mod noise;
pub mod probe;
pub mod procs;
pub mod regs;
pub mod sampler;
pub mod team;
pub mod workers;

pub use sampler::{Failure, Hint, Measured, SampleOpts, Sampler, Stamp, Workload};

/// Now on the system's monotonic clock, ns: one clock for every worker,
/// thread or process, so their stamps compare.
pub use crate::os::time::now_ns;
