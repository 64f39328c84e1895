//! What machine this is: CPU, ISA features, caches, topology, environment,
//! measured clock, and the per-core ceilings those imply.

pub mod clock;
pub mod cpu;
pub mod dram;
pub mod env;
pub mod knee_store;
pub mod knees;
pub mod smbios;
pub mod topology;
pub mod uarch;

use crate::model::{Ceiling, Host};

/// Detect the machine, with the measured cache sizes of this host's stored
/// knee probe where there is one. Measuring the clock takes ~0.15 s.
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
    let uarch = uarch::identify(&uarch::Facts {
        vendor: &ident.vendor,
        family: ident.family,
        model: ident.model,
        features: &cpu::detect_raw(),
        caches: &caches,
    });
    let clock = measure_clock.then(clock::measure);
    let mut host = Host {
        cpu: ident,
        features,
        caches,
        physical_cores: cores.len().max(1),
        cpus,
        allowed_cpus: allowed,
        nodes,
        env: env::detect(),
        clock_hz: clock.and_then(|c| c.hz),
        clock,
        uarch: Some(uarch),
        ceilings: Vec::new(),
        knees: None,
        dram: Some(match dram::stated_peak() {
            Some(g) => smbios::detect().with_stated(g),
            None => smbios::detect(),
        }),
    };
    host.ceilings = ceilings(&host);
    // What an earlier knee probe measured here (`bwscope info
    // --probe-knees`, the survey): regimes follow it from the first run on.
    knee_store::apply_stored(&mut host);
    host
}

/// Per-core L1 ceilings for every op at every width this CPU has (after
/// `BWSCOPE_DISABLE_ISA`), from the matched row at the run's clock; the
/// numbers are null when the core or the clock is unknown.
fn ceilings(host: &Host) -> Vec<Ceiling> {
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
        for op in ["read", "write", "copy"] {
            let bpc = host.l1_bytes_per_cycle(op, Some(w));
            out.push(Ceiling {
                op: op.into(),
                width_bits: w,
                bytes_per_cycle: bpc,
                gbps: bpc.zip(host.clock_hz).map(|(b, hz)| b * hz / 1e9),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Features, UarchMatch};

    fn host(vendor: &str, family: u32, model: u32, features: Features, hz: Option<f64>) -> Host {
        let mut h = Host {
            features: features.clone(),
            clock_hz: hz,
            ..Host::default()
        };
        h.cpu.vendor = vendor.into();
        h.uarch = Some(uarch::identify(&uarch::Facts {
            vendor,
            family,
            model,
            features: &features,
            caches: &[],
        }));
        h.ceilings = ceilings(&h);
        h
    }

    fn all() -> Features {
        Features {
            sse2: true,
            avx: true,
            avx2: true,
            avx512f: true,
            ..Features::default()
        }
    }

    #[test]
    fn ceilings_follow_the_matched_row_and_the_clock() {
        // Zen 4 at 3 GHz: 2 × 32 B loads, 1 × 32 B store; zmm split.
        let z = host("AuthenticAMD", 0x19, 0x11, all(), Some(3e9));
        assert_eq!(z.ceiling("read", 256), Some(192.0));
        assert_eq!(z.ceiling("write", 256), Some(96.0));
        assert_eq!(z.ceiling("copy", 256), Some(192.0));
        assert_eq!(z.ceiling("read", 512), Some(192.0));
        assert_eq!(z.ceiling("write", 512), Some(96.0));
        assert_eq!(z.ceiling("read", 64), Some(72.0)); // 3 × 8 B
                                                       // Sapphire Rapids at 3.5 GHz: 3 × 32 B or 2 × 64 B loads, 64 B of
                                                       // stores per cycle.
        let spr = Features {
            amx_tile: true,
            ..all()
        };
        let g = host("GenuineIntel", 6, 0x8F, spr, Some(3.5e9));
        assert_eq!(g.ceiling("read", 256), Some(336.0));
        assert_eq!(g.ceiling("read", 512), Some(448.0));
        assert_eq!(g.ceiling("write", 256), Some(224.0));
        assert_eq!(g.ceiling("write", 512), Some(224.0));
        // Skylake-SP: one store per cycle at any width.
        let s = host("GenuineIntel", 6, 0x55, all(), Some(2e9));
        assert_eq!(s.ceiling("write", 256), Some(64.0));
        assert_eq!(s.ceiling("write", 512), Some(128.0));
        assert_eq!(s.ceiling("read", 512), Some(256.0));
    }

    #[test]
    fn unknown_core_or_clock_gives_null_ceilings() {
        let h = host("CentaurHauls", 6, 0x0F, all(), Some(3e9));
        assert!(!h.ceilings.is_empty());
        assert!(h
            .ceilings
            .iter()
            .all(|c| c.gbps.is_none() && c.bytes_per_cycle.is_none()));
        assert_eq!(h.ceiling("read", 256), None);
        let json = serde_json::to_value(&h).unwrap();
        assert!(json["uarch"]["row"].is_null());
        assert!(json["ceilings"][0]["gbps"].is_null());
        // A known core without a clock: bytes per cycle, no GB/s.
        let z = host("AuthenticAMD", 0x19, 0x11, all(), None);
        assert_eq!(z.l1_bytes_per_cycle("read", Some(256)), Some(64.0));
        assert_eq!(z.ceiling("read", 256), None);
    }

    #[test]
    fn widths_follow_the_visible_features() {
        let mut f = all();
        f.avx512f = false; // as BWSCOPE_DISABLE_ISA=avx512f leaves it
        let z = host("AuthenticAMD", 0x19, 0x11, f, Some(3e9));
        assert!(z.ceilings.iter().all(|c| c.width_bits <= 256));
        // The core is still a Zen 4: its widest path is known.
        assert_eq!(
            z.uarch
                .as_ref()
                .and_then(|m: &UarchMatch| m.row.as_ref())
                .map(|r| r.id.as_str()),
            Some("zen4")
        );
    }
}
