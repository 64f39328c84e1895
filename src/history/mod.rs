//! The history store: every measuring run appended to a local SQLite
//! database, so a figure can be judged against this machine's own past
//! ("is this number normal?") and a series' steps found. Nothing in it is
//! sent anywhere. See `docs/history.md`.
//!
//! A layer of its own, under `app`: it reads the model and calls the
//! system only through `os`; the report never opens it (the app puts what
//! the summary shows on the run, as `Run::history`).

pub mod case;
mod fleet;
pub mod query;
pub mod reference;
mod schema;
mod store;
mod write;

pub use fleet::FleetRecord;
pub use query::{CaseCount, Filter, Point, RunRow};
pub use schema::current as schema_version;
pub use store::{place, Mode, Place, Store};
pub use write::{Provenance, Recorded};
