//! What machine this is: CPU, ISA features, caches, topology, environment,
//! measured clock, and the per-core ceilings those imply.

pub mod clock;
pub mod cpu;
pub mod env;
pub mod knee_store;
pub mod knees;
pub mod topology;

use crate::model::{Ceiling, Host};

/// Detect the machine, with the measured cache sizes of this host's stored
/// knee probe where there is one. Measuring the clock takes ~0.2 s.
pub fn detect_host(measure_clock: bool) -> Host {
    let ident = cpu::ident();
    let features = cpu::detect_features();
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
        env: env::detect(),
        clock_hz,
        ceilings: Vec::new(),
        knees: None,
    };
    if let Some(hz) = clock_hz {
        host.ceilings = ceilings(&host, hz);
    }
    // What an earlier knee probe measured here (`bwscope info
    // --probe-knees`, the survey): regimes follow it from the first run on.
    knee_store::apply_stored(&mut host);
    host
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
    let loads = if width_bits <= 64 && (amd && family >= 0x17) {
        3.0
    } else {
        2.0
    };
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
}
