//! The reference file (`--reference FILE`): per class of node (CPU model,
//! core count, memory size: NHC's per-host lines, ReFrame's per-partition
//! references) the bounds a healthy node reaches, so a node worse than its
//! class fails even when the whole fleet is slow; and `--write-reference`,
//! which makes one from a good run.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::UserError;
use crate::model::fleet::{FleetRun, Verdicts};
use crate::model::Host;
use crate::report::fleet::metrics::{self, Figure};
use crate::stats::median;

/// A reference class matches a node whose memory is within this fraction
/// of the class's (kernels reserve different amounts of the same DIMMs).
const MEMORY_TOLERANCE: f64 = 0.05;

/// The version of the reference file layout.
pub const REFERENCE_VERSION: u32 = 1;

/// Largest reference file read (a class is a few hundred bytes).
pub const MAX_REFERENCE_BYTES: u64 = 1 << 20;

/// `--reference FILE`. Unknown fields are refused (a misspelt `"cores"`
/// would otherwise match every node).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Reference {
    pub bwscope_reference: u32,
    pub classes: Vec<Class>,
}

/// A kind of node and what it must reach.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Class {
    #[serde(default)]
    pub name: Option<String>,
    /// CPU model as `bwscope info` prints it; `*` matches any run of characters.
    pub cpu: String,
    /// Physical cores, if the class is that specific.
    #[serde(default)]
    pub cores: Option<usize>,
    /// Memory in GiB (MemTotal, ±5 %), if the class is that specific.
    #[serde(default)]
    pub memory_gib: Option<f64>,
    /// Metric → bound: at least this for rates, at most this for latencies.
    pub bounds: BTreeMap<String, f64>,
    /// The class's memory system peak, GB/s (channels × MT/s × 8 B), for
    /// nodes whose SMBIOS does not tell it (VMs, no root): their DRAM
    /// records are judged against it, as with `--dram-peak`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dram_peak_gbps: Option<f64>,
}

/// `*` as "any characters", everything else literal.
fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || !text[first.len()..].ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for p in &parts[1..parts.len() - 1] {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    true
}

impl Class {
    pub fn matches(&self, h: &Host) -> bool {
        glob(self.cpu.trim(), h.cpu.model_name.trim())
            && self.cores.is_none_or(|c| c == h.physical_cores)
            && self.memory_gib.is_none_or(|g| {
                h.env.mem_total_bytes.is_some_and(|m| {
                    let have = m as f64 / (1u64 << 30) as f64;
                    (have - g).abs() <= g * MEMORY_TOLERANCE
                })
            })
    }
}

/// Put each class's `dram_peak_gbps` on the nodes it matches: their host's
/// DRAM peak and their DRAM records' limits.
pub fn restate_dram(r: &Reference, f: &mut FleetRun) {
    for run in f.nodes.iter_mut().filter_map(|n| n.run.as_mut()) {
        let peak = r
            .classes
            .iter()
            .find(|c| c.matches(&run.host))
            .and_then(|c| c.dram_peak_gbps);
        if let Some(g) = peak {
            let mut dram = run.host.dram.take().unwrap_or_default().with_stated(g);
            dram.source = "the fleet's --reference".into();
            run.host.dram = Some(dram);
            run.restate_dram_peak(g);
        }
    }
}

/// Read and check a reference file: a regular file of at most
/// [`MAX_REFERENCE_BYTES`], read without waiting (see [`parse`]).
pub fn load(path: &str) -> Result<Reference, UserError> {
    use crate::os::input::{read_regular, Rules};
    let rules = Rules {
        max: MAX_REFERENCE_BYTES,
        follow: true,
    };
    let (bytes, _) = read_regular(std::path::Path::new(path), rules)
        .map_err(|e| UserError::flag("--reference", format!("{path}: {e}")))?;
    parse(path, &bytes)
}

/// Check a reference file's bytes (`path` names it in errors): JSON of the
/// layout above (a byte-order mark is ignored), no unknown field, every
/// bound a known metric with a finite value of 0 or more, every class with
/// a bound. A misspelt metric would otherwise be ignored and every node
/// pass.
pub fn parse(path: &str, bytes: &[u8]) -> Result<Reference, UserError> {
    let bad = |m: String| UserError::flag("--reference", format!("{path}: {m}"));
    let r: Reference = serde_json::from_slice(crate::os::input::strip_bom(bytes)).map_err(|e| {
        bad(format!(
            "not a bwscope reference file ({e}); see docs/fleet.md"
        ))
    })?;
    if r.bwscope_reference > REFERENCE_VERSION {
        return Err(bad(format!(
            "layout {} is newer than this bwscope reads ({REFERENCE_VERSION})",
            r.bwscope_reference
        )));
    }
    if r.classes.is_empty() {
        return Err(bad("has no classes, so it would judge nothing".into()));
    }
    for (i, c) in r.classes.iter().enumerate() {
        let name = c.name.clone().unwrap_or_else(|| format!("class {}", i + 1));
        // A class with only a DRAM peak judges nothing but still gives its
        // nodes' DRAM records their limit.
        if c.bounds.is_empty() && c.dram_peak_gbps.is_none() {
            return Err(bad(format!(
                "{name} has neither bounds nor dram_peak_gbps, so it would do nothing"
            )));
        }
        for (metric, b) in &c.bounds {
            if !metrics::is_metric(metric) {
                return Err(bad(format!(
                    "{name}: '{metric}' is not a metric bwscope measures; known: {}",
                    metrics::metrics().join(", ")
                )));
            }
            if !(b.is_finite() && *b >= 0.0) {
                return Err(bad(format!(
                    "{name}: {metric} = {b} is not a bound (give a number of 0 or more)"
                )));
            }
        }
        if c.memory_gib.is_some_and(|g| !(g.is_finite() && g > 0.0)) {
            return Err(bad(format!("{name}: memory_gib must be a positive number")));
        }
    }
    if r.classes.iter().any(|c| {
        c.dram_peak_gbps
            .is_some_and(|g| !(g.is_finite() && g > 0.0))
    }) {
        return Err(bad("dram_peak_gbps must be a number above 0 (GB/s)".into()));
    }
    Ok(r)
}

/// A reference from this run: one class per CPU model, core count and
/// memory size among the nodes that passed, each bound at the class
/// median made worse by `pct` percent (`--write-reference`).
pub fn make(f: &FleetRun, v: &Verdicts, pct: f64) -> Reference {
    let mut classes: Vec<(Class, Vec<Vec<Figure>>)> = Vec::new();
    for (n, figs) in f.nodes.iter().zip(metrics::fleet_figures(f)) {
        let passed = v.nodes.iter().any(|x| x.rank == n.rank && x.ok);
        let Some(run) = n.run.as_ref().filter(|_| passed) else {
            continue;
        };
        let h = &run.host;
        let gib = h
            .env
            .mem_total_bytes
            .map(|m| (m as f64 / (1u64 << 30) as f64 * 10.0).round() / 10.0);
        let key = Class {
            name: None,
            cpu: h.cpu.model_name.trim().to_string(),
            cores: Some(h.physical_cores),
            memory_gib: gib,
            bounds: BTreeMap::new(),
            dram_peak_gbps: h.dram.as_ref().and_then(|d| d.peak_gbps),
        };
        match classes.iter_mut().find(|(c, _)| {
            c.cpu == key.cpu
                && c.cores == key.cores
                && c.memory_gib
                    .zip(gib)
                    .is_none_or(|(a, b)| (a - b).abs() <= a * MEMORY_TOLERANCE)
        }) {
            Some((_, members)) => members.push(figs.1),
            None => classes.push((key, vec![figs.1])),
        }
    }
    let classes = classes
        .into_iter()
        .enumerate()
        .map(|(i, (mut c, members))| {
            c.name = Some(format!("class{} ({} nodes)", i + 1, members.len()));
            let all: Vec<&Figure> = members.iter().flatten().collect();
            for g in &all {
                if c.bounds.contains_key(&g.metric) {
                    continue;
                }
                let vals: Vec<f64> = all
                    .iter()
                    .filter(|x| x.metric == g.metric)
                    .map(|x| x.value)
                    .collect();
                if let Some(med) = median(&vals) {
                    let b = if g.higher_is_better {
                        med * (1.0 - pct / 100.0)
                    } else {
                        med * (1.0 + pct / 100.0)
                    };
                    c.bounds
                        .insert(g.metric.clone(), (b * 1000.0).round() / 1000.0);
                }
            }
            c
        })
        // A class without a figure would judge nothing (and be refused).
        .filter(|c| !c.bounds.is_empty())
        .collect();
    Reference {
        bwscope_reference: REFERENCE_VERSION,
        classes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob("AMD EPYC 9654*", "AMD EPYC 9654 96-Core Processor"));
        assert!(glob("*EPYC*Core*", "AMD EPYC 9654 96-Core Processor"));
        assert!(glob("exact", "exact"));
        assert!(!glob("Intel*", "AMD EPYC"));
        assert!(!glob("*9655*", "AMD EPYC 9654"));
        assert!(glob("*", ""));
    }

    #[test]
    fn reference_files_are_checked() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("r.json");
        std::fs::write(
            &p,
            r#"{"bwscope_reference":1,"classes":[{"cpu":"*","bounds":{"dram_read_gbps":5}}]}"#,
        )
        .unwrap();
        let r = load(p.to_str().unwrap()).unwrap();
        assert_eq!(r.classes[0].bounds["dram_read_gbps"], 5.0);
        assert_eq!(r.classes[0].dram_peak_gbps, None);
        // A class may state its DRAM peak; it must be a rate.
        std::fs::write(
            &p,
            r#"{"bwscope_reference":1,"classes":[{"cpu":"*","bounds":{},"dram_peak_gbps":409.6}]}"#,
        )
        .unwrap();
        assert_eq!(
            load(p.to_str().unwrap()).unwrap().classes[0].dram_peak_gbps,
            Some(409.6)
        );
        std::fs::write(
            &p,
            r#"{"bwscope_reference":1,"classes":[{"cpu":"*","bounds":{},"dram_peak_gbps":-1}]}"#,
        )
        .unwrap();
        let e = load(p.to_str().unwrap()).unwrap_err().to_string();
        assert!(e.contains("dram_peak_gbps must be a number above 0"), "{e}");
        std::fs::write(&p, r#"{"classes":[]}"#).unwrap();
        let e = load(p.to_str().unwrap()).unwrap_err().to_string();
        assert!(
            e.contains("--reference") && e.contains("not a bwscope reference"),
            "{e}"
        );
        std::fs::write(&p, r#"{"bwscope_reference":9,"classes":[]}"#).unwrap();
        assert!(load(p.to_str().unwrap()).is_err());
    }

    #[test]
    fn misspelt_metrics_and_fields_are_named() {
        let one = |body: &str| {
            parse("r.json", body.as_bytes())
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        let ok = r#"{"bwscope_reference":1,"classes":[{"cpu":"*","bounds":{"clock_ghz":2,"tcp_in_gbps":1}}]}"#;
        assert_eq!(one(ok), Ok(()));
        // A byte-order mark is not an error.
        assert_eq!(one(&format!("\u{feff}{ok}")), Ok(()));
        let e = one(r#"{"bwscope_reference":1,"classes":[{"cpu":"*","bounds":{"clock_gz":99}}]}"#)
            .unwrap_err();
        assert!(
            e.contains("'clock_gz' is not a metric") && e.contains("clock_ghz"),
            "{e}"
        );
        let e = one(
            r#"{"bwscope_reference":1,"classes":[{"cpu":"*","core":8,"bounds":{"clock_ghz":2}}]}"#,
        )
        .unwrap_err();
        assert!(e.contains("unknown field `core`"), "{e}");
        for (body, word) in [
            (r#"{"bwscope_reference":1,"classes":[]}"#, "no classes"),
            (
                r#"{"bwscope_reference":1,"classes":[{"cpu":"*","bounds":{}}]}"#,
                "neither bounds nor dram_peak_gbps",
            ),
            (
                r#"{"bwscope_reference":1,"classes":[{"cpu":"*","bounds":{"clock_ghz":-1}}]}"#,
                "is not a bound",
            ),
        ] {
            let e = one(body).unwrap_err();
            assert!(e.contains(word), "{body}: {e}");
        }
    }
}
