//! The core-to-core planner: which cpu pairs to measure, and how, within
//! a time budget that scales to a 576-cpu machine.
//!
//! A full matrix grows as n²: 165,600 pairs on 576 cpus, which is why
//! nviennot/core-to-core-latency never finished there (its issue #137).
//! The classes ([`super::classes`]) make it linear: the system states
//! what each pair shares, so
//! 1. **class pairs**: a few pairs of every class (spread over distinct
//!    cpus), each with every exchange asked for (CAS, HIT, HITM);
//! 2. **check pairs**: then, while the budget lasts, every cpu in turn
//!    (in a random order) with a random partner of the next class in
//!    round-robin, CAS only, so every cpu is seen to behave like its
//!    classes (a vCPU the host placed elsewhere, a slow socket);
//! 3. `--all-pairs`: every pair instead of the checks (the matrix), CAS.
//!
//! The time each measurement takes is estimated from the sampling options
//! and the class's typical latency ([`Near::typical_ns`]): a CAS sample
//! lasts its minimum whatever the latency, but a HIT sample's preparation
//! (the holder flushes and reloads every line) is what it costs beside the
//! timed chase, and that ratio grows as the transfer shrinks.

use serde::{Deserialize, Serialize};

use super::classes::{classes, partners, ClassKey, Near};
use crate::model::detail::Exchange;
use crate::model::Topology;
use crate::util::rng::XorShift64;

/// Why a pair is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// One of the few pairs that stand for their class.
    Class,
    /// A random pair checking that its cpu behaves like its class.
    Check,
    /// A cell of the full matrix (`--all-pairs`).
    Matrix,
}

/// One pair to measure: `a` holds the line first (the holder of HIT and
/// HITM), `b` reads it; `class` indexes [`PairPlan::classes`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedPair {
    pub a: u32,
    pub b: u32,
    pub class: usize,
    pub role: Role,
    pub exchanges: Vec<Exchange>,
}

/// A class as planned: its key and name, what it is, how many pairs of
/// it exist among the cpus, how many are measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedClass {
    pub key: ClassKey,
    pub name: String,
    pub what: String,
    pub pairs_total: u64,
    pub pairs_measured: usize,
}

/// How long measurements take: the sampling every pair gets.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Cost {
    /// Samples per repeat, and repeats per figure (they are compared).
    pub samples: usize,
    pub repeats: usize,
    /// The fewest samples per repeat of a check pair.
    pub check_samples: usize,
    /// A CAS sample's minimum, seconds.
    pub cas_sample_s: f64,
    /// A HIT or HITM sample's minimum of timed reads, seconds.
    pub chase_sample_s: f64,
    /// Lines per HIT/HITM round.
    pub lines: usize,
}

/// A pair's setup (two threads pinned, their buffers filled, the chain
/// written): ~0.3 ms on a 2-vCPU guest, rounded up.
const SETUP_S: f64 = 1e-3;
/// Calls the sampler spends calibrating a repeat before the first sample
/// (from one repetition to the minimum: ~4 at these sample lengths); the
/// next repeat starts from the first one's work and spends one.
const CALIBRATION_CALLS: f64 = 4.0;
/// A line flushed to DRAM and read back (HIT's preparation), ns: a DRAM
/// miss and a write-back.
const FLUSH_RELOAD_NS: f64 = 250.0;

impl Cost {
    /// Seconds one pair of class `near` takes for `exchange`, `samples`
    /// per repeat.
    pub fn seconds(&self, near: Near, exchange: Exchange, samples: usize) -> f64 {
        let calls = CALIBRATION_CALLS + 1.0 + (samples * self.repeats) as f64;
        let l = near.typical_ns();
        let per_call = match exchange {
            Exchange::Cas => self.cas_sample_s,
            // The holder's writes cost about one transfer per line too.
            Exchange::Hitm => self.chase_sample_s * 2.0,
            Exchange::Hit => self.chase_sample_s * (l + FLUSH_RELOAD_NS) / l,
        };
        calls * per_call
    }

    fn pair_seconds(&self, near: Near, exchanges: &[Exchange], samples: usize) -> f64 {
        SETUP_S
            + exchanges
                .iter()
                .map(|&e| self.seconds(near, e, samples))
                .sum::<f64>()
    }
}

/// What to plan.
#[derive(Debug, Clone, PartialEq)]
pub struct PairOpts {
    pub per_class: usize,
    pub budget_s: f64,
    pub all_pairs: bool,
    pub seed: u64,
    /// The exchanges of class pairs (check and matrix pairs: the first).
    pub exchanges: Vec<Exchange>,
    pub cost: Cost,
}

/// The plan: the classes, the pairs in the order measured, the time it
/// should take, and how many cpus a pair reaches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairPlan {
    pub classes: Vec<PlannedClass>,
    pub pairs: Vec<PlannedPair>,
    pub estimate_s: f64,
    pub budget_s: f64,
    pub cpus: usize,
    /// Cpus in at least one measured pair.
    pub cpus_covered: usize,
}

/// Plan the pairs of `cpus` (cpus of `t`).
pub fn plan(t: &Topology, cpus: &[u32], o: &PairOpts) -> PairPlan {
    let cls = classes(t, cpus);
    let mut rng = XorShift64::new(o.seed);
    let mut planned: Vec<PlannedClass> = cls
        .iter()
        .map(|(k, p)| PlannedClass {
            key: k.clone(),
            name: k.name(),
            what: k.near.what().to_string(),
            pairs_total: p.len() as u64,
            pairs_measured: 0,
        })
        .collect();
    let first = o.exchanges.first().copied().unwrap_or(Exchange::Cas);
    let mut pairs: Vec<PlannedPair> = Vec::new();
    let mut spent = 0.0;
    // A few per class; fewer where they alone would take most of the
    // budget (the matrix is asked for by name and takes what it takes).
    let mut per_class = o.per_class.max(1);
    loop {
        let cost: f64 = cls
            .iter()
            .map(|(k, p)| {
                p.len().min(per_class) as f64
                    * o.cost.pair_seconds(k.near, &o.exchanges, o.cost.samples)
            })
            .sum();
        if per_class == 1 || o.all_pairs || cost <= o.budget_s / 2.0 {
            break;
        }
        per_class -= 1;
    }
    for (i, (k, p)) in cls.iter().enumerate() {
        for (a, b) in spread(p, per_class, &mut rng) {
            spent += o.cost.pair_seconds(k.near, &o.exchanges, o.cost.samples);
            pairs.push(PlannedPair {
                a,
                b,
                class: i,
                role: Role::Class,
                exchanges: o.exchanges.clone(),
            });
        }
    }
    let samples = o.cost.check_samples.min(o.cost.samples).max(1);
    if o.all_pairs {
        for (i, (k, p)) in cls.iter().enumerate() {
            for &(a, b) in p {
                if !pairs.iter().any(|q| (q.a, q.b) == (a, b)) {
                    spent += o.cost.pair_seconds(k.near, &[first], samples);
                    pairs.push(PlannedPair {
                        a,
                        b,
                        class: i,
                        role: Role::Matrix,
                        exchanges: vec![first],
                    });
                }
            }
        }
    } else {
        spent = checks(&cls, cpus, o, &mut rng, &mut pairs, spent, samples);
    }
    for p in &pairs {
        planned[p.class].pairs_measured += 1;
    }
    let mut seen: Vec<u32> = pairs.iter().flat_map(|p| [p.a, p.b]).collect();
    seen.sort_unstable();
    seen.dedup();
    PairPlan {
        classes: planned,
        pairs,
        estimate_s: spent,
        budget_s: o.budget_s,
        cpus: cpus.len(),
        cpus_covered: seen.len(),
    }
}

/// Up to `n` pairs of `p`, spread: each next pair uses cpus no earlier
/// pair used where one exists, chosen at random.
fn spread(p: &[(u32, u32)], n: usize, rng: &mut XorShift64) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = Vec::new();
    let mut used: Vec<u32> = Vec::new();
    for _ in 0..n.min(p.len()) {
        let fresh: Vec<&(u32, u32)> = p
            .iter()
            .filter(|(a, b)| !used.contains(a) && !used.contains(b))
            .collect();
        let pick = if fresh.is_empty() {
            let left: Vec<&(u32, u32)> = p.iter().filter(|q| !out.contains(q)).collect();
            *left[rng.below(left.len() as u64) as usize]
        } else {
            *fresh[rng.below(fresh.len() as u64) as usize]
        };
        used.extend([pick.0, pick.1]);
        out.push(pick);
    }
    out
}

/// The check pairs: each cpu in a random order with a random partner of
/// the next class (round-robin over the classes the cpu has partners
/// in), CAS only, while the budget lasts; again from the start while it
/// still lasts, at most four rounds. Returns the time spent.
fn checks(
    cls: &[(ClassKey, Vec<(u32, u32)>)],
    cpus: &[u32],
    o: &PairOpts,
    rng: &mut XorShift64,
    pairs: &mut Vec<PlannedPair>,
    mut spent: f64,
    samples: usize,
) -> f64 {
    let first = o.exchanges.first().copied().unwrap_or(Exchange::Cas);
    let mut order: Vec<u32> = cpus.to_vec();
    let mut turn = 0usize;
    for _round in 0..4 {
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i as u64 + 1) as usize);
        }
        let mut added = false;
        for &c in &order {
            let by_class = partners(cls, c);
            let offered: Vec<usize> = (0..cls.len())
                .filter(|&k| !by_class[k].is_empty())
                .collect();
            if offered.is_empty() {
                continue;
            }
            let k = offered[turn % offered.len()];
            turn += 1;
            let with = &by_class[k];
            let partner = with[rng.below(with.len() as u64) as usize];
            let (a, b) = (c.min(partner), c.max(partner));
            if pairs.iter().any(|q| (q.a, q.b) == (a, b)) {
                continue;
            }
            let s = o.cost.pair_seconds(cls[k].0.near, &[first], samples);
            if spent + s > o.budget_s {
                return spent;
            }
            spent += s;
            added = true;
            pairs.push(PlannedPair {
                a,
                b,
                class: k,
                role: Role::Check,
                exchanges: vec![first],
            });
        }
        if !added {
            break;
        }
    }
    spent
}

/// The default budget for `cpus` cpus: 0.1 s per cpu within 4-60 s (a
/// laptop's few seconds; a 576-cpu server's minute).
pub fn default_budget_s(cpus: usize) -> f64 {
    (cpus as f64 * 0.1).clamp(4.0, 60.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::os::parse::topology::tests::fixture;

    /// The suite's default sampling (`suites::cores`).
    fn cost() -> Cost {
        Cost {
            samples: 5,
            repeats: 2,
            check_samples: 3,
            cas_sample_s: 1e-3,
            chase_sample_s: 0.25e-3,
            lines: 256,
        }
    }

    fn opts(t: &Topology) -> (Vec<u32>, PairOpts) {
        let cpus: Vec<u32> = t.cpus.iter().map(|p| p.cpu).collect();
        let o = PairOpts {
            per_class: 3,
            budget_s: default_budget_s(cpus.len()),
            all_pairs: false,
            seed: 7,
            exchanges: vec![Exchange::Cas, Exchange::Hit, Exchange::Hitm],
            cost: cost(),
        };
        (cpus, o)
    }

    #[test]
    fn the_576_cpu_server_fits_a_minute_and_reaches_every_cpu() {
        let t = fixture("generated-576-aarch64");
        let (cpus, o) = opts(&t);
        assert_eq!(o.budget_s, 57.6);
        let p = plan(&t, &cpus, &o);
        assert!(p.estimate_s <= 60.0, "{} s", p.estimate_s);
        assert_eq!(p.cpus_covered, 576, "every cpu in a pair");
        for c in &p.classes {
            assert!(c.pairs_measured >= 3, "{}: {}", c.name, c.pairs_measured);
        }
        let class_pairs = p.pairs.iter().filter(|q| q.role == Role::Class).count();
        assert_eq!(class_pairs, 3 * p.classes.len());
        assert!(p.pairs.iter().all(|q| q.a < q.b));
        eprintln!(
            "576 cpus: {} classes, {} pairs ({} class, {} checks), {:.1} s of {:.1} s",
            p.classes.len(),
            p.pairs.len(),
            class_pairs,
            p.pairs.len() - class_pairs,
            p.estimate_s,
            p.budget_s
        );
    }

    #[test]
    fn the_full_matrix_is_every_pair_once() {
        let t = fixture("32intel64-2p8co2t+8ve");
        let (cpus, mut o) = opts(&t);
        o.all_pairs = true;
        let p = plan(&t, &cpus, &o);
        assert_eq!(p.pairs.len(), 32 * 31 / 2);
        let mut keys: Vec<(u32, u32)> = p.pairs.iter().map(|q| (q.a, q.b)).collect();
        keys.dedup();
        assert_eq!(keys.len(), 32 * 31 / 2);
    }

    #[test]
    fn class_pairs_spread_over_distinct_cpus() {
        let t = fixture("generated-2x-epyc-9654");
        let (cpus, o) = opts(&t);
        let p = plan(&t, &cpus, &o);
        for (i, c) in p.classes.iter().enumerate() {
            let mine: Vec<u32> = p
                .pairs
                .iter()
                .filter(|q| q.class == i && q.role == Role::Class)
                .flat_map(|q| [q.a, q.b])
                .collect();
            let mut d = mine.clone();
            d.sort_unstable();
            d.dedup();
            assert_eq!(d.len(), mine.len(), "{}: {mine:?}", c.name);
        }
        assert!(p.estimate_s <= p.budget_s + 1e-9);
    }

    #[test]
    fn this_guest_plans_its_one_pair_well_inside_five_seconds() {
        let t = fixture("guest-emr-2vcpu");
        let (cpus, o) = opts(&t);
        let p = plan(&t, &cpus, &o);
        assert_eq!(p.pairs.len(), 1);
        assert_eq!((p.pairs[0].a, p.pairs[0].b), (0, 1));
        assert_eq!(p.pairs[0].exchanges.len(), 3);
        assert!(p.estimate_s < 1.0, "{}", p.estimate_s);
    }

    #[test]
    fn a_tight_budget_keeps_one_pair_per_class() {
        let t = fixture("128arm-2pa2n8cluster4co");
        let (cpus, mut o) = opts(&t);
        o.budget_s = 0.2;
        let p = plan(&t, &cpus, &o);
        assert!(p.classes.iter().all(|c| c.pairs_measured == 1));
        assert!(p.pairs.iter().all(|q| q.role == Role::Class));
    }

    #[test]
    fn every_class_of_every_recorded_tree_is_planned() {
        for name in [
            "32intel64-2p8co2t+8ve",
            "nvidia-dgx-gb10",
            "128arm-2pa2n8cluster4co",
            "20em64t-hybrid-1p6c2t+2ca4co1t",
            "generated-2x-epyc-9654",
            "qemu-2s4c2t",
        ] {
            let t = fixture(name);
            let (cpus, o) = opts(&t);
            let p = plan(&t, &cpus, &o);
            assert!(p.classes.iter().all(|c| c.pairs_measured >= 1), "{name}");
            assert!(p.estimate_s <= p.budget_s, "{name}: {}", p.estimate_s);
            assert_eq!(p.cpus_covered, cpus.len(), "{name}");
            let class_pairs = p.pairs.iter().filter(|q| q.role == Role::Class).count();
            eprintln!(
                "{name}: {} classes, {class_pairs} class pairs, {} checks, {:.1} s of {:.1} s",
                p.classes.len(),
                p.pairs.len() - class_pairs,
                p.estimate_s,
                p.budget_s
            );
        }
    }
}
