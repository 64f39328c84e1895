//! Results: the model, the exporters (one per format), and the sink that
//! writes records as they complete.

pub mod commands;
pub mod compare;
pub mod csv;
pub mod fleet;
pub mod html;
pub mod json;
pub mod markdown;
pub mod metric;
pub mod openmetrics;
pub mod plot;
pub mod progress;
pub mod sink;
pub mod summary;
pub mod table;
pub mod views;

use crate::model::{Run, Warning};

/// One output format. `serialize` renders a whole run; formats that can
/// stream (CSV) also offer row-at-a-time functions in their module.
pub trait Exporter {
    fn serialize(&self, run: &Run) -> anyhow::Result<Vec<u8>>;
}

/// Print a warning to stderr with its hint, prefixed by the case it concerns.
pub fn emit(context: &str, w: &Warning) {
    if context.is_empty() {
        eprintln!("warning: {} (hint: {})", w, w.hint());
    } else {
        eprintln!("warning: {}: {} (hint: {})", context, w, w.hint());
    }
}
