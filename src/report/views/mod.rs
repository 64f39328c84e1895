//! Views: how each suite's records read as tables. A view returns
//! [`Block`]s (tables and lines of text) and each format lays them out:
//! the terminal ([`render`]), Markdown and HTML.
//!
//! Views read the model only, so a saved run renders exactly as it did
//! when it was measured. A suite's view is its file here (named as the
//! suite's module, with its `VIEW`): the module and its arm in [`view`]
//! come from the suite's row in the model's list of suites
//! (`model::detail::each_suite!`).

pub mod info;
pub mod numa_tiers;
pub mod survey;
pub mod tiers;

use std::fmt::Write as _;

use super::grid::{self, Block};
use crate::model::{Record, Run, Status, SuiteId, Units};

/// The tables of a suite's records (`recs` are the run's records of
/// that suite, in order).
pub type Render = fn(&Run, &[&Record]) -> Vec<Block>;

/// A suite's text view: `VIEW` in its file.
#[derive(Clone, Copy)]
pub struct View {
    pub render: Render,
    /// The view states its own byte convention, so the common footer
    /// (bytes read + written by the kernel) does not apply.
    pub own_convention: bool,
}

/// Declares each suite's view module (`pub mod <module>;`, with its
/// `VIEW`) and [`view`], from the model's list of suites.
macro_rules! views {
    ($( $(#[$doc:meta])* $module:ident: $id:ident($detail:ident) = $name:literal, )*) => {
        $( pub mod $module; )*

        /// The view of `suite`: every suite has one.
        pub fn view(suite: SuiteId) -> View {
            match suite {
                $( SuiteId::$id => $module::VIEW, )*
            }
        }
    };
}

crate::model::detail::each_suite!(views);

/// Every suite's blocks, suites in the order measured.
pub fn blocks(run: &Run) -> Vec<(SuiteId, Vec<Block>)> {
    super::by_suite(&run.records)
        .into_iter()
        .map(|(suite, recs)| (suite, (view(suite).render)(run, &recs)))
        .collect()
}

/// Every suite's tables in the order measured, then one line per skipped
/// or failed case, then the byte-counting footer: the terminal text.
pub fn render(run: &Run) -> String {
    let units = run.display_units;
    let mut out = String::new();
    if let Some(state) = super::run_state(run) {
        let _ = writeln!(out, "⚠ {state}\n");
    }
    for (_, blocks) in blocks(run) {
        let text = grid::text(&blocks);
        if !text.is_empty() {
            out.push_str(&text);
            if !text.ends_with("\n\n") {
                out.push('\n');
            }
        }
    }
    out.push_str(&not_ok_lines(run));
    let counted = |r: &Record| r.gbps.is_some() && !view(r.suite()).own_convention;
    if run.records.iter().any(counted) {
        let _ = writeln!(out, "{}", byte_footer(units));
    }
    out
}

/// One line per distinct skipped or failed case.
fn not_ok_lines(run: &Run) -> String {
    let mut seen: Vec<String> = Vec::new();
    for r in run.records.iter().filter(|r| r.status != Status::Ok) {
        let what = match r.memory.as_ref().filter(|m| !m.kind.is_empty()) {
            Some(m) if r.suite() == SuiteId::Memtype => m.kind.clone(),
            Some(m) => format!("{} ({})", r.kernel, m.kind),
            None => r.kernel.clone(),
        };
        let line = format!(
            "{} {}: {}\n",
            if r.status == Status::Skipped {
                "skipped"
            } else {
                "error"
            },
            what,
            r.reason.as_deref().unwrap_or("")
        );
        if !seen.contains(&line) {
            seen.push(line);
        }
    }
    let mut out = seen.concat();
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

/// The byte convention of kernel-declared bandwidth, in the display units.
fn byte_footer(units: Units) -> String {
    format!(
        "{} bytes/s. Bytes = read + written per the kernel's declaration (a copy of N/2 into N/2 counts N); write-allocate traffic not counted.",
        unit_line(units)
    )
}

/// `GB/s = 10^9` (or `GiB/s = 2^30`): what the display unit is.
pub fn unit_line(units: Units) -> String {
    format!(
        "{} = {}",
        units.label(),
        if units == Units::GB { "10^9" } else { "2^30" }
    )
}

/// A rate in the display units with 3 significant-ish digits.
pub fn rate(gbps: f64, u: Units) -> String {
    let v = gbps * 1e9 / u.bytes_per_unit();
    if v >= 100.0 {
        format!("{:.0}", v)
    } else if v >= 10.0 {
        format!("{:.1}", v)
    } else {
        format!("{:.2}", v)
    }
}
