//! One pair's figure for one exchange, with its self-checks, as a record.
//!
//! A figure is `repeats` sample sets (each its own calibration, the next
//! starting from the last one's work), and stands only when
//! - its best is above the floor: 3 core cycles ([`FLOOR_CYCLES`]), or
//!   0.5 ns without a clock — a transfer, or even an L1 hit, takes more;
//!   less is a loop the compiler or a timer fooled (nviennot/core-to-core-
//!   latency's users saw 0 ns on every pair: its issues #112, #143);
//! - the repeats' medians agree within the noise: their gap, over the
//!   lower, at most the larger of [`TOLERANCE_FLOOR`] and 3 × the samples'
//!   own robust spread (1.4826 × MAD / median, the worse repeat's).
//!
//! A figure that fails is measured again, up to [`ATTEMPTS`] times in
//! all; one that never passes is refused: an error record saying why,
//! never a figure.

use std::time::Duration;

use crate::measure::c2c::{Cas, Handoff, Pair, LINES};
use crate::measure::{Failure, Measured, SampleOpts, Sampler, Workload};
use crate::model::detail::{CoresDetail, CoresView, Exchange};
use crate::model::{Noise, Op, Pattern, Record, Sample, SuiteId};
use crate::stats;

/// No figure below this many core cycles stands.
pub const FLOOR_CYCLES: f64 = 3.0;
/// Without a clock: 3 cycles at 6.5 GHz, the highest clock bwscope takes
/// for real (`limits::CLOCK_MAX_HZ`).
pub const FLOOR_NS: f64 = 0.5;
/// Two repeats may differ by this much whatever their spread: a quiet
/// 2-vCPU guest's CAS repeats moved by up to ~5 %.
pub const TOLERANCE_FLOOR: f64 = 0.10;
/// Tries in all before a figure is refused.
pub const ATTEMPTS: u32 = 3;

/// How one figure is sampled.
#[derive(Debug, Clone, Copy)]
pub struct Setting {
    pub samples: usize,
    pub repeats: usize,
    pub cas_sample: Duration,
    pub chase_sample: Duration,
    pub clock_hz: Option<f64>,
}

impl Setting {
    pub fn floor_ns(&self) -> f64 {
        self.clock_hz
            .map_or(FLOOR_NS, |hz| FLOOR_CYCLES / hz * 1e9)
    }
}

/// What the pair record says beyond its figure.
pub struct Case<'a> {
    pub exchange: Exchange,
    pub pair: [u32; 2],
    pub class: &'a str,
    pub what: &'a str,
    pub role: &'a str,
}

/// One accepted (or refused) figure.
struct Figure {
    ns: Vec<f64>,
    samples: Vec<Sample>,
    repeats_ns: Vec<f64>,
    tolerance: f64,
    retaken: u32,
    sampler_retaken: Option<u32>,
    noise: Option<Noise>,
    reps: u64,
    transfers_per_sample: u64,
    overhead_ns: Option<u64>,
    /// Why it was refused (the last try's reason), or None.
    refused: Option<String>,
}

/// One repeat: the sampler's measurement and its one-way ns per sample.
fn repeat(
    w: &mut dyn Workload,
    sampler: &Sampler,
    hint: Option<crate::measure::Hint>,
) -> Result<(Measured, Vec<f64>), Failure> {
    let m = sampler.measure(w, hint)?;
    let ns = m
        .samples
        .iter()
        .map(|t| t.seconds / t.units.max(1) as f64 * 1e9)
        .collect();
    Ok((m, ns))
}

/// The robust spread of `v`: 1.4826 × MAD over the median.
fn spread(v: &[f64]) -> f64 {
    let Some(m) = stats::median(v).filter(|&m| m > 0.0) else {
        return 0.0;
    };
    let dev: Vec<f64> = v.iter().map(|x| (x - m).abs()).collect();
    1.4826 * stats::median(&dev).unwrap_or(0.0) / m
}

/// Why a set of repeats cannot stand, or None.
fn check(repeats: &[Vec<f64>], floor_ns: f64) -> (Option<String>, f64) {
    let medians: Vec<f64> = repeats.iter().filter_map(|r| stats::median(r)).collect();
    let tolerance = repeats
        .iter()
        .map(|r| 3.0 * spread(r))
        .fold(TOLERANCE_FLOOR, f64::max);
    let best = repeats.iter().flatten().copied().fold(f64::INFINITY, f64::min);
    if best < floor_ns {
        return (
            Some(format!(
                "a sample read {best:.3} ns, below the floor of {floor_ns:.3} ns (no transfer is shorter)"
            )),
            tolerance,
        );
    }
    let lo = medians.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = medians.iter().copied().fold(0.0, f64::max);
    if lo > 0.0 && hi / lo - 1.0 > tolerance {
        return (
            Some(format!(
                "its repeats' medians moved from {lo:.2} to {hi:.2} ns, {:.0} % apart, more than the {:.0} % their noise allows",
                (hi / lo - 1.0) * 100.0,
                tolerance * 100.0
            )),
            tolerance,
        );
    }
    (None, tolerance)
}

/// Measure `exchange` on `pair` until a figure stands or [`ATTEMPTS`]
/// have failed.
fn figure(
    pair: &Pair,
    exchange: Exchange,
    s: &Setting,
    stop: &'static std::sync::atomic::AtomicBool,
    seed: u64,
) -> Result<Figure, Failure> {
    let min = match exchange {
        Exchange::Cas => s.cas_sample,
        _ => s.chase_sample,
    };
    let sampler = Sampler::new(
        SampleOpts {
            samples: s.samples,
            min_sample: min,
            settle: None,
        },
        stop,
    );
    let mut last: Option<Figure> = None;
    for attempt in 0..ATTEMPTS {
        let mut cas;
        let mut handoff;
        let (w, overhead): (&mut dyn Workload, Option<u64>) = match exchange {
            Exchange::Cas => {
                cas = Cas::new(pair);
                (&mut cas, None)
            }
            _ => {
                handoff = Handoff::new(pair, exchange == Exchange::Hitm, seed ^ attempt as u64)
                    .ok_or_else(|| {
                        Failure::Failed("no pointer-chase kernel on this architecture".into())
                    })?;
                let o = handoff.overhead_ns;
                (&mut handoff, Some(o))
            }
        };
        let mut hint = None;
        let mut sets: Vec<Vec<f64>> = Vec::new();
        let mut kept: Vec<Measured> = Vec::new();
        for _ in 0..s.repeats.max(1) {
            let (m, ns) = repeat(w, &sampler, hint)?;
            hint = Some(m.hint());
            sets.push(ns);
            let cut = m.cut_short;
            kept.push(m);
            if cut {
                return Err(Failure::Stopped);
            }
        }
        let (refused, tolerance) = check(&sets, s.floor_ns());
        let f = Figure {
            ns: sets.iter().flatten().copied().collect(),
            samples: kept.iter().flat_map(Measured::model_samples).collect(),
            repeats_ns: sets.iter().filter_map(|r| stats::median(r)).collect(),
            tolerance,
            retaken: attempt,
            sampler_retaken: kept.iter().map(|m| m.retaken).sum(),
            noise: kept.last().and_then(|m| m.noise),
            reps: kept.last().map_or(0, |m| m.reps),
            transfers_per_sample: kept.last().map_or(0, |m| m.units_per_sample),
            overhead_ns: overhead,
            refused,
        };
        if f.refused.is_none() {
            return Ok(f);
        }
        last = Some(f);
    }
    Ok(last.expect("at least one attempt"))
}

/// The record of `case` measured on `pair` (an error record when the
/// figure was refused or the measurement failed; `Err(Stopped)` when a
/// stop request came first).
pub fn pair_record(
    pair: &Pair,
    case: &Case,
    s: &Setting,
    stop: &'static std::sync::atomic::AtomicBool,
    seed: u64,
) -> Result<Record, Failure> {
    let e = case.exchange;
    let mut detail = CoresDetail {
        case_view: Some(CoresView::Pair),
        case_exchange: Some(e),
        case_pair: Some(case.pair),
        case_class: Some(case.class.to_string()),
        class_what: Some(case.what.to_string()),
        role: Some(case.role.to_string()),
        floor_ns: Some(s.floor_ns()),
        instruction: Some(match e {
            Exchange::Cas => crate::kernels::c2c::cas_used().to_string(),
            _ => "mov (dependent loads)".to_string(),
        }),
        lines: (e != Exchange::Cas).then_some(LINES as u64),
        ..CoresDetail::default()
    };
    let f = match figure(pair, e, s, stop, seed) {
        Ok(f) => f,
        Err(Failure::Failed(why)) => {
            let mut r = Record::error(SuiteId::Cores, e.kernel(), why);
            r.detail = detail.into();
            r.cpus = case.pair.to_vec();
            r.threads = 2;
            return Ok(r);
        }
        Err(stopped) => return Err(stopped),
    };
    let one_way = stats::summarize(&f.ns, false);
    let cycles = s.clock_hz.and_then(|hz| {
        let c: Vec<f64> = f.ns.iter().map(|n| n * hz / 1e9).collect();
        stats::summarize(&c, false)
    });
    detail.repeats_ns = Some(f.repeats_ns.clone());
    detail.repeat_tolerance = Some(f.tolerance);
    detail.retaken = Some(f.retaken);
    detail.transfers_per_sample = Some(f.transfers_per_sample);
    detail.clock_overhead_ns = f.overhead_ns.map(|o| o as f64);
    let mut r = Record {
        kernel: e.kernel().into(),
        op: Op::CoreToCore,
        pattern: (e != Exchange::Cas).then_some(Pattern::Chase),
        size_bytes: (e != Exchange::Cas).then_some((LINES * 64) as u64),
        threads: 2,
        cpus: case.pair.to_vec(),
        reps_per_sample: Some(f.reps),
        samples: f.samples,
        noise: f.noise,
        samples_retaken: f.sampler_retaken,
        ..Record::new(CoresDetail::default())
    };
    if let Some(why) = f.refused {
        r.status = crate::model::Status::Error;
        r.reason = Some(format!(
            "refused after {ATTEMPTS} tries, never printed as a measurement: {why}"
        ));
        r.detail = detail.into();
        return Ok(r);
    }
    detail.one_way_ns = one_way.into();
    detail.cycles = cycles.into();
    detail.clock_hz = s.clock_hz.into();
    r.detail = detail.into();
    r.warnings
        .extend(crate::suites::record::spread_warnings(one_way.as_ref(), false));
    r.warnings.extend(crate::suites::record::noise_warnings(&r));
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_figure_below_the_floor_or_moving_between_repeats_is_refused() {
        let quiet = vec![vec![50.0, 51.0, 50.5], vec![50.2, 50.8, 51.5]];
        assert_eq!(check(&quiet, 1.0).0, None);
        let zero = vec![vec![0.0, 0.0, 0.0], vec![0.0, 0.0, 0.0]];
        assert!(check(&zero, 1.0).0.unwrap().contains("below the floor"));
        let moved = vec![vec![50.0, 51.0, 50.5], vec![70.0, 71.0, 70.5]];
        assert!(check(&moved, 1.0).0.unwrap().contains("moved from 50.50 to 70.50"));
        // Noisy samples widen what the repeats may differ by.
        let noisy = vec![vec![40.0, 50.0, 60.0], vec![55.0, 60.0, 70.0]];
        let (why, tol) = check(&noisy, 1.0);
        assert_eq!(why, None);
        assert!(tol > TOLERANCE_FLOOR);
    }

    #[test]
    fn the_floor_is_three_cycles_or_half_a_nanosecond() {
        let mut s = Setting {
            samples: 3,
            repeats: 2,
            cas_sample: Duration::from_millis(1),
            chase_sample: Duration::from_micros(250),
            clock_hz: Some(3e9),
        };
        assert!((s.floor_ns() - 1.0).abs() < 1e-12);
        s.clock_hz = None;
        assert_eq!(s.floor_ns(), FLOOR_NS);
    }
}
