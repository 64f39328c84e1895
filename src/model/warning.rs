//! Typed warnings with hints. Each goes to stderr once and into the JSON.
//!
//! The text names what was seen and what to do about it; the `kind` is a
//! stable identifier that scripts can match on.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Thresholds, with the reasoning behind each.
pub mod limits {
    /// A CV above 5 % means samples disagree more than the effects people
    /// usually look for (cache boundaries move numbers by 20 %+).
    pub const CV: f64 = 0.05;
    /// best/median above 1.1: the median was dragged down by interference.
    pub const BEST_OVER_MEDIAN: f64 = 1.10;
    /// 5 % over a physical ceiling cannot be measurement noise.
    pub const OVER_CEILING: f64 = 1.05;
    /// Other processes using more than 0.1 CPU compete for caches and DRAM.
    pub const FOREIGN_CPUS: f64 = 0.10;
    /// Hypervisor steal above 0.02 CPU distorts wall-clock samples.
    pub const STEAL_CPUS: f64 = 0.02;
    /// The add and imul clock chains are timed the same way; more than
    /// 3 % apart means one of them is not what it should be (a folded add,
    /// an imul of another latency, a frequency change between them).
    pub const CLOCK_DISAGREE: f64 = 0.03;
    /// No x86 core runs above ~6.2 GHz (2025); 6.5 leaves room for the
    /// next, and a reading above it means the probe was fooled.
    pub const CLOCK_MAX_HZ: f64 = 6.5e9;
    /// Below 0.2 GHz the probe was starved (a stopped or throttled vCPU).
    pub const CLOCK_MIN_HZ: f64 = 0.2e9;
    /// A thread off its cpu for more than this fraction of a timed
    /// interval was descheduled in it, even where no context switch was
    /// counted (a hypervisor stealing the vCPU: Linux guests with
    /// paravirtual steal time leave stolen time out of the thread's CPU
    /// clock). Less than this moves a sample by less than the 1 % a best
    /// jitters by on a quiet machine.
    pub const DESCHEDULED: f64 = 0.01;
    /// The same DRAM case more than 15 % apart between two moments of a
    /// run is not the plateau's own spread (a 2-vCPU Zen 4 guest's DRAM
    /// read moved by 5-9 % between sizes of one sweep) but the memory
    /// itself: other guests on the host took its controllers (six rounds
    /// a minute apart read 32.1-35.7 and once 58.5 GB/s).
    pub const MEMORY_MOVED: f64 = 0.15;
    /// A measured cache boundary more than 2× from CPUID's is not noise or
    /// a quarter-octave grid: the process does not see the cache CPUID
    /// describes (a VM told the host socket's L3), so regimes follow the
    /// measurement. Within 2×, CPUID's exact size labels regimes.
    pub const CACHE_DISAGREE: f64 = 2.0;
    /// The core-share probe below this share of its core's load rate per
    /// cycle was taken on a shared core. A core of its own gives the
    /// probe 0.9-1.0 of its load ports; a busy SMT sibling about half
    /// (a Zen 3 guest's 16 KiB read: 90-120 of 192 GB/s at 2.99 GHz in
    /// 299 of 300 samples). 0.75 sits between the two.
    pub const CORE_SHARED: f64 = 0.75;
    /// The memory probe above this multiple of the run's quiet reading
    /// (its 10th percentile) was taken while the memory was loaded from
    /// outside. The probe's own reading moves by ~20 % with what ran
    /// before it (a 2-vCPU Zen 4 guest: 156-165 ns between short chases,
    /// 171-191 after 10 ms ones); a memory controller that other guests
    /// load adds half or more to every miss (idle 100 ns to 200-300 ns
    /// near saturation on loaded-latency curves, as Intel MLC draws them).
    pub const MEMORY_LOADED: f64 = 1.5;
    /// A HIT or HITM read of another cpu's line at or below this many
    /// core cycles was an L1 hit: the line never left the core, so the two
    /// cpus are one core's SMT siblings. An L1 hit takes 4-5 cycles on the
    /// cores of bwscope's table, an L2 hit 11-16, a line from another
    /// core 30 or more.
    pub const SAME_CORE_READ_CYCLES: f64 = 8.0;
    /// A CAS one-way at or below this many core cycles stayed in one
    /// core: nviennot/core-to-core-latency's published hyperthread pairs
    /// take 4.3-10 ns at 3-5 GHz (17-40 cycles), its fastest separate
    /// cores 15.5 ns at ~4.5 GHz (a Ryzen 9 5950X's CCX: 70 cycles).
    pub const SAME_CORE_CAS_CYCLES: f64 = 45.0;
    /// Sorted pair latencies more than this factor apart start a new
    /// latency group: a 5950X's CCX pairs spread over 15.5-20.7 ns
    /// without a step this large, its SMT pairs (7.8) and cross-CCD pairs
    /// (82) lie 1.9× and 4× away.
    pub const LATENCY_GROUP_GAP: f64 = 1.3;
    /// One package's pairs of a class at more than this multiple of its
    /// twin's: a Dual EPYC 7R13's second socket crossed its CCXs in
    /// 187 ns against the first's 109 (1.7×); equal sockets differ by a
    /// few percent.
    pub const SLOWER_TWIN: f64 = 1.3;
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Warning {
    /// Samples spread more than `limits::CV`.
    HighCv { cv: f64 },
    /// Best and median far apart.
    BestMedianSpread { ratio: f64 },
    /// A result above the computed ceiling for this core (or the DRAM
    /// peak), by more than `limits::OVER_CEILING`.
    AboveCeiling {
        gbps: f64,
        ceiling_gbps: f64,
        /// Which ceiling; null in runs from before it was recorded.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bound_by: Option<super::BoundBy>,
    },
    /// Other processes were busy while measuring.
    ForeignLoad { cpus: f64 },
    /// The hypervisor stole time while measuring.
    Steal { cpus: f64 },
    /// Every sample kept was taken while a worker was descheduled (another
    /// task or the hypervisor had its cpu), after `retaken` more were
    /// taken in vain: the figure is a time share of the cpu.
    Descheduled { samples: u32, retaken: u32 },
    /// The same case moved between `low_gbps` and `high_gbps` over `turns`
    /// measurements at different moments, by more than the machine's own
    /// load explains: the memory was contended from outside.
    MemoryContended {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        low_gbps: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        high_gbps: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        turns: Option<u32>,
        /// The memory probe's evidence (`Spells`): the share of the
        /// record's samples taken while its chase read above
        /// `limits::MEMORY_LOADED` × the run's lowest (`baseline_ns`),
        /// and its median reading in those samples.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fraction: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        probe_ns: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        baseline_ns: Option<f64>,
    },
    /// The core-share probe found this core shared in `fraction` of the
    /// record's samples: its L1 load throughput per cycle fell to `share`
    /// (median of those samples) of what a core of its own gives, at an
    /// unchanged clock, which is what a busy SMT sibling does. `cause`
    /// says what the guest could see of it.
    CoreShared {
        fraction: f64,
        share: f64,
        cause: super::ShareCause,
    },
    /// Running under a hypervisor: caches and DRAM may be shared.
    VirtualMachine { hypervisor: String },
    /// The add chain and the imul chain give clocks more than 3 % apart;
    /// the lower is used.
    ClockDisagree { add_hz: f64, imul_hz: f64 },
    /// The measured clock is outside 0.2–6.5 GHz: not used.
    ClockImplausible { hz: f64 },
    /// Transparent huge pages were asked for but not (fully) obtained.
    ThpNotObtained { fraction: f64 },
    /// CPUID's last-level cache is larger than what this process sees
    /// (measured by the knee probe); regimes use the measured size.
    CpuidL3NotVisible {
        level: u8,
        cpuid_bytes: u64,
        measured_bytes: u64,
    },
    /// The knee store found at `path` was not used (`reason`: another
    /// user owns it, others may change it, it is a link, a FIFO, too
    /// large, or not a store): the run labels regimes by CPUID's sizes.
    KneeStoreIgnored { path: String, reason: String },
    /// The history store at `path` was not read or not written (`reason`:
    /// another user owns it, others may change it, it is a link, a FIFO,
    /// corrupt, locked, read-only, the disk is full, or a newer bwscope
    /// wrote it; `cause` says which, for the advice): the run itself
    /// completed and saved its own files.
    HistoryIgnored {
        path: String,
        reason: String,
        /// Read as `other` from runs written before it was stated.
        #[serde(default)]
        cause: super::history::StoreProblem,
    },
    /// A NUMA cell more than 25 % worse than what ACPI HMAT claims for it
    /// (`numa --tiers`): bandwidth below 0.75 × the claim, or latency
    /// above the claim ÷ 0.75. `unit` is `GB/s` or `ns`.
    BelowHmat {
        cpu_node: u32,
        memory_node: u32,
        measured: f64,
        claimed: f64,
        unit: String,
    },
    /// A size well inside the last cache (`level`) whose figure is
    /// DRAM's: median `measured` within 1.25× DRAM's bandwidth, or at
    /// least 0.8× its latency (`dram`, the same curve's records well
    /// inside DRAM; `unit` `GB/s` or `ns`). The host's other tenants held
    /// the cache (`stats::levels`).
    ReadsAsDram {
        level: super::Regime,
        measured: f64,
        dram: f64,
        unit: String,
    },
    /// Cpus the system states as separate cores answered like one core's
    /// SMT siblings (`pairs`, holder first): their `exchange` took `ns`
    /// (`cycles` core cycles, the pairs' median), which a line handed
    /// between two cores cannot (see `limits::SAME_CORE_*`). A cloud
    /// guest's two vCPUs on one physical core answer so.
    SharesACore {
        pairs: Vec<[u32; 2]>,
        stated: String,
        exchange: String,
        ns: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cycles: Option<f64>,
    },
    /// Pairs of class `stated` answered like class `like` (their median
    /// `ns` against the classes' `stated_ns` and `like_ns`), or, with no
    /// `like`, slower than any class stated.
    AnswersLikeClass {
        pairs: Vec<[u32; 2]>,
        stated: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        like: Option<String>,
        ns: f64,
        stated_ns: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        like_ns: Option<f64>,
    },
    /// The pairs of one class fall into several latency groups (`groups`:
    /// each group's median ns and pairs): the class the system states is
    /// several (a cache or die it does not show).
    ClassSplits {
        class: String,
        groups: Vec<(f64, u32)>,
    },
    /// Package `package`'s pairs of class `class` took `ns` (median)
    /// against `twin_ns` on package `twin`.
    SlowerTwin {
        class: String,
        package: u32,
        twin: u32,
        ns: f64,
        twin_ns: f64,
    },
    /// A free-form warning from a suite, with a hint.
    Other { message: String, hint: String },
}

impl Warning {
    /// The load and steal warnings a noise reading deserves: only what
    /// stands out of the reading's own resolution counts.
    pub fn from_noise(n: &super::Noise) -> Vec<Warning> {
        let mut w = Vec::new();
        if n.foreign_beyond_resolution() > limits::FOREIGN_CPUS {
            w.push(Warning::ForeignLoad {
                cpus: n.foreign_cpus,
            });
        }
        if n.steal_beyond_resolution() > limits::STEAL_CPUS {
            w.push(Warning::Steal { cpus: n.steal_cpus });
        }
        w
    }

    /// What to do about it, for a run of any command.
    pub fn hint(&self) -> &str {
        self.hint_for("")
    }

    /// What to do about it in a run of `command` (`Run::command`): a hint
    /// names only flags that command has.
    pub fn hint_for(&self, command: &str) -> &str {
        match self {
            Warning::HighCv { .. } | Warning::BestMedianSpread { .. } => match command {
                "net" => "trust `best`; quiet the network and both hosts, or lengthen --time",
                "memtype" => "trust `best`; quiet the machine or raise --passes / --read-passes",
                "survey" => "trust `best`; quiet the machine, or re-run that suite alone with more --samples",
                _ => "trust `best`; quiet the machine or raise --samples / --min-sample-ms",
            },
            Warning::AboveCeiling {
                bound_by: Some(super::BoundBy::DramChannels),
                ..
            } => {
                "the DRAM peak is too low (check --dram-peak or the DIMMs `bwscope info` lists), or the working set was not out of the caches; please report it with the JSON"
            }
            Warning::AboveCeiling { .. } => {
                "the kernel or the clock estimate is wrong; please report it with the JSON"
            }
            Warning::ClockDisagree { .. } => {
                "the lower is used; quiet the machine and run `bwscope info` again; if it persists, please report it with `bwscope info --json`"
            }
            Warning::ClockImplausible { .. } => {
                "ceilings and cycle counts are left out; please report it with `bwscope info --json`"
            }
            Warning::ForeignLoad { .. } => "stop other work on this machine and run again",
            Warning::Steal { .. } => "the host is oversubscribed; compare `best` only",
            Warning::CoreShared { .. } => {
                "the figure is this moment's; `spells.clean` has what the core does alone: compare that, or measure again when the core is not shared"
            }
            Warning::MemoryContended { .. } => {
                "another guest on the host shares the memory controllers; the figure is this moment's: compare the range, or measure again at a quieter time"
            }
            Warning::Descheduled { .. } => {
                "the machine is busy: stop other work (or leave the measuring cpus to bwscope) and run again"
            }
            Warning::VirtualMachine { .. } => {
                "caches, DRAM and clocks may be shared with other guests; compare runs side by side"
            }
            Warning::ThpNotObtained { .. } => {
                "set /sys/kernel/mm/transparent_hugepage/enabled to madvise or always, or compact memory"
            }
            Warning::CpuidL3NotVisible { .. } => {
                "in a VM CPUID often describes the host's whole socket; larger working sets are DRAM to this process and are labelled so; re-measure with `bwscope info --probe-knees`"
            }
            Warning::KneeStoreIgnored { .. } => {
                "remove it and measure again with `bwscope info --probe-knees`, or set XDG_CACHE_HOME to a folder only you can write"
            }
            Warning::HistoryIgnored { cause, .. } => cause.advice(),
            Warning::BelowHmat { .. } => {
                "check the memory population and link (CXL: `cxl list`, its link width and speed; HBM: the BIOS memory mode), or the firmware's HMAT is optimistic; please report it with the JSON"
            }
            Warning::ReadsAsDram { .. } => {
                "the cache was held by others (in a cloud guest, the host's other tenants): the figure is DRAM's at this moment, not the cache's; measure again at a quieter time"
            }
            Warning::SharesACore { .. } => {
                "two threads on these cpus share one core's L1, load ports and store buffer: a two-thread figure on them is not two cores' (in a cloud guest the host placed both vCPUs on one core); give threads cpus that answer as separate cores"
            }
            Warning::AnswersLikeClass { .. } | Warning::ClassSplits { .. } => {
                "the topology the system states is not the machine's (a VM's vCPUs placed elsewhere on the host, a cache the firmware does not show); place threads by the measured classes (`bwscope cores --all-pairs` draws them)"
            }
            Warning::SlowerTwin { .. } => {
                "compare the packages' clocks, memory population and firmware settings, and what else runs there; place latency-bound threads on the faster package"
            }
            Warning::Other { hint, .. } => hint,
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::HighCv { cv } => write!(f, "samples vary by {:.1} % (CV)", cv * 100.0),
            Warning::BestMedianSpread { ratio } => {
                write!(f, "best is {:.2}x the median", ratio)
            }
            Warning::AboveCeiling {
                gbps,
                ceiling_gbps,
                bound_by,
            } => match bound_by {
                Some(super::BoundBy::DramChannels) => write!(
                    f,
                    "{gbps:.1} GB/s exceeds the DRAM peak of {ceiling_gbps:.1} GB/s (DRAM channels)"
                ),
                Some(b) => write!(
                    f,
                    "{gbps:.1} GB/s exceeds this core's ceiling of {ceiling_gbps:.1} GB/s ({})",
                    b.label()
                ),
                None => write!(
                    f,
                    "{gbps:.1} GB/s exceeds this core's ceiling of {ceiling_gbps:.1} GB/s"
                ),
            },
            Warning::ClockDisagree { add_hz, imul_hz } => write!(
                f,
                "core clock probes disagree: add chain {:.3} GHz, cross-check chain (imul; eor on ARM) {:.3} GHz",
                add_hz / 1e9,
                imul_hz / 1e9
            ),
            Warning::ClockImplausible { hz } => write!(
                f,
                "measured core clock {:.3} GHz is implausible (outside 0.2–6.5 GHz)",
                hz / 1e9
            ),
            Warning::ForeignLoad { cpus } => {
                write!(f, "other processes used {:.2} CPUs while measuring", cpus)
            }
            Warning::Steal { cpus } => write!(f, "hypervisor stole {:.2} CPUs", cpus),
            Warning::MemoryContended {
                low_gbps: Some(low_gbps),
                high_gbps: Some(high_gbps),
                turns: Some(turns),
                ..
            } => write!(
                f,
                "the memory was contended from outside: {turns} measurements at different moments read {low_gbps:.1} to {high_gbps:.1} GB/s, more apart than this machine's own load explains"
            ),
            Warning::MemoryContended {
                fraction,
                probe_ns,
                baseline_ns,
                ..
            } => write!(
                f,
                "the memory was loaded from outside in {:.0} % of the samples: the idle-latency probe read {:.0} ns against this run's {:.0} ns",
                fraction.unwrap_or(0.0) * 100.0,
                probe_ns.unwrap_or(0.0),
                baseline_ns.unwrap_or(0.0)
            ),
            Warning::CoreShared {
                fraction,
                share,
                cause,
            } => write!(
                f,
                "this core was shared in {:.0} % of the samples: it loaded {:.0} % of what a core of its own does per cycle, at its clock; {}",
                fraction * 100.0,
                share * 100.0,
                cause.label()
            ),
            Warning::Descheduled { samples, retaken } => write!(
                f,
                "no clean sample in {} tries: the {samples} kept were taken while a worker was descheduled",
                samples + retaken
            ),
            Warning::VirtualMachine { hypervisor } => {
                write!(f, "running in a virtual machine ({})", hypervisor)
            }
            Warning::ThpNotObtained { fraction } => write!(
                f,
                "only {:.0} % of the buffer got transparent huge pages",
                fraction * 100.0
            ),
            Warning::CpuidL3NotVisible {
                level,
                cpuid_bytes,
                measured_bytes,
            } => write!(
                f,
                "CPUID says L{level} is {:.1} MiB but this process's reads show it ending at {:.1} MiB",
                *cpuid_bytes as f64 / (1 << 20) as f64,
                *measured_bytes as f64 / (1 << 20) as f64
            ),
            Warning::KneeStoreIgnored { path, reason } => write!(
                f,
                "the stored knee probe {path} was ignored: {reason}; regimes follow CPUID's cache sizes"
            ),
            Warning::HistoryIgnored { path, reason, .. } => {
                write!(f, "the history store {path} was not used: {reason}")
            }
            Warning::BelowHmat {
                cpu_node,
                memory_node,
                measured,
                claimed,
                unit,
            } => write!(
                f,
                "cpu node {cpu_node} → memory node {memory_node}: measured {measured:.1} {unit}, more than 25 % worse than HMAT's claim of {claimed:.1} {unit}"
            ),
            Warning::ReadsAsDram {
                level,
                measured,
                dram,
                unit,
            } => write!(
                f,
                "a size inside the {level} read like DRAM: {measured:.1} {unit} against DRAM's {dram:.1} {unit}"
            ),
            Warning::SharesACore {
                pairs,
                stated,
                exchange,
                ns,
                cycles,
            } => write!(
                f,
                "cpus {} ({stated} as the system states them) answer like one core's SMT siblings: {exchange} {ns:.1} ns{}",
                pair_list(pairs),
                cycles.map_or(String::new(), |c| format!(" ({c:.0} core cycles)"))
            ),
            Warning::AnswersLikeClass {
                pairs,
                stated,
                like,
                ns,
                stated_ns,
                like_ns,
            } => match (like, like_ns) {
                (Some(like), Some(like_ns)) => write!(
                    f,
                    "cpus {} (stated {stated}, {stated_ns:.1} ns) answer like {like} ({like_ns:.1} ns): {ns:.1} ns",
                    pair_list(pairs)
                ),
                _ => write!(
                    f,
                    "cpus {} (stated {stated}, {stated_ns:.1} ns) answer slower than any stated class: {ns:.1} ns",
                    pair_list(pairs)
                ),
            },
            Warning::ClassSplits { class, groups } => write!(
                f,
                "the {class} pairs fall into {} latency groups: {}",
                groups.len(),
                groups
                    .iter()
                    .map(|(ns, n)| format!("{n} at {ns:.1} ns"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Warning::SlowerTwin {
                class,
                package,
                twin,
                ns,
                twin_ns,
            } => write!(
                f,
                "package {package}'s {class} pairs take {ns:.1} ns, {:.1}× package {twin}'s {twin_ns:.1} ns",
                ns / twin_ns
            ),
            Warning::Other { message, .. } => f.write_str(message),
        }
    }
}

/// `0-1, 2-3` (the first few pairs, then how many more).
fn pair_list(pairs: &[[u32; 2]]) -> String {
    let shown: Vec<String> = pairs
        .iter()
        .take(6)
        .map(|[a, b]| format!("{a}-{b}"))
        .collect();
    let more = pairs.len().saturating_sub(shown.len());
    if more > 0 {
        format!("{} and {more} more pairs", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_name_only_flags_the_command_has() {
        let w = Warning::HighCv { cv: 0.2 };
        for cmd in ["net", "memtype", "survey"] {
            let h = w.hint_for(cmd);
            assert!(
                !h.contains("--samples ") && !h.contains("--min-sample-ms"),
                "{cmd}: {h}"
            );
        }
        assert!(w.hint_for("net").contains("--time"));
        assert!(w.hint_for("memtype").contains("--passes"));
        assert!(w.hint_for("cache").contains("--samples"));
    }
}
