//! The text of `bwscope info`: identity, features, topology, caches,
//! environment, clock and ceilings.

use std::fmt::Write as _;

use crate::model::Host;
use crate::report::grid::grid;
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
    if let Some(b) = &p.bandwidth_knee {
        let _ = writeln!(
            s,
            "           read curve: {} plateau {:.1} GB/s to {}, DRAM {:.1} GB/s from {}",
            b.level.map_or("last".into(), |l| format!("L{l}")),
            b.plateau_gbps,
            format_bytes(b.end_bytes),
            b.dram_gbps,
            format_bytes(b.dram_from_bytes)
        );
    }
    if let Some(line) = curves_differ(h) {
        let _ = writeln!(s, "           {line}");
    }
    if let Some(note) = &p.note {
        let _ = writeln!(s, "           {note}");
    }
    for w in h.cache_warnings() {
        let _ = writeln!(s, "           {w}");
    }
    s
}

/// One line when latency and bandwidth records end a level at different
/// sizes (each kind is labelled by its own curve); None when they agree.
fn curves_differ(h: &Host) -> Option<String> {
    use crate::model::Curve;
    let parts: Vec<String> = h
        .data_caches()
        .filter_map(|c| {
            let (lat, bw) = (
                h.boundary(c, Curve::Latency),
                h.boundary(c, Curve::Bandwidth),
            );
            (lat != bw).then(|| {
                format!(
                    "L{} ends at {} for latency records, at {} for bandwidth records",
                    c.level,
                    format_bytes(lat),
                    format_bytes(bw)
                )
            })
        })
        .collect();
    (!parts.is_empty()).then(|| format!("the curves differ: {}", parts.join("; ")))
}

/// The human view of `info`.
pub fn render(h: &Host) -> String {
    let mut s = String::new();
    if h.arm.is_some() {
        let _ = writeln!(
            s,
            "cpu        {} ({}, implementer {:#04x} part {:#05x} revision {})",
            h.cpu.model_name, h.cpu.vendor, h.cpu.family, h.cpu.model, h.cpu.stepping
        );
    } else {
        let _ = writeln!(
            s,
            "cpu        {} ({}, family {:#x} model {:#x} stepping {})",
            h.cpu.model_name, h.cpu.vendor, h.cpu.family, h.cpu.model, h.cpu.stepping
        );
    }
    let _ = writeln!(s, "features   {}", h.features.present().join(" "));
    arm_lines(&mut s, h);
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
        let measured = measured_sizes(h, c);
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
    if let Some(t) = &h.tiers {
        s.push_str(&super::tiers::table(t));
    }
    dram_lines(&mut s, h);
    env_lines(&mut s, h);
    clock_lines(&mut s, h);
    uarch_lines(&mut s, h);
    ceiling_lines(&mut s, h);
    s
}

/// Memory, kernel, the memory and clock knobs, the hypervisor.
fn env_lines(s: &mut String, h: &Host) {
    let e = &h.env;
    let _ = writeln!(
        s,
        "memory     total {}, available {}",
        e.mem_total_bytes.map_or("?".into(), format_bytes),
        e.mem_available_bytes.map_or("?".into(), format_bytes)
    );
    let _ = writeln!(s, "kernel     {}", e.kernel.as_deref().unwrap_or("?"));
    // Knobs a system without them (Windows) does not state: no line.
    if e.thp_enabled.is_some() || e.thp_defrag.is_some() || e.hugepages_2m_reserved.is_some() {
        let _ = writeln!(
            s,
            "thp        enabled={} defrag={}  hugetlb 2M reserved={}",
            e.thp_enabled.as_deref().unwrap_or("?"),
            e.thp_defrag.as_deref().unwrap_or("?"),
            e.hugepages_2m_reserved
                .map_or("?".into(), |v| v.to_string())
        );
    }
    if e.clocksource.is_some() || e.numa_balancing.is_some() || e.governor.is_some() {
        let _ = writeln!(
            s,
            "clock src  {}   numa_balancing={}   governor={}",
            e.clocksource.as_deref().unwrap_or("?"),
            e.numa_balancing.map_or("?".into(), |v| v.to_string()),
            e.governor.as_deref().unwrap_or("none")
        );
    }
    let _ = writeln!(
        s,
        "hypervisor {}",
        h.cpu.hypervisor.as_deref().unwrap_or("none")
    );
}

/// "  measured 20 MiB by latency, 128 MiB by read bandwidth (regimes use
/// them)": what the knee probe found for a level, by each curve.
fn measured_sizes(h: &Host, c: &crate::model::Cache) -> String {
    use crate::model::Curve;
    let by = |curve: Curve| c.measured(curve).map(format_bytes);
    let used = [Curve::Latency, Curve::Bandwidth]
        .iter()
        .any(|&k| h.boundary(c, k) != c.size_bytes);
    let sizes = match (by(Curve::Latency), by(Curve::Bandwidth)) {
        (None, None) => return String::new(),
        (Some(l), Some(b)) if l == b => l,
        (Some(l), Some(b)) => format!("{l} by latency, {b} by read bandwidth"),
        (Some(l), None) => format!("{l} by latency"),
        (None, Some(b)) => format!("{b} by read bandwidth"),
    };
    format!(
        "  measured {sizes}{}",
        if used { " (regimes use it)" } else { "" }
    )
}

/// The DRAM peak in a line (or why it is unknown), then the memory
/// devices SMBIOS lists, empty slots included, and any doubt.
fn dram_lines(s: &mut String, h: &Host) {
    let Some(d) = &h.dram else {
        return;
    };
    match d.peak_gbps {
        Some(g) => {
            let _ = writeln!(s, "dram       peak {g:.1} GB/s: {}  [{}]", d.note, d.source);
        }
        None => {
            let _ = writeln!(s, "dram       {}", d.note);
        }
    }
    if !d.devices.is_empty() {
        let mut rows = vec![[
            "slot", "bank", "size", "type", "form", "width", "MT/s", "rated", "channel",
        ]
        .map(String::from)
        .to_vec()];
        let n = |v: Option<u32>| v.map_or("-".into(), |v| v.to_string());
        for x in &d.devices {
            rows.push(vec![
                x.locator.clone(),
                x.bank_locator.clone(),
                x.size_bytes.map_or("empty".into(), format_bytes),
                x.memory_type.clone(),
                x.form_factor.clone(),
                n(x.data_width_bits),
                n(x.configured_mts),
                n(x.speed_mts),
                x.channel.clone().unwrap_or_else(|| "-".into()),
            ]);
        }
        for line in grid(&rows).lines() {
            let _ = writeln!(s, "  {line}");
        }
    }
    for w in &d.warnings {
        let _ = writeln!(s, "           warning: {w}");
    }
}

/// AArch64: what the ID registers say, each kind of core, and whether the
/// files describe this machine at all.
fn arm_lines(s: &mut String, h: &Host) {
    let Some(a) = &h.arm else {
        return;
    };
    let sve = a
        .sve_vector_bits
        .map_or("no SVE".into(), |b| format!("SVE {b}-bit"));
    let zva = a
        .dc_zva_block_bytes
        .map_or("dc zva prohibited".into(), |b| {
            format!("dc zva {b} B blocks")
        });
    let _ = writeln!(
        s,
        "arm        {sve}, {zva}, smallest D-line {} B (CTR_EL0); MIDRs from {}",
        a.dcache_line_bytes, a.midr_source
    );
    for k in &a.core_kinds {
        let row = k
            .uarch
            .row
            .as_ref()
            .map_or("no row".to_string(), |r| format!("row {}", r.id));
        let _ = writeln!(
            s,
            "core kind  {} on cpus {}: {} (MIDR {}, {row})",
            k.id,
            format_cpu_list(&k.cpus),
            k.name,
            k.midr
        );
    }
    if let Some(why) = &a.foreign_files {
        let _ = writeln!(s, "emulated   {why}");
    }
}

fn clock_lines(s: &mut String, h: &Host) {
    let Some(c) = &h.clock else {
        let _ = writeln!(s, "core clock not measured (--no-clock)");
        return;
    };
    let (add, second) = match c.second_chain {
        Some(crate::model::CrossCheck::Eor) => ("add x,x", "eor x,x"),
        _ => ("add r64,r64", "imul r64,r64"),
    };
    let chains = format!(
        "{add} chain {:.3} GHz, {second} chain {:.3} GHz, {:.1} % apart; best of {} samples each",
        c.add_hz / 1e9,
        c.imul_hz / 1e9,
        c.disagreement() * 100.0,
        c.samples
    );
    let emulated = h.arm.as_ref().is_some_and(|a| a.foreign_files.is_some());
    match c.hz {
        Some(hz) => {
            let _ = writeln!(s, "core clock {:.3} GHz measured ({chains})", hz / 1e9);
        }
        None if emulated => {
            let _ = writeln!(
                s,
                "core clock none under an emulator (its chains ran at: {chains})"
            );
        }
        None => {
            let _ = writeln!(s, "core clock implausible, not used ({chains})");
        }
    }
}

fn uarch_lines(s: &mut String, h: &Host) {
    let Some(m) = &h.uarch else {
        return;
    };
    let Some(r) = &m.row else {
        let _ = writeln!(s, "core       unknown: {}", m.reason);
        return;
    };
    let _ = writeln!(s, "core       {} [{}]", r.name, r.id);
    let _ = writeln!(s, "           matched by {}", m.reason);
    let rates: Vec<String> =
        r.l1.iter()
            .map(|x| {
                format!(
                    "{}-bit {}/{}",
                    x.width_bits, x.loads_per_cycle, x.stores_per_cycle
                )
            })
            .collect();
    let basis = |b: Option<crate::model::Basis>| match b {
        Some(crate::model::Basis::Measured) => " (measured by others)",
        Some(crate::model::Basis::Documented) => " (documented)",
        Some(crate::model::Basis::Inferred) => " (inferred)",
        _ => "",
    };
    let b = r.basis;
    let per_cycle = |v: Option<f64>, which: Option<crate::model::Basis>| {
        v.map_or("not documented".into(), |b| {
            format!("{b} B per cycle{}", basis(which))
        })
    };
    let _ = writeln!(
        s,
        "           L1 loads/stores per cycle: {}{}",
        rates.join(", "),
        basis(b.map(|b| b.l1))
    );
    let _ = writeln!(
        s,
        "           L2→L1 {}; L3→core {}",
        per_cycle(r.l2_to_l1_bytes_per_cycle, b.map(|b| b.l2_to_l1)),
        per_cycle(r.l3_per_core_bytes_per_cycle, b.map(|b| b.l3_per_core))
    );
    let _ = writeln!(s, "           source: {}", r.source);
    if let Some(l3) = &r.l3_source {
        let _ = writeln!(s, "           L3 source: {l3}");
    }
}

fn ceiling_lines(s: &mut String, h: &Host) {
    if h.ceilings.iter().all(|c| c.gbps.is_none()) {
        let why = if h.uarch.as_ref().is_some_and(|m| m.row.is_none()) {
            "this core is not in the table"
        } else {
            "no clock"
        };
        let _ = writeln!(s, "L1 ceilings unknown ({why})");
        return;
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{
        Cache, Ceiling, ClockProbe, CurvePoint, Knee, KneeProbe, L1Rate, Uarch, UarchMatch,
    };

    fn host(row: Option<Uarch>, reason: &str) -> Host {
        let known = row.is_some();
        Host {
            clock_hz: Some(3.4e9),
            clock: Some(ClockProbe::from_chains(3.4e9, 3.39e9, 400)),
            uarch: Some(UarchMatch {
                row,
                reason: reason.into(),
            }),
            ceilings: vec![Ceiling {
                op: "read".into(),
                width_bits: 512,
                bytes_per_cycle: known.then_some(128.0),
                gbps: known.then_some(435.2),
            }],
            ..Host::default()
        }
    }

    #[test]
    fn says_which_row_matched_and_why() {
        let row = Uarch {
            id: "redwood-cove".into(),
            name: "Redwood Cove (Granite Rapids)".into(),
            l1: vec![L1Rate {
                width_bits: 512,
                loads_per_cycle: 2.0,
                stores_per_cycle: 1.0,
            }],
            l2_to_l1_bytes_per_cycle: Some(64.0),
            source: "somewhere".into(),
            l3_per_core_bytes_per_cycle: None,
            l3_source: None,
            basis: None,
        };
        let s = render(&host(
            Some(row),
            "the model is masked; by features: AMX-TILE + 64 KiB L1I",
        ));
        assert!(
            s.contains("core       Redwood Cove (Granite Rapids) [redwood-cove]"),
            "{s}"
        );
        assert!(s.contains("matched by the model is masked"), "{s}");
        assert!(s.contains("512-bit 2/1\n"), "{s}");
        assert!(
            s.contains("L2→L1 64 B per cycle; L3→core not documented"),
            "{s}"
        );
        assert!(
            s.contains("add r64,r64 chain 3.400 GHz, imul r64,r64 chain 3.390 GHz"),
            "{s}"
        );
        assert!(s.contains("435.2"), "{s}");
    }

    #[test]
    fn arm_kinds_chains_and_emulation_are_named() {
        use crate::model::{ArmHost, CoreKind, CrossCheck};
        let mut h = host(None, "MIDR 0x412fd050: implementer 0x41 (Arm), part 0xd05");
        h.arm = Some(ArmHost {
            sve_vector_bits: Some(256),
            dc_zva_block_bytes: Some(64),
            dcache_line_bytes: 64,
            icache_line_bytes: 64,
            core_kinds: vec![
                CoreKind::for_test("cortex-a55", vec![0, 1], None),
                CoreKind::for_test("cortex-a76", vec![2, 3], None),
            ],
            midr_source: "sysfs".into(),
            foreign_files: None,
        });
        if let Some(c) = h.clock.as_mut() {
            c.second_chain = Some(CrossCheck::Eor);
        }
        let s = render(&h);
        assert!(s.contains("implementer 0x00 part 0x000"), "{s}");
        assert!(
            s.contains("arm        SVE 256-bit, dc zva 64 B blocks, smallest D-line 64 B"),
            "{s}"
        );
        assert!(s.contains("core kind  cortex-a55 on cpus 0-1"), "{s}");
        assert!(s.contains("core kind  cortex-a76 on cpus 2-3"), "{s}");
        assert!(s.contains("add x,x chain 3.400 GHz, eor x,x chain"), "{s}");
        assert!(!s.contains("emulated"), "{s}");
        // Under an emulator: no clock, and why.
        if let Some(a) = h.arm.as_mut() {
            a.foreign_files = Some("/proc/cpuinfo describes another architecture".into());
        }
        if let Some(c) = h.clock.as_mut() {
            c.hz = None;
        }
        let s = render(&h);
        assert!(s.contains("core clock none under an emulator"), "{s}");
        assert!(s.contains("emulated   /proc/cpuinfo describes"), "{s}");
    }

    #[test]
    fn unknown_core_has_no_ceiling_numbers() {
        let s = render(&host(
            None,
            "vendor CentaurHauls: the table has Intel and AMD x86 cores only",
        ));
        assert!(s.contains("core       unknown: vendor CentaurHauls"), "{s}");
        assert!(
            s.contains("L1 ceilings unknown (this core is not in the table)"),
            "{s}"
        );
        assert!(!s.contains("GB/s"), "{s}");
    }

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
            bandwidth_size_bytes: Some(16 << 20),
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
        h.knees.as_mut().unwrap().bandwidth_knee = Some(crate::model::BandwidthKnee {
            end_bytes: 16 << 20,
            plateau_gbps: 29.0,
            dram_gbps: 15.4,
            dram_from_bytes: 64 << 20,
            level: Some(3),
        });
        let s = render(&h);
        assert!(
            s.contains("480 MiB")
                && s.contains(
                    "measured 10 MiB by latency, 16 MiB by read bandwidth (regimes use it)"
                ),
            "{s}"
        );
        assert!(
            s.contains("read curve: L3 plateau 29.0 GB/s to 16 MiB, DRAM 15.4 GB/s from 64 MiB"),
            "{s}"
        );
        assert!(
            s.contains("L3 ends at 10 MiB for latency records, at 16 MiB for bandwidth records"),
            "{s}"
        );
        assert!(
            s.contains("L3 ends at 10 MiB (34.2 ns) · then 168 ns  [this run, 2.5 s]"),
            "{s}"
        );
        assert!(s.contains("CPUID says L3 is 480.0 MiB"), "{s}");
    }
}
