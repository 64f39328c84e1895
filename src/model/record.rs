//! One [`Record`]: a case plus its samples, statistics, status, warnings
//! and where it ran, and what its suite says beyond that ([`Detail`]).

use serde::{Deserialize, Serialize};

use super::detail::{Detail, SuiteId};
use super::{Op, Pattern, Regime, Warning};

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    #[default]
    Ok,
    Skipped,
    Error,
}

impl Status {
    /// Its word, as the JSON writes it (the store's `status` column and
    /// the report's row class spell it so too).
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Skipped => "skipped",
            Status::Error => "error",
        }
    }
}

/// One timed sample: how long, and how many bytes (by the kernel's
/// declaration) moved in that time.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Sample {
    pub seconds: f64,
    pub bytes: u64,
    /// The spell probes' readings right after this sample (see
    /// `Spells`); absent where they did not run and in older runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<super::Probe>,
}

/// Summary statistics of a sample set (computed by the `stats` module).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Stats {
    /// The headline "best": max for rates, min for latencies.
    pub best: f64,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    /// Coefficient of variation (stddev / mean), 0..; not in percent.
    pub cv: f64,
    pub n: usize,
}

impl Stats {
    /// `n` samples that all read `value` (tests and hand-built records).
    pub fn constant(value: f64, n: usize) -> Stats {
        Stats {
            best: value,
            median: value,
            min: value,
            max: value,
            mean: value,
            cv: 0.0,
            n,
        }
    }

    /// Every rate times `k` (a payload that is a fixed part of the bytes
    /// counted); the spread (`cv`) and the count stay.
    pub fn scaled(self, k: f64) -> Stats {
        Stats {
            best: self.best * k,
            median: self.median * k,
            min: self.min * k,
            max: self.max * k,
            mean: self.mean * k,
            ..self
        }
    }
}

/// How a [`Noise`] figure was obtained.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum NoiseMethod {
    /// The nanosecond CPU clocks of every other process (read before and
    /// after), with the kernel's tick counts as a floor for processes that
    /// came and went inside the window.
    ProcessClocks,
    /// `/proc/stat` tick counts only (other processes' clocks unreadable).
    ProcStat,
}

/// Noise observed while a record was measured.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default)]
pub struct Noise {
    /// CPUs' worth of time spent by other processes during the record
    /// (0.0 = quiet, 1.0 = one whole CPU busy elsewhere); never more than
    /// the CPUs this process left free.
    pub foreign_cpus: f64,
    /// CPUs' worth of time stolen by the hypervisor.
    pub steal_cpus: f64,
    /// Wall time over which this was observed, seconds.
    pub window_seconds: f64,
    /// What `foreign_cpus` can resolve: its uncertainty in CPUs, so a
    /// value below this is indistinguishable from 0 (null in runs written
    /// before this was recorded: absent, so they round-trip unchanged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution_cpus: Option<f64>,
    /// The same for `steal_cpus` (tick counts: 1/USER_HZ over the window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_resolution_cpus: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<NoiseMethod>,
}

/// The most `foreign` CPUs of other work can slow a measurement on
/// `threads` of `online` cpus: the part of the load that does not fit on
/// the cpus the measurement left free time-shares its cpus (each thread's
/// share of a cpu falls to 1 / (1 + excess per thread)), and all of it
/// shares the caches, the memory system and the kernel with the
/// measurement's threads (their share falls to threads / (threads +
/// foreign)). A figure may drop by the product, no further.
pub fn noise_slowdown(foreign: f64, threads: u32, online: usize) -> f64 {
    let t = threads.max(1) as f64;
    let free = (online as f64 - t).max(0.0);
    let f = foreign.max(0.0);
    let excess = (f - free).max(0.0);
    (1.0 + excess / t) * (1.0 + f / t)
}

impl Noise {
    /// Foreign load that stands out of the figure's own uncertainty.
    pub fn foreign_beyond_resolution(&self) -> f64 {
        (self.foreign_cpus - self.resolution_cpus.unwrap_or(0.0)).max(0.0)
    }

    /// Steal that stands out of the figure's own uncertainty.
    pub fn steal_beyond_resolution(&self) -> f64 {
        (self.steal_cpus - self.steal_resolution_cpus.unwrap_or(0.0)).max(0.0)
    }
}

/// One measurement of a case at one moment of a run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Turn {
    /// When: `knees` (the knee probe's read curve, at the start), `record`
    /// (the record's own samples), `again` (measured once more at the end),
    /// `remeasure` (a fleet node's second turn).
    pub at: String,
    /// Best GB/s of that turn.
    pub gbps: f64,
    /// Other processes' load in that turn, CPUs; null where not read.
    pub foreign_cpus: Option<f64>,
}

/// The same case measured at several moments of a run, earliest first.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Repeats {
    pub turns: Vec<Turn>,
    /// The rate moved between turns by more than
    /// [`limits::MEMORY_MOVED`](super::limits::MEMORY_MOVED) and the slow
    /// turn's own load ([`noise_slowdown`]) does not explain it: the
    /// memory was contended from outside (other guests on the host share
    /// its controllers, and nothing inside this machine shows it).
    pub contended: bool,
}

impl Repeats {
    /// Judge `turns` of a case on `threads` threads of `online` cpus.
    pub fn of(turns: Vec<Turn>, threads: u32, online: usize) -> Repeats {
        let lo = turns.iter().min_by(|a, b| a.gbps.total_cmp(&b.gbps));
        let hi = turns.iter().map(|t| t.gbps).fold(0.0, f64::max);
        let contended = lo.is_some_and(|lo| {
            let explained = noise_slowdown(lo.foreign_cpus.unwrap_or(0.0), threads, online);
            lo.gbps > 0.0
                && hi / lo.gbps - 1.0 > super::limits::MEMORY_MOVED
                && lo.gbps * explained < hi
        });
        Repeats { turns, contended }
    }

    /// The lowest and highest turn, GB/s.
    pub fn range(&self) -> (f64, f64) {
        self.turns.iter().fold((f64::MAX, 0.0f64), |(lo, hi), t| {
            (lo.min(t.gbps), hi.max(t.gbps))
        })
    }

    /// The warning a contended case deserves.
    pub fn warning(&self) -> Option<Warning> {
        let (low_gbps, high_gbps) = self.range();
        self.contended.then_some(Warning::MemoryContended {
            low_gbps: Some(low_gbps),
            high_gbps: Some(high_gbps),
            turns: Some(self.turns.len() as u32),
            fraction: None,
            probe_ns: None,
            baseline_ns: None,
        })
    }
}

/// Where the memory of a record lived and what pages it got.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct MemoryInfo {
    /// The kind asked for (`thp`, `regular`, `hugetlb-2M`, ...).
    pub kind: String,
    /// Page size the kernel reports for the mapping (`KernelPageSize`).
    pub page_bytes: Option<u64>,
    /// Fraction of the buffer backed by transparent huge pages
    /// (`AnonHugePages` / size), 0..1.
    pub thp_fraction: Option<f64>,
    /// Fraction locked in RAM (`Locked` / size), 0..1.
    pub locked_fraction: Option<f64>,
}

/// Which cpus ran the record and where its memory was.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Placement {
    pub cpu_node: Option<u32>,
    pub memory_node: Option<u32>,
    /// Fraction of pages verified on `memory_node` after the measurement.
    pub verified_fraction: Option<f64>,
    /// Background load description, e.g. `"1@node0 delay=100"`.
    pub load: Option<String>,
    /// Largest difference between the team's start times, seconds.
    pub start_skew_seconds: Option<f64>,
}

/// One Case plus its measured samples and statistics.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    /// Which suite produced it and what that suite says of it: the JSON's
    /// `suite` and `extra` (see [`Detail`]).
    #[serde(flatten)]
    pub detail: Detail,
    pub kernel: String,
    /// read, write, copy, latency, ...
    pub op: Op,
    pub width_bits: Option<u32>,
    pub nontemporal: Option<bool>,
    /// seq, random, strided, chase; null where there is no access pattern.
    pub pattern: Option<Pattern>,
    /// Working-set bytes of one thread (all its streams together); null
    /// where there is no working set (register kernels, network).
    pub size_bytes: Option<u64>,
    pub threads: u32,
    pub cpus: Vec<u32>,
    /// L1, L2, L3 or DRAM, from `host.caches`; null where not applicable.
    pub regime: Option<Regime>,
    /// Bytes read / written by one pass of one thread, from the kernel's
    /// declaration.
    pub bytes_read_per_pass: Option<u64>,
    pub bytes_written_per_pass: Option<u64>,
    /// Bytes delivered by one pass (a copy: the bytes copied).
    pub payload_bytes_per_pass: Option<u64>,
    /// Passes per sample per thread, from calibration.
    pub reps_per_sample: Option<u64>,
    pub samples: Vec<Sample>,
    /// Bandwidth in GB/s (10^9 B/s) over `samples`, bytes as declared.
    pub gbps: Option<Stats>,
    /// Bandwidth in GB/s counting payload bytes only.
    pub payload_gbps: Option<Stats>,
    /// Per-thread best GB/s where threads > 1.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_thread_gbps: Vec<f64>,
    /// The lowest physical ceiling that applies to this record's regime,
    /// cores and clock, GB/s, bytes counted as `gbps` counts them (see
    /// `bound_by`); null when unknown or not a bandwidth record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_gbps: Option<f64>,
    /// `gbps.best` as a percentage of `limit_gbps`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percent_of_limit: Option<f64>,
    /// Which ceiling `limit_gbps` is: `l1_load_ports`, `l1_store_ports`,
    /// `l2_fill`, `l3_per_core`, `dram_channels` or `unknown`; null on
    /// records that are not bandwidth (latency, registers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound_by: Option<super::BoundBy>,
    pub status: Status,
    pub reason: Option<String>,
    pub warnings: Vec<Warning>,
    pub noise: Option<Noise>,
    /// Samples taken again because a worker was descheduled in them (its
    /// cpu taken by another task or the hypervisor: a time share, not the
    /// hardware); absent where the workload cannot tell (transfers) and in
    /// runs from before it was counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples_retaken: Option<u32>,
    /// Of `samples`, those in which a worker was descheduled: kept only
    /// when no clean sample came within the retake budget (then a
    /// `descheduled` warning says so); absent as `samples_retaken` is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples_descheduled: Option<u32>,
    /// The same case measured at other moments of the run (the survey's
    /// DRAM reads, a fleet node's second turn), this record's own samples
    /// among them; absent where it was measured once and in older runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<Repeats>,
    /// The spells the samples were taken in (core shared, memory
    /// contended) and the figure of the clean ones; absent where the
    /// probes did not run and in older runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spells: Option<super::Spells>,
    pub memory: Option<MemoryInfo>,
    pub placement: Option<Placement>,
    /// The kind of core the record ran on, where cores differ in kind
    /// (ARM: `host.arm.core_kinds[].id`, e.g. `cortex-a76`); `mixed:
    /// a76×2+a55×2` when its cpus are of several kinds (then it also
    /// carries a warning); absent on x86 and where the kind is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_kind: Option<String>,
    /// The SVE vector length the kernel ran with, bits (`rdvl` × 8): only
    /// on records of SVE kernels, whose width is the vector length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sve_vector_bits: Option<u32>,
}

impl Record {
    /// A record of `detail`'s suite with every common field empty (for
    /// struct update syntax: `Record { kernel, …, ..Record::new(d) }`).
    pub fn new(detail: impl Into<Detail>) -> Record {
        Record {
            detail: detail.into(),
            kernel: String::new(),
            op: Op::Unnamed,
            width_bits: None,
            nontemporal: None,
            pattern: None,
            size_bytes: None,
            threads: 0,
            cpus: Vec::new(),
            regime: None,
            bytes_read_per_pass: None,
            bytes_written_per_pass: None,
            payload_bytes_per_pass: None,
            reps_per_sample: None,
            samples: Vec::new(),
            gbps: None,
            payload_gbps: None,
            per_thread_gbps: Vec::new(),
            limit_gbps: None,
            percent_of_limit: None,
            bound_by: None,
            status: Status::Ok,
            reason: None,
            warnings: Vec::new(),
            noise: None,
            samples_retaken: None,
            samples_descheduled: None,
            repeats: None,
            spells: None,
            memory: None,
            placement: None,
            core_kind: None,
            sve_vector_bits: None,
        }
    }

    /// Which suite produced it.
    pub fn suite(&self) -> SuiteId {
        self.detail.suite()
    }

    /// A record for a case that cannot run here, with the reason.
    pub fn skipped(suite: SuiteId, kernel: &str, reason: impl Into<String>) -> Record {
        Record {
            kernel: kernel.into(),
            status: Status::Skipped,
            reason: Some(reason.into()),
            ..Record::new(suite)
        }
    }

    /// A record for a case that failed while running, with the message.
    pub fn error(suite: SuiteId, kernel: &str, message: impl Into<String>) -> Record {
        Record {
            kernel: kernel.into(),
            status: Status::Error,
            reason: Some(message.into()),
            ..Record::new(suite)
        }
    }

    /// Whether the record read like DRAM at a size inside the last cache
    /// (`Warning::ReadsAsDram`).
    pub fn reads_as_dram(&self) -> bool {
        self.warnings
            .iter()
            .any(|w| matches!(w, Warning::ReadsAsDram { .. }))
    }

    /// The level tables print for the record: its regime, and "(as
    /// DRAM)" beside it where it read like DRAM.
    pub fn level_label(&self) -> String {
        let nominal = self
            .regime
            .as_ref()
            .map(|g| g.to_string())
            .unwrap_or_default();
        if self.reads_as_dram() {
            format!("{nominal} (as DRAM)")
        } else {
            nominal
        }
    }

    /// A stable key that identifies the case across runs (for `compare`):
    /// suite, kernel, size, threads, memory kind and the suite's own case
    /// parts (`/case_<name>=<JSON value>`).
    pub fn case_key(&self) -> String {
        let mut key = format!(
            "{}/{}/{}/t{}",
            self.suite(),
            self.kernel,
            self.size_bytes.map_or("-".into(), |s| s.to_string()),
            self.threads
        );
        if let Some(m) = &self.memory {
            key.push_str(&format!("/{}", m.kind));
        }
        for p in self.detail.case() {
            key.push_str(&format!("/case_{}={}", p.name, p.value));
        }
        key
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_is_named_as_the_json_writes_it() {
        for st in [Status::Ok, Status::Skipped, Status::Error] {
            assert_eq!(
                serde_json::to_value(st).unwrap(),
                serde_json::json!(st.name())
            );
        }
    }

    fn turns(gbps: &[f64], foreign: f64) -> Vec<Turn> {
        gbps.iter()
            .map(|&g| Turn {
                at: "record".into(),
                gbps: g,
                foreign_cpus: Some(foreign),
            })
            .collect()
    }

    /// Issue 29: a 2-vCPU Zen 4 guest's two-thread DRAM read in six rounds
    /// a minute apart, with no foreign load inside the guest.
    #[test]
    fn a_dram_read_that_moves_more_than_the_load_explains_was_contended() {
        let issue = [32.1, 35.7, 34.5, 34.0, 34.1, 58.5];
        let r = Repeats::of(turns(&issue, 0.0), 2, 2);
        assert!(r.contended);
        assert_eq!(r.range(), (32.1, 58.5));
        match r.warning() {
            Some(Warning::MemoryContended {
                low_gbps,
                high_gbps,
                turns,
                ..
            }) => assert_eq!(
                (low_gbps, high_gbps, turns),
                (Some(32.1), Some(58.5), Some(6))
            ),
            other => panic!("{other:?}"),
        }
        // The plateau's own spread is not contention.
        let quiet = Repeats::of(turns(&issue[..5], 0.0), 2, 2);
        assert!(!quiet.contended && quiet.warning().is_none());
        // A drop the guest's own load explains is not contention: 1.9
        // CPUs of other work beside two threads on two cpus can slow
        // them 3.8×.
        assert!(!Repeats::of(turns(&issue, 1.9), 2, 2).contended);
        // One turn says nothing.
        assert!(!Repeats::of(turns(&[58.5], 0.0), 1, 2).contended);
    }
}
