//! What machine this is: CPU, ISA features, caches, topology, environment,
//! measured clock, and the per-core ceilings those imply.

pub mod arm;
pub mod clock;
pub mod cpu;
pub mod dram;
pub mod env;
pub mod knee_store;
pub mod knees;
pub mod smbios;
pub mod tiers;
pub mod topology;
pub mod uarch;

use crate::model::{Cache, Ceiling, Host, UarchMatch};

/// Detect the machine, with the measured cache sizes of this host's stored
/// knee probe where there is one. Measuring the clock takes ~0.15 s.
pub fn detect_host(measure_clock: bool) -> Host {
    let ident = cpu::ident();
    let features = cpu::detect_features();
    let nodes = topology::nodes();
    let cpus = topology::cpus(&nodes);
    let allowed = topology::allowed_cpus();
    let first = allowed.first().copied().unwrap_or(0);
    let caches = caches(first);
    let mut cores: Vec<(u32, u32)> = cpus.iter().map(|c| (c.package, c.core)).collect();
    cores.sort_unstable();
    cores.dedup();
    let (arm, uarch) = identify(&ident, &caches, first);
    let clock = measure_clock.then(clock::measure).map(|mut c| {
        if emulation().is_some() {
            // An emulator's instructions per second are not a clock.
            c.hz = None;
        }
        c
    });
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
        arm,
        tiers: None,
    };
    host.tiers = Some(tiers::detect(&host.nodes, host.dram.as_ref()));
    host.ceilings = ceilings(&host);
    // What an earlier knee probe measured here (`bwscope info
    // --probe-knees`, the survey): regimes follow it from the first run on.
    knee_store::apply_stored(&mut host);
    host
}

/// Why times measured by this process say nothing about the hardware it
/// names, if they do not: it runs under an emulator (qemu-user), whose
/// `/proc` and `/sys` describe the emulator's host. Timing tests skip on
/// it; correctness tests do not.
pub fn emulation() -> Option<&'static str> {
    arm::foreign_files().or_else(crate::os::system::emulator)
}

/// For tests that time things: print one line and return true when the
/// times would be an emulator's ([`emulation`]).
pub fn skip_timing_test(test: &str) -> bool {
    match emulation() {
        Some(why) => {
            eprintln!("skipping {test}: timings under emulation mean nothing ({why})");
            true
        }
        None => false,
    }
}

/// For tests of what the emulator (qemu-user) does not implement (NUMA
/// policy syscalls, huge pages): print one line naming it and return true
/// under emulation. Native runs always test it.
pub fn skip_emulated(test: &str, lacking: &str) -> bool {
    match emulation() {
        Some(_) => {
            eprintln!("skipping {test}: the emulator does not implement {lacking}");
            true
        }
        None => false,
    }
}

/// The caches of `cpu`: CPUID's merged with sysfs on x86-64; on AArch64
/// sysfs alone, and only where its files describe this machine (levels
/// whose size firmware left out are dropped, never guessed).
fn caches(cpu: u32) -> Vec<Cache> {
    #[cfg(target_arch = "aarch64")]
    {
        if emulation().is_some() {
            return Vec::new();
        }
        let line = arm::detected().0.dcache_line_bytes;
        topology::sysfs_caches(cpu)
            .into_iter()
            .filter(|c| c.size_bytes > 0)
            .map(|mut c| {
                if c.line_bytes == 0 {
                    c.line_bytes = line;
                }
                c
            })
            .collect()
    }
    #[cfg(not(target_arch = "aarch64"))]
    topology::merge_caches(&cpu::cpuid_caches(), &topology::sysfs_caches(cpu))
}

/// The row of the microarchitecture table for the cpu this process starts
/// on, and on AArch64 the machine's ARM facts (each kind of core carries
/// its own row).
#[cfg(target_arch = "aarch64")]
fn identify(
    _ident: &crate::model::CpuIdent,
    _caches: &[Cache],
    first: u32,
) -> (Option<crate::model::ArmHost>, UarchMatch) {
    let a = arm::detected().0.clone();
    let mut m = a
        .kind_of(first)
        .or(a.core_kinds.first())
        .map(|k| k.uarch.clone())
        .unwrap_or_else(|| UarchMatch {
            row: None,
            reason: "no MIDR read".into(),
        });
    if a.heterogeneous() {
        m.reason.push_str(&format!(
            "; {} kinds of core: this is cpu {first}'s, each record is bounded by its own kind's row",
            a.core_kinds.len()
        ));
    }
    (Some(a), m)
}

#[cfg(not(target_arch = "aarch64"))]
fn identify(
    ident: &crate::model::CpuIdent,
    caches: &[Cache],
    _first: u32,
) -> (Option<crate::model::ArmHost>, UarchMatch) {
    let m = uarch::identify(&uarch::Facts {
        vendor: &ident.vendor,
        family: ident.family,
        model: ident.model,
        features: &cpu::detect_raw(),
        caches,
    });
    (None, m)
}

/// The access widths this CPU's kernels use (after `BWSCOPE_DISABLE_ISA`):
/// x86-64 32/64 and each vector width; AArch64 64, 128 (x pairs, q), 256
/// (q pairs) with NEON, and the SVE vector length.
fn widths(host: &Host) -> Vec<u32> {
    let f = &host.features;
    if let Some(arm) = &host.arm {
        let mut widths = vec![64u32, 128];
        if f.asimd {
            widths.push(256);
        }
        if let Some(vl) = arm.sve_vector_bits.filter(|_| f.sve) {
            widths.push(vl);
        }
        widths.sort_unstable();
        widths.dedup();
        return widths;
    }
    let mut widths = vec![32u32, 64];
    if f.sse2 {
        widths.push(128);
    }
    if f.avx {
        widths.push(256);
    }
    if f.avx512f {
        widths.push(512);
    }
    widths
}

/// Per-core L1 ceilings for every op at every width this CPU has (after
/// `BWSCOPE_DISABLE_ISA`), from the matched row at the run's clock; the
/// numbers are null when the core or the clock is unknown.
fn ceilings(host: &Host) -> Vec<Ceiling> {
    let mut out = Vec::new();
    for w in widths(host) {
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
