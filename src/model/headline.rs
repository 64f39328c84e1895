//! The headline figures: the few numbers a run is judged by across runs
//! and across machines — in the survey's summary, the history store, the
//! fleet's verdicts, the metrics files and the HTML report. One type for
//! all of them, so a name means one figure everywhere: "DRAM copy" is the
//! fastest single-core DRAM copy of any kernel (its kernel named beside
//! it) wherever it is read, "DRAM memcpy" is libc's `memcpy` and nothing
//! else.
//!
//! Two kinds of figure share the type:
//! - the fixed headlines ([`Headline`]), read from any run the same way
//!   (`report::headline::figures` picks their records);
//! - the figures a suite declares of its own records
//!   (`SuiteDetail::judged`: memtype's kinds, numa's tier cells, contend's
//!   aggregate, the core-to-core classes), and a fleet's network figures,
//!   each with its own metric name.
//!
//! Adding a fixed headline is one variant here and one arm in each
//! `match` below (the compiler asks for them), then its reading in
//! `report::headline`; every consumer (summary, history, metrics, fleet)
//! takes it from the list.

use serde::{Deserialize, Serialize};

/// What a figure measures, and so its unit as bwscope shows it and its
/// base unit in the metrics files (Prometheus wants base units:
/// prometheus.io/docs/practices/naming).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Quantity {
    /// GB/s (10^9 bytes per second).
    Bandwidth,
    /// ns.
    Latency,
    /// GHz.
    Clock,
    /// ms per MiB (a first-use cost).
    CostPerMib,
}

impl Quantity {
    /// The unit bwscope shows it in.
    pub fn unit(self) -> &'static str {
        match self {
            Quantity::Bandwidth => "GB/s",
            Quantity::Latency => "ns",
            Quantity::Clock => "GHz",
            Quantity::CostPerMib => "ms/MiB",
        }
    }

    /// The quantity a unit string names (the store and old files keep
    /// units as text); None for a unit bwscope does not write.
    pub fn of_unit(unit: &str) -> Option<Quantity> {
        [
            Quantity::Bandwidth,
            Quantity::Latency,
            Quantity::Clock,
            Quantity::CostPerMib,
        ]
        .into_iter()
        .find(|q| q.unit() == unit)
    }

    /// The base unit's name, as a metric's suffix (`bytes_per_second`).
    pub fn base_unit(self) -> &'static str {
        match self {
            Quantity::Bandwidth => "bytes_per_second",
            Quantity::Latency => "seconds",
            Quantity::Clock => "hertz",
            Quantity::CostPerMib => "seconds_per_byte",
        }
    }

    /// A value in [`Quantity::unit`] in the base unit.
    pub fn to_base(self, v: f64) -> f64 {
        match self {
            Quantity::Bandwidth => v * 1e9,
            Quantity::Latency => v * 1e-9,
            Quantity::Clock => v * 1e9,
            Quantity::CostPerMib => v * 1e-3 / (1u64 << 20) as f64,
        }
    }
}

/// How many cores a figure used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cores {
    One,
    All,
}

impl Cores {
    pub fn as_str(self) -> &'static str {
        match self {
            Cores::One => "1",
            Cores::All => "all",
        }
    }
}

/// The fixed headline figures, in the order the summary gives them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Headline {
    /// One core's sequential read, best of the sizes well inside L1.
    L1Read,
    L2Read,
    L3Read,
    /// One core's sequential read at the largest size well inside DRAM.
    DramRead,
    /// The best multi-thread DRAM read of any suite (all the cores the
    /// run used).
    DramReadAll,
    /// One core's sequential write with cached stores at DRAM.
    DramWrite,
    /// One core's sequential write with non-temporal stores at DRAM.
    DramNtWrite,
    /// The fastest single-core sequential DRAM copy of any kernel
    /// (cached, non-temporal, `rep movsb`, libc's `memcpy`), all at the
    /// same size; the kernel that won is named beside it.
    DramCopy,
    /// libc's `memcpy` at that size: what a program that copies gets.
    DramMemcpy,
    /// Idle load-to-use latency of a random chase at a set four times
    /// past the last cache.
    DramLatency,
    /// A device's own memory: the best device-to-device copy of at least
    /// 256 MiB (bytes read + written, as DCGM counts it).
    DeviceMemory,
    /// The measured core clock.
    Clock,
}

impl Headline {
    pub const ALL: [Headline; 12] = [
        Headline::L1Read,
        Headline::L2Read,
        Headline::L3Read,
        Headline::DramRead,
        Headline::DramReadAll,
        Headline::DramWrite,
        Headline::DramNtWrite,
        Headline::DramCopy,
        Headline::DramMemcpy,
        Headline::DramLatency,
        Headline::DeviceMemory,
        Headline::Clock,
    ];

    /// Its name as the summary prints it, the history keeps it
    /// (`headline/<name>`) and `history show` finds it.
    pub fn name(self) -> &'static str {
        match self {
            Headline::L1Read => "L1 read",
            Headline::L2Read => "L2 read",
            Headline::L3Read => "L3 read",
            Headline::DramRead => "DRAM read",
            Headline::DramReadAll => "DRAM read all cores",
            Headline::DramWrite => "DRAM write",
            Headline::DramNtWrite => "DRAM non-temporal write",
            Headline::DramCopy => "DRAM copy",
            Headline::DramMemcpy => "DRAM memcpy",
            Headline::DramLatency => "DRAM latency",
            Headline::DeviceMemory => "device memory",
            Headline::Clock => "clock",
        }
    }

    /// Its key in a fleet's verdicts and reference files
    /// (`dram_read_gbps`): stable across releases, since reference files
    /// name their bounds by it.
    pub fn metric(self) -> &'static str {
        match self {
            Headline::L1Read => "l1_read_gbps",
            Headline::L2Read => "l2_read_gbps",
            Headline::L3Read => "l3_read_gbps",
            Headline::DramRead => "dram_read_gbps",
            Headline::DramReadAll => "dram_read_all_gbps",
            Headline::DramWrite => "dram_write_gbps",
            Headline::DramNtWrite => "dram_nt_write_gbps",
            Headline::DramCopy => "dram_copy_gbps",
            Headline::DramMemcpy => "dram_memcpy_gbps",
            Headline::DramLatency => "dram_latency_ns",
            Headline::DeviceMemory => "device_memory_gbps",
            Headline::Clock => "clock_ghz",
        }
    }

    pub fn quantity(self) -> Quantity {
        match self {
            Headline::DramLatency => Quantity::Latency,
            Headline::Clock => Quantity::Clock,
            _ => Quantity::Bandwidth,
        }
    }

    pub fn higher_is_better(self) -> bool {
        self.quantity() != Quantity::Latency
    }

    /// Its dimensions: the memory level, the operation and how many
    /// cores, as labels of one metric family per quantity
    /// ([`Headline::family`]).
    pub fn labels(self) -> Vec<(&'static str, String)> {
        let (level, op, cores) = match self {
            Headline::L1Read => ("l1", "read", Cores::One),
            Headline::L2Read => ("l2", "read", Cores::One),
            Headline::L3Read => ("l3", "read", Cores::One),
            Headline::DramRead => ("dram", "read", Cores::One),
            Headline::DramReadAll => ("dram", "read", Cores::All),
            Headline::DramWrite => ("dram", "write", Cores::One),
            Headline::DramNtWrite => ("dram", "nt_write", Cores::One),
            Headline::DramCopy => ("dram", "copy", Cores::One),
            Headline::DramMemcpy => ("dram", "memcpy", Cores::One),
            Headline::DramLatency => ("dram", "load", Cores::One),
            Headline::DeviceMemory => ("device", "copy", Cores::All),
            Headline::Clock => return Vec::new(),
        };
        vec![
            ("level", level.to_string()),
            ("op", op.to_string()),
            ("cores", cores.as_str().to_string()),
        ]
    }

    /// The metric family it belongs to, without prefix or unit
    /// (`bandwidth`, `latency`, `clock`).
    pub fn family(self) -> &'static str {
        match self.quantity() {
            Quantity::Bandwidth => "bandwidth",
            Quantity::Latency => "latency",
            Quantity::Clock => "clock",
            Quantity::CostPerMib => "first_use_cost",
        }
    }

    /// One line on what it is (a metric's HELP, a table's note).
    pub fn what(self) -> &'static str {
        match self {
            Headline::L1Read => "L1 read bandwidth of one core (best size well inside L1)",
            Headline::L2Read => "L2 read bandwidth of one core (best size well inside L2)",
            Headline::L3Read => "L3 read bandwidth of one core (best size well inside L3)",
            Headline::DramRead => "DRAM read bandwidth of one core (largest size)",
            Headline::DramReadAll => "DRAM read bandwidth of all cores the run used",
            Headline::DramWrite => "DRAM write bandwidth of one core, cached stores",
            Headline::DramNtWrite => "DRAM write bandwidth of one core, non-temporal stores",
            Headline::DramCopy => {
                "fastest DRAM copy of one core, any kernel (bytes read + written)"
            }
            Headline::DramMemcpy => "DRAM copy of one core by libc memcpy (bytes read + written)",
            Headline::DramLatency => "idle load-to-use latency at a DRAM-sized set (random chase)",
            Headline::DeviceMemory => "device memory: best d2d copy of 256 MiB or more",
            Headline::Clock => "measured core clock (a throttled CPU shows here)",
        }
    }

    /// The headline a name names: its [`Headline::name`] or its
    /// [`Headline::metric`], in any case.
    pub fn find(s: &str) -> Option<Headline> {
        let s = s.trim();
        Headline::ALL.into_iter().find(|h| {
            h.name().eq_ignore_ascii_case(s)
                || h.metric().eq_ignore_ascii_case(s)
                || format!("headline/{}", h.name()).eq_ignore_ascii_case(s)
        })
    }
}

/// One figure of one run (or of one fleet node): what it is, its value
/// and where it was read.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// The fixed headline it is; None for a figure a suite declares of its
    /// own records or a fleet's network figure.
    pub headline: Option<Headline>,
    /// Its key in verdicts and reference files (letters, digits and `_`):
    /// [`Headline::metric`], or the suite's own name
    /// (`memtype_thp_copy_gbps`).
    pub metric: String,
    /// Its name in the summary and the history: [`Headline::name`], or
    /// the metric.
    pub name: String,
    pub quantity: Quantity,
    pub higher_is_better: bool,
    /// The metric family it belongs to (see [`Headline::family`]; a
    /// suite's figures: `memtype_copy`, `numa_tier_read`, …).
    pub family: String,
    /// Its dimensions within the family (level, op, cores, kind, …).
    pub labels: Vec<(&'static str, String)>,
    /// One line on what it is.
    pub what: String,
    pub value: f64,
    /// The kernel that measured it (None: a figure of no one kernel).
    pub kernel: Option<String>,
    /// The record it was read from: its index in the run's records.
    pub record: Option<usize>,
    /// Foreign load while that record was measured (CPUs' worth of other
    /// processes); None without a noise reading.
    pub foreign_cpus: Option<f64>,
    /// The most that load can slow the figure (≥ 1); None without a
    /// noise reading.
    pub noise_slowdown: Option<f64>,
    /// The record moved between measurements at different moments by more
    /// than its node's load explains: the memory was contended from
    /// outside.
    pub contended: bool,
}

impl Figure {
    /// A fixed headline's figure of `value` (no record, kernel or noise
    /// yet).
    pub fn of(h: Headline, value: f64) -> Figure {
        Figure {
            headline: Some(h),
            metric: h.metric().into(),
            name: h.name().into(),
            quantity: h.quantity(),
            higher_is_better: h.higher_is_better(),
            family: h.family().into(),
            labels: h.labels(),
            what: h.what().into(),
            value,
            kernel: None,
            record: None,
            foreign_cpus: None,
            noise_slowdown: None,
            contended: false,
        }
    }

    /// A figure a suite declares (or a fleet's network figure): `metric`
    /// is its key and name, `family` and `labels` its place among the
    /// metrics.
    pub fn declared(
        metric: String,
        quantity: Quantity,
        higher_is_better: bool,
        family: String,
        labels: Vec<(&'static str, String)>,
        what: String,
        value: f64,
    ) -> Figure {
        Figure {
            headline: None,
            name: metric.clone(),
            metric,
            quantity,
            higher_is_better,
            family,
            labels,
            what,
            value,
            kernel: None,
            record: None,
            foreign_cpus: None,
            noise_slowdown: None,
            contended: false,
        }
    }

    /// The unit bwscope shows it in.
    pub fn unit(&self) -> &'static str {
        self.quantity.unit()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_metrics_are_unique_and_found() {
        let mut names: Vec<&str> = Headline::ALL.iter().map(|h| h.name()).collect();
        let mut metrics: Vec<&str> = Headline::ALL.iter().map(|h| h.metric()).collect();
        names.sort_unstable();
        names.dedup();
        metrics.sort_unstable();
        metrics.dedup();
        assert_eq!(names.len(), Headline::ALL.len());
        assert_eq!(metrics.len(), Headline::ALL.len());
        for h in Headline::ALL {
            assert_eq!(Headline::find(h.name()), Some(h));
            assert_eq!(Headline::find(&h.name().to_uppercase()), Some(h));
            assert_eq!(Headline::find(h.metric()), Some(h));
            assert!(h.metric().ends_with(match h.quantity() {
                Quantity::Bandwidth => "_gbps",
                Quantity::Latency => "_ns",
                Quantity::Clock => "_ghz",
                Quantity::CostPerMib => "_ms_per_mib",
            }));
        }
        assert_eq!(
            Headline::find("headline/DRAM read"),
            Some(Headline::DramRead)
        );
        assert_eq!(Headline::find("DRAM"), None);
    }

    /// Within a family, no two headlines share their labels: a query
    /// over the family's labels finds one figure.
    #[test]
    fn labels_tell_a_family_apart() {
        for a in Headline::ALL {
            for b in Headline::ALL {
                if a != b && a.family() == b.family() {
                    assert_ne!(a.labels(), b.labels(), "{a:?} and {b:?}");
                }
            }
        }
    }

    #[test]
    fn base_units() {
        assert_eq!(Quantity::Bandwidth.to_base(1.5), 1.5e9);
        assert!((Quantity::Latency.to_base(120.0) - 1.2e-7).abs() < 1e-20);
        assert_eq!(Quantity::of_unit("ns"), Some(Quantity::Latency));
        assert_eq!(Quantity::of_unit("furlongs"), None);
    }
}
