//! The application layer: commands that compose suites, reports and the
//! network into one job.

pub mod fleet;
