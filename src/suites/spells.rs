//! A record's spells (`model::Spells`, docs/noise.md): judged from the
//! probe readings its samples carry, when the record is made and again at
//! the end of the run against the whole run's baseline.

use crate::model::Record;
use crate::stats;

/// The spells `r`'s samples were taken in, judged against its run's
/// baseline so far (`SpellProbes::baseline`, as the sampler saw it after
/// the samples: `Measured::baseline`), and the warnings they deserve; a
/// run judges its records again at its end ([`rejudge`]). Without a
/// baseline (no probes taken) nothing is judged.
pub fn judge(r: &mut Record, base: Option<&crate::model::SpellBaseline>) {
    if let Some(b) = base {
        rejudge(r, b);
    }
}

/// Judge `r`'s spells again against `base` (the whole run's baseline),
/// replacing its spells and their warnings.
pub fn rejudge(r: &mut Record, base: &crate::model::SpellBaseline) {
    if r.samples.iter().all(|s| s.probe.is_none()) {
        return;
    }
    r.spells = stats::spells::judge(
        &r.samples,
        base,
        r.regime.as_ref(),
        r.gbps.is_some(),
        r.noise.as_ref(),
    );
    r.warnings.retain(|w| !stats::spells::is_spell_warning(w));
    if let Some(s) = &r.spells {
        r.warnings
            .extend(stats::spells::warnings(s, &r.samples, r.noise.as_ref()));
    }
}
