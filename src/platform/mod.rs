//! What machine this is: CPU, ISA features, caches, topology, environment,
//! measured clock, and the per-core ceilings those imply.

pub mod clock;
pub mod cpu;
pub mod env;
pub mod topology;

use serde::{Deserialize, Serialize};

pub use cpu::Features;
pub use topology::{Cache, Cpu, Node};

/// Everything `bwscope info` shows; stored as `host` in every run.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct Host {
    pub cpu: cpu::CpuIdent,
    pub features: Features,
    pub caches: Vec<Cache>,
    pub cpus: Vec<Cpu>,
    /// Cpus this process may run on.
    pub allowed_cpus: Vec<u32>,
    pub physical_cores: usize,
    pub nodes: Vec<Node>,
    pub env: env::Environment,
    /// Measured core clock (dependent-add chain), Hz; null if not measured.
    pub clock_hz: Option<f64>,
    /// Per-core L1 ceilings at the measured clock, GB/s.
    pub ceilings: Vec<Ceiling>,
}

/// An upper bound on one op at one width for one core, from the core's
/// loads/stores per cycle and the measured clock.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Ceiling {
    pub op: String,
    pub width_bits: u32,
    pub bytes_per_cycle: f64,
    pub gbps: f64,
}

impl Host {
    /// Detect the machine. Measuring the clock takes ~0.2 s.
    pub fn detect(measure_clock: bool) -> Host {
        let ident = cpu::ident();
        let features = Features::detect();
        let nodes = topology::nodes();
        let cpus = topology::cpus(&nodes);
        let allowed = topology::allowed_cpus();
        let first = allowed.first().copied().unwrap_or(0);
        let caches = topology::merge_caches(&cpu::cpuid_caches(), &topology::sysfs_caches(first));
        let mut cores: Vec<(u32, u32)> = cpus.iter().map(|c| (c.package, c.core)).collect();
        cores.sort_unstable();
        cores.dedup();
        let clock_hz = measure_clock.then(|| clock::measure(1000).best_hz);
        let mut host = Host {
            cpu: ident,
            features,
            caches,
            physical_cores: cores.len().max(1),
            cpus,
            allowed_cpus: allowed,
            nodes,
            env: env::Environment::detect(),
            clock_hz,
            ceilings: Vec::new(),
        };
        if let Some(hz) = clock_hz {
            host.ceilings = ceilings(&host, hz);
        }
        host
    }

    /// Size of the data/unified cache at `level`, bytes.
    pub fn cache_size(&self, level: u8) -> Option<u64> {
        self.caches
            .iter()
            .find(|c| c.level == level && c.kind != "instruction")
            .map(|c| c.size_bytes)
    }

    /// The last-level cache size (the largest level present).
    pub fn llc_size(&self) -> Option<u64> {
        self.caches
            .iter()
            .filter(|c| c.kind != "instruction")
            .max_by_key(|c| c.level)
            .map(|c| c.size_bytes)
    }

    /// The regime a per-thread working set of `bytes` falls in. `threads`
    /// buffers share caches that more than one cpu shares.
    pub fn regime(&self, bytes: u64, threads: u32) -> String {
        for c in self
            .caches
            .iter()
            .filter(|c| c.kind != "instruction")
        {
            let sharers = (c.shared_cpus.len() as u64).clamp(1, threads.max(1) as u64);
            if bytes * sharers <= c.size_bytes {
                return format!("L{}", c.level);
            }
        }
        "DRAM".into()
    }

    /// The ceiling for `op` at `width_bits`, GB/s, if known.
    pub fn ceiling(&self, op: &str, width_bits: u32) -> Option<f64> {
        self.ceilings
            .iter()
            .find(|c| c.op == op && c.width_bits == width_bits)
            .map(|c| c.gbps)
    }
}

/// Loads and stores per cycle the core sustains from L1 at a width.
///
/// Zen 3 (AMD family 0x19): 3 loads/cycle of which 2 may be vector, 2
/// stores/cycle of up to 64 bit and 1 of 256 bit (AMD SOG for family 19h,
/// §2.11). Intel since Ice Lake: 2 loads + 2 stores. For unknown cores we
/// take the generous end so a ceiling is never below reality: it only
/// serves to flag impossible results.
pub fn per_cycle(host_vendor: &str, family: u32, width_bits: u32) -> (f64, f64) {
    let amd = host_vendor.contains("AMD");
    let loads = if width_bits <= 64 && (amd && family >= 0x17) { 3.0 } else { 2.0 };
    let stores = match width_bits {
        0..=64 => 2.0,
        // Zen 3's 128-bit store rate is not documented; 2 is the
        // generous bound.
        65..=128 => 2.0,
        129..=256 => {
            if amd {
                1.0
            } else {
                2.0
            }
        }
        // Zen 4 splits a 512-bit access into two 256-bit halves: one
        // 512-bit load and half a 512-bit store per cycle.
        _ => {
            if amd {
                0.5
            } else {
                1.0
            }
        }
    };
    let loads = if width_bits > 256 && amd { 1.0 } else { loads };
    (loads, stores)
}

fn ceilings(host: &Host, hz: f64) -> Vec<Ceiling> {
    let mut widths = vec![32u32, 64];
    if host.features.sse2 {
        widths.push(128);
    }
    if host.features.avx {
        widths.push(256);
    }
    if host.features.avx512f {
        widths.push(512);
    }
    let mut out = Vec::new();
    for w in widths {
        let (l, s) = per_cycle(&host.cpu.vendor, host.cpu.family, w);
        let bytes = w as f64 / 8.0;
        for (op, bpc) in [
            ("read", l * bytes),
            ("write", s * bytes),
            // A copy moves one load and one store per pair; both count.
            ("copy", l.min(s) * bytes * 2.0),
        ] {
            out.push(Ceiling {
                op: op.into(),
                width_bits: w,
                bytes_per_cycle: bpc,
                gbps: bpc * hz / 1e9,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zen3_ceilings_match_the_documented_limits() {
        // 2 × 32 B loads, 1 × 32 B store per cycle at 256 bit.
        assert_eq!(per_cycle("AuthenticAMD", 0x19, 256), (2.0, 1.0));
        assert_eq!(per_cycle("AuthenticAMD", 0x19, 64), (3.0, 2.0));
    }

    #[test]
    fn regimes_follow_cache_sizes() {
        let mut h = Host::default();
        for (level, size) in [(1u8, 32u64 << 10), (2, 512 << 10), (3, 32 << 20)] {
            h.caches.push(Cache {
                level,
                kind: if level == 1 { "data".into() } else { "unified".into() },
                size_bytes: size,
                line_bytes: 64,
                shared_cpus: if level == 3 { vec![0, 1] } else { vec![0] },
                source: "test".into(),
            });
        }
        assert_eq!(h.regime(16 << 10, 1), "L1");
        assert_eq!(h.regime(256 << 10, 1), "L2");
        assert_eq!(h.regime(8 << 20, 1), "L3");
        assert_eq!(h.regime(20 << 20, 2), "DRAM");
        assert_eq!(h.regime(1 << 30, 1), "DRAM");
        assert_eq!(h.llc_size(), Some(32 << 20));
    }
}
