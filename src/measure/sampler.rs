//! The one measurement protocol. Every number bwscope prints comes from
//! [`Sampler::measure`] driving a [`Workload`]:
//!
//! 1. **Warm up** (the workload's own untimed preparation, if any).
//! 2. **Calibrate**: start from a hint (the previous point's work per
//!    sample, so a rising sweep starts where the last point ended) or one
//!    repetition, grow until one call lasts at least `min_sample`, and trim
//!    a call that overshot back to ~`min_sample`; never above
//!    [`MAX_REPS`]. A call in which a worker was descheduled counts the
//!    time its workers ran, not its wall time. The calibration calls are the warm-up of the caches and
//!    TLBs and are never reported. Samples of ~10 ms dwarf the clock's
//!    ~25 ns resolution by 10^5 and are short enough that preemption hits
//!    few of them.
//! 3. **Sample** `samples` times at the calibrated repetitions. Each worker
//!    stamps its own start and end on `CLOCK_MONOTONIC` (one clock for
//!    threads and processes alike), so a sample lasts from the earliest
//!    start to the latest end (the slowest worker counts) and its skew is
//!    the latest start minus the earliest (likwid's `EXECUTE`, McCalpin).
//!    A sample in which a worker was descheduled — it lost more than
//!    [`limits::DESCHEDULED`] of its interval off its cpu, to another task
//!    or a hypervisor's steal (`os::time::ThreadRun::descheduled` says why
//!    not every involuntary switch) — measured a time share, not the hardware: it is taken again, each
//!    retake at half the work down to 1/[`SHORTEST`] of it (a busy cpu
//!    hands out runs of a few milliseconds), up to [`RETAKES`] ×
//!    `samples` times, and the result says how many were retaken. Only
//!    when no clean sample came within that budget are descheduled
//!    samples kept, and the result says so.
//! 4. **Noise** is read around the samples.
//!
//! A stop request (SIGINT/SIGTERM/SIGHUP) is honoured between calls: during
//! calibration it yields [`Failure::Stopped`]; during sampling the samples
//! already taken are kept and the result says it was cut short. A workload
//! that fails yields [`Failure::Failed`] with its message — an error
//! record, never a panic.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::noise;
use super::probe::SpellProbes;
use crate::model::{limits, Noise, Probe, Sample, SpellBaseline};
use crate::os::time::{thread_run, ThreadRun};

/// The most repetitions one call may have, for every workload: ~10^12
/// passes is hours of work at any size, so hitting it means the workload
/// does no work per repetition (a bug), not a fast machine.
pub const MAX_REPS: u64 = 1 << 40;

/// A call that lasts more than this times `min_sample` is trimmed back.
/// Why 1.1, not looser: samples are most of a sweep's time, and at 1.3 the
/// default `cache` sweep's samples averaged 11.1 ms for a 10 ms minimum
/// (Zen 4, 1,073 records); every millisecond above the minimum is time
/// that buys no precision.
const OVERSHOOT: f64 = 1.1;
/// Aim this much above `min_sample`, so the next call does not fall just
/// short of it.
const AIM: f64 = 1.05;

/// Samples within this fraction of the fastest one agree with it: the
/// best of a sample set jitters by about that much on a quiet machine.
pub const SETTLED: f64 = 0.01;

/// How to sample.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct SampleOpts {
    /// The most samples to take.
    pub samples: usize,
    pub min_sample: Duration,
    /// Stop before `samples` once this many lie within [`SETTLED`] of the
    /// fastest: the best is then reproduced, and more samples only cost
    /// time (a 1 GiB pass lasts 70 ms; seven of them for each of 29
    /// kernels at every large size made a sweep take 361 s). None: always
    /// `samples` (what `--samples N` asks for).
    pub settle: Option<usize>,
}

impl Default for SampleOpts {
    fn default() -> Self {
        SampleOpts {
            samples: 7,
            min_sample: Duration::from_millis(10),
            settle: None,
        }
    }
}

impl SampleOpts {
    /// From the `samples` and `min_sample_ms` stored in a plan.
    pub fn new(samples: usize, min_sample_ms: f64) -> SampleOpts {
        SampleOpts {
            samples,
            min_sample: Duration::from_secs_f64(min_sample_ms / 1e3),
            settle: None,
        }
    }

    /// These options, stopping early once `k` samples agree (see
    /// [`SampleOpts::settle`]); `k` at least 2 and at most `samples`.
    pub fn settling(self, k: Option<usize>) -> SampleOpts {
        SampleOpts {
            settle: k.map(|k| k.clamp(2, self.samples.max(2))),
            ..self
        }
    }
}

/// Whether `k` of `seconds` lie within [`SETTLED`] of the fastest.
pub fn settled(seconds: &[f64], k: usize) -> bool {
    if seconds.len() < k {
        return false;
    }
    let fastest = seconds.iter().copied().fold(f64::INFINITY, f64::min);
    seconds
        .iter()
        .filter(|&&s| s <= fastest * (1.0 + SETTLED))
        .count()
        >= k
}

/// A descheduled sample is taken again up to this many times the samples
/// asked for: on a machine where a compiler runs beside the measurement,
/// about one 10 ms sample in four is clean (a 2-vCPU Zen 4 guest at load
/// average 4: 12 of 50), and shorter retakes fare better (see
/// [`SHORTEST`]), so 7 samples find clean ones within 21 tries; on a
/// quiet machine nothing is retaken and nothing is spent.
pub const RETAKES: usize = 2;

/// A retake after a descheduled sample does half its work, down to this
/// fraction of the calibrated repetitions: on a busy cpu the scheduler
/// hands out runs of a few milliseconds, and a shorter sample fits in one
/// (the same 2-vCPU guest at load average 7: 11 of 100 samples of 10 ms
/// clean, 61 of 2.5 ms, 78 of 1 ms). At 1/8 of the 10 ms default a
/// sample still lasts ~50,000 clock resolutions.
const SHORTEST: u64 = 8;

/// When one worker started and ended one call, on `CLOCK_MONOTONIC` (ns).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stamp {
    pub start_ns: u64,
    pub end_ns: u64,
    /// What the worker's kernel returned (a read kernel's checksum, a
    /// chase's last address), so the work is observable.
    pub checksum: u64,
    /// What the worker's thread had of its cpu between its stamps (the
    /// reads around them included, so a worker never descheduled has at
    /// least its wall time); None where the workload cannot tell (a
    /// transfer's host thread sleeps on the device by design).
    pub on_cpu: Option<ThreadRun>,
}

impl Stamp {
    pub fn seconds(&self) -> f64 {
        self.end_ns.saturating_sub(self.start_ns) as f64 / 1e9
    }

    /// The worker was descheduled in its interval: off its cpu for more
    /// than [`limits::DESCHEDULED`] of it.
    pub fn descheduled(&self) -> bool {
        let wall = self.end_ns.saturating_sub(self.start_ns);
        self.on_cpu
            .is_some_and(|r| r.descheduled(wall, limits::DESCHEDULED))
    }
}

/// Run `work` as one worker's timed interval on the calling thread: its
/// start and end on the monotonic clock, what it returned, and what the
/// thread had of its cpu in between.
#[inline(always)]
pub fn timed(work: impl FnOnce() -> u64) -> Stamp {
    let before = thread_run();
    let start_ns = super::now_ns();
    let checksum = work();
    let end_ns = super::now_ns();
    let ran = thread_run().zip(before).map(|(after, b)| after.since(b));
    Stamp {
        start_ns,
        end_ns,
        checksum: std::hint::black_box(checksum),
        on_cpu: ran,
    }
}

/// What one call of a workload reports.
#[derive(Debug, Clone, Default)]
pub struct Call {
    /// One stamp per worker, in worker order.
    pub stamps: Vec<Stamp>,
    /// Time the device measured for the call (transfer sessions: CUDA or
    /// OpenCL events), carried along next to the host-clock span.
    pub device_seconds: Option<f64>,
}

impl Call {
    /// A worker was descheduled in this call ([`Stamp::descheduled`]).
    pub fn descheduled(&self) -> bool {
        self.stamps.iter().any(Stamp::descheduled)
    }

    /// How long the call's work took, seconds: its span, or where a
    /// worker was descheduled, the longest any worker ran (its CPU time),
    /// so a preempted call does not pass for a long enough one.
    fn work_seconds(&self) -> f64 {
        if !self.descheduled() {
            return span(&self.stamps).0;
        }
        self.stamps
            .iter()
            .filter_map(|s| s.on_cpu)
            .map(|r| r.cpu_ns as f64 / 1e9)
            .fold(0.0, f64::max)
    }
}

/// Work the sampler can time: `run(reps)` does `reps` repetitions on every
/// worker at once and reports when each worker started and ended.
pub trait Workload {
    /// Units of work one repetition does, all workers together: bytes for
    /// bandwidth, loads for a pointer chase, instructions' bytes for the
    /// register loops. Samples count `units_per_rep × reps`.
    fn units_per_rep(&self) -> u64;

    /// Untimed preparation before calibration (a driver's first call, one
    /// full walk of a chain). Default: nothing.
    fn warm_up(&mut self) -> Result<(), String> {
        Ok(())
    }

    /// Run `reps` repetitions (≥ 1) once on every worker.
    fn run(&mut self, reps: u64) -> Result<Call, String>;

    /// The core clock read on the workers right after the samples (turbo
    /// and AVX-512 licences move it), Hz; None where the workload does not
    /// read it (its records fall back to the run's clock).
    fn clock_after(&mut self) -> Option<f64> {
        None
    }

    /// After the samples: prove the timed loop did the work it declares
    /// (a read loop that only loads read every byte). `Ok(true)` when
    /// proven, `Ok(false)` when there is nothing to prove; an `Err` makes
    /// the measurement a failure.
    fn verify(&mut self) -> Result<bool, String> {
        Ok(false)
    }

    /// The run's spell probes (`probes`, `measure::probe`) on the
    /// workers, right after a sample: what share of its core a worker had
    /// and how loaded the memory was. None where the workload does not
    /// probe (forked workers, transfers, a suite that loads the memory
    /// itself).
    fn probe(&mut self, _probes: &Arc<SpellProbes>) -> Option<Probe> {
        None
    }
}

/// Where calibration starts: the work one sample did at the previous point
/// of a sweep. Bandwidth only falls as the working set grows, so in a
/// rising sweep the first call already lasts long enough and doubles as
/// the warm-up (a full sweep spent ~15 % of its time climbing from one
/// repetition at every point).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hint {
    pub units_per_sample: u64,
}

/// Why a measurement has no result.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// A stop request arrived before the first sample.
    Stopped,
    /// The workload failed; the message says how.
    Failed(String),
}

/// One timed sample.
#[derive(Debug, Clone, PartialEq)]
pub struct Timing {
    /// Repetitions per worker (the calibrated ones, or fewer in a retake).
    pub reps: u64,
    /// Units of work, all workers: `units_per_rep × reps`.
    pub units: u64,
    /// Earliest start → latest end, seconds.
    pub seconds: f64,
    /// Latest start − earliest start, seconds.
    pub skew: f64,
    /// Each worker's own interval, seconds.
    pub per_worker: Vec<f64>,
    /// The device's time for the call, when the workload has one.
    pub device_seconds: Option<f64>,
    /// The spell probes' readings right after the call
    /// ([`Workload::probe`]).
    pub probe: Option<Probe>,
}

/// The raw result of one measurement.
#[derive(Debug, Clone)]
pub struct Measured {
    /// Repetitions per call, from calibration.
    pub reps: u64,
    /// Units of work per sample (all workers): `units_per_rep × reps`
    /// (a retaken sample may have done less: its [`Timing::units`]).
    pub units_per_sample: u64,
    pub samples: Vec<Timing>,
    pub noise: Option<Noise>,
    /// Each worker's checksum in the last sample.
    pub checksums: Vec<u64>,
    /// A stop request ended sampling early; `samples` holds those taken.
    pub cut_short: bool,
    /// The core clock right after the samples ([`Workload::clock_after`]).
    pub clock_hz: Option<f64>,
    /// The workload proved its work after the samples ([`Workload::verify`]).
    pub verified: bool,
    /// Samples discarded because a worker was descheduled in them (each
    /// taken again while the budget lasted); None where the workload
    /// cannot tell.
    pub retaken: Option<u32>,
    /// Samples in `samples` in which a worker was descheduled: kept only
    /// when no clean sample came within the budget (a busy machine).
    pub descheduled: Option<u32>,
    /// The run's spell baseline right after the samples, which their
    /// readings are judged against (None: the sampler took no probes).
    pub baseline: Option<SpellBaseline>,
}

impl Measured {
    /// The samples as the model stores them: seconds and units of work
    /// (the model's `bytes` field; bandwidth workloads count bytes).
    pub fn model_samples(&self) -> Vec<Sample> {
        self.samples
            .iter()
            .map(|t| Sample {
                seconds: t.seconds,
                bytes: t.units,
                probe: t.probe,
            })
            .collect()
    }

    /// Units per second of each sample (GB/s when units are bytes / 1e9).
    pub fn rates(&self, scale: f64) -> Vec<f64> {
        self.samples
            .iter()
            .map(|t| t.units as f64 / t.seconds / scale)
            .collect()
    }

    /// The largest start skew over the samples, seconds.
    pub fn max_skew(&self) -> f64 {
        self.samples.iter().map(|t| t.skew).fold(0.0, f64::max)
    }

    /// Each worker's best rate over its own intervals, given the units
    /// worker `i` does per repetition.
    pub fn per_worker_best(&self, units_per_rep: impl Fn(usize) -> u64, scale: f64) -> Vec<f64> {
        let n = self.samples.first().map_or(0, |t| t.per_worker.len());
        (0..n)
            .map(|i| {
                self.samples
                    .iter()
                    .map(|t| (units_per_rep(i) * t.reps) as f64 / t.per_worker[i] / scale)
                    .fold(0.0, f64::max)
            })
            .collect()
    }

    /// Where the next, larger point of a sweep starts calibrating.
    pub fn hint(&self) -> Hint {
        Hint {
            units_per_sample: self.units_per_sample,
        }
    }
}

/// Earliest start → latest end, and latest start − earliest start, s.
pub fn span(stamps: &[Stamp]) -> (f64, f64) {
    let Some(first) = stamps.iter().map(|s| s.start_ns).min() else {
        return (0.0, 0.0);
    };
    let last_start = stamps.iter().map(|s| s.start_ns).max().unwrap_or(first);
    let end = stamps.iter().map(|s| s.end_ns).max().unwrap_or(first);
    (
        end.saturating_sub(first) as f64 / 1e9,
        last_start.saturating_sub(first) as f64 / 1e9,
    )
}

/// The protocol: options plus the stop flag it honours and the run's
/// spell probes it takes after every sample.
#[derive(Clone)]
pub struct Sampler<'a> {
    pub opts: SampleOpts,
    stop: &'a AtomicBool,
    /// The run's spell probes (`measure::probe`); None: no probes (the
    /// knee probe, a unit test).
    probes: Option<Arc<SpellProbes>>,
}

impl<'a> Sampler<'a> {
    pub fn new(opts: SampleOpts, stop: &'a AtomicBool) -> Sampler<'a> {
        Sampler {
            opts,
            stop,
            probes: None,
        }
    }

    /// This sampler, taking `probes` after every sample of a workload
    /// that probes ([`Workload::probe`]), and putting their baseline so
    /// far on the result ([`Measured::baseline`]).
    pub fn with_probes(self, probes: Arc<SpellProbes>) -> Sampler<'a> {
        Sampler {
            probes: Some(probes),
            ..self
        }
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Calibrate, sample and read the noise of `w` (see the module doc).
    pub fn measure(&self, w: &mut dyn Workload, hint: Option<Hint>) -> Result<Measured, Failure> {
        if self.stopped() {
            return Err(Failure::Stopped);
        }
        w.warm_up().map_err(Failure::Failed)?;
        let reps = self.calibrate(w, hint)?;
        self.sample(w, reps, (reps / SHORTEST).max(1))
    }

    /// Like [`Sampler::measure`] at a fixed `reps` (the same work in every
    /// case of a comparison, e.g. local vs remote memory): one untimed
    /// call at `reps` replaces calibration as the warm-up.
    pub fn measure_fixed(&self, w: &mut dyn Workload, reps: u64) -> Result<Measured, Failure> {
        if self.stopped() {
            return Err(Failure::Stopped);
        }
        let reps = reps.clamp(1, MAX_REPS);
        w.warm_up().map_err(Failure::Failed)?;
        w.run(reps).map_err(Failure::Failed)?;
        // The same work in every sample: retakes are not shortened.
        self.sample(w, reps, reps)
    }

    /// Take the samples at `reps` and read the noise around them; retake
    /// descheduled ones, each retake halving the work down to `shortest`
    /// repetitions (see the module doc).
    fn sample(&self, w: &mut dyn Workload, reps: u64, shortest: u64) -> Result<Measured, Failure> {
        let per_rep = w.units_per_rep();
        let units_per_sample = per_rep.saturating_mul(reps);
        let mut now = reps;
        let before = noise::snapshot();
        let n = self.opts.samples.max(1);
        let tries = n + RETAKES * n;
        let mut clean: Vec<Timing> = Vec::with_capacity(n);
        let mut descheduled: Vec<Timing> = Vec::new();
        let mut checksums = Vec::new();
        let mut cut_short = false;
        let mut tells = true;
        while clean.len() < n && clean.len() + descheduled.len() < tries {
            if self.stopped() {
                cut_short = true;
                break;
            }
            let call = w.run(now).map_err(Failure::Failed)?;
            let (seconds, skew) = span(&call.stamps);
            tells &= call.stamps.iter().all(|s| s.on_cpu.is_some());
            let t = Timing {
                reps: now,
                units: per_rep.saturating_mul(now),
                seconds,
                skew,
                per_worker: call.stamps.iter().map(Stamp::seconds).collect(),
                device_seconds: call.device_seconds,
                // Every sample, descheduled ones too: a retake's spell is
                // as telling as a kept sample's.
                probe: self.probes.as_ref().and_then(|p| w.probe(p)),
            };
            checksums = call.stamps.iter().map(|s| s.checksum).collect();
            if call.descheduled() {
                descheduled.push(t);
                now = (now / 2).max(shortest);
                continue;
            }
            clean.push(t);
            if let Some(k) = self.opts.settle {
                // Time per unit: retaken samples may be shorter.
                let secs: Vec<f64> = clean.iter().map(|t| t.seconds / t.units as f64).collect();
                if settled(&secs, k) {
                    break;
                }
            }
        }
        let retaken = descheduled.len();
        // No clean sample within the budget: the last `n` descheduled
        // ones stand, said to be descheduled.
        let (samples, kept) = if clean.is_empty() {
            let from = descheduled.len().saturating_sub(n);
            let kept: Vec<Timing> = descheduled.drain(from..).collect();
            let k = kept.len();
            (kept, k)
        } else {
            (clean, 0)
        };
        if samples.is_empty() {
            return Err(Failure::Stopped);
        }
        let noise = noise::since(before);
        let verified = w.verify().map_err(Failure::Failed)?;
        Ok(Measured {
            reps,
            units_per_sample,
            samples,
            noise,
            checksums,
            cut_short,
            clock_hz: w.clock_after(),
            verified,
            retaken: tells.then_some((retaken - kept) as u32),
            descheduled: tells.then_some(kept as u32),
            baseline: self.probes.as_ref().map(|p| p.baseline()),
        })
    }

    /// Repetitions per call so one call lasts at least `min_sample`.
    fn calibrate(&self, w: &mut dyn Workload, hint: Option<Hint>) -> Result<u64, Failure> {
        let min = self.opts.min_sample.as_secs_f64();
        let per_rep = w.units_per_rep().max(1);
        let mut reps = hint
            .map_or(1, |h| h.units_per_sample.div_ceil(per_rep))
            .clamp(1, MAX_REPS);
        loop {
            if self.stopped() {
                return Err(Failure::Stopped);
            }
            let secs = w.run(reps).map_err(Failure::Failed)?.work_seconds();
            if secs >= min || reps >= MAX_REPS {
                // A call that overshot (a hinted start, or a rate that
                // fell) is long enough to scale from; longer samples
                // only cost time.
                if secs > OVERSHOOT * min && reps > 1 {
                    let scaled = (reps as f64 * min * AIM / secs).ceil() as u64;
                    reps = scaled.clamp(1, reps);
                }
                return Ok(reps);
            }
            let factor = if secs > 0.0 { min / secs * AIM } else { 16.0 };
            // A near miss grows by what it lacks (×1.1 at least, so noise
            // cannot stall the climb); a ×1.5 floor turned a call at 90 %
            // of the minimum into one at 135 %, which was then trimmed.
            let next = (reps as f64 * factor.clamp(1.1, 1000.0)).ceil() as u64;
            reps = next.max(reps + 1).min(MAX_REPS);
        }
    }
}

#[cfg(test)]
mod tests;
