//! The cluster transport of `bwscope fleet`: how ranks learn who they are
//! ([`launch`]), find rank 0 ([`rendezvous`]), talk to it ([`comm`]: [`tcp`]
//! by default, framed by [`wire`]; `mpi` with `--features mpi`), and run
//! the pair tests of the network phase ([`schedule`], [`network`]).
//!
//! It sits beside `net` (whose protocol it reuses) and below `app`: it
//! needs only `model`, `error`, `util` and `net`, never a suite or the
//! command line.

pub mod comm;
pub mod launch;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod network;
pub mod rendezvous;
pub mod schedule;
pub mod tcp;
pub mod wire;
