//! Results, read from the model (`crate::model`, which this layer does not
//! hold): the views, the exporters (one per format), the sink that writes
//! records as they complete, compare, the summary and fleet's figures and
//! verdicts.

pub mod compare;
pub mod csv;
pub mod exposition;
pub mod families;
pub mod fleet;
pub mod grid;
pub mod headline;
pub mod html;
pub mod json;
pub mod markdown;
pub mod metric;
pub mod openmetrics;
pub mod outfile;
pub mod page;
pub mod plausible;
pub mod plot;
pub mod progress;
pub mod prometheus;
pub mod sink;
pub mod standing;
pub mod summary;
pub mod table;
pub mod views;

use std::path::Path;

use crate::model::fleet::FleetRun;
use crate::model::{Record, Run, SuiteId, Warning};

/// One output format. `serialize` renders a whole run; formats that can
/// stream (CSV) also offer row-at-a-time functions in their module.
pub trait Exporter {
    fn serialize(&self, run: &Run) -> anyhow::Result<Vec<u8>>;
}

/// A format of `bwscope report --format NAME`: its exporter, with what
/// the command line and a fleet file need of it. Each is a row of
/// [`FORMATS`], so a new format is its file and that row.
pub trait ReportFormat: Exporter + Sync {
    /// Its name after `--format`.
    fn name(&self) -> &'static str;
    /// What it writes, in one line (`report --help`).
    fn about(&self) -> &'static str;
    /// The endings of an `-o FILE` that choose it (lower case, no dot).
    fn extensions(&self) -> &'static [&'static str] {
        &[]
    }
    /// Without `-o`, it is written beside the run, as the run's file with
    /// this ending (a page to open); None: to stdout.
    fn beside_run(&self) -> Option<&'static str> {
        None
    }
    /// A fleet file in this format (`scale_max`: `--scale-max`, the top
    /// of the network heatmap's colour scale, where one is drawn). By
    /// default the fleet's summary and verdicts as text.
    fn fleet(&self, f: &FleetRun, _scale_max: Option<f64>) -> Vec<u8> {
        format!(
            "{}\n{}",
            fleet::text::summary(f),
            fleet::text::verdict_file(f)
        )
        .into_bytes()
    }
}

/// Every format `report` writes, in the order `--help` lists them; the
/// first is the default (no `--format`, no known `-o` ending).
pub const FORMATS: &[&dyn ReportFormat] = &[
    &html::Html::STANDARD,
    &markdown::Markdown,
    &table::Table,
    &csv::Csv,
    &json::Json,
    &prometheus::Prometheus,
    &openmetrics::OpenMetrics,
];

/// The format called `name` (`--format NAME`).
pub fn format(name: &str) -> Option<&'static dyn ReportFormat> {
    FORMATS.iter().copied().find(|f| f.name() == name)
}

/// The format the ending of `path` asks for (`-o run.md`), in any case.
pub fn format_of_path(path: &str) -> Option<&'static dyn ReportFormat> {
    let ext = Path::new(path).extension()?.to_str()?.to_ascii_lowercase();
    FORMATS
        .iter()
        .copied()
        .find(|f| f.extensions().contains(&ext.as_str()))
}

/// When a measuring run's sink writes a format (`report::sink`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cadence {
    /// A row per record as it completes, after a head: a stream (CSV).
    Stream,
    /// The whole document again as records complete (at most once a
    /// second, and at the end): the file is always whole (JSON). To
    /// stdout it is written once, at the end, even without a record.
    Checkpoint,
    /// The whole document once, at the end, when a record exists.
    AtEnd,
}

/// A format a measuring run writes by flag (`--json FILE`): the sink
/// holds a list of them, each with its target. Each is a row of
/// [`OUTPUTS`]; the command line gets its flag from there (`app::command`),
/// so a new format is its file and that row, streaming or not.
pub trait Output: ReportFormat {
    /// The flag that names its target (`--json`).
    fn flag(&self) -> &'static str;
    /// The flag's line in `--help`.
    fn help(&self) -> &'static str;
    fn cadence(&self) -> Cadence;
    /// A stream's first bytes (CSV's header row).
    fn head(&self) -> Vec<u8> {
        Vec::new()
    }
    /// A stream's bytes for one finished record.
    fn row(&self, _r: &Record) -> Vec<u8> {
        Vec::new()
    }
}

/// Every format a measuring run (and a fleet) writes by flag, in the order
/// `--help` lists them and the sink writes them.
pub const OUTPUTS: &[&dyn Output] = &[
    &json::Json,
    &csv::Csv,
    &prometheus::Prometheus,
    &openmetrics::OpenMetrics,
];

/// The output whose flag is `flag` (`--json`).
pub fn output(flag: &str) -> Option<&'static dyn Output> {
    OUTPUTS.iter().copied().find(|o| o.flag() == flag)
}

/// How a run ended, when it did not end normally: every reader (`report`,
/// `plot`, `compare`, the tables) shows this, so a run cut short is never
/// taken for a finished one. `interrupted` runs were stopped by a signal
/// and wrote their files; a run that is neither complete nor interrupted
/// was killed (SIGKILL, a crash, the OOM killer) or is still running.
pub fn run_state(run: &Run) -> Option<String> {
    let n = run.records.len();
    let why = run.incomplete_reason.as_deref();
    if run.interrupted {
        Some(format!(
            "interrupted run: stopped early by {}, so it holds only the {n} records finished before",
            why.unwrap_or("a signal")
        ))
    } else if let (false, Some(why)) = (run.complete, why) {
        Some(format!(
            "incomplete run: it ended early ({why}), so it holds only the {n} records finished before"
        ))
    } else if !run.complete {
        Some(format!(
            "incomplete run: it never finished (killed, crashed or still running), so it holds only the {n} records written before"
        ))
    } else {
        None
    }
}

/// Print a warning to stderr with its hint, prefixed by the case it concerns.
pub fn emit(context: &str, w: &Warning) {
    if context.is_empty() {
        eprintln!("warning: {} (hint: {})", w, w.hint());
    } else {
        eprintln!("warning: {}: {} (hint: {})", context, w, w.hint());
    }
}

/// A number for a label or a table cell: at most three significant
/// digits (0 decimals from 100, 1 from 10, else 2).
pub fn short_num(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// The records of each suite, suites in the order they first appear.
pub fn by_suite(records: &[Record]) -> Vec<(SuiteId, Vec<&Record>)> {
    let mut out: Vec<(SuiteId, Vec<&Record>)> = Vec::new();
    for r in records {
        match out.iter_mut().find(|(s, _)| *s == r.suite()) {
            Some((_, v)) => v.push(r),
            None => out.push((r.suite(), vec![r])),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_have_one_name_and_ending_each_and_html_is_the_default() {
        for (i, f) in FORMATS.iter().enumerate() {
            // By what the entry says, not by address: the formats are
            // unit structs, and references to a zero-sized const need
            // not share an address (they differed in the Windows build).
            let found = format(f.name()).map(|g| (g.name(), g.about(), g.extensions()));
            assert_eq!(found, Some((f.name(), f.about(), f.extensions())));
            for later in &FORMATS[i + 1..] {
                assert_ne!(f.name(), later.name());
                for e in f.extensions() {
                    assert!(!later.extensions().contains(e), "{e}");
                }
            }
        }
        assert_eq!(FORMATS[0].name(), "html");
        assert_eq!(FORMATS[0].beside_run(), Some("html"));
        assert_eq!(format_of_path("d/R.MD").map(|f| f.name()), Some("md"));
        assert_eq!(format_of_path("r.htm").map(|f| f.name()), Some("html"));
        assert!(format_of_path("r").is_none() && format_of_path("r.pdf").is_none());
    }

    #[test]
    fn every_format_renders_a_run_and_a_fleet() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/cache-quick.json"
        );
        let run = json::load(path).unwrap();
        let fleet = FleetRun::test_shift(3, |_, _| Some(1.0));
        for f in FORMATS {
            assert!(!f.serialize(&run).unwrap().is_empty(), "{}", f.name());
            assert!(!f.fleet(&fleet, None).is_empty(), "{}", f.name());
        }
    }
}
