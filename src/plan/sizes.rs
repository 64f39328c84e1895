//! The sizes and names the suites share: the sweep's default sizes and
//! its top (the first size that is unambiguously DRAM), the key sizes of
//! fleet's and the survey's short plans, and kernel lists written as their
//! names.

use crate::kernels::Kernel;
use crate::model::{Curve, Host};
use crate::util::units;

/// Kernels written as their names (a plan's `serialize_with`).
pub(crate) fn names<S: serde::Serializer>(k: &[&'static Kernel], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(k.iter().map(|k| k.name))
}

/// The largest default size: at least 4× the last-level cache as records
/// of `curve` see it, and 256 MiB, so the top of the sweep is
/// unambiguously DRAM. The cache as this process measured it where that is
/// far from CPUID's (a guest told the host socket's 480 MiB L3 swept to
/// 2 GiB for 361 s, though its reads reached DRAM's rate by 362 MiB).
/// Where the knee probe saw the read curve reach its DRAM plateau, the
/// power of two at or past its first point is enough: the sweep's top
/// needs DRAM's rate, not a margin on a cache size.
pub fn default_top(host: &Host, curve: Curve) -> u64 {
    let llc4 = (host.llc_size(curve).unwrap_or(32 << 20) * 4).next_power_of_two();
    let top = match (curve, host.dram_from_bytes()) {
        (Curve::Bandwidth, Some(d)) => llc4.min(d.next_power_of_two()),
        _ => llc4,
    };
    top.max(256 << 20)
}

/// The top of a quick sweep (`cache --quick`, the survey's): half the
/// default top, but never short of the first power of two the summary
/// counts as DRAM for its headline figures (`Host::well_inside` with a
/// margin of 2: twice the last-level cache as reads see it, or the read
/// curve's DRAM plateau, whichever comes first). A guest shown the host's
/// 260 MiB L3 whose reads ended it at 90.5 MiB topped its survey at
/// 128 MiB, short of both 181 MiB and the plateau at 256 MiB, and its
/// summary, history and metrics had no DRAM read at all.
pub fn quick_top(host: &Host) -> u64 {
    let half = default_top(host, Curve::Bandwidth) / 2;
    let dram = host
        .llc_size(Curve::Bandwidth)
        .map(|l| l.saturating_mul(2))
        .into_iter()
        .chain(host.dram_from_bytes())
        .min()
        .map_or(0, u64::next_power_of_two);
    half.max(dram)
}

/// Default sweep: one point per octave from 1 KiB to `default_top`, plus
/// quarter-octave steps (half octaves past 64 MiB) within one octave
/// either side of every cache size as bandwidth records see it, where the
/// curves bend. Each size is rounded to a whole KiB so every kernel's
/// granule divides it and all kernels share rows. ~37 sizes × ~30 kernels
/// × 4–8 calls of ≥ 10 ms keep the full sweep under two minutes; a uniform
/// three points per octave (49 sizes) took 140 s.
pub fn default_sizes(host: &Host) -> Vec<u64> {
    let top = default_top(host, Curve::Bandwidth);
    let mut v: Vec<u64> = units::geometric(1 << 10, top, 2.0);
    let mut edges: Vec<u64> = host
        .data_caches()
        .map(|c| host.boundary(c, Curve::Bandwidth))
        .collect();
    edges.dedup();
    for e in edges {
        for k in -4i32..=4 {
            let s = (e as f64 * 2f64.powf(k as f64 / 4.0)).round() as u64;
            // Past 64 MiB a point costs a pass of 5+ ms per sample: half
            // octaves there (the read curve bends over an octave or more).
            let fine = s <= FINE_UP_TO || k % 2 == 0;
            if fine && (1 << 10..=top).contains(&s) {
                v.push(s);
            }
        }
    }
    let mut v: Vec<u64> = v
        .into_iter()
        .map(|s| ((s + 512) / 1024).max(1) * 1024)
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Quarter octaves around a cache edge up to here, half octaves beyond.
const FINE_UP_TO: u64 = 64 << 20;

/// Half of each cache level and a DRAM-sized set ([`default_top`]), whole
/// KiB so every kernel's granule divides them: the points that tell
/// machines apart, for a fleet node and for the other suites' key plans.
pub fn key_sizes(host: &Host) -> Vec<u64> {
    let mut v: Vec<u64> = (1..=3u8)
        .filter_map(|l| host.cache_size(l, Curve::Bandwidth))
        .map(|s| (s / 2).div_ceil(1024) * 1024)
        .collect();
    v.push(default_top(host, Curve::Bandwidth));
    v.sort_unstable();
    v.dedup();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_sizes_end_in_dram() {
        let host = crate::platform::detect_host(false);
        let sizes = key_sizes(&host);
        let bw = Curve::Bandwidth;
        assert_eq!(*sizes.last().unwrap(), default_top(&host, bw));
        assert_eq!(host.regime(*sizes.last().unwrap(), 1, bw), "DRAM");
        if let Some(l1) = host.cache_size(1, bw) {
            assert_eq!(host.regime(sizes[0], 1, bw), "L1", "{sizes:?} l1 {l1}");
        }
    }

    /// The guest of `quick_top`'s comment: CPUID's 260 MiB L3, its reads
    /// ending it at 90.5 MiB and reaching DRAM's plateau at 256 MiB. Half
    /// the default top (128 MiB) is short of what the summary counts as
    /// DRAM; the quick sweep's top reaches it.
    #[test]
    fn a_quick_sweep_reaches_what_the_headline_counts_as_dram() {
        let v: serde_json::Value =
            serde_json::from_str(include_str!("../../tests/fixtures/cache-quick.json")).unwrap();
        let mut host = v["host"].clone();
        for c in host["caches"].as_array_mut().unwrap() {
            if c["level"] == 3 {
                c["size_bytes"] = (260u64 << 20).into();
                c["bandwidth_size_bytes"] = 94_906_368u64.into();
            }
        }
        host["knees"] = serde_json::json!({
            "measured_at": "2026-11-28T18:38:58Z", "wall_seconds": 7.8, "source": "this run",
            "cpu": 1, "method": "a recorded guest's", "latency": [], "bandwidth": [], "knees": [],
            "note": null,
            "bandwidth_knee": {
                "end_bytes": 94_906_368u64, "plateau_gbps": 29.2, "dram_gbps": 15.7,
                "dram_from_bytes": 268_435_456u64, "level": 3
            }
        });
        let host: Host = serde_json::from_value(host).unwrap();
        let bw = Curve::Bandwidth;
        assert_eq!(default_top(&host, bw) / 2, 128 << 20);
        assert!(!host.well_inside(128 << 20, &crate::model::Regime::Dram, 2, bw));
        let top = quick_top(&host);
        assert_eq!(top, 256 << 20);
        assert!(host.well_inside(top, &crate::model::Regime::Dram, 2, bw));
    }
}
