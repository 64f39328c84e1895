//! Which ranks test which, step by step. Every step is a set of tests that
//! run at the same time; no rank leads two tests or receives two flows in
//! one step, so a transponder (one test at a time) is never busy.
//!
//! - `shift` (mpiGraph): N−1 steps; in step d every rank sends to rank
//!   r+d and receives from r−d at once, so every node's link is loaded in
//!   both directions. N(N−1) flows.
//! - `pairs` (LinkTest): every unordered pair once, both directions at
//!   once; one pair at a time (isolated, N(N−1)/2 steps) or ⌊N/2⌋ disjoint
//!   pairs at a time (round-robin tournament, N−1 or N steps).
//! - `sample` (nvloom's gpu-to-rack): each rank against K peers drawn at
//!   random, K steps whatever N; a node's figure is the median over its
//!   peers, so one slow peer does not condemn it. N·K flows: linear cost.

use serde::{Deserialize, Serialize};

use crate::util::rng::XorShift64;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "name", rename_all = "lowercase")]
pub enum Schedule {
    Shift,
    Pairs { all_at_once: bool },
    Sample { peers: u32, seed: u64 },
}

impl Schedule {
    pub fn name(&self) -> &'static str {
        match self {
            Schedule::Shift => "shift",
            Schedule::Pairs { .. } => "pairs",
            Schedule::Sample { .. } => "sample",
        }
    }
}

/// One test: `src` leads it against `dst`'s transponder; `bidir` moves
/// bytes both ways at once (two flows).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Test {
    pub src: u32,
    pub dst: u32,
    pub bidir: bool,
}

impl Test {
    /// Flows this test produces.
    pub fn flows(&self) -> u32 {
        if self.bidir {
            2
        } else {
            1
        }
    }
}

/// The steps over `ranks` (the ranks alive when the phase starts).
pub fn steps(s: Schedule, ranks: &[u32]) -> Vec<Vec<Test>> {
    let n = ranks.len();
    if n < 2 {
        return Vec::new();
    }
    let one_way = |src: u32, dst: u32| Test {
        src,
        dst,
        bidir: false,
    };
    let pair = |a: u32, b: u32| Test {
        src: a.min(b),
        dst: a.max(b),
        bidir: true,
    };
    match s {
        Schedule::Shift => (1..n)
            .map(|d| {
                (0..n)
                    .map(|i| one_way(ranks[i], ranks[(i + d) % n]))
                    .collect()
            })
            .collect(),
        Schedule::Pairs { all_at_once: false } => {
            let mut out = Vec::new();
            for i in 0..n {
                for j in i + 1..n {
                    out.push(vec![pair(ranks[i], ranks[j])]);
                }
            }
            out
        }
        Schedule::Pairs { all_at_once: true } => {
            // Circle method: fix slot 0, rotate the rest; an odd count
            // gets a bye (None) each round.
            let mut slots: Vec<Option<u32>> = ranks.iter().copied().map(Some).collect();
            if n % 2 == 1 {
                slots.push(None);
            }
            let m = slots.len();
            let mut out = Vec::new();
            for _ in 0..m - 1 {
                let step: Vec<Test> = (0..m / 2)
                    .filter_map(|i| match (slots[i], slots[m - 1 - i]) {
                        (Some(a), Some(b)) => Some(pair(a, b)),
                        _ => None,
                    })
                    .collect();
                out.push(step);
                slots[1..].rotate_right(1);
            }
            out
        }
        Schedule::Sample { peers, seed } => {
            let k = (peers as usize).clamp(1, n - 1);
            let mut rng = XorShift64::new(seed);
            // A random relabelling of the ranks, then k distinct shifts in
            // that order: every step is a permutation without fixed
            // points, and each rank meets k distinct peers each way.
            let mut perm: Vec<u32> = ranks.to_vec();
            shuffle(&mut perm, &mut rng);
            let mut shifts: Vec<usize> = (1..n).collect();
            shuffle(&mut shifts, &mut rng);
            shifts[..k]
                .iter()
                .map(|&d| {
                    (0..n)
                        .map(|i| one_way(perm[i], perm[(i + d) % n]))
                        .collect()
                })
                .collect()
        }
    }
}

fn shuffle<T>(v: &mut [T], rng: &mut XorShift64) {
    for i in (1..v.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        v.swap(i, j);
    }
}

/// Steps and flows for `n` ranks without building them (for estimates of
/// large fleets).
pub fn size_of(s: Schedule, n: u64) -> (u64, u64) {
    if n < 2 {
        return (0, 0);
    }
    match s {
        Schedule::Shift => (n - 1, n * (n - 1)),
        Schedule::Pairs { all_at_once: false } => (n * (n - 1) / 2, n * (n - 1)),
        Schedule::Pairs { all_at_once: true } => (if n % 2 == 0 { n - 1 } else { n }, n * (n - 1)),
        Schedule::Sample { peers, .. } => {
            let k = (peers as u64).clamp(1, n - 1);
            (k, n * k)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn ranks(n: u32) -> Vec<u32> {
        (0..n).collect()
    }

    /// No rank leads two tests or is the target of two in one step.
    fn disjoint(step: &[Test]) -> bool {
        let mut out = HashSet::new();
        let mut inn = HashSet::new();
        step.iter().all(|t| {
            let ok = out.insert(t.src) && inn.insert(t.dst);
            if t.bidir {
                ok && out.insert(t.dst) && inn.insert(t.src)
            } else {
                ok
            }
        })
    }

    fn flows(steps: &[Vec<Test>]) -> HashSet<(u32, u32)> {
        let mut f = HashSet::new();
        for t in steps.iter().flatten() {
            assert_ne!(t.src, t.dst);
            f.insert((t.src, t.dst));
            if t.bidir {
                f.insert((t.dst, t.src));
            }
        }
        f
    }

    #[test]
    fn full_schedules_cover_every_ordered_pair_once() {
        for n in [2u32, 3, 4, 5, 8] {
            for s in [
                Schedule::Shift,
                Schedule::Pairs { all_at_once: false },
                Schedule::Pairs { all_at_once: true },
            ] {
                let st = steps(s, &ranks(n));
                assert!(st.iter().all(|x| disjoint(x)), "{s:?} n={n}");
                let count: u32 = st.iter().flatten().map(|t| t.flows()).sum();
                assert_eq!(count, n * (n - 1), "{s:?} n={n}");
                assert_eq!(flows(&st).len() as u32, n * (n - 1), "{s:?} n={n}");
                assert_eq!(
                    size_of(s, n as u64),
                    (st.len() as u64, count as u64),
                    "{s:?} n={n}"
                );
            }
        }
    }

    #[test]
    fn half_pairs_keep_everyone_busy() {
        let st = steps(Schedule::Pairs { all_at_once: true }, &ranks(6));
        assert_eq!(st.len(), 5);
        assert!(st.iter().all(|s| s.len() == 3));
        let st = steps(Schedule::Pairs { all_at_once: true }, &ranks(5));
        assert_eq!(st.len(), 5);
        assert!(st.iter().all(|s| s.len() == 2));
    }

    #[test]
    fn sample_meets_k_distinct_peers_each_way() {
        let r: Vec<u32> = (10..26).collect();
        let s = Schedule::Sample { peers: 4, seed: 9 };
        let st = steps(s, &r);
        assert_eq!(st.len(), 4);
        assert!(st.iter().all(|x| x.len() == 16 && disjoint(x)));
        for &me in &r {
            let outs: HashSet<u32> = st
                .iter()
                .flatten()
                .filter(|t| t.src == me)
                .map(|t| t.dst)
                .collect();
            let ins: HashSet<u32> = st
                .iter()
                .flatten()
                .filter(|t| t.dst == me)
                .map(|t| t.src)
                .collect();
            assert_eq!((outs.len(), ins.len()), (4, 4));
            assert!(!outs.contains(&me));
        }
        // Reproducible from the seed, different with another.
        assert_eq!(st, steps(s, &r));
        assert_ne!(st, steps(Schedule::Sample { peers: 4, seed: 10 }, &r));
        // More peers than there are: every other rank once.
        let all = steps(Schedule::Sample { peers: 50, seed: 1 }, &ranks(4));
        assert_eq!(flows(&all).len(), 12);
    }

    #[test]
    fn nothing_to_do_alone() {
        assert!(steps(Schedule::Shift, &[3]).is_empty());
        assert_eq!(size_of(Schedule::Shift, 1), (0, 0));
        assert_eq!(
            size_of(Schedule::Sample { peers: 5, seed: 0 }, 1000),
            (5, 5000)
        );
    }
}
