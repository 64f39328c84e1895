//! bwscope: measures how fast bytes move on a machine.
//!
//! The pipeline: `cli` parses → `app` turns flags into a suite's options
//! and runs it → the suite plans and measures (`suites`) with the one
//! sampler (`measure`) over kernels from the registry (`kernels`) and
//! buffers from `memory` → records stream into the run's sink → `report`
//! renders the run. The layers and where to add things:
//! `docs/architecture.md`.

// Every `unsafe` block says why it is sound (`cargo clippy -- -D warnings`
// makes this an error).
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod app;
pub mod cli;
pub mod cluster;
pub mod error;
pub mod history;
pub mod judge;
pub mod kernels;
pub mod measure;
pub mod memory;
pub mod model;
pub mod net;
pub mod os;
pub mod plan;
pub mod platform;
pub mod report;
pub mod stats;
pub mod suites;
pub mod transfer;
pub mod util;
