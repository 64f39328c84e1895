//! The judgement room: whether a figure is this machine's usual self or
//! has stepped, decided by one rule for every caller. `history --check`
//! judges a headline's runs, `watch` its own samples, a fleet its medians
//! against the same fleet's earlier runs, `compare --headline` two runs'
//! clean figures: the data differ, the rule is one ([`step::stepped`]),
//! and each caller names the parameters it chose ([`step::StepRule`]) in
//! its output and docs (`docs/history.md`, `docs/watch.md`,
//! `docs/fleet.md`).
//!
//! What counts as clean is decided here too ([`noise::flags`]).
//!
//! Pure: figures in, verdicts out. It reads the model and the statistics
//! (quantiles and ranks are `stats`'), never a store, a clock or a file,
//! so a series and a rule give one verdict whoever asks.

pub mod noise;
pub mod step;

pub use step::{stepped, Point, StepRule, Verdict};
