//! The machine a run happened on, as data: what `bwscope info --json`
//! prints and every run stores as `host`. Detection lives in `platform`;
//! this module only holds the facts and the pure questions asked of them
//! (which cache level a working set falls in, which ceiling bounds a
//! kernel), so the report can answer them from a saved run.

use serde::{Deserialize, Serialize};

use super::arm::ArmHost;
use super::uarch::UarchMatch;
use super::{KneeProbe, Regime, Warning};
pub use cache::{Cache, Curve};
pub use clock::{ClockProbe, CrossCheck};

mod cache;
mod clock;

/// Everything `bwscope info` shows; stored as `host` in every run.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct Host {
    pub cpu: CpuIdent,
    pub features: Features,
    pub caches: Vec<Cache>,
    pub cpus: Vec<Cpu>,
    /// Cpus this process may run on.
    pub allowed_cpus: Vec<u32>,
    pub physical_cores: usize,
    pub nodes: Vec<Node>,
    pub env: Environment,
    /// Measured core clock, Hz (`clock.hz`); null if not measured or the
    /// probe's result was implausible.
    pub clock_hz: Option<f64>,
    /// The clock probe's two chains; null if not measured.
    #[serde(default)]
    pub clock: Option<ClockProbe>,
    /// The row of the microarchitecture table this core matched, and why;
    /// null in runs from before the table.
    #[serde(default)]
    pub uarch: Option<UarchMatch>,
    /// Per-core L1 ceilings at the measured clock, one per op and width
    /// this CPU has; `null` numbers when the core or the clock is unknown.
    pub ceilings: Vec<Ceiling>,
    /// The knee probe behind `caches[].effective_size_bytes`: measured in
    /// this run or read back from this host's stored result; null when
    /// neither.
    #[serde(default)]
    pub knees: Option<KneeProbe>,
    /// The memory devices SMBIOS lists and the DRAM peak they allow (or the
    /// peak stated with `--dram-peak`); null in runs from before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dram: Option<super::Dram>,
    /// AArch64 facts (core kinds by MIDR, SVE vector length, `dc zva`
    /// block, cache line from `CTR_EL0`); absent on x86.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arm: Option<ArmHost>,
    /// Every node's memory kind, kernel tier and HMAT claims, each with
    /// its source; absent in runs from before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tiers: Option<super::MemoryTiers>,
}

/// An upper bound on one op at one width for one core, from the matched
/// row's loads/stores per cycle and the measured clock. Null numbers mean
/// unknown (no row matched, or no clock): never a guess.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Ceiling {
    pub op: String,
    pub width_bits: u32,
    pub bytes_per_cycle: Option<f64>,
    pub gbps: Option<f64>,
}

/// The ISA features that matter for moving bytes, and those that tell
/// cores apart when a hypervisor masks the model number.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Features {
    pub sse2: bool,
    pub sse4_1: bool,
    pub avx: bool,
    pub avx2: bool,
    pub avx512f: bool,
    pub avx512bw: bool,
    /// Enhanced REP MOVSB/STOSB.
    pub erms: bool,
    /// Fast short REP MOVSB.
    pub fsrm: bool,
    pub movdiri: bool,
    pub movdir64b: bool,
    pub clflushopt: bool,
    pub clwb: bool,
    pub invariant_tsc: bool,
    /// AVX512-VBMI2 (leaf 7.0 ECX[6]): Ice Lake and later, not Skylake-SP.
    pub avx512_vbmi2: bool,
    /// AVX512-FP16 (leaf 7.0 EDX[23]): Sapphire Rapids and later.
    pub avx512_fp16: bool,
    /// AMX-TILE (leaf 7.0 EDX[24]): Golden Cove class server cores.
    pub amx_tile: bool,
    /// AMX-FP16 (leaf 7.1 EAX[21]): Granite Rapids (Redwood Cove).
    pub amx_fp16: bool,
    /// AVX-VNNI, VEX-encoded (leaf 7.1 EAX[4]): Alder Lake+, Zen 5.
    pub avx_vnni: bool,
    /// Hybrid part (leaf 7.0 EDX[15]): P- and E-cores differ.
    pub hybrid: bool,
    /// AArch64 Advanced SIMD (NEON), `AT_HWCAP` ASIMD.
    #[serde(default, skip_serializing_if = "is_false")]
    pub asimd: bool,
    /// AArch64 SVE (`AT_HWCAP` SVE); the vector length is
    /// `host.arm.sve_vector_bits`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub sve: bool,
    /// AArch64 SVE2 (`AT_HWCAP2` SVE2).
    #[serde(default, skip_serializing_if = "is_false")]
    pub sve2: bool,
    /// AArch64 SME (`AT_HWCAP2` SME).
    #[serde(default, skip_serializing_if = "is_false")]
    pub sme: bool,
    /// AArch64 `dc zva` permitted at EL0 (`DCZID_EL0.DZP` clear); the
    /// block size is `host.arm.dc_zva_block_bytes`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub dc_zva: bool,
}

impl Features {
    /// Names of the features present, for display.
    pub fn present(&self) -> Vec<&'static str> {
        let all = [
            ("sse2", self.sse2),
            ("sse4.1", self.sse4_1),
            ("avx", self.avx),
            ("avx2", self.avx2),
            ("avx512f", self.avx512f),
            ("avx512bw", self.avx512bw),
            ("erms", self.erms),
            ("fsrm", self.fsrm),
            ("movdiri", self.movdiri),
            ("movdir64b", self.movdir64b),
            ("clflushopt", self.clflushopt),
            ("clwb", self.clwb),
            ("invariant_tsc", self.invariant_tsc),
            ("avx512_vbmi2", self.avx512_vbmi2),
            ("avx512_fp16", self.avx512_fp16),
            ("amx_tile", self.amx_tile),
            ("amx_fp16", self.amx_fp16),
            ("avx_vnni", self.avx_vnni),
            ("hybrid", self.hybrid),
            ("asimd", self.asimd),
            ("sve", self.sve),
            ("sve2", self.sve2),
            ("sme", self.sme),
            ("dc_zva", self.dc_zva),
        ];
        all.iter().filter(|(_, b)| *b).map(|(n, _)| *n).collect()
    }
}

/// CPU identity.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CpuIdent {
    pub vendor: String,
    pub model_name: String,
    pub family: u32,
    pub model: u32,
    pub stepping: u32,
    /// Hypervisor named by CPUID leaf 0x4000_0000, if any.
    pub hypervisor: Option<String>,
}

/// One logical cpu.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Cpu {
    pub id: u32,
    pub core: u32,
    pub package: u32,
    pub node: u32,
    /// Logical cpus on the same core, this one included.
    pub siblings: Vec<u32>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Node {
    pub id: u32,
    pub cpus: Vec<u32>,
    pub memory_bytes: Option<u64>,
    /// Distances to every node, in node-id order (`/sys/.../distance`).
    pub distances: Vec<u32>,
}

/// The environment a run happened in; what cannot be read is `null`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Environment {
    pub hostname: Option<String>,
    pub kernel: Option<String>,
    pub mem_total_bytes: Option<u64>,
    pub mem_available_bytes: Option<u64>,
    /// The selected mode of /sys/kernel/mm/transparent_hugepage/enabled.
    pub thp_enabled: Option<String>,
    pub thp_defrag: Option<String>,
    /// vm.nr_hugepages (2 MiB pages reserved).
    pub hugepages_2m_reserved: Option<u64>,
    pub clocksource: Option<String>,
    /// kernel.numa_balancing (0 off, 1 on, 2 tiering).
    pub numa_balancing: Option<u32>,
    /// The cpufreq governor of cpu0, where cpufreq exists.
    pub governor: Option<String>,
    /// rustc target features the binary was built with.
    pub build_target_features: Vec<String>,
}

impl Host {
    /// The data and unified caches, smallest level first.
    pub fn data_caches(&self) -> impl Iterator<Item = &Cache> {
        self.caches.iter().filter(|c| c.kind != "instruction")
    }

    /// The smallest working set whose sequential read runs within 10 % of
    /// the DRAM plateau (the knee probe's read curve): never a cache.
    pub fn dram_from_bytes(&self) -> Option<u64> {
        self.knees
            .as_ref()?
            .bandwidth_knee
            .as_ref()
            .map(|k| k.dram_from_bytes)
    }

    /// Where `c` ends for records of `curve` ([`Cache::boundary`]); for
    /// bandwidth, never at or past a size read at DRAM's rate.
    pub fn boundary(&self, c: &Cache, curve: Curve) -> u64 {
        let b = c.boundary(curve);
        match (curve, self.dram_from_bytes()) {
            (Curve::Bandwidth, Some(d)) if b >= d => {
                c.bandwidth_size_bytes.filter(|&e| e < d).unwrap_or(d - 1)
            }
            _ => b,
        }
    }

    /// Size of the data/unified cache at `level` as regimes of `curve` use
    /// it ([`Host::boundary`]), bytes.
    pub fn cache_size(&self, level: u8, curve: Curve) -> Option<u64> {
        self.data_caches()
            .find(|c| c.level == level)
            .map(|c| self.boundary(c, curve))
    }

    /// The last-level cache size as regimes of `curve` use it (measured
    /// where it disagrees with CPUID).
    pub fn llc_size(&self, curve: Curve) -> Option<u64> {
        self.data_caches()
            .max_by_key(|c| c.level)
            .map(|c| self.boundary(c, curve))
    }

    /// The regime a per-thread working set of `bytes` falls in, for a
    /// record of `curve`. `threads` buffers share caches that more than one
    /// cpu shares.
    pub fn regime(&self, bytes: u64, threads: u32, curve: Curve) -> Regime {
        for c in self.data_caches() {
            let sharers = (c.shared_cpus.len() as u64).clamp(1, threads.max(1) as u64);
            if bytes * sharers <= self.boundary(c, curve) {
                return Regime::cache(c.level);
            }
        }
        Regime::Dram
    }

    /// [`Host::regime`] where the caches are known; None where no cache is
    /// (an ARM machine whose firmware gives sysfs no sizes, or an emulator
    /// whose files describe its host): then no size can be placed.
    pub fn regime_of(&self, bytes: u64, threads: u32, curve: Curve) -> Option<Regime> {
        self.data_caches()
            .next()
            .is_some()
            .then(|| self.regime(bytes, threads, curve))
    }

    /// The regime of a random chase over `bytes` that measured `ns` per
    /// load: by size ([`Host::regime_of`]), except in a transition. Past a
    /// knee of the measured latency curve a chase still hits the level
    /// that ended with about C/n of its loads (C its capacity as the curve
    /// saw it, n the set), and its latency lies between the two plateaus
    /// in that proportion; where most loads are still served by the level
    /// that ended — the set within 2× of the knee and the latency nearer
    /// that level's plateau than the next one's — it is labelled by that
    /// level, never by the one below it (issue 29: an 8 MiB chase at 32 ns,
    /// between a 15 ns L3 and 115–135 ns DRAM, past a knee placed at 6 MiB,
    /// was labelled DRAM while the read curve said L3 ran to 32 MiB). The
    /// same holds further past the knee while the set is within the size
    /// CPUID states for that level.
    pub fn chase_regime(&self, bytes: u64, ns: Option<f64>) -> Option<Regime> {
        let by_size = self.regime_of(bytes, 1, Curve::Latency)?;
        let knee = self
            .knees
            .iter()
            .flat_map(|p| &p.knees)
            .filter(|k| k.end_bytes < bytes)
            .max_by_key(|k| k.end_bytes);
        // Within the size CPUID states for the level that ended, a busy
        // machine's probe may have ended it early (issue 47: an 8 MiB
        // chase at 17 and 40 ns labelled DRAM beside a 140 ns DRAM, L3 32
        // MiB by CPUID): the latency then says which reading to trust.
        let within_cpuid = |k: &crate::model::Knee| {
            self.data_caches()
                .find(|c| Some(c.level) == k.level)
                .is_some_and(|c| bytes <= c.size_bytes)
        };
        let served_by = match (knee, ns) {
            (Some(k), Some(ns))
                if (bytes <= k.end_bytes.saturating_mul(2) || within_cpuid(k))
                    && ns < (k.latency_ns + k.next_latency_ns) / 2.0 =>
            {
                k.level
            }
            _ => None,
        };
        Some(match served_by {
            // Only ever up to the level that ended: DRAM has no rank.
            Some(l) if by_size.level().is_none_or(|r| l < r) => Regime::cache(l),
            _ => by_size,
        })
    }

    /// Whether a single-thread working set of `bytes` labelled `regime` by
    /// `curve` lies well inside it, past the transition from the level
    /// below: more than twice the lower level's boundary for a cache (so its
    /// hits do not flatter the figure; at exactly twice, a record still takes
    /// the lower level's limit, and a 64 KiB read on Zen 4's 32 KiB L1 read
    /// 119.5 GB/s where the L2→L1 fill allows 118), at least `dram_margin` × the last
    /// level's for DRAM (a stream barely hits the LLC at 2× its size, a
    /// random chase still does) or at the DRAM plateau of the read curve.
    pub fn well_inside(&self, bytes: u64, regime: &Regime, dram_margin: u64, curve: Curve) -> bool {
        if *regime == Regime::Dram {
            let plateau =
                curve == Curve::Bandwidth && self.dram_from_bytes().is_some_and(|d| bytes >= d);
            return plateau
                || self
                    .llc_size(curve)
                    .is_none_or(|l| bytes >= l.saturating_mul(dram_margin));
        }
        let level = regime.level().unwrap_or(0);
        self.data_caches()
            .filter(|c| c.level < level)
            .map(|c| self.boundary(c, curve))
            .max()
            .is_none_or(|below| bytes > below.saturating_mul(2))
    }

    /// Run-level warnings about cache sizes: the last level CPUID names
    /// but a sequential read does not see (`cpuid_l3_not_visible`: sweeps
    /// and headlines follow the read curve), and any other level whose
    /// measured size is more than 2× off CPUID's. A last level that only
    /// the latency curve ends early is `info`'s to explain (latency records
    /// follow it), not a warning on every run.
    pub fn cache_warnings(&self) -> Vec<Warning> {
        let last = self.data_caches().map(|c| c.level).max();
        let mib = |b: u64| b as f64 / (1 << 20) as f64;
        let mut out = Vec::new();
        for c in self.data_caches() {
            let bw = self.boundary(c, Curve::Bandwidth);
            if Some(c.level) == last {
                if bw < c.size_bytes {
                    out.push(Warning::CpuidL3NotVisible {
                        level: c.level,
                        cpuid_bytes: c.size_bytes,
                        measured_bytes: bw,
                    });
                }
                continue;
            }
            let lat = self.boundary(c, Curve::Latency);
            let (curve, measured) = if lat != c.size_bytes {
                ("latency", lat)
            } else if bw != c.size_bytes {
                ("read bandwidth", bw)
            } else {
                continue;
            };
            out.push(Warning::Other {
                message: format!(
                    "CPUID says L{} is {:.2} MiB but the {curve} curve ends it at {:.2} MiB; regimes use the measured size",
                    c.level,
                    mib(c.size_bytes),
                    mib(measured)
                ),
                hint: "re-measure on a quiet machine with `bwscope info --probe-knees`".into(),
            });
        }
        out
    }

    /// The ceiling for `op` at `width_bits` at the run's clock, GB/s, if
    /// known.
    pub fn ceiling(&self, op: &str, width_bits: u32) -> Option<f64> {
        self.ceilings
            .iter()
            .find(|c| c.op == op && c.width_bits == width_bits)
            .and_then(|c| c.gbps)
    }

    /// L1 bytes per cycle of `op` on one core at `width_bits`, or with
    /// `None` at the widest path the core has (for code that picks its own
    /// width); None when the core is unknown. Runs from before the table
    /// carry only `ceilings`.
    pub fn l1_bytes_per_cycle(&self, op: &str, width_bits: Option<u32>) -> Option<f64> {
        if let Some(m) = &self.uarch {
            let row = m.row.as_ref()?;
            return match width_bits {
                Some(w) => row.bytes_per_cycle(op, w),
                None => row.widest_bytes_per_cycle(op),
            };
        }
        self.ceilings
            .iter()
            .filter(|c| c.op == op && width_bits.is_none_or(|w| c.width_bits == w))
            .filter_map(|c| c.bytes_per_cycle)
            .max_by(f64::total_cmp)
    }

    /// [`Host::l1_bytes_per_cycle`] at a clock of `hz`, GB/s.
    pub fn ceiling_at(&self, op: &str, width_bits: Option<u32>, hz: f64) -> Option<f64> {
        self.l1_bytes_per_cycle(op, width_bits)
            .map(|bpc| bpc * hz / 1e9)
    }

    /// The NUMA node of `cpu`, if known.
    pub fn node_of(&self, cpu: u32) -> Option<u32> {
        self.cpus.iter().find(|c| c.id == cpu).map(|c| c.node)
    }
}

/// AArch64 features are left out of x86 runs (all false there), so runs
/// from before them round-trip unchanged.
fn is_false(b: &bool) -> bool {
    !*b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regimes_follow_cache_sizes() {
        let mut h = Host::default();
        for (level, size) in [(1u8, 32u64 << 10), (2, 512 << 10), (3, 32 << 20)] {
            let kind = if level == 1 { "data" } else { "unified" };
            let shared = if level == 3 { vec![0, 1] } else { vec![0] };
            h.caches
                .push(Cache::new(level, kind, size, 64, shared, "test".into()));
        }
        for curve in [Curve::Bandwidth, Curve::Latency] {
            assert_eq!(h.regime(16 << 10, 1, curve), "L1");
            assert_eq!(h.regime(256 << 10, 1, curve), "L2");
            assert_eq!(h.regime(8 << 20, 1, curve), "L3");
            assert_eq!(h.regime(20 << 20, 2, curve), "DRAM");
            assert_eq!(h.regime(1 << 30, 1, curve), "DRAM");
            assert_eq!(h.llc_size(curve), Some(32 << 20));
        }
    }

    #[test]
    fn clock_probe_rules() {
        // Agreeing chains: the add chain's reading, no warning.
        let p = ClockProbe::from_chains(3.40e9, 3.39e9, 10);
        assert_eq!(p.hz, Some(3.40e9));
        assert!(p.warnings().is_empty());
        // A folded immediate add (issue 15): the lower, and a warning.
        let p = ClockProbe::from_chains(21.2e9, 3.45e9, 10);
        assert_eq!(p.hz, Some(3.45e9));
        assert!(matches!(p.warnings()[..], [Warning::ClockDisagree { .. }]));
        // Both fooled: no clock, and it says so.
        let p = ClockProbe::from_chains(21.2e9, 21.0e9, 10);
        assert_eq!(p.hz, None);
        assert!(matches!(
            p.warnings()[..],
            [Warning::ClockImplausible { .. }]
        ));
        let p = ClockProbe::from_chains(0.0, 0.0, 1);
        assert_eq!(p.hz, None);
    }
}
