//! Clean or noisy: the one place that decides whether a record was taken
//! in noise, so the history's `noisy` column, watch's samples,
//! `compare --headline` and the step rule's points agree. A noisy figure
//! is kept and shown, but it never starts a step and is never judged
//! against a clean one.

use crate::model::{Record, Run, Warning};

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
}
