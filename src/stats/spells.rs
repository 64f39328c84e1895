//! Judging a record's samples by the spells they were taken in
//! (`model::Spells`): which samples ran on a shared core or beside a
//! memory loaded from outside, and what the clean ones measured.
//!
//! Pure: the probes' readings are in the samples and the baseline is
//! given, so a run can be judged again at its end, when the baseline has
//! seen the whole run (a run that started in a contended spell would
//! otherwise take that spell for normal).

use crate::model::{
    limits, Noise, Probe, Regime, Sample, ShareCause, SpellBaseline, Spells, Warning,
};

/// The share of its core a probe reading shows, against `base`.
pub fn core_share(p: &Probe, base: &SpellBaseline) -> Option<f64> {
    let reference = base.core_bytes_per_cycle.filter(|r| *r > 0.0)?;
    Some(p.core_bytes_per_cycle? / reference)
}

/// How many times the run's quiet reading (`SpellBaseline::chase_ns`) a
/// memory probe reading is.
pub fn memory_load(p: &Probe, base: &SpellBaseline) -> Option<f64> {
    let quiet = base.chase_ns.filter(|r| *r > 0.0)?;
    Some(p.chase_ns? / quiet)
}

fn shared(p: &Probe, base: &SpellBaseline) -> bool {
    core_share(p, base).is_some_and(|s| s < limits::CORE_SHARED)
}

fn contended(p: &Probe, base: &SpellBaseline) -> bool {
    memory_load(p, base).is_some_and(|l| l > limits::MEMORY_LOADED)
}

/// Whether the memory's spells bear on a record in `regime`: a working
/// set in L1 or L2 never leaves the core, so a loaded memory does not
/// make its sample unclean (L3 is shared with the host's other tenants,
/// like DRAM).
pub fn memory_matters(regime: Option<&Regime>) -> bool {
    !matches!(regime, Some(Regime::L1) | Some(Regime::L2))
}

/// The spells of `samples` against `base`; `bandwidth`: the samples'
/// bytes are a bandwidth's (the clean figure is GB/s), else the record
/// has no clean figure. None when no sample carries a probe reading.
pub fn judge(
    samples: &[Sample],
    base: &SpellBaseline,
    regime: Option<&Regime>,
    bandwidth: bool,
    noise: Option<&Noise>,
) -> Option<Spells> {
    let probed: Vec<(&Sample, &Probe)> = samples
        .iter()
        .filter_map(|s| s.probe.as_ref().map(|p| (s, p)))
        .collect();
    if probed.is_empty() {
        return None;
    }
    let memory = memory_matters(regime);
    let core_shared = probed.iter().filter(|(_, p)| shared(p, base)).count() as u32;
    let memory_contended = probed
        .iter()
        .filter(|(_, p)| memory && contended(p, base))
        .count() as u32;
    let clean: Vec<f64> = probed
        .iter()
        .filter(|(_, p)| !(shared(p, base) || memory && contended(p, base)))
        .filter(|(s, _)| s.seconds > 0.0)
        .map(|(s, _)| s.bytes as f64 / s.seconds / 1e9)
        .collect();
    let shares: Vec<f64> = probed
        .iter()
        .filter_map(|(_, p)| core_share(p, base))
        .collect();
    let chases: Vec<f64> = probed.iter().filter_map(|(_, p)| p.chase_ns).collect();
    Some(Spells {
        probed: probed.len() as u32,
        core_shared,
        memory_contended,
        core_share_median: super::median(&shares),
        chase_ns_median: super::median(&chases),
        clean: if bandwidth {
            super::summarize(&clean, true)
        } else {
            None
        },
        cause: (core_shared > 0).then(|| cause(noise)),
        baseline: *base,
    })
}

/// What the guest saw of why its core was shared: the hypervisor's
/// steal, or other processes' load beyond the reading's resolution;
/// neither leaves another tenant on the host core's sibling.
fn cause(noise: Option<&Noise>) -> ShareCause {
    match noise {
        Some(n) if n.steal_beyond_resolution() > limits::STEAL_CPUS => ShareCause::Steal,
        Some(n) if n.foreign_beyond_resolution() > limits::FOREIGN_CPUS => ShareCause::GuestLoad,
        _ => ShareCause::Invisible,
    }
}

/// A spell counts for a record when it covers at least this share of its
/// probed samples, and two of them: one probe hit by an interrupt is not
/// a spell.
pub const SPELL_FRACTION: f64 = 0.25;

fn counts(n: u32, probed: u32) -> bool {
    n >= 2 && n as f64 >= SPELL_FRACTION * probed as f64
}

/// The warnings `spells` deserve: `core_shared` and `memory_contended`,
/// with their evidence, where the spell covers enough of the samples.
pub fn warnings(spells: &Spells, samples: &[Sample], noise: Option<&Noise>) -> Vec<Warning> {
    let mut w = Vec::new();
    let base = &spells.baseline;
    if counts(spells.core_shared, spells.probed) {
        let shares: Vec<f64> = samples
            .iter()
            .filter_map(|s| s.probe.as_ref())
            .filter(|p| shared(p, base))
            .filter_map(|p| core_share(p, base))
            .collect();
        w.push(Warning::CoreShared {
            fraction: spells.shared_fraction(),
            share: super::median(&shares).unwrap_or(0.0),
            cause: spells.cause.unwrap_or(ShareCause::Invisible),
        });
    }
    // Memory the guest's own processes load is theirs, said by the
    // `foreign_load` warning: only load nothing here explains is outside.
    let outside = cause(noise) == ShareCause::Invisible;
    if outside && counts(spells.memory_contended, spells.probed) {
        let ns: Vec<f64> = samples
            .iter()
            .filter_map(|s| s.probe.as_ref())
            .filter(|p| contended(p, base))
            .filter_map(|p| p.chase_ns)
            .collect();
        w.push(Warning::MemoryContended {
            low_gbps: None,
            high_gbps: None,
            turns: None,
            fraction: Some(spells.contended_fraction()),
            probe_ns: super::median(&ns),
            baseline_ns: base.chase_ns,
        });
    }
    w
}

/// Whether `w` is one of the warnings [`warnings`] gives (to replace them
/// when a record is judged again).
pub fn is_spell_warning(w: &Warning) -> bool {
    matches!(w, Warning::CoreShared { .. })
        || matches!(
            w,
            Warning::MemoryContended {
                fraction: Some(_),
                ..
            }
        )
}

#[cfg(test)]
mod tests;
