//! The human table of a transfer run.

use std::fmt::Write as _;

use serde_json::Value;

use crate::model::detail::{Timer, TransferDetail};
use crate::model::{Nullable, Op, Record, Run, Status, Units};
use crate::report::grid::grid;
use crate::util::units::format_bytes;

/// The human table of a transfer run: device context, then one row per
/// record.
pub fn render(run: &Run, records: &[&Record]) -> String {
    let units = run.display_units;
    let mut out = String::new();
    let o = &run.options;
    if let Some(d) = o.get("device").filter(|d| d.is_object()) {
        let s = |v: &Value| v.as_str().map(str::to_string);
        let _ = writeln!(
            out,
            "device: {} ({} #{}{}{})",
            s(&d["name"]).unwrap_or_default(),
            s(&d["backend"]).unwrap_or_default(),
            d["index"],
            s(&d["driver_version"])
                .map(|v| format!(", driver {}", v))
                .unwrap_or_default(),
            s(&d["pci_bus_id"])
                .map(|v| format!(", pci {}", v))
                .unwrap_or_default(),
        );
        let p = &o["pci"];
        if p.is_object() {
            let _ = writeln!(
                out,
                "link:   {} GT/s (gen {}) x{} → {} GB/s per direction (theoretical, after encoding); numa node {}",
                p["link_speed_gts"],
                p["link_gen"],
                p["link_width"],
                p["theoretical_gbps"].as_f64().map_or("?".into(), |v| format!("{:.2}", v)),
                p["numa_node"]
            );
        }
        let _ = writeln!(
            out,
            "host:   cpus {} ({}), verification {}",
            o["host_cpus"]
                .as_array()
                .map(|a| crate::util::cpulist::format_cpu_list(
                    &a.iter()
                        .filter_map(|v| v.as_u64().map(|x| x as u32))
                        .collect::<Vec<_>>()
                ))
                .unwrap_or_default(),
            s(&o["placement_source"]).unwrap_or_default(),
            if o["verify"].as_bool() == Some(false) {
                "off"
            } else {
                "on"
            }
        );
    }
    let mut rows = vec![vec![
        "kind".to_string(),
        "direction".into(),
        "size".into(),
        format!("best {}", units.label()),
        "median".into(),
        "cv %".into(),
        "timer".into(),
        "verified".into(),
        "note".into(),
    ]];
    let f = |v: f64| super::rate(v, units);
    for r in records.iter().filter(|r| r.status != Status::Skipped) {
        let e = r
            .detail
            .get::<TransferDetail>()
            .cloned()
            .unwrap_or_default();
        let (best, med, cv) = r.gbps.map_or(("-".into(), "-".into(), "-".into()), |g| {
            (f(g.best), f(g.median), format!("{:.1}", g.cv * 100.0))
        });
        let mut note = String::new();
        if r.status == Status::Error {
            note = format!("error: {}", r.reason.as_deref().unwrap_or(""));
        } else if e.zero_copy == Some(true) {
            let t = e.map_unmap_seconds.get().map_or(0.0, |s| s.median);
            note = format!("zero-copy (map+unmap {:.1} µs, no data moved)", t * 1e6);
        } else if r.op == Op::Bidir {
            let g = |s: &Nullable<crate::model::Stats>| s.get().map_or("-".into(), |s| f(s.best));
            note = format!("h2d {} + d2h {}", g(&e.h2d_gbps), g(&e.d2h_gbps));
        } else if let Some(ratio) = e.cpu_read_over_write {
            if r.op == Op::Read {
                note = format!(
                    "read/write {:.2}{}",
                    ratio,
                    if e.behaves_wc == Some(true) {
                        ": behaves write-combined"
                    } else {
                        ""
                    }
                );
            }
        } else if let (Some(h), Some(ev)) = (e.host_gbps.get(), e.event_gbps.get()) {
            note = format!("host {} / events {}", f(h.best), f(ev.best));
        }
        if matches!(r.op, Op::D2d | Op::D2dSm) && r.status == Status::Ok {
            note = format!("read+write counted; {}", note);
        }
        rows.push(vec![
            e.host_kind.get().map_or("-", String::as_str).to_string(),
            e.direction.as_deref().unwrap_or(r.op.as_str()).to_string(),
            r.size_bytes.map_or("-".into(), format_bytes),
            best,
            med,
            cv,
            e.timer.map_or("-", Timer::name).to_string(),
            match e.verified {
                Nullable::Value(true) => "yes".into(),
                Nullable::Value(false) => "FAILED".into(),
                _ => "-".into(),
            },
            note,
        ]);
    }
    if rows.len() > 1 {
        out.push_str(&grid(&rows));
        let _ = writeln!(
            out,
            "{} = {} bytes/s; bytes: {}",
            units.label(),
            if units == Units::GB { "10^9" } else { "2^30" },
            run.options["byte_convention"]
                .as_str()
                .unwrap_or("see docs/transfer.md")
        );
    }
    out
}
