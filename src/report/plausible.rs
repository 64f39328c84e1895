//! Values no measurement can produce. A run file is data from outside:
//! edited by hand, produced by another tool, or corrupted. A negative or
//! absurd figure (−5 GB/s, 1e308) is refused with the record and field
//! named, instead of being rendered as a 309-digit cell or a `+inf %`
//! change. The bounds are far outside anything real, so a genuine run
//! never trips them.

use crate::model::plausible::shown;
pub use crate::model::plausible::{MAX_CPUS, MAX_DETAIL, MAX_GBPS, MAX_NS, MAX_SECONDS};
use crate::model::{Record, Run, Stats, Status};

fn label(i: usize, r: &Record) -> String {
    let mut s = format!("record {} ({} {}", i + 1, r.suite(), r.kernel);
    if let Some(b) = r.size_bytes {
        s.push(' ');
        s.push_str(&crate::util::units::format_bytes(b));
    }
    s.push(')');
    s
}

fn within(what: &str, field: &str, v: f64, max: f64, unit: &str) -> Result<(), String> {
    crate::model::plausible::within(what, field, v, max, unit, "the file")
}

fn stats(what: &str, field: &str, s: &Stats, max: f64, unit: &str) -> Result<(), String> {
    for (name, v) in [
        ("best", s.best),
        ("median", s.median),
        ("min", s.min),
        ("max", s.max),
        ("mean", s.mean),
    ] {
        within(what, &format!("{field}.{name}"), v, max, unit)?;
    }
    within(what, &format!("{field}.cv"), s.cv, MAX_CPUS, "")
}

/// Every float in `v` (a detail field at JSON path `path`) is finite and
/// below [`MAX_DETAIL`] in magnitude.
fn detail_value(what: &str, path: &str, v: &serde_json::Value) -> Result<(), String> {
    match v {
        serde_json::Value::Number(n) => {
            if let Some(x) = n.as_f64() {
                if !(x.is_finite() && x.abs() <= MAX_DETAIL) && n.is_f64() {
                    return Err(format!(
                        "{what}: {path} = {} is not a possible value (|x| ≤ {MAX_DETAIL:e}); the file was edited or corrupted",
                        shown(x)
                    ));
                }
            }
            Ok(())
        }
        serde_json::Value::Array(a) => a
            .iter()
            .enumerate()
            .try_for_each(|(i, x)| detail_value(what, &format!("{path}[{i}]"), x)),
        serde_json::Value::Object(m) => m
            .iter()
            .try_for_each(|(k, x)| detail_value(what, &format!("{path}.{k}"), x)),
        _ => Ok(()),
    }
}

fn record(i: usize, r: &Record) -> Result<(), String> {
    let what = label(i, r);
    // A working set of no bytes, or a measurement on no thread (a skipped
    // record states none).
    if r.size_bytes == Some(0) {
        return Err(format!(
            "{what}: size_bytes = 0 is not a possible value (a working set has at least 1 byte); the file was edited or corrupted"
        ));
    }
    if r.threads == 0 && r.status == Status::Ok {
        return Err(format!(
            "{what}: threads = 0 is not a possible value (a measured record ran on at least 1 thread); the file was edited or corrupted"
        ));
    }
    if let Some(s) = &r.gbps {
        stats(&what, "gbps", s, MAX_GBPS, "GB/s")?;
    }
    if let Some(s) = &r.payload_gbps {
        stats(&what, "payload_gbps", s, MAX_GBPS, "GB/s")?;
    }
    for (k, g) in r.per_thread_gbps.iter().enumerate() {
        within(
            &what,
            &format!("per_thread_gbps[{k}]"),
            *g,
            MAX_GBPS,
            "GB/s",
        )?;
    }
    for (k, s) in r.samples.iter().enumerate() {
        within(
            &what,
            &format!("samples[{k}].seconds"),
            s.seconds,
            MAX_SECONDS,
            "s",
        )?;
    }
    if let Some(n) = &r.noise {
        within(
            &what,
            "noise.foreign_cpus",
            n.foreign_cpus,
            MAX_CPUS,
            "CPUs",
        )?;
        within(&what, "noise.steal_cpus", n.steal_cpus, MAX_CPUS, "CPUs")?;
        within(
            &what,
            "noise.window_seconds",
            n.window_seconds,
            MAX_SECONDS,
            "s",
        )?;
    }
    if let Some(m) = crate::report::metric::latency(r) {
        for (name, v) in [
            ("best", m.best),
            ("median", m.median),
            ("min", m.min),
            ("max", m.max),
        ] {
            within(&what, &format!("latency.{name}"), v, MAX_NS, "ns")?;
        }
    }
    // The suite's own fields, by their path in the file.
    let fields = serde_json::Value::Object(r.detail.fields());
    detail_value(&what, "extra", &fields)
}

/// Every float a fleet file states of itself (its network figures,
/// verdicts, timings; `value` is the whole file, its nodes' runs left to
/// [`check`]) is finite and below [`MAX_DETAIL`] in magnitude.
pub fn fleet_figures(value: &serde_json::Value) -> Result<(), String> {
    let Some(m) = value.as_object() else {
        return Ok(());
    };
    for (k, v) in m {
        if k == "nodes" {
            for (i, n) in v.as_array().into_iter().flatten().enumerate() {
                for (nk, nv) in n.as_object().into_iter().flatten() {
                    if nk != "run" {
                        detail_value("the fleet", &format!("nodes[{i}].{nk}"), nv)?;
                    }
                }
            }
        } else {
            detail_value("the fleet", k, v)?;
        }
    }
    Ok(())
}

/// The first impossible value in `run`, described in one line.
pub fn check(run: &Run) -> Result<(), String> {
    run.records
        .iter()
        .enumerate()
        .try_for_each(|(i, r)| record(i, r))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::detail::NumaDetail;
    use crate::model::{Nullable, SuiteId};

    fn rec(best: f64) -> Record {
        Record {
            kernel: "seq_read_64_scalar".into(),
            size_bytes: Some(16384),
            threads: 1,
            gbps: Some(Stats {
                best,
                median: 1.0,
                min: 1.0,
                max: best.max(1.0),
                mean: 1.0,
                cv: 0.01,
                n: 3,
            }),
            ..Record::new(SuiteId::Cache)
        }
    }

    fn run(r: Record) -> Run {
        let mut run = Run::new(
            "cache",
            serde_json::json!({}),
            Default::default(),
            Default::default(),
        );
        run.records.push(r);
        run
    }

    #[test]
    fn impossible_values_are_named() {
        assert!(check(&run(rec(12.5))).is_ok());
        let e = check(&run(rec(-5.0))).unwrap_err();
        assert!(
            e.contains("record 1 (cache seq_read_64_scalar 16 KiB): gbps.best = -5"),
            "{e}"
        );
        assert!(check(&run(rec(1e308))).is_err());
        let s = |best| Stats {
            best,
            median: 1.0,
            min: 1.0,
            max: 1.0,
            mean: 1.0,
            cv: 0.0,
            n: 1,
        };
        let mut r = rec(10.0);
        r.detail = NumaDetail {
            latency_ns: Nullable::Value(s(-3.0)),
            ..NumaDetail::default()
        }
        .into();
        assert!(check(&run(r)).unwrap_err().contains("latency.best"));
        let mut r = rec(10.0);
        r.detail = NumaDetail {
            latency_ns_samples: Some(vec![1.0, 1e300]),
            ..NumaDetail::default()
        }
        .into();
        let e = check(&run(r)).unwrap_err();
        assert!(e.contains("extra.latency_ns_samples[1]"), "{e}");
    }

    #[test]
    fn no_threads_or_no_bytes_are_named_and_skipped_records_state_none() {
        let mut r = rec(10.0);
        assert!(check(&run(r.clone())).is_ok());
        r.threads = 0;
        assert!(check(&run(r.clone())).unwrap_err().contains("threads = 0"));
        r.threads = 1;
        r.size_bytes = Some(0);
        assert!(check(&run(r)).unwrap_err().contains("size_bytes = 0"));
        let skipped = Record::skipped(SuiteId::Cache, "seq_read_512_avx512f", "needs avx512f");
        assert_eq!(skipped.threads, 0);
        assert!(check(&run(skipped)).is_ok());
    }
}
