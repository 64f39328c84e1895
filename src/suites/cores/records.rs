//! The records beyond one pair's: each class's pairs together (with the
//! verdict's findings on them), the fairness view, and the one-pair check
//! other suites ask before they trust two cpus to be two cores.

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::verdict::{self, PairFigure};
use super::CoresPlan;
use crate::measure::c2c::{Handoff, Pair};
use crate::measure::{Measured, SampleOpts, Sampler};
use crate::model::detail::{CoresDetail, CoresView, Exchange};
use crate::model::{limits, Host, Op, Record, Status, Warning};
use crate::plan::classes::{class_of, ClassKey};
use crate::stats;

/// The fairness record's kernel.
pub const FAIRNESS: &str = "c2c_fairness";

/// A pair record's exchange, pair, class and one-way median.
struct PairMedian {
    exchange: Exchange,
    pair: [u32; 2],
    class: String,
    ns: f64,
    cycles: Option<f64>,
}

fn pair_median(r: &Record) -> Option<PairMedian> {
    let d = r.detail.get::<CoresDetail>()?;
    if r.status != Status::Ok || d.case_view != Some(CoresView::Pair) {
        return None;
    }
    Some(PairMedian {
        exchange: d.case_exchange?,
        pair: d.case_pair?,
        class: d.case_class.clone()?,
        ns: d.one_way_ns.value()?.median,
        cycles: d.cycles.value().map(|c| c.median),
    })
}

/// One record per class and exchange measured: the class's pairs'
/// medians together, and on its CAS record the verdict's findings about
/// it.
pub fn classes(plan: &CoresPlan, measured: &[Record], clock_hz: Option<f64>) -> Vec<Record> {
    let keys: Vec<ClassKey> = plan.pairs.classes.iter().map(|c| c.key.clone()).collect();
    let names: Vec<&str> = plan.pairs.classes.iter().map(|c| c.name.as_str()).collect();
    let mut figs: BTreeMap<[u32; 2], PairFigure> = BTreeMap::new();
    let mut by_class: BTreeMap<(usize, Exchange), Vec<PairMedian>> = BTreeMap::new();
    for m in measured.iter().filter_map(pair_median) {
        let Some(c) = names.iter().position(|n| *n == m.class) else {
            continue;
        };
        let (e, pair, ns, cy) = (m.exchange, m.pair, m.ns, m.cycles);
        by_class.entry((c, e)).or_default().push(m);
        let t = &plan.topology;
        let packages = [pair[0], pair[1]].map(|x| t.place(x).map_or(0, |p| p.package));
        let f = figs.entry(pair).or_insert(PairFigure {
            pair,
            class: c,
            packages,
            cas_ns: None,
            cas_cycles: None,
            read: None,
        });
        match e {
            Exchange::Cas => (f.cas_ns, f.cas_cycles) = (Some(ns), cy),
            Exchange::Hit | Exchange::Hitm => {
                if f.read.is_none_or(|(_, old, _)| ns < old) {
                    f.read = Some((e.name(), ns, cy));
                }
            }
        }
    }
    let figs: Vec<PairFigure> = figs.into_values().collect();
    let v = verdict::judge(&keys, &figs);
    let mut out = Vec::new();
    for ((c, e), pairs) in by_class {
        let class = &plan.pairs.classes[c];
        let ns: Vec<f64> = pairs.iter().map(|p| p.ns).collect();
        let cy: Vec<f64> = pairs.iter().filter_map(|p| p.cycles).collect();
        let mut cpus: Vec<u32> = pairs.iter().flat_map(|p| p.pair).collect();
        cpus.sort_unstable();
        cpus.dedup();
        let figure = v.classes.get(c);
        let detail = CoresDetail {
            case_view: Some(CoresView::Class),
            case_exchange: Some(e),
            case_class: Some(class.name.clone()),
            class_what: Some(class.what.clone()),
            one_way_ns: stats::summarize(&ns, false).into(),
            cycles: stats::summarize(&cy, false).into(),
            clock_hz: clock_hz.into(),
            pairs: Some(pairs.len() as u32),
            pairs_alike: (e == Exchange::Cas).then(|| figure.map_or(0, |f| f.alike)),
            measured_group: figure.and_then(|f| f.group).filter(|_| e == Exchange::Cas),
            ..CoresDetail::default()
        };
        let mut r = Record {
            kernel: e.kernel().into(),
            op: Op::CoreToCore,
            threads: 2,
            cpus,
            ..Record::new(detail)
        };
        if e == Exchange::Cas {
            r.warnings = v
                .warnings
                .iter()
                .filter(|w| about(w) == Some(class.name.as_str()))
                .cloned()
                .collect();
        }
        out.push(r);
    }
    // A finding about a class without a CAS record (HIT/HITM asked for
    // alone) goes on the first record there is.
    for w in &v.warnings {
        if !out.iter().any(|r| r.warnings.contains(w)) {
            if let Some(first) = out.first_mut() {
                first.warnings.push(w.clone());
            }
        }
    }
    out
}

/// The class a finding is about.
fn about(w: &Warning) -> Option<&str> {
    match w {
        Warning::SharesACore { stated, .. } | Warning::AnswersLikeClass { stated, .. } => {
            Some(stated)
        }
        Warning::ClassSplits { class, .. } | Warning::SlowerTwin { class, .. } => Some(class),
        _ => None,
    }
}

/// The fairness record: N threads on one line, their total increments per
/// second and each one's share of every call's increments.
pub fn fairness(cpus: &[u32], m: &Measured, counts: &[u64]) -> Record {
    let total: u64 = counts.iter().sum();
    let shares: Vec<f64> = counts
        .iter()
        .map(|&c| c as f64 / total.max(1) as f64)
        .collect();
    let lo = shares.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = shares.iter().copied().fold(0.0, f64::max);
    let rate = stats::summarize(&m.rates(1e6), true);
    let detail = CoresDetail {
        case_view: Some(CoresView::Fairness),
        instruction: Some(crate::kernels::c2c::increment_used().into()),
        rate_mops: rate.into(),
        fairness: (hi > 0.0).then_some(lo / hi).into(),
        shares: Some(shares),
        transfers_per_sample: Some(m.units_per_sample),
        ..CoresDetail::default()
    };
    let mut r = Record {
        kernel: FAIRNESS.into(),
        op: Op::Atomic,
        threads: cpus.len() as u32,
        cpus: cpus.to_vec(),
        reps_per_sample: Some(m.reps),
        samples: m.model_samples(),
        noise: m.noise,
        ..Record::new(detail)
    };
    r.warnings
        .extend(crate::suites::record::spread_warnings(rate.as_ref(), true));
    r.warnings.extend(crate::suites::record::noise_warnings(&r));
    crate::suites::record::sampled(&mut r, m);
    r
}

/// What the one-pair check found: the pair, and the warning it earns.
#[derive(Debug, Clone, PartialEq)]
pub struct Shared {
    pub pair: [u32; 2],
    pub warning: Warning,
}

/// Before a suite counts `cpus` as that many cores: in a guest (where the
/// host decides what a vCPU is), each pair of neighbours in the list
/// (`cpus[0]`-`cpus[1]`, `cpus[2]`-`cpus[3]`, at most four pairs) that
/// the system states as separate cores is measured once (HITM, a few
/// milliseconds): a read at L1 speed means one physical core
/// ([`limits::SAME_CORE_READ_CYCLES`]). Nothing is measured on bare
/// metal, without a clock, or where the pair cannot be pinned.
pub fn same_core(host: &Host, cpus: &[u32], stop: &'static AtomicBool) -> Vec<Shared> {
    let Some(hz) = host.clock_hz else {
        return Vec::new();
    };
    if host.cpu.hypervisor.is_none() || crate::os::cpu::PLACEMENT_ADVISORY.is_some() {
        return Vec::new();
    }
    let t = crate::os::cpu::topology();
    let sampler = Sampler::new(
        SampleOpts {
            samples: 3,
            min_sample: Duration::from_micros(200),
            settle: None,
        },
        stop,
    );
    let mut out = Vec::new();
    for w in cpus.chunks_exact(2).take(4) {
        let [a, b] = [w[0], w[1]];
        let Some((pa, pb)) = t.place(a).zip(t.place(b)) else {
            continue;
        };
        if pa.core_cpus.contains(&b) {
            continue;
        }
        let Ok(pair) = Pair::new(a, b) else { continue };
        let Some(mut h) = Handoff::new(&pair, true, 0x5a3e) else {
            continue;
        };
        let Ok(m) = sampler.measure(&mut h, None) else {
            continue;
        };
        let ns: Vec<f64> = m
            .samples
            .iter()
            .map(|s| s.seconds / s.units.max(1) as f64 * 1e9)
            .collect();
        let Some(med) = stats::median(&ns) else { continue };
        let cycles = med * hz / 1e9;
        if cycles <= limits::SAME_CORE_READ_CYCLES {
            out.push(Shared {
                pair: [a, b],
                warning: Warning::SharesACore {
                    pairs: vec![[a, b]],
                    stated: class_of(&t, pa, pb).name(),
                    exchange: "hitm".into(),
                    ns: med,
                    cycles: Some(cycles),
                },
            });
        }
    }
    out
}
