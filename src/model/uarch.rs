//! Which core this is, as data: the row of the microarchitecture table
//! that matched (`platform::uarch` holds the table and the rules), why it
//! matched, and the L1 access rates the ceilings come from. Stored in the
//! run so a report can bound a saved record without the table.

use serde::{Deserialize, Serialize};

/// The outcome of identifying the core: a row, or none and why not.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct UarchMatch {
    /// The matched row; null when the core is not in the table (then every
    /// ceiling is unknown, never guessed).
    pub row: Option<Uarch>,
    /// How the row was chosen, or why none was, in one line, e.g.
    /// "AMD family 0x19 model 0x11 (Zen 4 range)".
    pub reason: String,
}

/// One row of the table.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Uarch {
    /// Stable identifier: `skylake`, `sunny-cove`, `golden-cove`,
    /// `redwood-cove`, `lion-cove`, `zen2`, `zen3`, `zen4`, `zen5`; on
    /// AArch64 `cortex-a53` … `neoverse-v2`, `apple-firestorm`, `a64fx`.
    pub id: String,
    /// The core and the products it covers.
    pub name: String,
    /// L1D accesses per cycle by access width, widest last. A width not
    /// listed uses the next wider row (8/16/32-bit accesses count like
    /// 64-bit ones: one load or store each).
    pub l1: Vec<L1Rate>,
    /// Bytes per cycle L2 can fill into L1, where documented.
    pub l2_to_l1_bytes_per_cycle: Option<f64>,
    /// Where the numbers come from.
    pub source: String,
    /// Bytes per core cycle the L3 delivers to one core, where documented;
    /// null where unknown (Intel's mesh and ring run on their own clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l3_per_core_bytes_per_cycle: Option<f64>,
    /// Where the L3 figure comes from; null with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l3_source: Option<String>,
    /// How each figure is known; null in runs from before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basis: Option<UarchBasis>,
}

/// How a figure of the table is known.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Basis {
    /// Measured by a third party on this core (cited in `source`).
    Measured,
    /// Stated by the vendor or an expert write-up, not measured here.
    Documented,
    /// Carried over from a sibling core; not verified for this one.
    Inferred,
    /// No figure (the value is null).
    Unknown,
}

/// The basis of each figure of a row.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct UarchBasis {
    pub l1: Basis,
    pub l2_to_l1: Basis,
    pub l3_per_core: Basis,
}

/// Loads and stores per cycle at one access width.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct L1Rate {
    pub width_bits: u32,
    pub loads_per_cycle: f64,
    pub stores_per_cycle: f64,
}

impl Uarch {
    /// The rate that applies to an access of `width_bits`: the narrowest
    /// row at least that wide. None above the widest row.
    pub fn rate(&self, width_bits: u32) -> Option<L1Rate> {
        self.l1
            .iter()
            .filter(|r| r.width_bits >= width_bits)
            .min_by_key(|r| r.width_bits)
            .copied()
    }

    /// L1 bytes per cycle of `op` (`read`, `write`, `copy`) with accesses
    /// of `width_bits`. A copy is one load and one store per element and
    /// counts both (the byte convention), so it is bound by the scarcer of
    /// the two, twice.
    pub fn bytes_per_cycle(&self, op: &str, width_bits: u32) -> Option<f64> {
        let r = self.rate(width_bits)?;
        let bytes = width_bits as f64 / 8.0;
        match op {
            "read" => Some(r.loads_per_cycle * bytes),
            "write" => Some(r.stores_per_cycle * bytes),
            "copy" => Some(r.loads_per_cycle.min(r.stores_per_cycle) * bytes * 2.0),
            _ => None,
        }
    }

    /// The most bytes per cycle `op` can move at any width this core has:
    /// the bound for code that picks its own width (`rep` string
    /// microcode, libc).
    pub fn widest_bytes_per_cycle(&self, op: &str) -> Option<f64> {
        self.l1
            .iter()
            .filter_map(|r| self.bytes_per_cycle(op, r.width_bits))
            .max_by(f64::total_cmp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row() -> Uarch {
        let r = |w, l, s| L1Rate {
            width_bits: w,
            loads_per_cycle: l,
            stores_per_cycle: s,
        };
        Uarch {
            id: "t".into(),
            name: "test".into(),
            l1: vec![r(64, 3.0, 2.0), r(256, 3.0, 2.0), r(512, 2.0, 1.0)],
            l2_to_l1_bytes_per_cycle: None,
            source: "test".into(),
            l3_per_core_bytes_per_cycle: None,
            l3_source: None,
            basis: None,
        }
    }

    #[test]
    fn narrower_accesses_use_the_next_wider_row() {
        let u = row();
        assert_eq!(u.bytes_per_cycle("read", 32), Some(12.0));
        assert_eq!(u.bytes_per_cycle("read", 128), Some(48.0));
        assert_eq!(u.bytes_per_cycle("write", 256), Some(64.0));
        assert_eq!(u.bytes_per_cycle("copy", 512), Some(128.0));
        assert_eq!(u.bytes_per_cycle("read", 1024), None);
        assert_eq!(u.bytes_per_cycle("latency", 64), None);
    }

    #[test]
    fn widest_path_is_the_maximum_over_widths() {
        let u = row();
        assert_eq!(u.widest_bytes_per_cycle("read"), Some(128.0));
        assert_eq!(u.widest_bytes_per_cycle("write"), Some(64.0));
        assert_eq!(u.widest_bytes_per_cycle("copy"), Some(128.0));
    }
}
