//! The machine's real topology, measured: the pairs' one-way latencies
//! grouped, and held against the classes the system states.
//!
//! - **Latency groups**: the pairs' CAS medians sorted; a step of more
//!   than [`limits::LATENCY_GROUP_GAP`] between neighbours starts a new
//!   group (SMT siblings, a CCX, across CCXs, across sockets).
//! - **A class's figure**: the median of its pairs, per package where the
//!   class lies within packages (a socket is measured against itself, so
//!   one slower socket is one finding, not every pair of it).
//! - **Findings**, each a typed warning with its evidence:
//!   `shares_a_core` (separate cores by the system, one core by the
//!   measurement: a HIT/HITM read at L1 speed, or a CAS within
//!   [`limits::SAME_CORE_CAS_CYCLES`]); `answers_like_class` (a minority
//!   of a class in another class's group, or slower than any);
//!   `class_splits` (a class whose pairs fill several groups: a cache or
//!   die the system does not show); `slower_twin` (one package's pairs
//!   of a class more than [`limits::SLOWER_TWIN`] × another's).
//!
//! Pure, so recorded matrices test it (nviennot/core-to-core-latency's
//! published results, `tests/fixtures/c2c/`).

use std::collections::BTreeMap;

use crate::model::{limits, Warning};
use crate::plan::classes::{ClassKey, Near};
use crate::stats::median;

/// What was measured of one pair.
#[derive(Debug, Clone, PartialEq)]
pub struct PairFigure {
    /// Holder first.
    pub pair: [u32; 2],
    /// Index into the classes judged against.
    pub class: usize,
    /// Each cpu's package.
    pub packages: [u32; 2],
    /// The CAS one-way median, ns, and in core cycles.
    pub cas_ns: Option<f64>,
    pub cas_cycles: Option<f64>,
    /// The faster of HIT and HITM: which, its median ns and cycles.
    pub read: Option<(&'static str, f64, Option<f64>)>,
}

/// A class's measured figure.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassFigure {
    pub class: usize,
    /// Pairs measured, and those that answered like the class.
    pub pairs: u32,
    pub alike: u32,
    /// The median of its pairs' CAS medians, ns.
    pub median_ns: Option<f64>,
    /// The latency group it falls in (1: the fastest).
    pub group: Option<u32>,
}

/// What the measured pairs say about the machine.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Verdict {
    pub classes: Vec<ClassFigure>,
    /// Each latency group's lowest and highest pair, ns.
    pub groups: Vec<(f64, f64)>,
    pub warnings: Vec<Warning>,
}

/// The groups of sorted `values`: (lowest, highest) each.
fn groups_of(values: &[f64]) -> Vec<(f64, f64)> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    let mut out: Vec<(f64, f64)> = Vec::new();
    for x in v {
        match out.last_mut() {
            Some((_, hi)) if x <= *hi * limits::LATENCY_GROUP_GAP => *hi = x,
            _ => out.push((x, x)),
        }
    }
    out
}

/// The group `x` falls in (by its place among the groups' edges).
fn group_of(groups: &[(f64, f64)], x: f64) -> usize {
    groups
        .iter()
        .position(|&(_, hi)| x <= hi * limits::LATENCY_GROUP_GAP.sqrt())
        .unwrap_or(groups.len().saturating_sub(1))
}

/// A pair that stands out: its figure, ns and cycles.
type Odd<'a> = (&'a PairFigure, f64, Option<f64>);

/// Judge `figs` (pairs of `classes`).
pub fn judge(classes: &[ClassKey], figs: &[PairFigure]) -> Verdict {
    let cas: Vec<f64> = figs.iter().filter_map(|f| f.cas_ns).collect();
    let groups = groups_of(&cas);
    let mut warnings = Vec::new();
    // The class's figure where it is judged: per package within one, else
    // the whole class.
    let scope = |f: &PairFigure| -> Option<u32> {
        (classes[f.class].near < Near::Package && f.packages[0] == f.packages[1])
            .then_some(f.packages[0])
    };
    let mut by_scope: BTreeMap<(usize, Option<u32>), Vec<f64>> = BTreeMap::new();
    for f in figs {
        if let Some(ns) = f.cas_ns {
            by_scope.entry((f.class, scope(f))).or_default().push(ns);
        }
    }
    let scope_median: BTreeMap<(usize, Option<u32>), f64> = by_scope
        .iter()
        .filter_map(|(k, v)| Some((*k, median(v)?)))
        .collect();
    let class_median: Vec<Option<f64>> = (0..classes.len())
        .map(|c| {
            let v: Vec<f64> = figs
                .iter()
                .filter(|f| f.class == c)
                .filter_map(|f| f.cas_ns)
                .collect();
            median(&v)
        })
        .collect();
    warnings.extend(slower_twins(classes, &scope_median));
    let mut alike = vec![0u32; classes.len()];
    let mut odd: BTreeMap<(usize, Option<usize>), Vec<Odd>> = BTreeMap::new();
    let mut same_core: BTreeMap<(usize, &'static str), Vec<Odd>> = BTreeMap::new();
    for f in figs {
        let near = classes[f.class].near;
        if near != Near::Smt {
            if let Some((what, ns, cy)) = same_core_evidence(f) {
                same_core.entry((f.class, what)).or_default().push((f, ns, cy));
                continue;
            }
        }
        let Some(ns) = f.cas_ns else { continue };
        let Some(&mine) = scope_median.get(&(f.class, scope(f))) else {
            continue;
        };
        if group_of(&groups, ns) == group_of(&groups, mine) {
            alike[f.class] += 1;
            continue;
        }
        // Another class whose figure sits in this pair's group.
        let like = (0..classes.len())
            .filter(|&c| c != f.class)
            .filter_map(|c| Some((c, class_median[c]?)))
            .filter(|&(_, m)| group_of(&groups, m) == group_of(&groups, ns))
            .min_by(|a, b| (a.1.ln() - ns.ln()).abs().total_cmp(&(b.1.ln() - ns.ln()).abs()))
            .map(|(c, _)| c);
        if like.is_some() || ns > 2.0 * mine {
            odd.entry((f.class, like)).or_default().push((f, ns, None));
        }
    }
    for ((c, what), v) in same_core {
        let ns: Vec<f64> = v.iter().map(|x| x.1).collect();
        let cy: Vec<f64> = v.iter().filter_map(|x| x.2).collect();
        warnings.push(Warning::SharesACore {
            pairs: v.iter().map(|x| x.0.pair).collect(),
            stated: classes[c].name(),
            exchange: what.to_string(),
            ns: median(&ns).unwrap_or(0.0),
            cycles: median(&cy),
        });
    }
    for ((c, like), v) in odd {
        // A large part of the class elsewhere is the class splitting,
        // said once below; a few pairs are the cpus that stray.
        let total = by_scope
            .iter()
            .filter(|((k, _), _)| *k == c)
            .map(|(_, v)| v.len())
            .sum::<usize>();
        if v.len() >= 2 && v.len() * 4 >= total {
            continue;
        }
        let ns: Vec<f64> = v.iter().map(|x| x.1).collect();
        warnings.push(Warning::AnswersLikeClass {
            pairs: v.iter().map(|x| x.0.pair).collect(),
            stated: classes[c].name(),
            like: like.map(|l| classes[l].name()),
            ns: median(&ns).unwrap_or(0.0),
            stated_ns: class_median[c].unwrap_or(0.0),
            like_ns: like.and_then(|l| class_median[l]),
        });
    }
    warnings.extend(splits(classes, &by_scope, &groups));
    let figures = (0..classes.len())
        .map(|c| ClassFigure {
            class: c,
            pairs: figs.iter().filter(|f| f.class == c).count() as u32,
            alike: alike[c],
            median_ns: class_median[c],
            group: class_median[c].map(|m| group_of(&groups, m) as u32 + 1),
        })
        .collect();
    Verdict {
        classes: figures,
        groups,
        warnings,
    }
}

/// A pair's evidence that it is one core: a HIT/HITM read at L1 speed,
/// else a CAS within a core's own.
fn same_core_evidence(f: &PairFigure) -> Option<(&'static str, f64, Option<f64>)> {
    if let Some((what, ns, Some(cy))) = f.read {
        if cy <= limits::SAME_CORE_READ_CYCLES {
            return Some((what, ns, Some(cy)));
        }
        // A read that left the core says it all, whatever the CAS.
        return None;
    }
    match (f.cas_ns, f.cas_cycles) {
        (Some(ns), Some(cy)) if cy <= limits::SAME_CORE_CAS_CYCLES => Some(("cas", ns, Some(cy))),
        _ => None,
    }
}

/// One package's figure of a class more than [`limits::SLOWER_TWIN`] ×
/// the fastest package's.
fn slower_twins(
    classes: &[ClassKey],
    scope_median: &BTreeMap<(usize, Option<u32>), f64>,
) -> Vec<Warning> {
    let mut out = Vec::new();
    for (c, k) in classes.iter().enumerate() {
        let per: Vec<(u32, f64)> = scope_median
            .iter()
            .filter_map(|(&(cc, p), &m)| (cc == c).then_some((p?, m)))
            .collect();
        let Some(&(twin, fast)) = per.iter().min_by(|a, b| a.1.total_cmp(&b.1)) else {
            continue;
        };
        for &(package, ns) in &per {
            if ns > fast * limits::SLOWER_TWIN {
                out.push(Warning::SlowerTwin {
                    class: k.name(),
                    package,
                    twin,
                    ns,
                    twin_ns: fast,
                });
            }
        }
    }
    out
}

/// Classes whose pairs (within one scope) fill several latency groups,
/// at least two pairs and a quarter of them outside the largest.
fn splits(
    classes: &[ClassKey],
    by_scope: &BTreeMap<(usize, Option<u32>), Vec<f64>>,
    groups: &[(f64, f64)],
) -> Vec<Warning> {
    let mut out = Vec::new();
    for ((c, _), v) in by_scope {
        let mut parts: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
        for &x in v {
            parts.entry(group_of(groups, x)).or_default().push(x);
        }
        let largest = parts.values().map(Vec::len).max().unwrap_or(0);
        let rest = v.len() - largest;
        if parts.len() < 2 || rest < 2 || rest * 4 < v.len() {
            continue;
        }
        let name = classes[*c].name();
        if out
            .iter()
            .any(|w| matches!(w, Warning::ClassSplits { class, .. } if *class == name))
        {
            continue;
        }
        out.push(Warning::ClassSplits {
            class: name,
            groups: parts
                .values()
                .map(|p| (median(p).unwrap_or(0.0), p.len() as u32))
                .collect(),
        });
    }
    out
}

#[cfg(test)]
#[path = "verdict_tests.rs"]
mod tests;
