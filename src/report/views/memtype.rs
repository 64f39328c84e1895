//! The memory-kind table: first use against steady state per kind.

use crate::model::detail::{BreakEven, MemtypeDetail};
use crate::model::{Nullable, Record, Run, Status};
use crate::report::grid::{Block, Table};
use crate::util::units::format_bytes;

/// This suite's view (it states its own byte convention).
pub const VIEW: super::View = super::View {
    render,
    own_convention: true,
};

/// The human table of a memtype run.
pub fn render(run: &Run, recs: &[&Record]) -> Vec<Block> {
    let units = run.display_units;
    let conv = |g: f64| g * 1e9 / units.bytes_per_unit();
    let f = |v: Option<f64>, d: usize| v.map_or("-".to_string(), |v| format!("{:.*}", d, v));
    let mut t = Table::new(vec![
        "kind".to_string(),
        "pages".into(),
        "setup ms".into(),
        "1st copy ms".into(),
        "1st total ms".into(),
        "ms/MiB".into(),
        format!("copy mean {}", units.label()),
        "copy best".into(),
        format!("read best {}", units.label()),
        "break-even".into(),
        "PAT".into(),
    ]);
    let mut size = None;
    for r in recs.iter().filter(|r| r.status == Status::Ok) {
        let d = r.detail.get::<MemtypeDetail>().cloned().unwrap_or_default();
        size = d.buffer_bytes.or(size);
        let m = r.memory.clone().unwrap_or_default();
        let pages = match (m.page_bytes, m.thp_fraction, m.locked_fraction) {
            (Some(p), Some(t), _) if t > 0.0 => {
                format!("{} {:.0}% THP", format_bytes(p), t * 100.0)
            }
            (Some(p), _, Some(l)) if l > 0.0 => format!("{} locked", format_bytes(p)),
            (Some(p), _, _) => format_bytes(p),
            _ => "?".into(),
        };
        let be = match d.break_even {
            Some(BreakEven::Passes) => match d.break_even_passes {
                Nullable::Value(n) => n.to_string(),
                Nullable::Null => "null".into(),
                Nullable::Absent => "?".into(),
            },
            Some(BreakEven::Never) => match d.ahead_for_passes {
                Some(n) => format!("never (ahead for {})", n),
                None => "never".into(),
            },
            Some(other) => other.name().to_string(),
            None => "-".into(),
        };
        let ms = |s: Option<f64>| s.map(|s| s * 1e3);
        t.rows.push(vec![
            match &d.case_device {
                Some(dev) => format!("{} {}", m.kind, dev),
                None => m.kind.clone(),
            },
            pages,
            f(ms(d.setup_seconds), 2),
            f(ms(d.first_pass_seconds), 2),
            f(ms(d.first_total_seconds), 2),
            f(d.first_total_ms_per_mib, 3),
            f(d.steady_mean_payload_gbps.map(conv), 2),
            f(r.payload_gbps.map(|s| conv(s.best)), 2),
            f(d.read_gbps.get().map(|s| conv(s.best)), 2),
            be,
            d.pat_type.get().cloned().unwrap_or_default(),
        ]);
    }
    if t.rows.is_empty() {
        return Vec::new();
    }
    let t = t.gap().titled(format!(
        "memory kinds: copy of {} from a regular array into the buffer, first pass vs the following ones",
        size.map_or("?".into(), format_bytes)
    ));
    vec![
        Block::Table(t),
        Block::lines(&format!(
            "setup = mmap (+ mlock / device open); 1st copy = first pass incl. page faults; ms/MiB = 1st total per MiB copied.\n\
             copy {} counts bytes copied (N/t, as the codedivine.org write-combining test does; the JSON `gbps` counts read + written, 2N/t). \
             break-even = passes after which the kind's total time is no longer above regular's (first + (n-1)·mean).\n",
            units.label()
        )),
    ]
}
