//! The memory-kind table: first use against steady state per kind.

use crate::model::{Record, Run, Status};
use crate::util::units::format_bytes;

fn num(r: &Record, key: &str) -> Option<f64> {
    r.extra.get(key).and_then(|v| v.as_f64())
}

/// The human table of a memtype run.
pub fn render(run: &Run, recs: &[&Record]) -> String {
    let units = run.display_units;
    let conv = |g: f64| g * 1e9 / units.bytes_per_unit();
    let f = |v: Option<f64>, d: usize| v.map_or("-".to_string(), |v| format!("{:.*}", d, v));
    let mut rows = vec![vec![
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
    ]];
    let mut size = None;
    for r in recs.iter().filter(|r| r.status == Status::Ok) {
        size = num(r, "buffer_bytes").or(size);
        let m = r.memory.clone().unwrap_or_default();
        let pages = match (m.page_bytes, m.thp_fraction, m.locked_fraction) {
            (Some(p), Some(t), _) if t > 0.0 => {
                format!("{} {:.0}% THP", format_bytes(p), t * 100.0)
            }
            (Some(p), _, Some(l)) if l > 0.0 => format!("{} locked", format_bytes(p)),
            (Some(p), _, _) => format_bytes(p),
            _ => "?".into(),
        };
        let be = match r.extra.get("break_even").and_then(|v| v.as_str()) {
            Some("passes") => r
                .extra
                .get("break_even_passes")
                .map_or("?".into(), |v| v.to_string()),
            Some("never") => match r.extra.get("ahead_for_passes").and_then(|v| v.as_u64()) {
                Some(n) => format!("never (ahead for {})", n),
                None => "never".into(),
            },
            Some(s) => s.to_string(),
            None => "-".into(),
        };
        let read = r
            .extra
            .get("read_gbps")
            .and_then(|v| v.get("best"))
            .and_then(|v| v.as_f64());
        rows.push(vec![
            match r.extra.get("case_device").and_then(|v| v.as_str()) {
                Some(d) => format!("{} {}", m.kind, d),
                None => m.kind.clone(),
            },
            pages,
            f(num(r, "setup_seconds").map(|s| s * 1e3), 2),
            f(num(r, "first_pass_seconds").map(|s| s * 1e3), 2),
            f(num(r, "first_total_seconds").map(|s| s * 1e3), 2),
            f(num(r, "first_total_ms_per_mib"), 3),
            f(num(r, "steady_mean_payload_gbps").map(conv), 2),
            f(r.payload_gbps.map(|s| conv(s.best)), 2),
            f(read.map(conv), 2),
            be,
            r.extra
                .get("pat_type")
                .and_then(|v| v.as_str())
                .unwrap_or("")
                .to_string(),
        ]);
    }
    let mut out = String::new();
    if rows.len() > 1 {
        out.push_str(&format!(
            "memory kinds: copy of {} from a regular array into the buffer, first pass vs the following ones\n",
            size.map_or("?".into(), |s| format_bytes(s as u64))
        ));
        out.push_str(&crate::report::table::grid(&rows));
        out.push('\n');
    }
    if rows.len() > 1 {
        out.push_str(&format!(
            "setup = mmap (+ mlock / device open); 1st copy = first pass incl. page faults; ms/MiB = 1st total per MiB copied.\n\
             copy {} counts bytes copied (N/t, as the seed does; the JSON `gbps` counts read + written, 2N/t). \
             break-even = passes after which the kind's total time is no longer above regular's (first + (n-1)·mean).\n",
            units.label()
        ));
    }
    out
}
