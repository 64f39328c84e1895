//! AArch64 facts about the machine, as data: which kinds of core it has
//! (one per distinct MIDR; big.LITTLE and Apple's P/E parts have several),
//! the SVE vector length, the `dc zva` block and the cache line `CTR_EL0`
//! states. Detection lives in `platform::arm`.

use serde::{Deserialize, Serialize};

use super::uarch::UarchMatch;
use super::Host;

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

/// The questions a record asks of a machine whose cores differ in kind.
impl Host {
    /// [`Host::ceiling_at`] for code that ran on `cpus`: on a machine with
    /// several kinds of core the row is that of their kind, and there is
    /// no bound when they are of several kinds or of one without a row.
    pub fn ceiling_on(
        &self,
        op: &str,
        width_bits: Option<u32>,
        hz: f64,
        cpus: &[u32],
    ) -> Option<f64> {
        let Some(arm) = self.arm.as_ref().filter(|a| a.heterogeneous()) else {
            return self.ceiling_at(op, width_bits, hz);
        };
        let first = arm.kind_of(*cpus.first()?)?;
        if cpus.iter().any(|c| arm.kind_of(*c) != Some(first)) {
            return None;
        }
        let row = first.uarch.row.as_ref()?;
        let bpc = match width_bits {
            Some(w) => row.bytes_per_cycle(op, w),
            None => row.widest_bytes_per_cycle(op),
        };
        bpc.map(|b| b * hz / 1e9)
    }

    /// This host as seen by code that ran on `cpus`: itself unless its
    /// cores differ in kind, then a copy whose `uarch` is that of their
    /// kind; None when they are of several kinds or of an unknown one.
    pub fn for_cpus(&self, cpus: &[u32]) -> Option<std::borrow::Cow<'_, Host>> {
        let Some(arm) = self.arm.as_ref().filter(|a| a.heterogeneous()) else {
            return Some(std::borrow::Cow::Borrowed(self));
        };
        let first = arm.kind_of(*cpus.first()?)?;
        if cpus.iter().any(|c| arm.kind_of(*c) != Some(first)) {
            return None;
        }
        let mut h = self.clone();
        h.uarch = Some(first.uarch.clone());
        Some(std::borrow::Cow::Owned(h))
    }

    /// The kind of core `cpus` are (`host.arm.core_kinds[].id`), or
    /// `mixed: a×2+b×1` when they are of several; None off ARM or where a
    /// cpu's kind is unknown.
    pub fn core_kind_label(&self, cpus: &[u32]) -> Option<String> {
        let arm = self.arm.as_ref()?;
        let mut counts: Vec<(&str, usize)> = Vec::new();
        for &c in cpus {
            let id = arm.kind_of(c)?.id.as_str();
            match counts.iter_mut().find(|(k, _)| *k == id) {
                Some((_, n)) => *n += 1,
                None => counts.push((id, 1)),
            }
        }
        match counts[..] {
            [] => None,
            [(id, _)] => Some(id.to_string()),
            _ => Some(format!(
                "mixed: {}",
                counts
                    .iter()
                    .map(|(k, n)| format!("{k}×{n}"))
                    .collect::<Vec<_>>()
                    .join("+")
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_label_records_and_pick_their_rows() {
        use crate::model::{CoreKind, L1Rate, Uarch};
        let kind = |id: &str, cpus: Vec<u32>, loads: Option<f64>| {
            let row = loads.map(|l| Uarch {
                id: id.into(),
                name: id.into(),
                l1: vec![L1Rate {
                    width_bits: 128,
                    loads_per_cycle: l,
                    stores_per_cycle: 1.0,
                }],
                l2_to_l1_bytes_per_cycle: None,
                source: "test".into(),
                l3_per_core_bytes_per_cycle: None,
                l3_source: None,
                basis: None,
            });
            CoreKind::for_test(id, cpus, row)
        };
        // One kind: labelled, and bounded by the run's row as before.
        let mut h = Host {
            arm: Some(ArmHost {
                core_kinds: vec![kind("big", vec![0, 1], Some(2.0))],
                ..Default::default()
            }),
            ..Host::default()
        };
        assert_eq!(h.core_kind_label(&[1]).as_deref(), Some("big"));
        assert_eq!(h.core_kind_label(&[7]), None);
        // Two kinds: each record's own row; none for a mix or a kind
        // without a row.
        h.arm = Some(ArmHost {
            core_kinds: vec![
                kind("little", vec![0, 1], Some(1.0)),
                kind("big", vec![2, 3], Some(2.0)),
                kind("odd", vec![4], None),
            ],
            ..Default::default()
        });
        assert_eq!(h.ceiling_on("read", Some(128), 1e9, &[0, 1]), Some(16.0));
        assert_eq!(h.ceiling_on("read", Some(128), 1e9, &[2]), Some(32.0));
        assert_eq!(h.ceiling_on("read", Some(128), 1e9, &[1, 2]), None);
        assert_eq!(h.ceiling_on("read", Some(128), 1e9, &[4]), None);
        assert_eq!(
            h.core_kind_label(&[0, 2, 3]).as_deref(),
            Some("mixed: little×1+big×2")
        );
        // Off ARM: no label.
        assert_eq!(Host::default().core_kind_label(&[0]), None);
    }
}
