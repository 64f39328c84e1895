//! Where each cache level ends as this process experiences it, found from a
//! random pointer-chase latency curve (size → ns per load) and from a
//! sequential read curve (size → GB/s): latency records are labelled by
//! the first, bandwidth records by the second ([`bandwidth_knee`] for the
//! last level, else a latency knee that read bandwidth confirms). Pure:
//! curves in, knees out; `suites::knees` measures the curves and
//! `platform::knee_store` keeps the result per host.
//!
//! Why: CPUID describes the silicon, not what a guest gets. A Firecracker
//! guest is told the host socket's 480 MiB L3 yet sees 38 ns at 8 MiB and
//! 165–172 ns (DRAM) from 32 MiB on; labelling 32–362 MiB "L3" put the
//! survey's L3 and DRAM headlines in the wrong place.
//!
//! Method (Calibrator's plateau-and-jump rule with lmbench's step ratio,
//! research/uarch-limits.md §4), on points 0.75/1/1.25 × 2^k:
//! 1. Interference only ever adds latency, and a larger working set never
//!    has a lower one, so each point is replaced by the lowest value at or
//!    after it (a suffix minimum): a preempted sample cannot make a step.
//! 2. Plateaus: overlapping windows of [`PLATEAU_POINTS`] consecutive
//!    points whose last is within [`PLATEAU_BAND`] of their first, counting
//!    only readings of their own (within [`SLOWED`] of the corrected
//!    value): two slowed points that took the same later reading are not
//!    a plateau.
//! 3. Levels: a plateau that starts where the one before ended, or whose
//!    median is less than [`LEVEL_STEP`] above that level's, joins it (a
//!    ramp, the slow tail of a transition, a TLB step); a level's latency
//!    is the median of its plateaus.
//! 4. A level ends where its last plateau ends, or later while latency
//!    only creeps up (at most [`CREEP`] per octave) and stays below
//!    the geometric mean of this level's and the next one's; that is a
//!    knee when a higher level follows, or when the curve ends rising
//!    (three points at least [`LEVEL_STEP`] above).
//!
//! No plateau, or no step after one (a flat or a smooth curve, a noisy
//! machine): no knee, and nothing is made up.

use crate::model::{BandwidthKnee, Cache, CurvePoint, Host, Knee, KneeProbe};
use crate::stats::median;
use crate::util::units::format_bytes;

/// Points within 25 % of a plateau's first point belong to it: a quarter
/// past a cache's size the next level's misses add more than that
/// (L1 → L2 steps are ≥ 2.8× on every x86 core since Skylake).
pub const PLATEAU_BAND: f64 = 1.25;
/// Calibrator's minimum plateau: three consecutive points.
pub const PLATEAU_POINTS: usize = 3;
/// Past its plateaus a level still goes on while latency at most doubles
/// per octave of working set: a cache losing some lines to neighbours or
/// the OS creeps up by 1.5–1.8× per octave (this guest's L2: 3.8 ns at
/// 256 KiB, 6.9 ns at 768 KiB), a cliff a quarter past a cache's size
/// climbs ≥ 2.9× per octave (40 % over a 1.25× step, even for Intel's
/// 5 → 14-cycle L1 → L2).
pub const CREEP: f64 = 2.0;
/// A reading more than 5 % above a later, larger working set's was
/// slowed by something else (the best of a point's samples jitters by
/// ±3 %); it is measured again, and does not count towards a plateau.
pub const SLOWED: f64 = 1.05;
/// A new level costs at least 1.75× the one below (lmbench `cache`'s
/// threshold); smaller steps are TLB reach or the tail of a transition.
pub const LEVEL_STEP: f64 = 1.75;
/// Bandwidth confirms a knee when the best read well past it is at most
/// 90 % of the best read just before it.
pub const BANDWIDTH_DROP: f64 = 0.9;
/// A read-curve knee may lie this far past CPUID's size of the last level:
/// exclusive levels add the one below (AMD's L3 holds L2's victims) and the
/// read grid is half an octave.
pub const BEYOND_CPUID: f64 = 1.5;
/// A read within 10 % of the DRAM plateau's rate is DRAM's, whatever a
/// cache's size says (issue 21: a guest labelled 185–362 MiB "L3" while
/// reading at 15.9 GB/s against DRAM's 15.1).
pub const DRAM_BAND: f64 = 1.10;

/// The knees of a latency curve (size in bytes → ns per load), smallest
/// first; empty when the curve shows no clear knee.
pub fn detect(latency: &[CurvePoint]) -> Vec<Knee> {
    let pts = sorted(latency, |a, b| a.total_cmp(b));
    let n = pts.len();
    if n < 2 * PLATEAU_POINTS {
        return Vec::new();
    }
    let raw: Vec<f64> = pts.iter().map(|p| p.1).collect();
    let mut y = raw.clone();
    for i in (0..n - 1).rev() {
        y[i] = y[i].min(y[i + 1]);
    }
    let own: Vec<bool> = raw.iter().zip(&y).map(|(r, y)| *r <= y * SLOWED).collect();
    let levels = levels(&y, &own);
    let mut knees = Vec::new();
    for (i, lv) in levels.iter().enumerate() {
        let lat = median(&lv.values).unwrap_or(f64::NAN);
        let next = match levels.get(i + 1) {
            Some(nx) => median(&nx.values),
            None => {
                // Three points, not two: the last points have no later
                // reading to correct a preempted one.
                let above = (lv.last + 1..n)
                    .filter(|&j| y[j] >= lat * LEVEL_STEP)
                    .count();
                (above >= PLATEAU_POINTS).then(|| y[n - 1])
            }
        };
        let Some(next) = next else { continue };
        // The level goes on while latency creeps (a shared L2 losing a few
        // lines to the neighbours) and stays nearer its own latency than
        // the next level's; it ends before the cliff.
        let cap = (lat * next).sqrt();
        let mut end = lv.last;
        while end + 1 < n && y[end + 1] <= cap {
            let octaves = (pts[end + 1].0 as f64 / pts[end].0 as f64).log2();
            if y[end + 1] > y[end] * CREEP.powf(octaves) {
                break;
            }
            end += 1;
        }
        knees.push(Knee {
            end_bytes: pts[end].0,
            latency_ns: lat,
            next_latency_ns: next,
            bandwidth_ratio: None,
            confirmed: None,
            level: None,
        });
    }
    knees
}

/// The usable points of a curve as (size, value), by size, one per size:
/// the first by `better` (the lower latency, the higher rate) where a size
/// was read twice.
fn sorted(
    curve: &[CurvePoint],
    better: impl Fn(&f64, &f64) -> std::cmp::Ordering,
) -> Vec<(u64, f64)> {
    let mut pts: Vec<(u64, f64)> = curve
        .iter()
        .filter(|p| p.size_bytes > 0 && p.value.is_finite() && p.value > 0.0)
        .map(|p| (p.size_bytes, p.value))
        .collect();
    pts.sort_by(|a, b| a.0.cmp(&b.0).then(better(&a.1, &b.1)));
    pts.dedup_by_key(|p| p.0);
    pts
}

/// Where the sequential read curve (size → GB/s) leaves its last cache
/// plateau for DRAM's; None when it shows no such drop.
///
/// The mirror of [`detect`] for a falling curve: interference only lowers
/// a reading and a larger set never reads faster, so each point is
/// replaced by the highest reading at or after it (a suffix maximum). The
/// DRAM plateau is the curve's tail: its last two points within
/// [`DRAM_BAND`] of each other (else the curve had not reached it), the
/// higher of them its rate. Every size from the first one within
/// [`DRAM_BAND`] of that rate on is DRAM. Walking down from there, the
/// first window of [`PLATEAU_POINTS`] points within [`PLATEAU_BAND`] ends
/// the last cache plateau; the level goes on past it while the rate falls
/// at most [`CREEP`] per octave and stays above the geometric mean of the
/// plateau's and DRAM's rates, as a latency level does below it.
pub fn bandwidth_knee(bandwidth: &[CurvePoint]) -> Option<BandwidthKnee> {
    let pts = sorted(bandwidth, |a, b| b.total_cmp(a));
    let n = pts.len();
    if n < PLATEAU_POINTS + 2 {
        return None;
    }
    let mut y: Vec<f64> = pts.iter().map(|p| p.1).collect();
    for i in (0..n - 1).rev() {
        y[i] = y[i].max(y[i + 1]);
    }
    if y[n - 2] > y[n - 1] * DRAM_BAND {
        return None;
    }
    let dram = y[n - 2];
    let first_dram = (0..n).find(|&i| y[i] <= dram * DRAM_BAND)?;
    let w = PLATEAU_POINTS;
    let end = (w - 1..first_dram)
        .rev()
        .find(|&j| y[j + 1 - w] <= y[j] * PLATEAU_BAND)?;
    let plateau = median(&y[end + 1 - w..=end])?;
    let cap = (plateau * dram).sqrt();
    let mut last = end;
    while last + 1 < first_dram && y[last + 1] >= cap {
        let octaves = (pts[last + 1].0 as f64 / pts[last].0 as f64).log2();
        if y[last] > y[last + 1] * CREEP.powf(octaves) {
            break;
        }
        last += 1;
    }
    Some(BandwidthKnee {
        end_bytes: pts[last].0,
        plateau_gbps: plateau,
        dram_gbps: dram,
        dram_from_bytes: pts[first_dram].0,
        level: None,
    })
}

/// One level of the curve: the values of its plateaus, and the index of
/// its last point.
struct Level {
    last: usize,
    values: Vec<f64>,
}

/// Plateaus of the (non-decreasing) curve `y`, merged into levels; `own`
/// marks the points that are their own reading. A window of
/// [`PLATEAU_POINTS`] consecutive own readings is flat when its last is
/// within [`PLATEAU_BAND`] of its first; overlapping flat windows make one
/// plateau. Sliding windows, not a partition: where a partition starts its
/// groups would decide whether a short, slightly rising level is found.
fn levels(y: &[f64], own: &[bool]) -> Vec<Level> {
    let g: Vec<usize> = (0..y.len()).filter(|&i| own[i]).collect();
    let w = PLATEAU_POINTS;
    let flat: Vec<bool> = g
        .windows(w)
        .map(|x| y[x[w - 1]] <= y[x[0]] * PLATEAU_BAND)
        .collect();
    let mut out: Vec<Level> = Vec::new();
    let mut k = 0;
    while k < flat.len() {
        if !flat[k] {
            k += 1;
            continue;
        }
        let first = k;
        while k + 1 < flat.len() && flat[k + 1] {
            k += 1;
        }
        let members = &g[first..k + w];
        let values: Vec<f64> = members.iter().map(|&i| y[i]).collect();
        let last = members[members.len() - 1];
        match out.last_mut() {
            Some(prev) if same_level(prev, &values) => {
                prev.last = last;
                prev.values.extend(values);
            }
            _ => out.push(Level { last, values }),
        }
        k += 1;
    }
    out
}

/// Whether a plateau continues the level before it: it starts where that
/// one ended (a ramp interrupted by a slowed point), or lies less than
/// [`LEVEL_STEP`] above its latency (a TLB step, a transition's tail).
/// Not "less than a step above its highest point": a short plateau inside
/// a transition would then chain two real levels into one.
fn same_level(prev: &Level, values: &[f64]) -> bool {
    let last = prev.values[prev.values.len() - 1];
    values[0] <= last * PLATEAU_BAND
        || median(values)
            .zip(median(&prev.values))
            .is_some_and(|(a, b)| a < b * LEVEL_STEP)
}

/// Check each knee against a read-bandwidth curve (size → GB/s): the best
/// read just past the knee, up to twice its size, against the best inside
/// the level, from a quarter of the knee (but past twice the knee below)
/// up to it. A sequential read of a set up to 2× a cache misses that cache
/// on almost every line, so where a cache really ends, bandwidth drops
/// right there. A latency knee whose next points still read at the level's
/// rate is something else: TLB reach under nested paging showed as a 6 MiB
/// "L3" knee on a Zen 4 guest whose reads kept L3 rates to 12 MiB. Where
/// the curve has no point within 2×, the best from 2× to 4× past (then 4×
/// to 16×) stands in. Best, not median: interference only lowers bandwidth.
pub fn confirm(knees: &mut [Knee], bandwidth: &[CurvePoint]) {
    let best = |lo: u64, hi: u64| {
        bandwidth
            .iter()
            .filter(|p| p.size_bytes >= lo && p.size_bytes <= hi && p.value.is_finite())
            .map(|p| p.value)
            .reduce(f64::max)
    };
    let mut below = 0u64;
    for k in knees {
        let e = k.end_bytes;
        let before = best((e / 4).max(below.saturating_mul(2)), e).or_else(|| best(e / 2, e));
        let after = best(e + 1, e.saturating_mul(2))
            .or_else(|| best(e.saturating_mul(2), e.saturating_mul(4)))
            .or_else(|| best(e.saturating_mul(4), e.saturating_mul(16)));
        k.bandwidth_ratio = match (before, after) {
            (Some(b), Some(a)) if b > 0.0 => Some(a / b),
            _ => None,
        };
        k.confirmed = k.bandwidth_ratio.map(|r| r <= BANDWIDTH_DROP);
        below = e;
    }
}

/// Indices of points worth a second reading: more than [`SLOWED`] above the
/// lowest reading after them. Measuring those again is cheaper than a knee
/// lost to two slowed neighbours, or a slowed point that lands on the next
/// level's latency.
pub fn disturbed(latency: &[CurvePoint]) -> Vec<usize> {
    let mut lowest = f64::INFINITY;
    let mut out = Vec::new();
    for (i, p) in latency.iter().enumerate().rev() {
        if p.value > lowest * SLOWED {
            out.push(i);
        }
        lowest = lowest.min(p.value);
    }
    out.reverse();
    out
}

/// Match knees to CPUID levels, given as (level, CPUID size) smallest
/// first. With at least as many knees as levels, each level takes one
/// knee in order (the choice closest to CPUID's sizes when a plateau inside
/// a transition added a knee), a knee counting only above the CPUID size of
/// the level under it and at most 4× its own: a guest may see far less
/// than CPUID says, hardly more. With fewer knees it cannot tell which
/// level is missing, so a knee goes to the level within one octave of it,
/// or to none.
pub fn assign(knees: &mut [Knee], levels: &[(u8, u64)]) {
    for k in knees.iter_mut() {
        k.level = None;
    }
    let octaves = |a: u64, b: u64| ((a as f64) / (b as f64)).log2().abs();
    if knees.len() >= levels.len() {
        let fits = |i: usize, end: u64| {
            let (_, size) = levels[i];
            let floor = if i == 0 { size / 8 } else { levels[i - 1].1 };
            end > floor && end <= size.saturating_mul(4)
        };
        // Every in-order choice of one knee per level (few: ≤ 6 knees).
        let mut best: Option<(usize, f64, Vec<usize>)> = None;
        let mut pick = Vec::new();
        choose(knees.len(), levels.len(), 0, &mut pick, &mut |p| {
            let ok: Vec<bool> = p
                .iter()
                .enumerate()
                .map(|(i, &k)| fits(i, knees[k].end_bytes))
                .collect();
            let matched = ok.iter().filter(|&&o| o).count();
            let dist: f64 = p
                .iter()
                .enumerate()
                .filter(|(i, _)| ok[*i])
                .map(|(i, &k)| octaves(knees[k].end_bytes, levels[i].1))
                .sum();
            let better = best
                .as_ref()
                .is_none_or(|(m, d, _)| matched > *m || (matched == *m && dist < *d));
            if better {
                let kept = p
                    .iter()
                    .zip(&ok)
                    .map(|(&k, &o)| if o { k } else { usize::MAX })
                    .collect();
                best = Some((matched, dist, kept));
            }
        });
        if let Some((_, _, kept)) = best {
            for (i, k) in kept.into_iter().enumerate() {
                if k != usize::MAX {
                    knees[k].level = Some(levels[i].0);
                }
            }
        }
        return;
    }
    for &(level, size) in levels {
        let nearest = knees
            .iter()
            .enumerate()
            .filter(|(_, k)| octaves(k.end_bytes, size) <= 1.0)
            .min_by(|a, b| octaves(a.1.end_bytes, size).total_cmp(&octaves(b.1.end_bytes, size)))
            .map(|(i, _)| i);
        if let Some(i) = nearest {
            if knees[i].level.is_none() {
                knees[i].level = Some(level);
            }
        }
    }
}

/// Call `f` with every increasing choice of `r` indices out of `0..n`.
fn choose(n: usize, r: usize, from: usize, pick: &mut Vec<usize>, f: &mut dyn FnMut(&[usize])) {
    if pick.len() == r {
        f(pick);
        return;
    }
    for i in from..n {
        if n - i < r - pick.len() {
            break;
        }
        pick.push(i);
        choose(n, r, i + 1, pick, f);
        pick.pop();
    }
}

/// The data/unified levels of `host` with their CPUID sizes.
pub fn cpuid_levels(host: &Host) -> Vec<(u8, u64)> {
    let mut v: Vec<(u8, u64)> = host
        .data_caches()
        .map(|c| (c.level, c.size_bytes))
        .collect();
    v.sort_unstable();
    v.dedup_by_key(|l| l.0);
    v
}

/// Detect, confirm and match the knees of a probe's curves against
/// `host`'s CPUID levels, and say in one line what is missing.
pub fn analyse(probe: &mut KneeProbe, host: &Host) {
    let levels = cpuid_levels(host);
    let mut knees = detect(&probe.latency);
    confirm(&mut knees, &probe.bandwidth);
    assign(&mut knees, &levels);
    probe.bandwidth_knee = bandwidth_knee(&probe.bandwidth).map(|mut k| {
        k.level = last_level_of(k.end_bytes, &levels);
        k
    });
    probe.note = note(&knees, probe.bandwidth_knee.as_ref(), host);
    probe.knees = knees;
}

/// The last CPUID level, if a read-curve knee at `end` can be its end: past
/// the CPUID size of the level under it (else the read curve showed that
/// level's plateau last, and nothing of the last level's), and within
/// [`BEYOND_CPUID`] of its own size: a cache serves no more than it holds,
/// and on a busy machine DRAM's rate swings (46 GB/s at 64–128 MiB, 22–26
/// past them, on this 32 MiB Zen 5 guest under a load of 5), which can look
/// like one more plateau.
fn last_level_of(end: u64, levels: &[(u8, u64)]) -> Option<u8> {
    let (&(level, size), below) = levels.split_last()?;
    let floor = below.last().map_or(0, |l| l.1);
    (end > floor && end as f64 <= size as f64 * BEYOND_CPUID).then_some(level)
}

fn note(knees: &[Knee], bw: Option<&BandwidthKnee>, host: &Host) -> Option<String> {
    let mut parts = Vec::new();
    if knees.is_empty() {
        parts.push(
            "no clear knee in the latency curve (a noisy machine?): latency records keep CPUID's sizes"
                .to_string(),
        );
    }
    let last = host.data_caches().map(|c| c.level).max();
    for c in host.data_caches() {
        let level = c.level;
        let knee = knees.iter().find(|k| k.level == Some(level));
        if knee.is_none() && !knees.is_empty() {
            parts.push(format!("no clear latency knee for L{level}"));
        }
        if Some(level) == last {
            match bw {
                None => parts.push(
                    "the read curve shows no drop to a DRAM plateau, so bandwidth records keep CPUID's last level"
                        .into(),
                ),
                Some(b) if b.level.is_none() => parts.push(format!(
                    "the read curve's last plateau ends at {}, not between L{}'s and L{level}'s CPUID sizes, so bandwidth records keep CPUID's L{level}",
                    format_bytes(b.end_bytes),
                    level.saturating_sub(1)
                )),
                _ => {}
            }
        }
        if let Some(k) = knee.filter(|k| !usable(k, c) && Some(level) != last) {
            parts.push(format!(
                "the L{level} latency knee at {} labels latency records only: read bandwidth does not drop there (×{:.2})",
                format_bytes(k.end_bytes),
                k.bandwidth_ratio.unwrap_or(f64::NAN)
            ));
        }
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// Whether a matched latency knee may stand as its level's size for
/// bandwidth records too: always while it stays within 2× of CPUID's (it
/// then moves no label), and past that only if read bandwidth does not
/// contradict it. (Narrow loads can keep L1 and L2 at the same bandwidth,
/// so below the last level bandwidth alone never makes a knee.)
fn usable(k: &Knee, cache: &Cache) -> bool {
    !cache.far_from_cpuid(k.end_bytes) || k.confirmed != Some(false)
}

/// Forget any measured sizes on `host`.
pub fn clear(host: &mut Host) {
    for c in &mut host.caches {
        c.effective_size_bytes = None;
        c.effective_source = None;
        c.bandwidth_size_bytes = None;
    }
    host.knees = None;
}

/// Put an analysed probe on `host`. Every level with a matched latency
/// knee gets it as its measured size for latency records
/// (`effective_size_bytes`). For bandwidth records
/// (`bandwidth_size_bytes`) the last level takes the read curve's knee or
/// keeps CPUID's size (a read curve that declines gently through a large
/// L3 drops 10 % somewhere inside it, which would "confirm" any latency
/// knee there), and the levels below a latency knee that read bandwidth
/// does not contradict ([`usable`]).
pub fn apply(host: &mut Host, probe: KneeProbe) {
    clear(host);
    let last = host.data_caches().map(|c| c.level).max();
    let bw = probe
        .bandwidth_knee
        .as_ref()
        .and_then(|k| k.level.map(|l| (l, k.end_bytes)));
    let source = format!(
        "knee probe ({}, measured {})",
        probe.source, probe.measured_at
    );
    for c in host.caches.iter_mut().filter(|c| c.kind != "instruction") {
        let knee = probe.knees.iter().find(|k| k.level == Some(c.level));
        c.effective_size_bytes = knee.map(|k| k.end_bytes);
        c.bandwidth_size_bytes = if Some(c.level) == last {
            bw.filter(|b| b.0 == c.level).map(|b| b.1)
        } else {
            knee.filter(|k| usable(k, c)).map(|k| k.end_bytes)
        };
        if c.effective_size_bytes.is_some() || c.bandwidth_size_bytes.is_some() {
            c.effective_source = Some(source.clone());
        }
    }
    host.knees = Some(probe);
}

#[cfg(test)]
pub(crate) mod tests;
