//! Identification from synthetic CPUID facts: every row, the masked
//! Firecracker guests, and cores the table does not know.

use super::*;

fn cache(level: u8, kind: &str, size: u64) -> Cache {
    Cache::new(level, kind, size, 64, vec![0], "test".into())
}

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;

/// A typical cache geometry: (L1I, L1D, L2, L3).
fn caches(l1i: u64, l1d: u64, l2: u64, l3: u64) -> Vec<Cache> {
    vec![
        cache(1, "data", l1d),
        cache(1, "instruction", l1i),
        cache(2, "unified", l2),
        cache(3, "unified", l3),
    ]
}

fn avx512() -> Features {
    Features {
        sse2: true,
        avx: true,
        avx2: true,
        avx512f: true,
        avx512bw: true,
        ..Features::default()
    }
}

fn avx2() -> Features {
    Features {
        avx512f: false,
        avx512bw: false,
        ..avx512()
    }
}

fn id(vendor: &str, family: u32, model: u32, features: &Features, caches: &[Cache]) -> UarchMatch {
    identify(&Facts {
        vendor,
        family,
        model,
        features,
        caches,
    })
}

fn row_id(m: &UarchMatch) -> Option<&str> {
    m.row.as_ref().map(|r| r.id.as_str())
}

#[test]
fn every_row_is_reached_by_its_models() {
    let geo = caches(32 * KIB, 48 * KIB, 2 * MIB, 105 * MIB);
    let icx = Features {
        avx512_vbmi2: true,
        ..avx512()
    };
    let spr = Features {
        avx512_vbmi2: true,
        avx512_fp16: true,
        amx_tile: true,
        ..avx512()
    };
    let gnr = Features {
        amx_fp16: true,
        ..spr.clone()
    };
    let zen5 = Features {
        avx_vnni: true,
        movdir64b: true,
        ..avx512()
    };
    let cases: &[(&str, u32, u32, &Features, &str)] = &[
        (INTEL, 6, 0x55, &avx512(), "skylake"), // Skylake-SP / Cascade Lake
        (INTEL, 6, 0x5E, &avx2(), "skylake"),   // client Skylake
        (INTEL, 6, 0x6A, &icx, "sunny-cove"),   // Ice Lake-SP
        (INTEL, 6, 0x8C, &icx, "sunny-cove"),   // Tiger Lake
        (INTEL, 6, 0xA7, &icx, "sunny-cove"),   // a real Rocket Lake
        (INTEL, 6, 0x8F, &spr, "golden-cove"),  // Sapphire Rapids
        (INTEL, 6, 0xCF, &spr, "golden-cove"),  // Emerald Rapids
        (INTEL, 6, 0xAD, &gnr, "redwood-cove"), // Granite Rapids
        (INTEL, 6, 0xAA, &avx2(), "redwood-cove"), // Meteor Lake
        (INTEL, 6, 0xC6, &avx2(), "lion-cove"), // Arrow Lake
        (INTEL, 6, 0xBD, &avx2(), "lion-cove"), // Lunar Lake
        (AMD, 0x17, 0x31, &avx2(), "zen2"),     // Rome
        (AMD, 0x17, 0x71, &avx2(), "zen2"),     // Matisse
        (AMD, 0x19, 0x01, &avx2(), "zen3"),     // Milan
        (AMD, 0x19, 0x21, &avx2(), "zen3"),     // Vermeer
        (AMD, 0x19, 0x11, &avx512(), "zen4"),   // Genoa
        (AMD, 0x19, 0x61, &avx512(), "zen4"),   // Raphael
        (AMD, 0x19, 0xA0, &avx512(), "zen4"),   // Bergamo
        (AMD, 0x1A, 0x02, &zen5, "zen5"),       // Turin
        (AMD, 0x1A, 0x44, &zen5, "zen5"),       // Granite Ridge
    ];
    for &(v, fam, model, f, want) in cases {
        let m = id(v, fam, model, f, &geo);
        assert_eq!(row_id(&m), Some(want), "{v} {fam:#x}/{model:#x}: {m:?}");
        assert!(
            m.reason.contains(&format!("model {model:#x}")),
            "{}",
            m.reason
        );
        assert!(!m.reason.contains("masked"), "{}", m.reason);
    }
    // Every row of the table is reached by some case above.
    for r in ROWS {
        assert!(
            cases.iter().any(|c| c.4 == r.id),
            "row {} has no identification test",
            r.id
        );
    }
}

/// The guest of issue 15: Firecracker reports family 6 model 0xA7 (Rocket
/// Lake) on a Granite Rapids host; AMX and the 64 KiB L1I give it away.
#[test]
fn masked_firecracker_granite_rapids_guest() {
    let f = Features {
        avx512_vbmi2: true,
        avx512_fp16: true,
        amx_tile: true,
        ..avx512()
    };
    let geo = caches(64 * KIB, 48 * KIB, 2 * MIB, 480 * MIB);
    let m = id(INTEL, 6, 0xA7, &f, &geo);
    assert_eq!(row_id(&m), Some("redwood-cove"), "{m:?}");
    assert!(m.reason.contains("masked"), "{}", m.reason);
    assert!(m.reason.contains("64 KiB L1I"), "{}", m.reason);
    let r = m.row.unwrap();
    // 2 × 64 B zmm loads, 3 × 32 B ymm loads, 64 B/cycle of stores.
    assert_eq!(r.bytes_per_cycle("read", 512), Some(128.0));
    assert_eq!(r.bytes_per_cycle("read", 256), Some(96.0));
    assert_eq!(r.bytes_per_cycle("write", 512), Some(64.0));
    assert_eq!(r.bytes_per_cycle("write", 256), Some(64.0));
    // The same guest on Sapphire Rapids (32 KiB L1I): Golden Cove.
    let spr = id(
        INTEL,
        6,
        0xA7,
        &f,
        &caches(32 * KIB, 48 * KIB, 2 * MIB, 105 * MIB),
    );
    assert_eq!(row_id(&spr), Some("golden-cove"), "{spr:?}");
    // AMX-FP16 alone says Granite Rapids too, whatever the L1I.
    let gnr = Features {
        amx_fp16: true,
        ..f.clone()
    };
    let m = id(INTEL, 6, 0x8F, &gnr, &[]);
    assert_eq!(row_id(&m), Some("redwood-cove"), "{m:?}");
    assert!(m.reason.contains("AMX-FP16"), "{}", m.reason);
}

#[test]
fn features_decide_when_the_model_contradicts_them() {
    let geo = caches(32 * KIB, 32 * KIB, MIB, 32 * MIB);
    // A Zen 4 behind a Zen 3 model number.
    let m = id(AMD, 0x19, 0x01, &avx512(), &geo);
    assert_eq!(row_id(&m), Some("zen4"), "{m:?}");
    assert!(m.reason.contains("masked"));
    // A Zen 5 behind a Zen 4 model number.
    let zen5 = Features {
        avx_vnni: true,
        ..avx512()
    };
    assert_eq!(row_id(&id(AMD, 0x19, 0x11, &zen5, &geo)), Some("zen5"));
    // An Ice Lake behind a Skylake-SP model number.
    let icx = Features {
        avx512_vbmi2: true,
        ..avx512()
    };
    assert_eq!(row_id(&id(INTEL, 6, 0x55, &icx, &geo)), Some("sunny-cove"));
    // An unknown family-6 model with AMX: Golden Cove class.
    let amx = Features {
        amx_tile: true,
        ..avx512()
    };
    let m = id(INTEL, 6, 0xF0, &amx, &geo);
    assert_eq!(row_id(&m), Some("golden-cove"), "{m:?}");
    assert!(m.reason.contains("not in the table"), "{}", m.reason);
    // Hybrid parts say the row is the P-core's.
    let adl = Features {
        hybrid: true,
        ..avx2()
    };
    let m = id(INTEL, 6, 0x97, &adl, &geo);
    assert_eq!(row_id(&m), Some("golden-cove"));
    assert!(m.reason.contains("hybrid"), "{}", m.reason);
}

#[test]
fn unknown_cores_get_no_row_and_a_reason() {
    let geo = caches(32 * KIB, 32 * KIB, 512 * KIB, 8 * MIB);
    let cases: &[(&str, u32, u32, Features, &str)] = &[
        ("CentaurHauls", 6, 0x0F, avx2(), "vendor CentaurHauls"),
        ("HygonGenuine", 0x18, 0x00, avx2(), "vendor HygonGenuine"),
        ("", 0, 0, Features::default(), "vendor none"),
        (AMD, 0x17, 0x01, avx2(), "Zen / Zen+"),
        (AMD, 0x1A, 0x50, avx512(), "Zen 6"),
        (AMD, 0x1A, 0xE0, avx512(), "not in the table"),
        (INTEL, 6, 0x57, avx512(), "Knights Landing"),
        // Firecracker's T2 template (Haswell-EP): no row, no rule.
        (INTEL, 6, 0x3F, avx2(), "no feature rule"),
        // Diamond Rapids (family 19): AMX, but not Golden Cove.
        (
            INTEL,
            19,
            0x01,
            Features {
                amx_tile: true,
                ..avx512()
            },
            "not in the table",
        ),
    ];
    for (v, fam, model, f, why) in cases {
        let m = id(v, *fam, *model, f, &geo);
        assert_eq!(m.row, None, "{v} {fam:#x}/{model:#x}: {m:?}");
        assert!(m.reason.contains(why), "{}", m.reason);
    }
}

#[test]
fn the_table_is_well_formed() {
    for r in ROWS {
        assert!(!r.source.is_empty() && !r.name.is_empty(), "{}", r.id);
        assert!(r.l1.windows(2).all(|w| w[0].0 < w[1].0), "{}", r.id);
        assert!(
            r.l1.iter().all(|&(w, l, s)| w >= 64 && l > 0.0 && s > 0.0),
            "{}",
            r.id
        );
        assert_eq!(r.l1[0].0, 64, "{}: scalar accesses need a row", r.id);
        assert!(!r.models.is_empty(), "{}", r.id);
        // Every figure says how it is known, and only a null one is
        // `unknown`; an L3 figure names its source.
        let (l1, l2, l3) = r.below.basis;
        assert_ne!(l1, Basis::Unknown, "{}", r.id);
        assert_eq!(r.l2_to_l1.is_none(), l2 == Basis::Unknown, "{}", r.id);
        assert_eq!(
            r.below.l3_per_core.is_none(),
            l3 == Basis::Unknown,
            "{}",
            r.id
        );
        assert_eq!(
            r.below.l3_per_core.is_none(),
            r.below.l3_source.is_empty(),
            "{}",
            r.id
        );
    }
    // No model is claimed twice.
    for (i, a) in ROWS.iter().enumerate() {
        for b in &ROWS[i + 1..] {
            for &(fa, la, ha) in a.models {
                for &(fb, lb, hb) in b.models {
                    let overlap = fa == fb && la <= hb && lb <= ha && a.vendor == b.vendor;
                    assert!(!overlap, "{} and {} share models", a.id, b.id);
                }
            }
        }
    }
}
