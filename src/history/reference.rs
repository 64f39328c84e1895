//! The shipped reference table: figures published by others (and by
//! bwscope's own measurements) that a machine of a known kind is expected
//! to reach, each with its source, licence and the date it was read. A
//! machine no row matches gets no expected figure: a number is never made
//! up. `docs/history.md` lists the rows and how they match.

use crate::model::Expected;

/// What a row matches on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// A PCI `vendor:device` id pair, lower-case hex (`10de:20f2`): the
    /// vendor is part of the key because device ids are only unique
    /// within a vendor.
    PciId(&'static str),
    /// An Azure VM size family: the size, lower-cased, starts with the
    /// first string and ends with the second (`standard_hb…_v3`).
    AzureSize(&'static str, &'static str),
    /// The microarchitecture table's row id (`host.uarch.row.id`).
    Uarch(&'static str),
}

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    pub key: Key,
    /// The headline it judges (`L1 read`, `DRAM read all cores`, `device
    /// memory`).
    pub figure: &'static str,
    pub floor: f64,
    pub unit: &'static str,
    pub what: &'static str,
    pub source: &'static str,
    pub licence: &'static str,
    pub date: &'static str,
}

const DCGM: &str = "NVIDIA/DCGM nvvs/diag-skus.yaml.in (memory_bandwidth.minimum_bandwidth), https://github.com/NVIDIA/DCGM; the plugin: https://docs.nvidia.com/datacenter/dcgm/latest/reference/diagnostics/plugins/memory-bandwidth.html";
const AZURE: &str = "Azure/azurehpc-health-checks conf/<sku>.conf (STREAM check), https://github.com/Azure/azurehpc-health-checks";

/// The rows. DCGM's floor is 0.75 × NVIDIA's golden run in MB/s: its
/// memory bandwidth plugin times a STREAM triad (`a = b + 2c` on three
/// arrays of 64 Mi 4-byte integers) and reports `1e-6 × 3 × array bytes /
/// best time`, so the figure counts bytes read plus bytes written in
/// device memory, in 10^6 B/s (1,050,000 MB/s = 1050 GB/s). bwscope's
/// `device memory` figure (a d2d copy) counts the same way, read +
/// written. The workloads still differ (triad reads two bytes per byte
/// written, a copy one; DCGM searches kernel shapes, bwscope copies with
/// the driver's memcpy or its own kernel), so the unit and the counting
/// match but the floor is a reference to look against, not a verdict.
/// Azure's thresholds are MB/s of every STREAM kernel on the whole VM.
pub const TABLE: &[Row] = &[
    Row {
        key: Key::PciId("10de:20f2"),
        figure: "device memory",
        floor: 1_050_000.0 / 1e3,
        unit: "GB/s",
        what: "NVIDIA A100 80GB (PCI id 10de:20f2): DCGM's diag floor for device memory bandwidth, 0.75 × NVIDIA's golden run (1,050,000 MB/s of a STREAM triad, bytes read + written)",
        source: DCGM,
        licence: "Apache-2.0",
        date: "2026-11-28",
    },
    Row {
        key: Key::AzureSize("standard_hb", "_v3"),
        figure: "DRAM read all cores",
        floor: 320.0,
        unit: "GB/s",
        what: "Azure HBv3: the health check fails the VM when a STREAM kernel (copy, scale, add, triad) is below 320,000 MB/s",
        source: AZURE,
        licence: "MIT",
        date: "2026-11-28",
    },
    Row {
        key: Key::AzureSize("standard_hb", "_v4"),
        figure: "DRAM read all cores",
        floor: 665.5,
        unit: "GB/s",
        what: "Azure HBv4: the health check fails the VM when a STREAM kernel is below 665,500 MB/s",
        source: AZURE,
        licence: "MIT",
        date: "2026-11-28",
    },
    Row {
        key: Key::AzureSize("standard_hx", ""),
        figure: "DRAM read all cores",
        floor: 665.5,
        unit: "GB/s",
        what: "Azure HX: the health check fails the VM when a STREAM kernel is below 665,500 MB/s",
        source: AZURE,
        licence: "MIT",
        date: "2026-11-28",
    },
    Row {
        key: Key::Uarch("zen4"),
        figure: "L1 read",
        floor: 98.9,
        unit: "% of limit",
        what: "Zen 4: bwscope's single-thread 16 KiB sequential reads reached 98.9-99.3 % of the load-port limit (best of 3 runs)",
        source: "bwscope docs/peers/zen4.md",
        licence: "MIT OR Apache-2.0",
        date: "2026-11-26",
    },
];

/// What identifies a machine to the table.
#[derive(Debug, Clone, Default)]
pub struct Identity {
    /// `vendor:device` PCI ids of its accelerators, lower-case hex.
    pub pci_ids: Vec<String>,
    /// The Azure VM size, as the instance metadata names it.
    pub vm_size: Option<String>,
    /// The microarchitecture row's id.
    pub uarch: Option<String>,
}

impl Key {
    fn matches(&self, id: &Identity) -> bool {
        match *self {
            Key::PciId(p) => id.pci_ids.iter().any(|x| x.eq_ignore_ascii_case(p)),
            Key::AzureSize(pre, suf) => id.vm_size.as_deref().is_some_and(|s| {
                let s = s.to_ascii_lowercase();
                s.starts_with(pre) && s.ends_with(suf)
            }),
            Key::Uarch(u) => id.uarch.as_deref() == Some(u),
        }
    }
}

/// The expected figure for headline `figure` on machine `id`, if a row
/// says one.
pub fn lookup(id: &Identity, figure: &str) -> Option<Expected> {
    let row = TABLE
        .iter()
        .find(|r| r.figure == figure && r.key.matches(id))?;
    Some(Expected {
        floor: row.floor,
        unit: row.unit.into(),
        what: row.what.into(),
        source: row.source.into(),
        licence: row.licence.into(),
        date: row.date.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_a100_80gb_is_found_by_its_pci_id() {
        let id = Identity {
            pci_ids: vec!["10DE:20F2".into()],
            ..Identity::default()
        };
        let e = lookup(&id, "device memory").unwrap();
        assert!((e.floor - 1050.0).abs() < 1e-9, "{}", e.floor);
        assert_eq!(e.licence, "Apache-2.0");
        assert!(e.source.contains("NVIDIA/DCGM"));
        assert!(lookup(&id, "L1 read").is_none());
        // Another vendor's device 20f2 is not an A100.
        let other = Identity {
            pci_ids: vec!["1002:20f2".into()],
            ..Identity::default()
        };
        assert!(lookup(&other, "device memory").is_none());
    }

    #[test]
    fn an_azure_hpc_size_matches_its_family_only() {
        let id = |s: &str| Identity {
            vm_size: Some(s.into()),
            ..Identity::default()
        };
        let e = lookup(&id("Standard_HB120rs_v3"), "DRAM read all cores").unwrap();
        assert_eq!((e.floor, e.licence.as_str()), (320.0, "MIT"));
        let e = lookup(&id("Standard_HB176rs_v4"), "DRAM read all cores").unwrap();
        assert_eq!(e.floor, 665.5);
        assert!(lookup(&id("Standard_HB60rs"), "DRAM read all cores").is_none());
        assert!(lookup(&id("Standard_D4s_v3"), "DRAM read all cores").is_none());
    }

    #[test]
    fn a_zen4_gets_bwscopes_own_figure_and_an_unknown_box_nothing() {
        let zen4 = Identity {
            uarch: Some("zen4".into()),
            ..Identity::default()
        };
        let e = lookup(&zen4, "L1 read").unwrap();
        assert_eq!(e.unit, "% of limit");
        assert!(e.source.contains("docs/peers/zen4.md"));
        let unknown = Identity::default();
        for r in TABLE {
            assert!(lookup(&unknown, r.figure).is_none());
            assert!(!r.source.is_empty() && !r.licence.is_empty() && r.date.len() == 10);
        }
    }
}
