//! The ten-second reading of a run: one line of headline figures and a few
//! warnings, shared by the survey, the HTML report and Markdown.
//!
//! Every figure is read from records; a suite that did not run simply adds
//! nothing. Headlines use `best` (the estimate of what the path can do;
//! medians swing 2× on shared machines).

use super::metric;
use crate::model::Warning;
use crate::model::{Record, Run, Status};

fn ok(run: &Run) -> impl Iterator<Item = &Record> {
    run.records.iter().filter(|r| r.status == Status::Ok)
}

fn is_plain(r: &Record, op: &str, prefix: &str) -> bool {
    r.op == op && r.kernel.starts_with(prefix) && !r.nontemporal.unwrap_or(false)
}

/// Best single-thread bandwidth of `op` in `regime`. DRAM takes the
/// largest size (furthest from the last cache's edge), caches the best.
pub fn single<'a>(run: &'a Run, op: &str, prefix: &str, regime: &str) -> Option<(f64, &'a Record)> {
    let recs: Vec<&Record> = ok(run)
        .filter(|r| {
            r.suite == "cache"
                && r.threads == 1
                && is_plain(r, op, prefix)
                && r.regime.as_deref() == Some(regime)
        })
        .collect();
    let recs = recs.into_iter();
    if regime == "DRAM" {
        let top = recs.clone().filter_map(|r| r.size_bytes).max()?;
        recs.filter(|r| r.size_bytes == Some(top))
            .filter_map(|r| r.gbps.map(|g| (g.best, r)))
            .max_by(|a, b| a.0.total_cmp(&b.0))
    } else {
        recs.filter_map(|r| r.gbps.map(|g| (g.best, r)))
            .max_by(|a, b| a.0.total_cmp(&b.0))
    }
}

/// Best all-cores DRAM figure of `op` from any suite that ran more than
/// one thread at a DRAM-sized set.
pub fn all_cores(run: &Run, op: &str) -> Option<(f64, u32)> {
    ok(run)
        .filter(|r| r.threads > 1 && r.op == op && r.regime.as_deref() == Some("DRAM"))
        .filter(|r| !r.nontemporal.unwrap_or(false))
        .filter_map(|r| r.gbps.map(|g| (g.best, r.threads)))
        .max_by(|a, b| a.0.total_cmp(&b.0))
}

/// Latency at the largest size measured (DRAM when the sweep reached it),
/// from the chase randomised over the whole buffer: the window and stride
/// views let the prefetchers help and are not load-to-use latency.
pub fn dram_latency(run: &Run) -> Option<(f64, String)> {
    let recs: Vec<&Record> = ok(run)
        .filter(|r| r.suite == "latency")
        .filter(|r| {
            r.extra
                .get("case_view")
                .and_then(|v| v.as_str())
                .unwrap_or("random")
                == "random"
        })
        .collect();
    let top = recs.iter().filter_map(|r| r.size_bytes).max()?;
    recs.iter()
        .filter(|r| r.size_bytes == Some(top))
        .filter_map(|r| {
            metric::latency(r).map(|m| {
                (
                    m.best,
                    r.regime.clone().unwrap_or_else(|| "largest size".into()),
                )
            })
        })
        .min_by(|a, b| a.0.total_cmp(&b.0))
}

/// The headline figures, e.g. "L1 read 203 GB/s = 98 % of this core's
/// limit", "DRAM read 22.5 GB/s per core, 33 GB/s all cores".
pub fn headline(run: &Run) -> Vec<String> {
    let mut parts = Vec::new();
    for regime in ["L1", "L2", "L3", "DRAM"] {
        let Some((g, r)) = single(run, "read", "seq_read", regime) else {
            continue;
        };
        let mut s = format!("{regime} read {}", gbps(g));
        if regime == "L1" {
            if let Some(c) = r.width_bits.and_then(|w| run.host.ceiling("read", w)) {
                s.push_str(&format!(" = {:.0} % of this core's limit", g / c * 100.0));
            }
        }
        if regime == "DRAM" {
            s.push_str(" per core");
            if let Some((a, t)) = all_cores(run, "read") {
                s.push_str(&format!(", {} with {} threads", gbps(a), t));
            }
        }
        parts.push(s);
    }
    if let Some((g, _)) = single(run, "write", "seq_write", "DRAM") {
        parts.push(format!("DRAM write {}", gbps(g)));
    }
    let nt = ok(run)
        .filter(|r| {
            r.suite == "cache" && r.threads == 1 && r.nontemporal == Some(true) && r.op == "write"
        })
        .filter(|r| r.regime.as_deref() == Some("DRAM"))
        .filter_map(|r| r.gbps.map(|g| g.best))
        .fold(None, |a: Option<f64>, g| Some(a.map_or(g, |a| a.max(g))));
    if let Some(g) = nt {
        parts.push(format!("DRAM non-temporal write {}", gbps(g)));
    }
    if let Some((g, _)) = single(run, "copy", "libc_memcpy", "DRAM") {
        parts.push(format!("DRAM memcpy {}", gbps(g)));
    }
    if let Some((ns, regime)) = dram_latency(run) {
        parts.push(format!("{regime} latency {ns:.0} ns"));
    }
    parts
}

fn gbps(g: f64) -> String {
    if g >= 100.0 {
        format!("{g:.0} GB/s")
    } else {
        format!("{g:.1} GB/s")
    }
}

/// The warnings worth a line in a summary: run-level ones, then one line
/// per kind of record warning with its count.
pub fn warning_lines(run: &Run) -> Vec<String> {
    let mut out: Vec<String> = run
        .warnings
        .iter()
        .map(|w| format!("{} ({})", w, w.hint()))
        .collect();
    if run.interrupted {
        out.push(format!(
            "the run was interrupted: {} records were kept, the rest were not measured",
            run.records.len()
        ));
    }
    let measured = ok(run).count();
    let count = |f: &dyn Fn(&Warning) -> bool| ok(run).filter(|r| r.warnings.iter().any(f)).count();
    let noisy_load = count(&|w| matches!(w, Warning::ForeignLoad { .. } | Warning::Steal { .. }));
    let spread = count(&|w| matches!(w, Warning::HighCv { .. } | Warning::BestMedianSpread { .. }));
    let above = count(&|w| matches!(w, Warning::AboveCeiling { .. }));
    if noisy_load > 0 {
        out.push(format!(
            "noisy machine: other processes or the hypervisor were busy during {noisy_load} of {measured} measurements; compare `best`, and re-run on a quiet machine"
        ));
    }
    if spread > 0 {
        out.push(format!(
            "{spread} of {measured} measurements have samples spread more than 5 % (CV) or best > 1.1 × median; trust `best`"
        ));
    }
    if above > 0 {
        out.push(format!(
            "{above} results are above this core's computed limit: the clock estimate or a kernel's byte count is wrong; please report it with the JSON"
        ));
    }
    let skipped = run
        .records
        .iter()
        .filter(|r| r.status == Status::Skipped)
        .count();
    let errors = run
        .records
        .iter()
        .filter(|r| r.status == Status::Error)
        .count();
    if errors > 0 {
        out.push(format!("{errors} cases failed (see their `reason`)"));
    }
    if skipped > 0 {
        out.push(format!(
            "{skipped} cases were skipped on this machine (see their `reason`)"
        ));
    }
    out
}
