//! What a row of the store is: a record's case key, its noise flags, and
//! the machine a run belongs to.
//!
//! The case key is the record's own (`Record::case_key`: suite, kernel,
//! size, threads, memory kind and the suite's typed case parts), so a case
//! means one thing in a record, in `compare` and in the store. A headline
//! figure of the summary is a case of its own, `headline/<name>`: the
//! survey picks the best size per level, and that size may differ from run
//! to run while the headline stays the same question.

use sha2::{Digest, Sha256};

use crate::model::{Host, Record, Run, Warning};

/// The case key of a headline figure (`headline/DRAM read`).
pub fn headline_key(name: &str) -> String {
    format!("headline/{name}")
}

/// Why a figure is not this machine's usual self: the noise it was taken
/// in, from the warnings records carry, the spell probes' `core_shared`
/// and `memory_contended` among them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Flags {
    /// The figure is left out of percentiles and cannot start a step.
    pub noisy: bool,
    /// The warning kinds behind `noisy`, for the store's `flags` column.
    pub why: Vec<&'static str>,
}

impl Flags {
    /// The flags as the store keeps them: kinds joined by commas.
    pub fn column(&self) -> String {
        self.why.join(",")
    }
}

/// The one place that decides whether a record (of `run`) was taken in
/// noise: another load on the machine, hypervisor steal, descheduled
/// samples, memory contended from outside, or samples that disagree.
pub fn flags(record: &Record, run: &Run) -> Flags {
    let mut why = Vec::new();
    let mut add = |w: &'static str| {
        if !why.contains(&w) {
            why.push(w);
        }
    };
    for w in &record.warnings {
        match w {
            Warning::ForeignLoad { .. } => add("foreign_load"),
            Warning::Steal { .. } => add("steal"),
            Warning::Descheduled { .. } => add("descheduled"),
            Warning::MemoryContended { .. } => add("memory_contended"),
            // The spell probes (docs/noise.md): the moment's figure.
            Warning::CoreShared { .. } => add("core_shared"),
            Warning::HighCv { .. } => add("high_cv"),
            Warning::BestMedianSpread { .. } => add("best_median_spread"),
            _ => {}
        }
    }
    if record.repeats.as_ref().is_some_and(|r| r.contended) {
        add("memory_contended");
    }
    // A run-level contention warning covers every record of the run.
    if run
        .warnings
        .iter()
        .any(|w| matches!(w, Warning::MemoryContended { .. }))
    {
        add("memory_contended");
    }
    Flags {
        noisy: !why.is_empty(),
        why,
    }
}

/// SHA-256 of `s`, the first 16 hex digits: stable across releases and
/// platforms, and it does not give the input back.
pub fn short_hash(s: &str) -> String {
    let d = Sha256::digest(s.as_bytes());
    d.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// The host name as the store keeps it by default: hashed, salted with
/// the tool's name so the hash is not a plain SHA-256 of the name.
pub fn hostname_hash(host: &Host) -> Option<String> {
    host.env.hostname.as_deref().map(name_hash)
}

/// A host name's hash as the store keeps it (a fleet node's `node`).
pub fn name_hash(name: &str) -> String {
    short_hash(&format!("bwscope host name\0{name}"))
}

/// Which machine a run belongs to: the CPU (vendor, model name, family,
/// model, stepping), its core count and the host name's hash. The kernel,
/// microcode and DIMMs are kept beside it, not in it: a kernel update is
/// exactly what a step in the history should show, not a new machine.
pub fn machine_key(host: &Host) -> String {
    let c = &host.cpu;
    short_hash(&format!(
        "{}\0{}\0{:#x}\0{:#x}\0{}\0{}\0{}",
        c.vendor,
        c.model_name,
        c.family,
        c.model,
        c.stepping,
        host.physical_cores,
        hostname_hash(host).unwrap_or_default()
    ))
}

/// A run's identity in the store, the same whether it is recorded as it
/// finishes or imported later from its JSON, so an import is idempotent.
pub fn run_uid(run: &Run) -> String {
    let figures: Vec<String> = run
        .records
        .iter()
        .map(|r| format!("{}={:?}", r.case_key(), r.gbps.map(|g| g.best)))
        .collect();
    short_hash(&format!(
        "{}\0{}\0{}\0{}\0{}",
        run.started_at,
        machine_key(&run.host),
        run.command,
        run.tool.version,
        figures.join("\n")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Repeats, SuiteId, Turn};

    fn run() -> Run {
        let v: serde_json::Value =
            serde_json::from_str(include_str!("../../tests/fixtures/cache-quick.json")).unwrap();
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn flags_name_the_noise_a_record_carries() {
        let run = run();
        let quiet = Record::new(SuiteId::Cache);
        assert_eq!(flags(&quiet, &run), Flags::default());
        let mut busy = quiet.clone();
        busy.warnings = vec![
            Warning::ForeignLoad { cpus: 0.5 },
            Warning::HighCv { cv: 0.2 },
            Warning::ForeignLoad { cpus: 0.7 },
        ];
        let f = flags(&busy, &run);
        assert!(f.noisy);
        assert_eq!(f.column(), "foreign_load,high_cv");
        let mut contended = quiet.clone();
        contended.repeats = Some(Repeats {
            turns: vec![Turn {
                at: "record".into(),
                gbps: 1.0,
                foreign_cpus: None,
            }],
            contended: true,
        });
        assert_eq!(flags(&contended, &run).why, vec!["memory_contended"]);
        // A warning that says nothing of noise does not flag.
        let mut other = quiet;
        other.warnings = vec![Warning::ThpNotObtained { fraction: 0.5 }];
        assert!(!flags(&other, &run).noisy);
    }

    #[test]
    fn the_host_name_is_kept_only_as_a_hash() {
        let mut run = run();
        run.host.env.hostname = Some("db-17.example.org".into());
        let h = hostname_hash(&run.host).unwrap();
        assert_eq!(h.len(), 16);
        assert!(!h.contains("db-17"));
        let a = machine_key(&run.host);
        run.host.env.hostname = Some("db-18.example.org".into());
        assert_ne!(a, machine_key(&run.host));
        // A new kernel is the same machine.
        let b = machine_key(&run.host);
        run.host.env.kernel = Some("7.0".into());
        assert_eq!(b, machine_key(&run.host));
        assert_eq!(run_uid(&run), run_uid(&run.clone()));
    }
}
