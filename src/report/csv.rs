//! CSV: one row per record, the same columns for every suite; fields that
//! only some suites have go in `extra_json`. A missing value is an empty
//! cell. Rows can be written one at a time as records complete.

use super::{Cadence, Exporter, Output, ReportFormat};
use crate::model::fleet::FleetRun;
use crate::model::{Record, Run};

pub const HEADER: &[&str] = &[
    "suite",
    "kernel",
    "op",
    "width_bits",
    "nontemporal",
    "pattern",
    "size_bytes",
    "threads",
    "cpus",
    "regime",
    "bytes_read_per_pass",
    "bytes_written_per_pass",
    "reps_per_sample",
    "samples",
    "best_gbps",
    "median_gbps",
    "min_gbps",
    "cv",
    "payload_best_gbps",
    "payload_median_gbps",
    "status",
    "reason",
    "memory_kind",
    "page_bytes",
    "thp_fraction",
    "foreign_cpus",
    "warnings",
    "extra_json",
];

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

/// The cells of one record, in `HEADER` order.
pub fn row(r: &Record) -> Vec<String> {
    vec![
        r.suite().to_string(),
        r.kernel.clone(),
        r.op.to_string(),
        opt(r.width_bits),
        opt(r.nontemporal),
        opt(r.pattern.as_ref()),
        opt(r.size_bytes),
        r.threads.to_string(),
        crate::util::cpulist::format_cpu_list(&r.cpus),
        opt(r.regime.as_ref()),
        opt(r.bytes_read_per_pass),
        opt(r.bytes_written_per_pass),
        opt(r.reps_per_sample),
        r.samples.len().to_string(),
        opt(r.gbps.map(|s| s.best)),
        opt(r.gbps.map(|s| s.median)),
        opt(r.gbps.map(|s| s.min)),
        opt(r.gbps.map(|s| s.cv)),
        opt(r.payload_gbps.map(|s| s.best)),
        opt(r.payload_gbps.map(|s| s.median)),
        serde_json::to_value(r.status)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        opt(r.reason.clone()),
        opt(r.memory.as_ref().map(|m| m.kind.clone())),
        opt(r.memory.as_ref().and_then(|m| m.page_bytes)),
        opt(r.memory.as_ref().and_then(|m| m.thp_fraction)),
        opt(r.noise.map(|n| n.foreign_cpus)),
        r.warnings
            .iter()
            .map(|w| w.to_string())
            .collect::<Vec<_>>()
            .join("; "),
        detail_json(r),
    ]
}

/// The suite's own fields as the JSON's `extra` object, compact; empty
/// when the record states none.
fn detail_json(r: &Record) -> String {
    let fields = r.detail.fields();
    if fields.is_empty() {
        String::new()
    } else {
        serde_json::Value::Object(fields).to_string()
    }
}

/// Header + one row, as CSV bytes (for streaming). Every cell is made
/// safe to open: see [`cell`].
pub fn encode(rows: &[Vec<String>]) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        w.write_record(r.iter().map(|c| cell(c).into_owned()))
            .expect("writing to a Vec cannot fail");
    }
    w.into_inner().expect("flush to a Vec cannot fail")
}

/// A cell as a spreadsheet may open it: control characters shown as `�`
/// (`util::out::printable`), and text that a spreadsheet would run as a
/// formula (starting with `=`, `+`, `-` or `@`, OWASP's rule) behind a
/// `'`; numbers, negative ones too, stay numbers.
fn cell(c: &str) -> std::borrow::Cow<'_, str> {
    let c = crate::util::out::printable(c);
    let formula = c.starts_with(['=', '+', '-', '@']) && c.parse::<f64>().is_err();
    if formula {
        format!("'{c}").into()
    } else {
        c
    }
}

pub fn header() -> Vec<String> {
    HEADER.iter().map(|s| s.to_string()).collect()
}

pub struct Csv;

impl Exporter for Csv {
    fn serialize(&self, run: &Run) -> anyhow::Result<Vec<u8>> {
        let mut rows = vec![header()];
        rows.extend(run.records.iter().map(row));
        Ok(encode(&rows))
    }
}

impl ReportFormat for Csv {
    fn name(&self) -> &'static str {
        "csv"
    }

    fn about(&self) -> &'static str {
        "One row per record, the same columns for every suite (a fleet: one row per flow)"
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["csv"]
    }

    fn fleet(&self, f: &FleetRun, _scale_max: Option<f64>) -> Vec<u8> {
        fleet(f)
    }
}

impl Output for Csv {
    fn flag(&self) -> &'static str {
        "--csv"
    }

    fn help(&self) -> &'static str {
        "Write one CSV row per record to FILE as records complete ('-' = stdout)"
    }

    fn cadence(&self) -> Cadence {
        Cadence::Stream
    }

    fn head(&self) -> Vec<u8> {
        encode(&[header()])
    }

    fn row(&self, r: &Record) -> Vec<u8> {
        encode(&[row(r)])
    }
}

/// `fleet.csv`: the pair matrices in long form, one row per flow, size and
/// view: `src,dst,size,direction,gbps,transport,step,concurrent,reason`.
/// `direction` is the view: `send` (the sender's bytes over its time) or
/// `recv` (what arrived, after the omit window: the headline). `gbps` is
/// GB/s = 10^9 bytes/s, as everywhere in bwscope; empty when the flow was
/// not measured, with the reason.
pub const FLEET_HEADER: [&str; 9] = [
    "src",
    "dst",
    "size",
    "direction",
    "gbps",
    "transport",
    "step",
    "concurrent",
    "reason",
];

/// `fleet.csv` of `f` (see [`FLEET_HEADER`]).
pub fn fleet(f: &FleetRun) -> Vec<u8> {
    let mut rows: Vec<Vec<String>> = vec![FLEET_HEADER.iter().map(|s| s.to_string()).collect()];
    for m in &f.network {
        for x in &m.flows {
            for (dir, g) in [("send", x.send_gbps), ("recv", x.recv_gbps)] {
                rows.push(vec![
                    f.label(x.src),
                    f.label(x.dst),
                    x.size_bytes.to_string(),
                    dir.into(),
                    g.map_or(String::new(), |g| format!("{g:.6}")),
                    m.transport.name().to_string(),
                    x.step.to_string(),
                    x.concurrent.to_string(),
                    x.reason.clone().unwrap_or_default(),
                ]);
            }
        }
    }
    encode(&rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SuiteId;

    #[test]
    fn row_matches_header() {
        let r = Record::skipped(SuiteId::Cache, "seq_read_512_avx512f", "needs avx512f");
        assert_eq!(row(&r).len(), HEADER.len());
        let text = String::from_utf8(encode(&[header(), row(&r)])).unwrap();
        assert!(text.lines().nth(1).unwrap().contains("skipped"));
    }

    #[test]
    fn cells_that_would_run_as_formulas_are_quoted_and_numbers_are_not() {
        assert_eq!(cell("=1+1"), "'=1+1");
        assert_eq!(cell("+cmd"), "'+cmd");
        assert_eq!(cell("-x"), "'-x");
        assert_eq!(cell("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(cell("-0.5"), "-0.5");
        assert_eq!(cell("1e3"), "1e3");
        assert_eq!(cell("seq\u{1b}[2J"), "seq�[2J");
    }
}
