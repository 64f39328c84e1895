//! bwscope: measures how fast bytes move on a machine.
//!
//! The pipeline: `cli` parses → a suite resolves options into a plan
//! (`suites`) → cases run on pinned teams (`measure`) with kernels from the
//! registry (`kernels`) over buffers from `memory` → records stream into a
//! `report::sink::Sink` → exporters render the run.

pub mod app;
pub mod cli;
pub mod commands;
pub mod error;
pub mod kernels;
pub mod measure;
pub mod memory;
pub mod model;
pub mod net;
pub mod platform;
pub mod report;
pub mod suites;
pub mod transfer;
pub mod util;
