//! The human table of a transfer run.

use std::fmt::Write as _;

use crate::model::detail::{Timer, TransferDetail};
use crate::model::options::{self, TransferDevice};
use crate::model::{Nullable, Op, Record, Run, Status};
use crate::report::grid::{Block, Table};
use crate::util::units::format_bytes;

/// This suite's view (it states its own byte convention).
pub const VIEW: super::View = super::View {
    render,
    own_convention: true,
};

/// The human table of a transfer run: device context, then one row per
/// record.
pub fn render(run: &Run, records: &[&Record]) -> Vec<Block> {
    let units = run.display_units;
    let mut out = Vec::new();
    let o: options::Transfer = run.options_as();
    if let Some(d) = &o.device {
        out.push(Block::lines(&context(d, &o)));
    }
    let mut t = Table::new(vec![
        "kind".to_string(),
        "direction".into(),
        "size".into(),
        format!("best {}", units.label()),
        "median".into(),
        "cv %".into(),
        "timer".into(),
        "verified".into(),
        "note".into(),
    ]);
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
        t.rows.push(vec![
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
    if !t.rows.is_empty() && o.device.as_ref().and_then(|d| d.host_unified) == Some(true) {
        t.notes.push(
            "host and device share memory: h2d, d2h and bidir copy within the same DRAM, not over a link".into(),
        );
    }
    if !t.rows.is_empty() {
        t.notes.push(format!(
            "{} bytes/s; bytes: {}",
            super::unit_line(units),
            o.byte_convention
                .as_deref()
                .unwrap_or("see docs/transfer.md")
        ));
        out.push(Block::Table(t));
    }
    out
}

/// The device, its link and the host side, one line each.
fn context(d: &TransferDevice, o: &options::Transfer) -> String {
    let mut out = String::new();
    let known = |v: Option<u32>| v.map_or("?".into(), |v| v.to_string());
    let _ = writeln!(
        out,
        "device: {} ({} #{}{}{})",
        d.name,
        d.backend,
        d.index.map_or("?".into(), |i| i.to_string()),
        d.driver_version
            .as_ref()
            .map(|v| format!(", driver {}", v))
            .unwrap_or_default(),
        d.pci_bus_id
            .as_ref()
            .map(|v| format!(", pci {}", v))
            .unwrap_or_default(),
    );
    if let Some(p) = &o.pci {
        let _ = writeln!(
            out,
            "link:   {} GT/s (gen {}) x{} → {} GB/s per direction (theoretical, after encoding); numa node {}",
            // `{:?}` keeps the JSON's spelling of a rate: 16.0, 2.5.
            p.link_speed_gts.map_or("?".into(), |v| format!("{v:?}")),
            known(p.link_gen),
            known(p.link_width),
            p.theoretical_gbps.map_or("?".into(), |v| format!("{:.2}", v)),
            known(p.numa_node)
        );
    }
    let _ = writeln!(
        out,
        "host:   cpus {} ({}), verification {}",
        crate::util::cpulist::format_cpu_list(&o.host_cpus),
        o.placement_source,
        if o.verify { "on" } else { "off" }
    );
    out
}
