//! The network table: one row per flow and chunk size.

use crate::model::detail::NetDetail;
use crate::model::{Record, Run, Status};
use crate::report::grid::{Block, Table};
use crate::util::units::format_bytes;

fn f(v: f64) -> String {
    if v >= 100.0 {
        format!("{:.0}", v)
    } else if v >= 10.0 {
        format!("{:.1}", v)
    } else if v >= 0.1 {
        format!("{:.2}", v)
    } else {
        format!("{:.4}", v)
    }
}

/// This suite's view (it states its own byte convention).
pub const VIEW: super::View = super::View {
    render,
    own_convention: true,
};

/// The table of a net run: one row per flow and chunk size, receiver-side
/// rate in Gbit/s and in the display units.
pub fn render(run: &Run, records: &[&Record]) -> Vec<Block> {
    let units = run.display_units;
    let ok: Vec<&&Record> = records.iter().filter(|r| r.status == Status::Ok).collect();
    if ok.is_empty() {
        return Vec::new();
    }
    let per_unit = 1e9 / units.bytes_per_unit();
    let mut t = Table::new(vec![
        "mode".to_string(),
        "flow".into(),
        "streams".into(),
        "chunk".into(),
        "Gbit/s".into(),
        units.label().into(),
        format!("best {}", units.label()),
        "cv %".into(),
        "rtt µs".into(),
        "sender B".into(),
        "receiver B".into(),
    ]);
    for r in ok {
        let d = r.detail.get::<NetDetail>().cloned().unwrap_or_default();
        let rate = d.receiver_gbps.value();
        let count = |b: Option<u64>| b.map_or("-".into(), |x| x.to_string());
        t.rows.push(vec![
            format!(
                "{} {}",
                d.mode.as_deref().unwrap_or("?"),
                d.direction.as_deref().unwrap_or("?")
            ),
            r.op.to_string(),
            r.threads.to_string(),
            r.size_bytes.map_or("-".into(), format_bytes),
            rate.map_or("-".into(), |x| f(x * 8.0)),
            rate.map_or("-".into(), |x| f(x * per_unit)),
            r.gbps.map_or("-".into(), |s| f(s.best * per_unit)),
            r.gbps
                .map_or("-".into(), |s| format!("{:.1}", s.cv * 100.0)),
            d.rtt_us.value().map_or("-".into(), |x| format!("{:.1}", x)),
            count(d.sender_bytes),
            count(d.receiver_bytes),
        ]);
    }
    let peer = records
        .first()
        .and_then(|r| r.detail.get::<NetDetail>())
        .and_then(|d| d.peer.as_deref())
        .unwrap_or("?");
    t.title = Some(format!(
        "TCP bandwidth with {} (receiver side, after the omit window)",
        peer
    ));
    t.notes.push(format!(
        "Gbit/s = 10^9 bit/s; {} bytes/s; payload bytes only (no TCP/IP headers). rr: bytes of whole rounds / time from send to answer, timed by the leader; bidir rr counts both ways. best = best sample (--interval-ms).",
        super::unit_line(units),
    ));
    vec![Block::Table(t)]
}
