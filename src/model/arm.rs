//! AArch64 facts about the machine, as data: which kinds of core it has
//! (one per distinct MIDR; big.LITTLE and Apple's P/E parts have several),
//! the SVE vector length, the `dc zva` block and the cache line `CTR_EL0`
//! states. Detection lives in `platform::arm`.

use serde::{Deserialize, Serialize};

use super::uarch::UarchMatch;

/// `MIDR_EL1`, the Main ID Register, split into its fields (Arm ARM
/// D23.2 "MIDR_EL1": implementer [31:24], variant [23:20], architecture
/// [19:16], part number [15:4], revision [3:0]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Midr(pub u32);

impl Midr {
    pub fn implementer(self) -> u8 {
        (self.0 >> 24) as u8
    }
    pub fn variant(self) -> u8 {
        ((self.0 >> 20) & 0xf) as u8
    }
    pub fn part(self) -> u16 {
        ((self.0 >> 4) & 0xfff) as u16
    }
    pub fn revision(self) -> u8 {
        (self.0 & 0xf) as u8
    }
    /// From the fields `/proc/cpuinfo` prints on arm64 (`CPU implementer`,
    /// `CPU variant`, `CPU part`, `CPU revision`; the architecture field
    /// is always 0xf on ARMv8 and later).
    pub fn from_fields(implementer: u8, variant: u8, part: u16, revision: u8) -> Midr {
        Midr(
            (implementer as u32) << 24
                | ((variant as u32) & 0xf) << 20
                | 0xf << 16
                | ((part as u32) & 0xfff) << 4
                | (revision as u32) & 0xf,
        )
    }
    /// The core as such: implementer and part (variant and revision are
    /// steppings of the same core).
    pub fn core(self) -> (u8, u16) {
        (self.implementer(), self.part())
    }
}

/// One kind of core of this machine: every cpu with this implementer and
/// part.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CoreKind {
    /// Stable identifier: the table's row id where the core has one
    /// (`cortex-a76`, `neoverse-v2`, …), else `<implementer>-<part>` in
    /// hex (`0x41-0xd46`).
    pub id: String,
    /// Human name: `Arm Cortex-A55`, `Apple Icestorm (M1)`, or
    /// `implementer 0x00 part 0x051 (not in bwscope's list)`.
    pub name: String,
    /// The MIDR of the first cpu of this kind, hex (`0x410fd0b1`).
    pub midr: String,
    pub implementer: u8,
    pub part: u16,
    /// The cpus of this kind (all of them, allowed or not).
    pub cpus: Vec<u32>,
    /// The microarchitecture row this kind matched, and why, or none.
    pub uarch: UarchMatch,
}

#[cfg(test)]
impl CoreKind {
    /// A kind for tests: `id` on `cpus`, with `row` (or none).
    pub fn for_test(id: &str, cpus: Vec<u32>, row: Option<super::Uarch>) -> CoreKind {
        CoreKind {
            id: id.into(),
            name: id.into(),
            midr: "0x0".into(),
            implementer: 0x41,
            part: 0,
            cpus,
            uarch: UarchMatch {
                row,
                reason: "test".into(),
            },
        }
    }
}

/// What a run knows of an AArch64 machine beyond the common `Host`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct ArmHost {
    /// SVE vector length in bits (`prctl(PR_SVE_GET_VL)`); null without
    /// SVE.
    pub sve_vector_bits: Option<u32>,
    /// Bytes one `dc zva` zeroes (`DCZID_EL0.BS`); null when `DCZID_EL0.DZP`
    /// prohibits it.
    pub dc_zva_block_bytes: Option<u32>,
    /// Smallest data-cache line of the hierarchy, bytes (`CTR_EL0.DminLine`).
    pub dcache_line_bytes: u32,
    /// Smallest instruction-cache line, bytes (`CTR_EL0.IminLine`).
    pub icache_line_bytes: u32,
    /// The kinds of core, in cpu order of first appearance.
    pub core_kinds: Vec<CoreKind>,
    /// Where the per-cpu MIDRs came from: `sysfs` (`cpuN/regs/identification
    /// /midr_el1`), `/proc/cpuinfo`, or `mrs MIDR_EL1` (this cpu only, every
    /// cpu assumed alike: the files did not describe this machine).
    pub midr_source: String,
    /// Why `/proc/cpuinfo` and `/sys` were not used for CPU facts, when they
    /// were not: they describe another architecture (the process runs under
    /// an emulator such as qemu-user, which shows the host's files).
    pub foreign_files: Option<String>,
}

impl ArmHost {
    /// The kind of `cpu`, if known.
    pub fn kind_of(&self, cpu: u32) -> Option<&CoreKind> {
        self.core_kinds.iter().find(|k| k.cpus.contains(&cpu))
    }

    /// Whether the machine has more than one kind of core.
    pub fn heterogeneous(&self) -> bool {
        self.core_kinds.len() > 1
    }
}
