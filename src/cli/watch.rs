//! `bwscope watch` arguments.

use clap::Args;

#[derive(Args, Debug, Clone)]
pub struct WatchArgs {
    /// Time between samples, e.g. 5m, 30s, 500ms, 1h (a bare number is seconds)
    #[arg(long, value_name = "DURATION", default_value = "5m")]
    pub every: String,
    /// Rewrite FILE atomically after every sample with the last sample, this machine's usual figures and the state, as metrics in the Prometheus text format (node_exporter's textfile collector reads it; docs/metrics.md)
    #[arg(long, value_name = "FILE")]
    pub prometheus: Option<String>,
    /// The same in OpenMetrics 1.0 text (node_exporter's textfile collector reads --prometheus, not this)
    #[arg(long, value_name = "FILE")]
    pub openmetrics: Option<String>,
    /// Stop after N samples (default: until SIGTERM or Ctrl-C)
    #[arg(long, value_name = "N")]
    pub count: Option<u64>,
    /// The cpu to measure on (default: the last core, away from cpu 0's interrupts)
    #[arg(long, value_name = "N")]
    pub cpu: Option<u32>,
    /// The DRAM-sized set of the read and the chase (default: four times the last cache this process sees, 64 MiB to 512 MiB)
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// Samples per figure in each watch sample (default 5)
    #[arg(long, value_name = "N")]
    pub samples: Option<usize>,
    /// Minimum duration of one of those samples in ms (default 10)
    #[arg(long, value_name = "MS")]
    pub min_sample_ms: Option<f64>,
    /// Keep this machine's newest N watch samples in the history store, forgetting older ones (default 4032: two weeks at 5 minutes); the usual figures rest on the newest 1000 clean ones at most
    #[arg(long, value_name = "N")]
    pub retain: Option<u64>,
}
