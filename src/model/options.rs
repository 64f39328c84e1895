//! What the views read of a run's `options` (the suite's resolved plan as
//! it was stored), typed. `Run.options` stays a JSON value on the wire
//! (each suite's plan serialises into it, `suites::Suite::options`); a
//! reader deserialises the part it needs with [`Run::options_as`].
//!
//! Every field is tolerant: a key an older run did not write, or wrote in
//! another shape, reads as its default, field by field, so a saved run
//! renders as it did (`tests/views_golden.rs`). The suites' tests
//! serialise their plans and read them back through these types, so a
//! renamed plan field fails a test instead of blanking a line.

use serde::de::{DeserializeOwned, Deserializer};
use serde::Deserialize;

use super::Run;

/// A field that reads as its default when it is absent or malformed.
fn lenient<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned + Default,
{
    let v = serde_json::Value::deserialize(d)?;
    Ok(serde_json::from_value(v).unwrap_or_default())
}

impl Run {
    /// The run's options read as `T` (its defaults where the run says
    /// nothing).
    pub fn options_as<T: DeserializeOwned + Default>(&self) -> T {
        serde_json::from_value(self.options.clone()).unwrap_or_default()
    }
}

/// Which numa mode ran (`options.mode.mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NumaModeKind {
    /// The cpu node × memory node matrix (also what a run without the
    /// key ran).
    #[default]
    Matrix,
    WritePair,
    /// The loaded-latency curve (`load`, and any mode this version does
    /// not know).
    #[serde(other)]
    Load,
}

/// `options.mode` of a numa run.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct NumaMode {
    #[serde(default, deserialize_with = "lenient")]
    pub mode: NumaModeKind,
    /// The loaded-latency probe's cpu.
    #[serde(default, deserialize_with = "lenient")]
    pub probe_cpu: Option<u32>,
    /// The load as given (`1@node0`).
    #[serde(default, deserialize_with = "lenient")]
    pub description: Option<String>,
}

/// `options.tiers` of a numa run (`--tiers` / `--interleave`).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct NumaTiers {
    /// False for `--interleave` alone (no matrix ran).
    #[serde(default, deserialize_with = "lenient")]
    pub matrix: Option<bool>,
}

/// The options of a numa run, as its view reads them.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Numa {
    #[serde(default, deserialize_with = "lenient")]
    pub cpu_nodes: Vec<u32>,
    #[serde(default, deserialize_with = "lenient")]
    pub memory_nodes: Vec<u32>,
    #[serde(default, deserialize_with = "lenient")]
    pub mode: NumaMode,
    /// Null (None) without `--tiers` / `--interleave`.
    #[serde(default, deserialize_with = "lenient")]
    pub tiers: Option<NumaTiers>,
}

/// The device a transfer run opened (`options.device`).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct TransferDevice {
    #[serde(default, deserialize_with = "lenient")]
    pub name: String,
    #[serde(default, deserialize_with = "lenient")]
    pub backend: String,
    /// Index in the backend's device list (`--device`).
    #[serde(default, deserialize_with = "lenient")]
    pub index: Option<u64>,
    #[serde(default, deserialize_with = "lenient")]
    pub driver_version: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub pci_bus_id: Option<String>,
    /// Host and device share memory (unified memory).
    #[serde(default, deserialize_with = "lenient")]
    pub host_unified: Option<bool>,
}

/// The device's PCIe link (`options.pci`).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct TransferPci {
    #[serde(default, deserialize_with = "lenient")]
    pub link_speed_gts: Option<f64>,
    #[serde(default, deserialize_with = "lenient")]
    pub link_gen: Option<u32>,
    #[serde(default, deserialize_with = "lenient")]
    pub link_width: Option<u32>,
    /// GB/s per direction after line encoding.
    #[serde(default, deserialize_with = "lenient")]
    pub theoretical_gbps: Option<f64>,
    #[serde(default, deserialize_with = "lenient")]
    pub numa_node: Option<u32>,
    /// PCI vendor id, lower-case hex without `0x` (`10de`).
    #[serde(default, deserialize_with = "lenient")]
    pub vendor_id: Option<String>,
    /// PCI device id, lower-case hex without `0x` (`20f2`).
    #[serde(default, deserialize_with = "lenient")]
    pub device_id: Option<String>,
}

/// The options of a transfer run, as its view reads them.
#[derive(Debug, Clone, Deserialize)]
pub struct Transfer {
    #[serde(default, deserialize_with = "lenient")]
    pub device: Option<TransferDevice>,
    #[serde(default, deserialize_with = "lenient")]
    pub pci: Option<TransferPci>,
    #[serde(default, deserialize_with = "lenient")]
    pub host_cpus: Vec<u32>,
    /// Where the host placement came from.
    #[serde(default, deserialize_with = "lenient")]
    pub placement_source: String,
    /// Data verified after each copy (on unless the run says off).
    #[serde(default = "yes", deserialize_with = "lenient_verify")]
    pub verify: bool,
    #[serde(default, deserialize_with = "lenient")]
    pub byte_convention: Option<String>,
}

fn yes() -> bool {
    true
}

/// `verify` is off only when the run says `false`.
fn lenient_verify<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    Ok(serde_json::Value::deserialize(d)?.as_bool() != Some(false))
}

impl Default for Transfer {
    fn default() -> Self {
        Transfer {
            device: None,
            pci: None,
            host_cpus: Vec::new(),
            placement_source: String::new(),
            verify: true,
            byte_convention: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn missing_and_malformed_keys_read_as_defaults() {
        let n: Numa = serde_json::from_value(json!({
            "cpu_nodes": [0, 1],
            "memory_nodes": "oops",
            "mode": {"mode": "load", "probe_cpu": 3},
            "tiers": null
        }))
        .unwrap();
        assert_eq!(n.cpu_nodes, vec![0, 1]);
        assert!(n.memory_nodes.is_empty());
        assert_eq!(n.mode.mode, NumaModeKind::Load);
        assert_eq!(n.mode.probe_cpu, Some(3));
        assert!(n.tiers.is_none());
        let n: Numa = serde_json::from_value(json!({"mode": {"mode": "some-new-mode"}})).unwrap();
        assert_eq!(n.mode.mode, NumaModeKind::Load);
        let n: Numa = serde_json::from_value(json!({})).unwrap();
        assert_eq!(n.mode.mode, NumaModeKind::Matrix);
        let t: Transfer = serde_json::from_value(json!({"verify": "?"})).unwrap();
        assert!(t.verify && t.device.is_none());
        let t: Transfer = serde_json::from_value(json!({"verify": false})).unwrap();
        assert!(!t.verify);
    }
}
