//! The microarchitecture table: L1 loads and stores per cycle by width
//! (and L2→L1 fill where documented) for each core bwscope knows, and the
//! rules that pick a row from CPUID facts.
//!
//! Identification: vendor, then family/model (Linux `intel-family.h` and
//! `amd.c`'s Zen ranges). Hypervisors mask the model (a Firecracker guest
//! on Granite Rapids reports family 6 model 0xA7, Rocket Lake), so a row
//! whose cores lack a feature the CPU has is rejected and the features and
//! cache geometry decide: AMX-TILE or AVX512-FP16 → Golden Cove class,
//! plus AMX-FP16 or a 64 KiB L1I → Redwood Cove; AVX-512 with VBMI2 →
//! Sunny Cove; AVX-512 alone → Skylake-SP; on AMD, AVX-512 → Zen 4, with
//! AVX-VNNI or MOVDIR64B → Zen 5. A core no rule reaches has no row: its
//! ceilings are unknown, never guessed. AArch64 cores are identified by
//! MIDR instead (`uarch/arm.rs`, [`identify_arm`]). Each row names its
//! sources; `docs/uarch.md` explains the table and the rules, with the
//! public sources.

use crate::model::{Basis, Cache, Features, L1Rate, Uarch, UarchBasis, UarchMatch};

const INTEL: &str = "GenuineIntel";
const AMD: &str = "AuthenticAMD";

/// One row: the numbers, where they come from, and which CPUs it covers.
struct Row {
    id: &'static str,
    name: &'static str,
    /// (width bits, loads per cycle, stores per cycle), narrowest first.
    l1: &'static [(u32, f64, f64)],
    l2_to_l1: Option<f64>,
    source: &'static str,
    vendor: &'static str,
    /// (family, first model, last model) ranges; on ARM rows
    /// (implementer, first part, last part) MIDR ranges (`uarch/arm.rs`).
    models: &'static [(u32, u32, u32)],
    /// A feature no core of this row has, if the CPU shows one: then the
    /// family/model is not what the core is (a masked model).
    rules_out: fn(&Features) -> Option<&'static str>,
    /// Ceilings below L1 and how each figure is known.
    below: Below,
}

/// What bounds one core below L1, beyond `l2_to_l1`, and how each figure
/// of the row is known. A row with no L3 figure uses [`only`] (null,
/// nothing claimed); docs/schema.md (`host.uarch`) says how to fill one.
struct Below {
    /// Bytes per core cycle the L3 can deliver to one core, where
    /// documented; null where the path runs on another clock (Intel's mesh
    /// or ring) and no per-core figure in core cycles is published.
    l3_per_core: Option<f64>,
    /// Where the L3 figure comes from; empty when null.
    l3_source: &'static str,
    /// How the L1 rates, the L2→L1 figure and the L3 figure are known.
    basis: (Basis, Basis, Basis),
}

/// A row with no figure below L1 beyond `l2_to_l1`, whose L1 rates are
/// `l1` and L2→L1 figure `l2`.
const fn only(l1: Basis, l2: Basis) -> Below {
    Below {
        l3_per_core: None,
        l3_source: "",
        basis: (l1, l2, Basis::Unknown),
    }
}

/// The AMD CCX's L3 delivers 32 bytes per clock to each core (AMD, "Zen",
/// Hot Chips 29, 2017: 32 B/cycle L2↔L3; AMD software optimization guide,
/// family 17h), the core-complex interface Zen 3 to Zen 5 kept.
const CCX_L3: f64 = 32.0;
const CCX_L3_SOURCE: &str = "AMD, Zen (Hot Chips 29): 32 B/cycle L3→L2 per core; AMD software optimization guide, family 17h";

fn amx_or_fp16(f: &Features) -> Option<&'static str> {
    if f.amx_tile {
        Some("AMX-TILE")
    } else if f.avx512_fp16 {
        Some("AVX512-FP16")
    } else {
        None
    }
}

const ROWS: &[Row] = &[
    // Skylake server core: 2 loads + 1 store per cycle at any width up to
    // 512 bit, L2→L1 64 B/cycle peak (~45 sustained). Client Skylake and
    // its refreshes have the same load/store unit at up to 256 bit.
    // Sources: Intel Optimization Reference Manual (Skylake server
    // microarchitecture); AnandTech Skylake-X review p. 4 (SKX doubles
    // SKL's 2 × 32 B loads + 1 × 32 B store); kerncraft machine files
    // SkylakeSP_Gold-6148.yml, CascadelakeSP_Gold-6248_SNC.yml (measured
    // 106.6 and 110.0 B/cycle zmm load).
    Row {
        id: "skylake",
        name: "Skylake (Skylake-SP, Cascade Lake, Cooper Lake; client Skylake to Comet Lake)",
        l1: &[(64, 2.0, 1.0), (128, 2.0, 1.0), (256, 2.0, 1.0), (512, 2.0, 1.0)],
        l2_to_l1: Some(64.0),
        source: "Intel optimization manual (Skylake server); AnandTech Skylake-X review; kerncraft SKX 6148 / CLX 6248 (106.6 / 110.0 B/cycle measured)",
        vendor: INTEL,
        models: &[
            (6, 0x4E, 0x4E),
            (6, 0x5E, 0x5E),
            (6, 0x55, 0x55),
            (6, 0x8E, 0x8E),
            (6, 0x9E, 0x9E),
            (6, 0xA5, 0xA6),
        ],
        rules_out: |f| {
            amx_or_fp16(f).or(f.avx512_vbmi2.then_some("AVX512-VBMI2"))
        },
        below: only(Basis::Measured, Basis::Measured),
    },
    // Sunny Cove: 2 loads per cycle (2 × 64 B), 2 stores per cycle but
    // only to the same line, ≤ 64 B/cycle (so 1 × 64 B at 512 bit).
    // Willow Cove (Tiger Lake) and Cypress Cove (Rocket Lake, the Sunny
    // Cove core back-ported to 14 nm) keep its load/store unit [inferred
    // from Intel's descriptions of both as Sunny Cove derivatives].
    // Sources: Intel Optimization Reference Manual (Ice Lake client);
    // P. Cordes, "Load/stores per cycle for recent CPU architecture
    // generations" (Stack Overflow); kerncraft IcelakeSP_Platinum-8360Y.yml
    // (64 B/cycle L2 in its model).
    Row {
        id: "sunny-cove",
        name: "Sunny Cove (Ice Lake-SP/-D, Ice Lake client; Willow Cove: Tiger Lake; Cypress Cove: Rocket Lake)",
        l1: &[(64, 2.0, 2.0), (128, 2.0, 2.0), (256, 2.0, 2.0), (512, 2.0, 1.0)],
        l2_to_l1: Some(64.0),
        source: "Intel optimization manual (Ice Lake); P. Cordes' load/store-per-cycle table (Stack Overflow); kerncraft ICX 8360Y model",
        vendor: INTEL,
        models: &[
            (6, 0x6A, 0x6A),
            (6, 0x6C, 0x6C),
            (6, 0x7D, 0x7E),
            (6, 0x8C, 0x8D),
            (6, 0xA7, 0xA7),
        ],
        rules_out: amx_or_fp16,
        below: only(Basis::Documented, Basis::Documented),
    },
    // Golden Cove and Raptor Cove ("nearly the same"): 3 loads per cycle
    // up to 256 bit or 2 × 512-bit, 2 stores per cycle up to 256 bit or
    // 1 × 512-bit; L2→L1 64 B/cycle peak (49.8 measured). Hybrid parts'
    // E-cores are slower: the row is the P-core's.
    // Sources: Chips and Cheese, "Popping the hood on Golden Cove" (2 ×
    // 512-bit loads per cycle); Intel Optimization Reference Manual
    // (Golden Cove: 3 loads + 2 stores per cycle); kerncraft
    // SapphireRapids_Platinum-8470.yml (measured 120.8 B/cycle zmm load,
    // 125.8 B/cycle copy).
    Row {
        id: "golden-cove",
        name: "Golden Cove / Raptor Cove (Sapphire Rapids, Emerald Rapids; Alder Lake, Raptor Lake P-cores)",
        l1: &[(64, 3.0, 2.0), (128, 3.0, 2.0), (256, 3.0, 2.0), (512, 2.0, 1.0)],
        l2_to_l1: Some(64.0),
        source: "Chips and Cheese, Popping the hood on Golden Cove; Intel optimization manual (Golden Cove); kerncraft SPR 8470 (120.8 B/cycle load, 125.8 copy measured)",
        vendor: INTEL,
        models: &[
            (6, 0x8F, 0x8F),
            (6, 0xCF, 0xCF),
            (6, 0x97, 0x97),
            (6, 0x9A, 0x9A),
            (6, 0xB7, 0xB7),
            (6, 0xBA, 0xBA),
            (6, 0xBF, 0xBF),
        ],
        rules_out: |f| f.amx_fp16.then_some("AMX-FP16"),
        below: only(Basis::Measured, Basis::Measured),
    },
    // Redwood Cove: no major change to Golden Cove's load/store unit, so
    // its rates [inferred]; L1I 64 KB, L1D 48 KB, L2 2 MB (GNR).
    // Sources: Chips and Cheese, "Intel's Redwood Cove: baby steps are
    // still steps"; TechPowerUp on Xeon 6900P (64 KB L1I + 48 KB L1D,
    // 2 MB L2, AMX-FP16). Arrow Lake-U (0xB5) is Meteor Lake's die.
    Row {
        id: "redwood-cove",
        name: "Redwood Cove (Granite Rapids; Meteor Lake, Arrow Lake-U P-cores)",
        l1: &[(64, 3.0, 2.0), (128, 3.0, 2.0), (256, 3.0, 2.0), (512, 2.0, 1.0)],
        l2_to_l1: Some(64.0),
        source: "Chips and Cheese, Intel's Redwood Cove (load/store unit as Golden Cove's, rates inferred from it); TechPowerUp Xeon 6900P (64 KB L1I, AMX-FP16)",
        vendor: INTEL,
        models: &[
            (6, 0xAD, 0xAE),
            (6, 0xAA, 0xAA),
            (6, 0xAC, 0xAC),
            (6, 0xB5, 0xB5),
        ],
        rules_out: |_| None,
        below: only(Basis::Inferred, Basis::Inferred),
    },
    // Lion Cove: no AVX-512; a third store AGU; a 48 KB "L0" (4 cycles)
    // before a 192 KB "L1" (9 cycles), so no L2→L1 figure applies. Rates
    // [inferred]: Golden Cove's 3 × 32 B loads and 2 × 32 B stores.
    // Sources: AnandTech, "Intel Lunar Lake architecture deep dive" p. 2;
    // Chips and Cheese, "Lion Cove: Intel's P-core roars".
    Row {
        id: "lion-cove",
        name: "Lion Cove (Lunar Lake, Arrow Lake P-cores)",
        l1: &[(64, 3.0, 2.0), (128, 3.0, 2.0), (256, 3.0, 2.0)],
        l2_to_l1: None,
        source: "AnandTech Lunar Lake deep dive (L0/L1/L2, third store AGU); rates inferred from Golden Cove (not measured)",
        vendor: INTEL,
        models: &[(6, 0xBD, 0xBD), (6, 0xC5, 0xC6)],
        rules_out: |f| {
            amx_or_fp16(f).or(f.avx512f.then_some("AVX-512"))
        },
        below: only(Basis::Inferred, Basis::Unknown),
    },
    // Zen 2: 2 loads + 1 store per cycle, 256-bit datapaths; L2→L1
    // 32 B/cycle. Models: Linux arch/x86/kernel/cpu/amd.c (ZEN2 ranges).
    // Sources: AMD Software Optimization Guide for family 17h models 30h+;
    // kerncraft Zen2_EPYC-7452.yml (measured 58.9 B/cycle load, L2 31.8).
    Row {
        id: "zen2",
        name: "Zen 2 (Rome, Matisse, Renoir, …)",
        l1: &[(64, 2.0, 1.0), (128, 2.0, 1.0), (256, 2.0, 1.0)],
        l2_to_l1: Some(32.0),
        source: "AMD software optimization guide, family 17h models 30h+; kerncraft EPYC 7452 (58.9 B/cycle load, 31.8 L2 measured)",
        vendor: AMD,
        models: &[
            (0x17, 0x30, 0x4F),
            (0x17, 0x60, 0x7F),
            (0x17, 0x90, 0x91),
            (0x17, 0xA0, 0xAF),
        ],
        rules_out: |f| f.avx512f.then_some("AVX-512"),
        below: Below {
            l3_per_core: Some(CCX_L3),
            l3_source: CCX_L3_SOURCE,
            basis: (Basis::Measured, Basis::Measured, Basis::Documented),
        },
    },
    // Zen 3: 3 loads + 2 stores per cycle for GPRs, 2 loads + 1 store for
    // vectors of any width up to 256 bit. L2→L1 not in our sources.
    // Sources: AMD Software Optimization Guide for family 19h §2.11;
    // P. Cordes' load/store-per-cycle table. Models: Linux amd.c (ZEN3).
    Row {
        id: "zen3",
        name: "Zen 3 (Milan, Vermeer, Cezanne, …)",
        l1: &[(64, 3.0, 2.0), (128, 2.0, 1.0), (256, 2.0, 1.0)],
        l2_to_l1: None,
        source: "AMD software optimization guide, family 19h; P. Cordes' load/store-per-cycle table (Stack Overflow)",
        vendor: AMD,
        models: &[(0x19, 0x00, 0x0F), (0x19, 0x20, 0x5F)],
        rules_out: |f| f.avx512f.then_some("AVX-512"),
        below: Below {
            l3_per_core: Some(CCX_L3),
            l3_source: CCX_L3_SOURCE,
            basis: (Basis::Documented, Basis::Unknown, Basis::Inferred),
        },
    },
    // Zen 4: as Zen 3, plus AVX-512 split into 256-bit halves: one 512-bit
    // load per cycle, one 512-bit store every other cycle (two store-queue
    // entries); L2→L1 32 B/cycle.
    // Sources: AMD Software Optimization Guide for family 19h; Chips and
    // Cheese, "AMD's Zen 4 part 2: memory subsystem"; AIDA64 on a 7600X
    // (≈ 64 / 32 / 64 B/cycle read / write / copy). Models: Linux amd.c.
    Row {
        id: "zen4",
        name: "Zen 4 (Genoa, Bergamo, Raphael, Phoenix, …)",
        l1: &[(64, 3.0, 2.0), (128, 2.0, 1.0), (256, 2.0, 1.0), (512, 1.0, 0.5)],
        l2_to_l1: Some(32.0),
        source: "AMD software optimization guide, family 19h; Chips and Cheese, Zen 4 part 2; AIDA64 7600X (64 / 32 / 64 B/cycle)",
        vendor: AMD,
        models: &[(0x19, 0x10, 0x1F), (0x19, 0x60, 0xAF)],
        rules_out: |f| {
            if f.avx_vnni {
                Some("AVX-VNNI")
            } else {
                f.movdir64b.then_some("MOVDIR64B")
            }
        },
        below: Below {
            l3_per_core: Some(CCX_L3),
            l3_source: CCX_L3_SOURCE,
            basis: (Basis::Measured, Basis::Measured, Basis::Inferred),
        },
    },
    // Zen 5 (desktop/server): GPRs 4 loads, or 2 loads + 2 stores, per
    // cycle; vectors 2 loads per cycle up to 512 bit and 64 B/cycle of
    // stores (a 512-bit store is two 256-bit halves); L2→L1 64 B/cycle.
    // Mobile Strix Point's narrower FPU may differ.
    // Sources: AMD Software Optimization Guide for family 1Ah (#58455);
    // Agner Fog, microarchitecture manual (Zen 5); numberworld.org Zen 5
    // AVX-512 teardown; AIDA64 on a 9600X (≈ 116 / 58 / 116 B/cycle).
    // Models: Linux amd.c (ZEN5 ranges).
    Row {
        id: "zen5",
        name: "Zen 5 (Turin, Granite Ridge, Strix, …)",
        l1: &[(64, 4.0, 2.0), (128, 2.0, 2.0), (256, 2.0, 2.0), (512, 2.0, 1.0)],
        l2_to_l1: Some(64.0),
        source: "AMD software optimization guide, family 1Ah (#58455); Agner Fog (Zen 5); AIDA64 9600X (116 / 58 / 116 B/cycle)",
        vendor: AMD,
        models: &[(0x1A, 0x00, 0x2F), (0x1A, 0x40, 0x4F), (0x1A, 0x60, 0x7F)],
        rules_out: |_| None,
        below: Below {
            l3_per_core: Some(CCX_L3),
            l3_source: CCX_L3_SOURCE,
            basis: (Basis::Measured, Basis::Measured, Basis::Inferred),
        },
    },
];

/// Cores whose family/model is known but that have no row, so no feature
/// rule may guess one for them.
const NO_ROW: &[(&str, u32, u32, u32, &str)] = &[
    (AMD, 0x17, 0x00, 0x2F, "Zen / Zen+"),
    (AMD, 0x17, 0x50, 0x5F, "Zen / Zen+"),
    (AMD, 0x1A, 0x50, 0x5F, "Zen 6"),
    (AMD, 0x1A, 0x80, 0xAF, "Zen 6"),
    (AMD, 0x1A, 0xC0, 0xCF, "Zen 6"),
    (INTEL, 6, 0x57, 0x57, "Knights Landing"),
    (INTEL, 6, 0x85, 0x85, "Knights Mill"),
    (INTEL, 6, 0x66, 0x66, "Cannon Lake"),
];

/// The CPUID facts identification reads.
pub struct Facts<'a> {
    pub vendor: &'a str,
    pub family: u32,
    pub model: u32,
    /// As CPUID reports them, before `BWSCOPE_DISABLE_ISA`: hiding a
    /// feature from the kernels does not change which core this is.
    pub features: &'a Features,
    pub caches: &'a [Cache],
}

impl Facts<'_> {
    fn l1i_bytes(&self) -> Option<u64> {
        self.caches
            .iter()
            .find(|c| c.level == 1 && c.kind == "instruction")
            .map(|c| c.size_bytes)
    }
}

fn row(id: &str) -> &'static Row {
    ROWS.iter().find(|r| r.id == id).expect("row in table")
}

fn matched(r: &Row, reason: String) -> UarchMatch {
    UarchMatch {
        row: Some(Uarch {
            id: r.id.into(),
            name: r.name.into(),
            l1: r
                .l1
                .iter()
                .map(|&(w, l, s)| L1Rate {
                    width_bits: w,
                    loads_per_cycle: l,
                    stores_per_cycle: s,
                })
                .collect(),
            l2_to_l1_bytes_per_cycle: r.l2_to_l1,
            source: r.source.into(),
            l3_per_core_bytes_per_cycle: r.below.l3_per_core,
            l3_source: (!r.below.l3_source.is_empty()).then(|| r.below.l3_source.into()),
            basis: Some(UarchBasis {
                l1: r.below.basis.0,
                l2_to_l1: r.below.basis.1,
                l3_per_core: r.below.basis.2,
            }),
        }),
        reason,
    }
}

fn unknown(reason: String) -> UarchMatch {
    UarchMatch { row: None, reason }
}

/// The row the features and cache geometry point to when the model number
/// cannot be used, with the rule that chose it.
fn by_features(f: &Facts) -> Option<(&'static Row, String)> {
    let x = f.features;
    if f.vendor == INTEL {
        if let Some(sig) = amx_or_fp16(x) {
            if x.amx_fp16 {
                return Some((row("redwood-cove"), format!("{sig} + AMX-FP16")));
            }
            if f.l1i_bytes() == Some(64 << 10) {
                return Some((row("redwood-cove"), format!("{sig} + 64 KiB L1I")));
            }
            return Some((row("golden-cove"), format!("{sig} (Golden Cove class)")));
        }
        if x.avx512f && x.avx512_vbmi2 {
            return Some((row("sunny-cove"), "AVX-512 with VBMI2, no AMX".into()));
        }
        if x.avx512f {
            return Some((row("skylake"), "AVX-512 without VBMI2".into()));
        }
    } else if f.vendor == AMD {
        if x.avx512f && (x.avx_vnni || x.movdir64b) {
            let sig = if x.avx_vnni { "AVX-VNNI" } else { "MOVDIR64B" };
            return Some((row("zen5"), format!("AVX-512 + {sig}")));
        }
        if x.avx512f {
            return Some((row("zen4"), "AVX-512 without AVX-VNNI".into()));
        }
        if f.family == 0x19 {
            return Some((row("zen3"), "family 0x19 without AVX-512".into()));
        }
    }
    None
}

/// Identify the core: which row, and why (or why none).
pub fn identify(f: &Facts) -> UarchMatch {
    if f.vendor != INTEL && f.vendor != AMD {
        let v = if f.vendor.is_empty() {
            "none"
        } else {
            f.vendor
        };
        return unknown(format!(
            "vendor {v}: the table has Intel and AMD x86 cores only"
        ));
    }
    let short = if f.vendor == INTEL { "Intel" } else { "AMD" };
    let fm = format!("{short} family {:#x} model {:#x}", f.family, f.model);
    let in_range =
        |&(fam, lo, hi): &(u32, u32, u32)| f.family == fam && (lo..=hi).contains(&f.model);
    if let Some(&(_, _, _, _, what)) = NO_ROW
        .iter()
        .find(|&&(v, fam, lo, hi, _)| v == f.vendor && in_range(&(fam, lo, hi)))
    {
        return unknown(format!(
            "{fm} is {what}: no row in the table, ceilings unknown"
        ));
    }
    let hybrid = if f.features.hybrid {
        "; hybrid part: the row is the P-core's, E-cores are slower"
    } else {
        ""
    };
    let by_model = ROWS
        .iter()
        .find(|r| r.vendor == f.vendor && r.models.iter().any(in_range));
    let why_not_model = match by_model {
        Some(r) => match (r.rules_out)(f.features) {
            None => return matched(r, format!("{fm}{hybrid}")),
            Some(feat) => format!(
                "{fm} would be {} but the CPU has {feat}: the model is masked (hypervisor)",
                r.id
            ),
        },
        // Only where every core of the family with these features is in
        // the table: Intel family 6 and AMD family 0x19.
        None if (f.vendor == INTEL && f.family == 6) || (f.vendor == AMD && f.family == 0x19) => {
            format!("{fm} is not in the table")
        }
        None => return unknown(format!("{fm} is not in the table, ceilings unknown")),
    };
    match by_features(f) {
        Some((r, rule)) => matched(r, format!("{why_not_model}; by features: {rule}{hybrid}")),
        None => unknown(format!(
            "{why_not_model}; no feature rule applies, ceilings unknown"
        )),
    }
}

mod arm;
pub use arm::identify_arm;

#[cfg(test)]
mod tests;
