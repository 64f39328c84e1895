//! Where the device sits: PCIe link and NUMA locality from sysfs.
//!
//! Vendor-neutral (no NVML): `/sys/bus/pci/devices/<bdf>/` has
//! `current_link_speed` ("16.0 GT/s PCIe"), `current_link_width` ("16"),
//! `max_link_*`, `numa_node` (-1 when unknown), `local_cpulist`, and the
//! `vendor` / `device` ids ("0x10de", "0x20f2") the history's reference
//! table matches a device by.

use std::path::Path;

use serde::Serialize;

/// The link and locality of one PCI device.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PciContext {
    pub bus_id: String,
    /// Transfer rate per lane, GT/s.
    pub link_speed_gts: Option<f64>,
    /// PCIe generation implied by the rate (2.5 GT/s = 1 … 64 GT/s = 6).
    pub link_gen: Option<u32>,
    pub link_width: Option<u32>,
    pub max_link_speed_gts: Option<f64>,
    pub max_link_width: Option<u32>,
    /// Data rate of the current link in one direction after line encoding,
    /// GB/s (10^9 B/s); TLP/DLLP overhead is not subtracted, so real copies
    /// top out around 80–90 % of it.
    pub theoretical_gbps: Option<f64>,
    pub numa_node: Option<u32>,
    pub local_cpus: Vec<u32>,
    /// PCI vendor id, lower-case hex without `0x` (`10de`: NVIDIA).
    pub vendor_id: Option<String>,
    /// PCI device id, lower-case hex without `0x` (`20f2`).
    pub device_id: Option<String>,
}

/// Normalise a bus id to sysfs form: `dddd:bb:dd.f`, lower case. CUDA
/// reports `00000000:65:00.0` (8-digit domain).
pub fn normalize_bus_id(id: &str) -> String {
    let id = id.trim().trim_end_matches('\0').to_ascii_lowercase();
    match id.split_once(':') {
        Some((dom, rest)) if dom.len() > 4 => format!("{}:{}", &dom[dom.len() - 4..], rest),
        Some((dom, rest)) if dom.len() < 4 && rest.matches(':').count() == 1 => {
            format!("{:0>4}:{}", dom, rest)
        }
        Some(_) => id,
        // "bb:dd.f" without a domain.
        None => id,
    }
}

/// Parse "16.0 GT/s PCIe" / "8 GT/s" / "2.5 GT/s" into GT/s.
fn parse_speed(s: &str) -> Option<f64> {
    let v: f64 = s.split_whitespace().next()?.parse().ok()?;
    (v > 0.0).then_some(v)
}

/// Parse a sysfs id ("0x10de") into lower-case hex without `0x`; PCI
/// vendor and device ids are 16 bits, so anything but 1–4 hex digits is
/// no value.
fn parse_id(s: &str) -> Option<String> {
    let s = s.trim();
    let hex = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    (!hex.is_empty() && hex.len() <= 4 && hex.chars().all(|c| c.is_ascii_hexdigit()))
        .then(|| format!("{:0>4}", hex.to_ascii_lowercase()))
}

/// The PCIe generation that runs at `gts` per lane.
pub fn generation(gts: f64) -> Option<u32> {
    [
        (2.5, 1),
        (5.0, 2),
        (8.0, 3),
        (16.0, 4),
        (32.0, 5),
        (64.0, 6),
    ]
    .iter()
    .find(|(r, _)| (gts - r).abs() < 0.01)
    .map(|&(_, g)| g)
}

/// Line-encoding efficiency for a per-lane rate: 8b/10b up to 5 GT/s
/// (gen 1–2), 128b/130b for 8–32 GT/s (gen 3–5), and 242/256 FLIT for
/// 64 GT/s (gen 6, PAM4).
fn encoding_efficiency(gts: f64) -> f64 {
    if gts <= 5.0 + 1e-9 {
        0.8
    } else if gts <= 32.0 + 1e-9 {
        128.0 / 130.0
    } else {
        242.0 / 256.0
    }
}

/// One direction's data rate of a link, GB/s.
pub fn theoretical_gbps(gts: f64, width: u32) -> f64 {
    gts * encoding_efficiency(gts) * width as f64 / 8.0
}

/// Read the context of `bus_id` under `root` (normally
/// `/sys/bus/pci/devices`); `None` if the device directory does not exist.
pub fn read(root: &Path, bus_id: &str) -> Option<PciContext> {
    let bdf = normalize_bus_id(bus_id);
    let dir = root.join(&bdf);
    if !dir.is_dir() {
        return None;
    }
    let get =
        |f: &str| crate::os::input::read_small_text(&dir.join(f)).map(|s| s.trim().to_string());
    let speed = get("current_link_speed").as_deref().and_then(parse_speed);
    let width = get("current_link_width")
        .and_then(|s| s.parse::<u32>().ok())
        .filter(|w| *w > 0);
    let numa = get("numa_node")
        .and_then(|s| s.parse::<i64>().ok())
        .filter(|n| *n >= 0)
        .map(|n| n as u32);
    let local = get("local_cpulist")
        .and_then(|s| crate::util::cpulist::parse_cpu_list(&s))
        .unwrap_or_default();
    Some(PciContext {
        bus_id: bdf,
        link_speed_gts: speed,
        link_gen: speed.and_then(generation),
        link_width: width,
        max_link_speed_gts: get("max_link_speed").as_deref().and_then(parse_speed),
        max_link_width: get("max_link_width").and_then(|s| s.parse().ok()),
        theoretical_gbps: match (speed, width) {
            (Some(s), Some(w)) => Some(theoretical_gbps(s, w)),
            _ => None,
        },
        numa_node: numa,
        local_cpus: local,
        vendor_id: get("vendor").as_deref().and_then(parse_id),
        device_id: get("device").as_deref().and_then(parse_id),
    })
}

/// Read from the real sysfs, or from `BWSCOPE_SYSFS_PCI_ROOT` when set (a
/// fixture directory: how the tests give the stand-in driver a link).
pub fn read_sysfs(bus_id: &str) -> Option<PciContext> {
    let root = std::env::var_os("BWSCOPE_SYSFS_PCI_ROOT")
        .map(std::path::PathBuf::from)
        .or_else(crate::os::system::pci_devices_dir)?;
    read(&root, bus_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `BWSCOPE_SYSFS_PCI_ROOT` names any folder: a FIFO or an endless
    /// file in it is read as no value, at once.
    #[test]
    fn a_fifo_or_a_giant_attribute_reads_as_unknown() {
        let d = tempfile::tempdir().unwrap();
        let dev = d.path().join("0000:01:00.0");
        std::fs::create_dir(&dev).unwrap();
        if crate::os::fs::make_fifo(&dev.join("current_link_speed")).is_err() {
            std::fs::write(dev.join("current_link_speed"), "8.0 GT/s PCIe\n").unwrap();
        }
        let f = std::fs::File::create(dev.join("current_link_width")).unwrap();
        f.set_len(1 << 32).unwrap();
        drop(f);
        let t0 = std::time::Instant::now();
        let c = read(d.path(), "0000:01:00.0").expect("the device folder exists");
        assert!(t0.elapsed().as_secs() < 5);
        assert_eq!(c.link_width, None);
    }

    /// 8,000 full ranges in `local_cpulist` (64 KiB, within the bounded
    /// reader's limit) expanded to 2 GB (issue 42, item 4): now refused
    /// before expanding, read as no local cpus.
    #[test]
    fn a_local_cpulist_of_many_full_ranges_is_not_expanded() {
        let d = tempfile::tempdir().unwrap();
        let dev = d.path().join("0000:01:00.0");
        std::fs::create_dir(&dev).unwrap();
        let list = vec!["0-65535"; 8000].join(",");
        assert!(list.len() < 64 << 10);
        std::fs::write(dev.join("local_cpulist"), list).unwrap();
        let t0 = std::time::Instant::now();
        let c = read(d.path(), "0000:01:00.0").expect("the device folder exists");
        assert!(t0.elapsed().as_secs() < 2, "{:?}", t0.elapsed());
        assert!(c.local_cpus.is_empty());
    }

    #[test]
    fn bus_ids_normalise_to_sysfs_form() {
        assert_eq!(normalize_bus_id("00000000:65:00.0"), "0000:65:00.0");
        assert_eq!(normalize_bus_id("0000:3B:00.0\0"), "0000:3b:00.0");
        assert_eq!(normalize_bus_id("1:03:00.0"), "0001:03:00.0");
    }

    #[test]
    fn link_rates_per_generation() {
        // Gen3 x16: 8 GT/s × 128/130 × 16 / 8 = 15.75 GB/s.
        assert!((theoretical_gbps(8.0, 16) - 15.754).abs() < 0.01);
        // Gen4 x16 ≈ 31.5, gen5 x16 ≈ 63.0, gen1 x1 = 0.25.
        assert!((theoretical_gbps(16.0, 16) - 31.51).abs() < 0.01);
        assert!((theoretical_gbps(32.0, 16) - 63.02).abs() < 0.01);
        assert!((theoretical_gbps(2.5, 1) - 0.25).abs() < 1e-9);
        assert_eq!(parse_speed("16.0 GT/s PCIe"), Some(16.0));
        assert_eq!(parse_speed("Unknown"), None);
        assert_eq!(generation(16.0), Some(4));
        assert_eq!(generation(2.5), Some(1));
        assert_eq!(generation(7.0), None);
    }

    #[test]
    fn reads_a_fixture_device_directory() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("0000:65:00.0");
        std::fs::create_dir(&d).unwrap();
        for (f, v) in [
            ("current_link_speed", "16.0 GT/s PCIe\n"),
            ("current_link_width", "8\n"),
            ("max_link_speed", "16.0 GT/s PCIe\n"),
            ("max_link_width", "16\n"),
            ("numa_node", "1\n"),
            ("local_cpulist", "8-11,24\n"),
        ] {
            std::fs::write(d.join(f), v).unwrap();
        }
        let c = read(t.path(), "00000000:65:00.0").unwrap();
        assert_eq!(c.link_width, Some(8));
        assert_eq!(c.max_link_width, Some(16));
        assert_eq!(c.numa_node, Some(1));
        assert_eq!(c.local_cpus, vec![8, 9, 10, 11, 24]);
        assert!((c.theoretical_gbps.unwrap() - 15.75).abs() < 0.01);
        std::fs::write(d.join("numa_node"), "-1\n").unwrap();
        assert_eq!(read(t.path(), "0000:65:00.0").unwrap().numa_node, None);
        assert!(read(t.path(), "0000:66:00.0").is_none());
    }

    /// `vendor` and `device` read as sysfs writes them ("0x10de\n"); a
    /// file that is absent or not a 16-bit hex id reads as no value.
    #[test]
    fn reads_the_vendor_and_device_ids() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("0000:65:00.0");
        std::fs::create_dir(&d).unwrap();
        let c = read(t.path(), "0000:65:00.0").unwrap();
        assert_eq!((c.vendor_id, c.device_id), (None, None));
        std::fs::write(d.join("vendor"), "0x10DE\n").unwrap();
        std::fs::write(d.join("device"), "0x20f2\n").unwrap();
        let c = read(t.path(), "0000:65:00.0").unwrap();
        assert_eq!(c.vendor_id.as_deref(), Some("10de"));
        assert_eq!(c.device_id.as_deref(), Some("20f2"));
        for bad in ["0x12345\n", "0xzz\n", "\n", "0x\n"] {
            std::fs::write(d.join("device"), bad).unwrap();
            assert_eq!(
                read(t.path(), "0000:65:00.0").unwrap().device_id,
                None,
                "{bad:?}"
            );
        }
        assert_eq!(parse_id("0x1b"), Some("001b".into()));
    }
}
