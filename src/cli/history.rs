//! `bwscope history`: the local run history (see `docs/history.md`).

use clap::{Args, Subcommand};

/// The listing's flags do not go with a subcommand (`history --check
/// show` is refused by `app::command`, which lets `--history PATH` stand
/// on either side of one).
#[derive(Args, Debug, Clone)]
pub struct HistoryArgs {
    #[command(subcommand)]
    pub action: Option<HistoryAction>,
    #[command(flatten)]
    pub list: HistoryListArgs,
}

#[derive(Args, Debug, Clone, Default)]
pub struct HistoryListArgs {
    /// Only runs of this machine (its key as listed, or the key's first characters)
    #[arg(long, value_name = "KEY")]
    pub machine: Option<String>,
    /// Only runs started at or after this UTC date or time (2026-11-01, 2026-11-01T12:00:00Z)
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Only runs with records of this suite (cache, latency, …), or the runs of one command (survey, watch, fleet)
    #[arg(long, value_name = "SUITE")]
    pub suite: Option<String>,
    /// Write the runs (or with `show`, the series) as JSON to FILE ('-' = stdout)
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// Write them as CSV to FILE ('-' = stdout)
    #[arg(long, value_name = "FILE")]
    pub csv: Option<String>,
    /// Exit 1 when a headline figure of this machine stepped down by more than --threshold and stayed there for --min-runs runs (one line each; for cron, CI, a health check)
    #[arg(long)]
    pub check: bool,
    /// With --check: the step that counts, in % of the level before it
    #[arg(long, value_name = "PCT", default_value_t = 10.0)]
    pub threshold: f64,
    /// With --check: runs at the new level before it counts
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub min_runs: usize,
}

#[derive(Subcommand, Debug, Clone)]
pub enum HistoryAction {
    /// One case's series: a table with a sparkline, its percentiles and its steps (no CASE: the cases stored)
    Show(HistoryShowArgs),
    /// Add saved runs (RUN.json files, or the survey's results folders) to the history; a run already there is left as it is
    Import(HistoryImportArgs),
    /// Remove runs from the history: one by its id, or all started before a date
    Forget(HistoryForgetArgs),
}

#[derive(Args, Debug, Clone)]
pub struct HistoryShowArgs {
    /// The case, as `bwscope history show` lists them (`headline/DRAM read`), or a headline figure by the name the summary prints ("DRAM read")
    #[arg(value_name = "CASE")]
    pub case: Option<String>,
    /// Only this machine (its key, or the key's first characters)
    #[arg(long, value_name = "KEY")]
    pub machine: Option<String>,
    /// Write the series as JSON to FILE ('-' = stdout)
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// Write the series as CSV to FILE ('-' = stdout)
    #[arg(long, value_name = "FILE")]
    pub csv: Option<String>,
}

#[derive(Args, Debug, Clone)]
pub struct HistoryImportArgs {
    /// RUN.json files, or folders holding them (a survey's results folder, bwscope-results/)
    #[arg(value_name = "RUN.json|DIR", required = true)]
    pub runs: Vec<String>,
}

#[derive(Args, Debug, Clone)]
#[group(required = true, multiple = false)]
pub struct HistoryForgetArgs {
    /// The run's id, as `bwscope history` lists it
    #[arg(long, value_name = "ID")]
    pub run: Option<i64>,
    /// Every run started before this UTC date or time
    #[arg(long, value_name = "DATE")]
    pub before: Option<String>,
}
