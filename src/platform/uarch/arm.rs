//! The table's AArch64 rows and their identification by MIDR.
//!
//! ARM rows use the same `Row` as x86 ones with two fields read
//! differently: `vendor` is the implementer's name and `models` are
//! (implementer, first part, last part) ranges of `MIDR_EL1`; nothing rules
//! a row out (`rules_out` is never set: MIDR is not masked the way CPUID
//! family/model can be).
//!
//! Widths, as the kernels declare them (`kernels::arm`): 64 = `ldr`/`str`
//! x, 128 = one q register or an x pair (`ldp`/`stp` x, `ldr q`, each
//! register of `ld1 {…}`), 256 = `ldp`/`stp` q (two 128-bit accesses, so
//! half the 128-bit rate), and the SVE vector length where the core has
//! SVE (256 on V1, 512 on A64FX; V2 and N2 have 128-bit SVE). A row gives
//! loads and stores per cycle at each width; an unlisted narrower width
//! uses the next wider one.
//!
//! The rates are issue limits: how many load and store micro-ops of each
//! width the core's pipes accept per cycle, from Arm's Software
//! Optimization Guides as encoded in LLVM's scheduling models
//! (`llvm/lib/Target/AArch64/AArch64Sched*.td`), OSACA's port models and
//! the cores' reference manuals. Where a figure is derived rather than
//! stated it says `[inferred]`. Stores are counted so that a copy (one
//! load and one store per element) is bounded by the shared load/store
//! pipes: on cores whose two pipes do both, a store-only stream may issue
//! more than the row's stores.

use super::{matched, only, unknown, Row};
use crate::model::{Basis, Midr, UarchMatch};

/// Two load/store pipes of 128 bit (Cortex-A76, Neoverse N1): two loads,
/// or one load and one store, per cycle.
const TWO_LS: &[(u32, f64, f64)] = &[(64, 2.0, 1.0), (128, 2.0, 1.0), (256, 1.0, 0.5)];

/// Two load/store pipes and a load-only pipe, 128 bit (Cortex-A78/X1,
/// Neoverse N2, V2, Apple Firestorm): three loads and two stores per cycle.
const THREE_L_TWO_S: &[(u32, f64, f64)] = &[(64, 3.0, 2.0), (128, 3.0, 2.0), (256, 1.5, 1.0)];

/// One 64-bit load path and a 128-bit store path (Cortex-A53/A55).
const LITTLE: &[(u32, f64, f64)] = &[(64, 1.0, 1.0), (128, 0.5, 1.0), (256, 0.25, 0.5)];

const fn arm(
    id: &'static str,
    name: &'static str,
    vendor: &'static str,
    l1: &'static [(u32, f64, f64)],
    source: &'static str,
    models: &'static [(u32, u32, u32)],
) -> Row {
    Row {
        id,
        name,
        l1,
        l2_to_l1: None,
        source,
        vendor,
        models,
        rules_out: |_| None,
        // No L2→L1 or L3 figure for ARM cores yet: limits below L1 stay
        // unknown. The L1 rates are documented unless the source says
        // part of them is inferred.
        below: only(
            if mentions_inferred(source) {
                Basis::Inferred
            } else {
                Basis::Documented
            },
            Basis::Unknown,
        ),
    }
}

/// Whether a row's source marks a figure `[inferred]` (const: the rows are).
const fn mentions_inferred(source: &str) -> bool {
    let (s, w) = (source.as_bytes(), b"[inferred");
    let mut i = 0;
    while i + w.len() <= s.len() {
        let mut j = 0;
        while j < w.len() && s[i + j] == w[j] {
            j += 1;
        }
        if j == w.len() {
            return true;
        }
        i += 1;
    }
    false
}

pub(super) const ARM_ROWS: &[Row] = &[
    // In-order, one load/store pipe. The L1 read path is 64 bit: a q load
    // takes two cycles; stores go out 128 bit wide.
    arm(
        "cortex-a53",
        "Arm Cortex-A53 (Raspberry Pi 3, many phones' LITTLE cores)",
        "Arm",
        LITTLE,
        "Arm Cortex-A53 TRM (DDI 0500): 64-bit L1 read path; LLVM AArch64SchedA53.td (one load/store pipe); 128-bit store path [inferred from the TRM's write path]",
        &[(0x41, 0xd03, 0xd03)],
    ),
    // In-order; separate load and store pipes, vector loads 64 bit per
    // cycle (LLVM's model: LD1 of one q register = 2 cycles).
    arm(
        "cortex-a55",
        "Arm Cortex-A55 (LITTLE cores of DynamIQ phones and boards)",
        "Arm",
        LITTLE,
        "LLVM AArch64SchedA55.td (one load and one store pipe, vector loads 64 bit per cycle); store width as the A53's [inferred]",
        &[(0x41, 0xd05, 0xd05)],
    ),
    // One load pipe and one store pipe, 128 bit each.
    arm(
        "cortex-a72",
        "Arm Cortex-A72 (Raspberry Pi 4, Graviton 1)",
        "Arm",
        &[(64, 1.0, 1.0), (128, 1.0, 1.0), (256, 0.5, 0.5)],
        "Arm Cortex-A72 Software Optimization Guide (one load and one store pipeline); LLVM models it with AArch64SchedA57.td; 128 bit per access [inferred from the pipelines]",
        &[(0x41, 0xd08, 0xd08)],
    ),
    arm(
        "cortex-a76",
        "Arm Cortex-A76 (Raspberry Pi 5, phones' big cores)",
        "Arm",
        TWO_LS,
        "Arm Cortex-A76 Software Optimization Guide; the Neoverse N1 derives from it and shares its load/store unit: LLVM AArch64SchedNeoverseN1.td (2 load/store pipes, 2 store-data pipes), OSACA n1.yml (2 × 16 B loads, 1 × 16 B store per cycle)",
        &[(0x41, 0xd0b, 0xd0b), (0x41, 0xd0e, 0xd0e)],
    ),
    arm(
        "neoverse-n1",
        "Arm Neoverse N1 (AWS Graviton 2, Ampere Altra)",
        "Arm",
        TWO_LS,
        "Arm Neoverse N1 Software Optimization Guide via LLVM AArch64SchedNeoverseN1.td (2 load/store pipes, 2 store-data pipes); OSACA n1.yml (2 × 16 B loads, 1 × 16 B store per cycle)",
        &[(0x41, 0xd0c, 0xd0c)],
    ),
    // The A78 added a third, load-only address pipe to the A76/A77 pair;
    // the X1 is the A78 widened elsewhere (four 128-bit SIMD pipes).
    arm(
        "cortex-a78",
        "Arm Cortex-A78 (A78, A78AE, A78C)",
        "Arm",
        THREE_L_TWO_S,
        "AnandTech and Linley Group on the Cortex-A78 (a third, load-only AGU beside two load/store units); widths and stores per cycle [inferred] as Neoverse V1's NEON path, which derives from the X1",
        &[(0x41, 0xd41, 0xd42), (0x41, 0xd4b, 0xd4b)],
    ),
    arm(
        "cortex-x1",
        "Arm Cortex-X1 (X1, X1C)",
        "Arm",
        THREE_L_TWO_S,
        "Arm Cortex-X1 announcement (based on the A78: 2 load/store + 1 load AGU); widths and stores per cycle [inferred] as Neoverse V1's NEON path, which derives from the X1",
        &[(0x41, 0xd44, 0xd44), (0x41, 0xd4c, 0xd4c)],
    ),
    arm(
        "neoverse-n2",
        "Arm Neoverse N2 (Azure Cobalt 100, Alibaba Yitian 710)",
        "Arm",
        THREE_L_TWO_S,
        "Arm Neoverse N2 Software Optimization Guide via LLVM AArch64SchedNeoverseN2.td (2 load/store + 1 load pipes, 2 store-data pipes; SVE 128 bit)",
        &[(0x41, 0xd49, 0xd49)],
    ),
    // Three load pipes take NEON loads (LD1 of four q registers is four
    // micro-ops on any of them); SVE loads use the two load/store pipes
    // only, 256 bit each: 64 B/cycle with SVE, 48 with NEON. The 256-bit
    // row is SVE's; `ldp q` (two 128-bit accesses) reaches at most 48
    // B/cycle and is bounded by it loosely.
    arm(
        "neoverse-v1",
        "Arm Neoverse V1 (AWS Graviton 3)",
        "Arm",
        &[(64, 3.0, 2.0), (128, 3.0, 2.0), (256, 2.0, 1.0)],
        "Arm Neoverse V1 Software Optimization Guide via LLVM AArch64SchedNeoverseV1.td (load pipes L01 ×2 + L2, store data ×2; SVE LD1D on L01 only); 256-bit stores 1 per cycle [inferred]",
        &[(0x41, 0xd40, 0xd40)],
    ),
    arm(
        "neoverse-v2",
        "Arm Neoverse V2 (NVIDIA Grace, AWS Graviton 4, Google Axion)",
        "Arm",
        THREE_L_TWO_S,
        "Arm Neoverse V2 Software Optimization Guide via OSACA v2.yml (LDST ×2 + LD + ST ×2 ports, 3 × 16 B loads and 2 × 16 B stores per cycle, SVE 128 bit)",
        &[(0x41, 0xd4f, 0xd4f)],
    ),
    // M1 P-cores; the E-cores (Icestorm) have no row.
    arm(
        "apple-firestorm",
        "Apple Firestorm (M1, M1 Pro, M1 Max P-cores)",
        "Apple",
        THREE_L_TWO_S,
        "OSACA m1.yml, from Dougall Johnson's Firestorm measurements: 3 loads and 2 stores per cycle of up to 128 bit, at most 4 memory operations",
        &[(0x61, 0x023, 0x023), (0x61, 0x025, 0x025), (0x61, 0x029, 0x029)],
    ),
    // Two 512-bit loads or one 512-bit store per cycle (128 / 64 B), on
    // two load pipes; NEON accesses take the same pipes at 128 bit.
    arm(
        "a64fx",
        "Fujitsu A64FX (Fugaku; SVE 512 bit)",
        "Fujitsu",
        &[
            (64, 2.0, 1.0),
            (128, 2.0, 1.0),
            (256, 1.0, 0.5),
            (512, 2.0, 1.0),
        ],
        "Fujitsu A64FX Microarchitecture Manual (L1D: two 64 B loads or one 64 B store per cycle); NEON widths [inferred] from the two load pipes",
        &[(0x46, 0x001, 0x001)],
    ),
];

/// Identify an AArch64 core by its MIDR: a row, or none and its codes.
pub fn identify_arm(m: Midr) -> UarchMatch {
    let (imp, part) = m.core();
    let who = crate::platform::arm::midr::implementer_name(imp)
        .map_or(String::new(), |n| format!(" ({n})"));
    let what = format!(
        "MIDR {:#010x}: implementer {imp:#04x}{who}, part {part:#05x}",
        m.0
    );
    let hit = ARM_ROWS.iter().find(|r| {
        r.models
            .iter()
            .any(|&(i, lo, hi)| i == imp as u32 && (lo..=hi).contains(&(part as u32)))
    });
    match hit {
        Some(r) => matched(r, what),
        None => unknown(format!("{what} is not in the table, ceilings unknown")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_required_core_has_a_row_with_a_source() {
        for (midr, id) in [
            (0x410f_d034, "cortex-a53"),
            (0x412f_d050, "cortex-a55"),
            (0x410f_d083, "cortex-a72"),
            (0x414f_d0b1, "cortex-a76"),
            (0x413f_d0c1, "neoverse-n1"),
            (0x411f_d411, "cortex-a78"),
            (0x411f_d440, "cortex-x1"),
            (0x410f_d490, "neoverse-n2"),
            (0x411f_d401, "neoverse-v1"),
            (0x410f_d4f0, "neoverse-v2"),
            (0x611f_0231, "apple-firestorm"),
            (0x461f_0010, "a64fx"),
        ] {
            let m = identify_arm(Midr(midr));
            let row = m.row.unwrap_or_else(|| panic!("{midr:#x}: {}", m.reason));
            assert_eq!(row.id, id, "{midr:#x}");
            assert!(!row.source.is_empty());
            assert!(m.reason.contains(&format!("{midr:#010x}")), "{}", m.reason);
        }
    }

    #[test]
    fn rates_follow_the_pipes() {
        let row = |m| identify_arm(Midr(m)).row.unwrap();
        // N1: 2 × 16 B loads; a copy is one load + one store per cycle.
        let n1 = row(0x413f_d0c1);
        assert_eq!(n1.bytes_per_cycle("read", 128), Some(32.0));
        assert_eq!(n1.bytes_per_cycle("read", 256), Some(32.0));
        assert_eq!(n1.bytes_per_cycle("copy", 128), Some(32.0));
        // V2: 3 × 16 B loads, 2 × 16 B stores.
        let v2 = row(0x410f_d4f0);
        assert_eq!(v2.bytes_per_cycle("read", 128), Some(48.0));
        assert_eq!(v2.bytes_per_cycle("write", 256), Some(32.0));
        // V1: SVE 256 at 2 per cycle.
        assert_eq!(row(0x411f_d401).bytes_per_cycle("read", 256), Some(64.0));
        // A64FX: 2 × 64 B loads, 1 × 64 B store.
        let fx = row(0x461f_0010);
        assert_eq!(fx.bytes_per_cycle("read", 512), Some(128.0));
        assert_eq!(fx.bytes_per_cycle("write", 512), Some(64.0));
        assert_eq!(fx.bytes_per_cycle("read", 256), Some(32.0));
        // A53: 8 B per cycle of loads at any width.
        let a53 = row(0x410f_d034);
        assert_eq!(a53.bytes_per_cycle("read", 64), Some(8.0));
        assert_eq!(a53.bytes_per_cycle("read", 128), Some(8.0));
    }

    #[test]
    fn unknown_cores_get_no_row_and_are_named_in_hex() {
        // QEMU `-cpu max`; an Apple E-core; an Arm part not in the table.
        for (midr, needle) in [
            (0x000f_0510u32, "implementer 0x00, part 0x051"),
            (0x611f_0221, "implementer 0x61 (Apple), part 0x022"),
            (0x410f_d460, "implementer 0x41 (Arm), part 0xd46"),
        ] {
            let m = identify_arm(Midr(midr));
            assert!(m.row.is_none(), "{midr:#x}");
            assert!(m.reason.contains(needle), "{}", m.reason);
            assert!(m.reason.contains("ceilings unknown"), "{}", m.reason);
        }
    }
}
