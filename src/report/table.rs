//! The terminal exporter: each suite's tables as `views` lays them out
//! (`report --format table`, and what a run prints when it ends).

use super::{Exporter, ReportFormat};
use crate::model::Run;

pub struct Table;

impl Exporter for Table {
    fn serialize(&self, run: &Run) -> anyhow::Result<Vec<u8>> {
        Ok(super::views::render(run).into_bytes())
    }
}

impl ReportFormat for Table {
    fn name(&self) -> &'static str {
        "table"
    }

    fn about(&self) -> &'static str {
        "The tables a run prints on the terminal"
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["txt"]
    }
}
