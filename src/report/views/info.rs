//! The text of `bwscope info`: identity, features, topology, caches,
//! environment, clock and ceilings.

use std::fmt::Write as _;

use crate::model::Host;
use crate::report::table::grid;
use crate::util::cpulist::format_cpu_list;
use crate::util::units::format_bytes;

/// The knee probe in a line or two: where each level ends as this process
/// sees it, and what was not found.
pub fn knees(h: &Host) -> String {
    let Some(p) = &h.knees else {
        return "knees      not measured (`bwscope info --probe-knees`; the survey measures them)\n"
            .into();
    };
    let mut parts: Vec<String> = p
        .knees
        .iter()
        .map(|k| {
            let name = k.level.map_or("unmatched".into(), |l| format!("L{l}"));
            format!(
                "{name} ends at {} ({:.1} ns)",
                format_bytes(k.end_bytes),
                k.latency_ns
            )
        })
        .collect();
    if let Some(last) = p.knees.last() {
        parts.push(format!("then {:.0} ns", last.next_latency_ns));
    }
    let mut s = format!(
        "knees      {}  [{}, {:.1} s]\n",
        if parts.is_empty() {
            "none found".into()
        } else {
            parts.join(" · ")
        },
        p.source,
        p.wall_seconds
    );
    if let Some(note) = &p.note {
        let _ = writeln!(s, "           {note}");
    }
    for w in h.cache_warnings() {
        let _ = writeln!(s, "           {w}");
    }
    s
}

/// The human view of `info`.
pub fn render(h: &Host) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "cpu        {} ({}, family {:#x} model {:#x} stepping {})",
        h.cpu.model_name, h.cpu.vendor, h.cpu.family, h.cpu.model, h.cpu.stepping
    );
    let _ = writeln!(s, "features   {}", h.features.present().join(" "));
    let _ = writeln!(
        s,
        "cpus       {} logical, {} physical cores, allowed {}",
        h.cpus.len(),
        h.physical_cores,
        format_cpu_list(&h.allowed_cpus)
    );
    for c in &h.cpus {
        if c.siblings.len() > 1 && c.siblings[0] == c.id {
            let _ = writeln!(
                s,
                "           SMT siblings {}",
                format_cpu_list(&c.siblings)
            );
        }
    }
    let _ = writeln!(s, "caches");
    for c in &h.caches {
        let measured = match c.effective_size_bytes {
            Some(e) if c.disagrees() => format!("  measured {} (regimes use it)", format_bytes(e)),
            Some(e) => format!("  measured {}", format_bytes(e)),
            None => String::new(),
        };
        let _ = writeln!(
            s,
            "  L{} {:<11} {:>9}  line {} B  shared by cpus {:<6} [{}]{}",
            c.level,
            c.kind,
            format_bytes(c.size_bytes),
            c.line_bytes,
            format_cpu_list(&c.shared_cpus),
            c.source,
            measured
        );
    }
    s.push_str(&knees(h));
    let _ = writeln!(s, "numa");
    for n in &h.nodes {
        let _ = writeln!(
            s,
            "  node {}   cpus {:<8} memory {:>10}  distances {:?}",
            n.id,
            format_cpu_list(&n.cpus),
            n.memory_bytes.map_or("?".into(), format_bytes),
            n.distances
        );
    }
    let e = &h.env;
    let _ = writeln!(
        s,
        "memory     total {}, available {}",
        e.mem_total_bytes.map_or("?".into(), format_bytes),
        e.mem_available_bytes.map_or("?".into(), format_bytes)
    );
    let _ = writeln!(s, "kernel     {}", e.kernel.as_deref().unwrap_or("?"));
    let _ = writeln!(
        s,
        "thp        enabled={} defrag={}  hugetlb 2M reserved={}",
        e.thp_enabled.as_deref().unwrap_or("?"),
        e.thp_defrag.as_deref().unwrap_or("?"),
        e.hugepages_2m_reserved
            .map_or("?".into(), |v| v.to_string())
    );
    let _ = writeln!(
        s,
        "clock src  {}   numa_balancing={}   governor={}",
        e.clocksource.as_deref().unwrap_or("?"),
        e.numa_balancing.map_or("?".into(), |v| v.to_string()),
        e.governor.as_deref().unwrap_or("none")
    );
    let _ = writeln!(
        s,
        "hypervisor {}",
        h.cpu.hypervisor.as_deref().unwrap_or("none")
    );
    match h.clock_hz {
        Some(hz) => {
            let _ = writeln!(
                s,
                "core clock {:.3} GHz measured (dependent-add chain, best of 1000 samples)",
                hz / 1e9
            );
            let _ = writeln!(
                s,
                "L1 ceilings per core at that clock (loads/stores per cycle × width):"
            );
            let mut rows = vec![vec![
                "width".to_string(),
                "".into(),
                "read GB/s".into(),
                "write GB/s".into(),
                "copy GB/s".into(),
            ]];
            let mut widths: Vec<u32> = h.ceilings.iter().map(|c| c.width_bits).collect();
            widths.dedup();
            for w in widths {
                let g = |op: &str| h.ceiling(op, w).map_or("-".into(), |v| format!("{:.1}", v));
                rows.push(vec![
                    format!("{} bit", w),
                    "".into(),
                    g("read"),
                    g("write"),
                    g("copy"),
                ]);
            }
            s.push_str(&grid(&rows));
        }
        None => {
            let _ = writeln!(s, "core clock not measured (--no-clock)");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Cache, CurvePoint, Knee, KneeProbe};

    #[test]
    fn info_shows_both_sizes_and_the_knees() {
        let mut h = Host::default();
        assert!(render(&h).contains("knees      not measured"));
        h.caches.push(Cache {
            level: 3,
            kind: "unified".into(),
            size_bytes: 480 << 20,
            line_bytes: 64,
            shared_cpus: vec![0, 1],
            source: "cpuid+sysfs".into(),
            effective_size_bytes: Some(10 << 20),
            effective_source: Some("knee probe (this run)".into()),
        });
        h.knees = Some(KneeProbe {
            source: "this run".into(),
            wall_seconds: 2.5,
            latency: vec![CurvePoint {
                size_bytes: 4096,
                value: 1.5,
            }],
            knees: vec![Knee {
                end_bytes: 10 << 20,
                latency_ns: 34.2,
                next_latency_ns: 168.0,
                bandwidth_ratio: Some(0.6),
                confirmed: Some(true),
                level: Some(3),
            }],
            ..KneeProbe::default()
        });
        let s = render(&h);
        assert!(
            s.contains("480 MiB") && s.contains("measured 10 MiB (regimes use it)"),
            "{s}"
        );
        assert!(
            s.contains("L3 ends at 10 MiB (34.2 ns) · then 168 ns  [this run, 2.5 s]"),
            "{s}"
        );
        assert!(s.contains("CPUID says L3 is 480.0 MiB"), "{s}");
    }
}
