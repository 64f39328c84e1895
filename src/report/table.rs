//! The terminal exporter: each suite's tables as `views` lays them out
//! (`report --format table`, and what a run prints when it ends).

use super::Exporter;
use crate::model::Run;

pub struct Table;

impl Exporter for Table {
    fn serialize(&self, run: &Run) -> anyhow::Result<Vec<u8>> {
        Ok(super::views::render(run).into_bytes())
    }
}
