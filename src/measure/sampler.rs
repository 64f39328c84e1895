//! The one measurement protocol. Every number bwscope prints comes from
//! [`Sampler::measure`] driving a [`Workload`]:
//!
//! 1. **Warm up** (the workload's own untimed preparation, if any).
//! 2. **Calibrate**: start from a hint (the previous point's work per
//!    sample, so a rising sweep starts where the last point ended) or one
//!    repetition, grow until one call lasts at least `min_sample`, and trim
//!    a call that overshot back to ~`min_sample`; never above
//!    [`MAX_REPS`]. The calibration calls are the warm-up of the caches and
//!    TLBs and are never reported. Samples of ~10 ms dwarf the clock's
//!    ~25 ns resolution by 10^5 and are short enough that preemption hits
//!    few of them.
//! 3. **Sample** `samples` times at the calibrated repetitions. Each worker
//!    stamps its own start and end on `CLOCK_MONOTONIC` (one clock for
//!    threads and processes alike), so a sample lasts from the earliest
//!    start to the latest end (the slowest worker counts) and its skew is
//!    the latest start minus the earliest (likwid's `EXECUTE`, McCalpin).
//! 4. **Noise** is read around the samples.
//!
//! A stop request (SIGINT/SIGTERM/SIGHUP) is honoured between calls: during
//! calibration it yields [`Failure::Stopped`]; during sampling the samples
//! already taken are kept and the result says it was cut short. A workload
//! that fails yields [`Failure::Failed`] with its message — an error
//! record, never a panic.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::noise;
use crate::model::{Noise, Sample};

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

/// When one worker started and ended one call, on `CLOCK_MONOTONIC` (ns).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stamp {
    pub start_ns: u64,
    pub end_ns: u64,
    /// What the worker's kernel returned (a read kernel's checksum, a
    /// chase's last address), so the work is observable.
    pub checksum: u64,
}

impl Stamp {
    pub fn seconds(&self) -> f64 {
        self.end_ns.saturating_sub(self.start_ns) as f64 / 1e9
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
    /// Earliest start → latest end, seconds.
    pub seconds: f64,
    /// Latest start − earliest start, seconds.
    pub skew: f64,
    /// Each worker's own interval, seconds.
    pub per_worker: Vec<f64>,
    /// The device's time for the call, when the workload has one.
    pub device_seconds: Option<f64>,
}

/// The raw result of one measurement.
#[derive(Debug, Clone)]
pub struct Measured {
    /// Repetitions per call, from calibration.
    pub reps: u64,
    /// Units of work per sample (all workers): `units_per_rep × reps`.
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
}

impl Measured {
    /// The samples as the model stores them: seconds and units of work
    /// (the model's `bytes` field; bandwidth workloads count bytes).
    pub fn model_samples(&self) -> Vec<Sample> {
        self.samples
            .iter()
            .map(|t| Sample {
                seconds: t.seconds,
                bytes: self.units_per_sample,
            })
            .collect()
    }

    /// Units per second of each sample (GB/s when units are bytes / 1e9).
    pub fn rates(&self, scale: f64) -> Vec<f64> {
        self.samples
            .iter()
            .map(|t| self.units_per_sample as f64 / t.seconds / scale)
            .collect()
    }

    /// The largest start skew over the samples, seconds.
    pub fn max_skew(&self) -> f64 {
        self.samples.iter().map(|t| t.skew).fold(0.0, f64::max)
    }

    /// Each worker's intervals, worker-major.
    pub fn per_worker_seconds(&self) -> Vec<Vec<f64>> {
        let n = self.samples.first().map_or(0, |t| t.per_worker.len());
        (0..n)
            .map(|w| self.samples.iter().map(|t| t.per_worker[w]).collect())
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

/// The protocol: options plus the stop flag it honours.
#[derive(Clone, Copy)]
pub struct Sampler<'a> {
    pub opts: SampleOpts,
    stop: &'a AtomicBool,
}

impl<'a> Sampler<'a> {
    pub fn new(opts: SampleOpts, stop: &'a AtomicBool) -> Sampler<'a> {
        Sampler { opts, stop }
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
        self.sample(w, reps)
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
        self.sample(w, reps)
    }

    /// Take the samples at `reps` and read the noise around them.
    fn sample(&self, w: &mut dyn Workload, reps: u64) -> Result<Measured, Failure> {
        let units_per_sample = w.units_per_rep().saturating_mul(reps);
        let before = noise::snapshot();
        let n = self.opts.samples.max(1);
        let mut samples = Vec::with_capacity(n);
        let mut checksums = Vec::new();
        let mut cut_short = false;
        for _ in 0..n {
            if self.stopped() {
                cut_short = true;
                break;
            }
            let call = w.run(reps).map_err(Failure::Failed)?;
            let (seconds, skew) = span(&call.stamps);
            samples.push(Timing {
                seconds,
                skew,
                per_worker: call.stamps.iter().map(Stamp::seconds).collect(),
                device_seconds: call.device_seconds,
            });
            checksums = call.stamps.iter().map(|s| s.checksum).collect();
            if let Some(k) = self.opts.settle {
                let secs: Vec<f64> = samples.iter().map(|t| t.seconds).collect();
                if settled(&secs, k) {
                    break;
                }
            }
        }
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
            let (secs, _) = span(&w.run(reps).map_err(Failure::Failed)?.stamps);
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
mod tests {
    use super::*;
    use std::cell::RefCell;

    /// A workload with scripted timings: `ns_per_rep[w]` per worker, a
    /// start offset per worker, and optional failure after some calls.
    struct Mock {
        ns_per_rep: Vec<u64>,
        start_offset_ns: Vec<u64>,
        per_rep: u64,
        calls: RefCell<Vec<u64>>,
        fail_after: Option<usize>,
        stop_after: Option<(usize, &'static AtomicBool)>,
        clock: u64,
    }

    impl Mock {
        fn new(ns_per_rep: Vec<u64>) -> Mock {
            let n = ns_per_rep.len();
            Mock {
                ns_per_rep,
                start_offset_ns: vec![0; n],
                per_rep: 1000,
                calls: RefCell::new(Vec::new()),
                fail_after: None,
                stop_after: None,
                clock: 1_000_000,
            }
        }
    }

    impl Workload for Mock {
        fn units_per_rep(&self) -> u64 {
            self.per_rep
        }
        fn run(&mut self, reps: u64) -> Result<Call, String> {
            let n = self.calls.borrow().len();
            if self.fail_after == Some(n) {
                return Err("device lost".into());
            }
            if let Some((k, flag)) = self.stop_after {
                if n + 1 >= k {
                    flag.store(true, Ordering::Relaxed);
                }
            }
            self.calls.borrow_mut().push(reps);
            let base = self.clock;
            let stamps: Vec<Stamp> = self
                .ns_per_rep
                .iter()
                .zip(&self.start_offset_ns)
                .map(|(&ns, &off)| Stamp {
                    start_ns: base + off,
                    end_ns: base + off + ns * reps,
                    checksum: reps,
                })
                .collect();
            self.clock = stamps.iter().map(|s| s.end_ns).max().unwrap() + 1000;
            Ok(Call {
                stamps,
                device_seconds: Some(0.5),
            })
        }
    }

    fn opts(samples: usize, ms: u64) -> SampleOpts {
        SampleOpts {
            samples,
            min_sample: Duration::from_millis(ms),
            settle: None,
        }
    }

    #[test]
    fn settling_stops_once_enough_samples_agree_with_the_fastest() {
        // Identical samples: three agree after three.
        let stop = AtomicBool::new(false);
        let mut w = Mock::new(vec![1_000]);
        let m = Sampler::new(opts(7, 10).settling(Some(3)), &stop)
            .measure(&mut w, None)
            .unwrap();
        assert_eq!(m.samples.len(), 3);
        // Without settling, every sample asked for.
        let mut w = Mock::new(vec![1_000]);
        let m = Sampler::new(opts(7, 10), &stop)
            .measure(&mut w, None)
            .unwrap();
        assert_eq!(m.samples.len(), 7);
        // A spread set goes on: only the first and the fourth agree.
        assert!(!settled(&[1.0, 1.05, 1.2, 1.005], 3));
        assert!(settled(&[1.0, 1.05, 1.2, 1.005, 0.999], 3));
        assert!(!settled(&[1.0, 1.0], 3));
        // The count is kept within what is asked.
        assert_eq!(opts(7, 10).settling(Some(1)).settle, Some(2));
        assert_eq!(opts(5, 10).settling(Some(9)).settle, Some(5));
        assert_eq!(opts(5, 10).settling(None).settle, None);
    }

    #[test]
    fn calibration_reaches_the_minimum_sample_time() {
        let stop = AtomicBool::new(false);
        let mut w = Mock::new(vec![1_000]); // 1 µs per rep
        let m = Sampler::new(opts(5, 10), &stop)
            .measure(&mut w, None)
            .unwrap();
        assert_eq!(m.samples.len(), 5);
        for t in &m.samples {
            assert!(t.seconds >= 0.010, "{}", t.seconds);
            assert!(t.seconds < 0.011, "{}", t.seconds);
        }
        assert_eq!(m.units_per_sample, m.reps * 1000);
        // Growth started at one repetition.
        assert_eq!(w.calls.borrow()[0], 1);
    }

    #[test]
    fn calibration_never_exceeds_the_cap() {
        let stop = AtomicBool::new(false);
        // Zero time per repetition: calibration can only stop at the cap.
        let mut w = Mock::new(vec![0]);
        let m = Sampler::new(opts(2, 10), &stop)
            .measure(&mut w, None)
            .unwrap();
        assert_eq!(m.reps, MAX_REPS);
        assert!(w.calls.borrow().iter().all(|&r| r <= MAX_REPS));
    }

    #[test]
    fn a_hinted_start_that_overshoots_is_trimmed() {
        let stop = AtomicBool::new(false);
        let mut w = Mock::new(vec![1_000]);
        // The hint asks for 100 ms of work: the first call overshoots 10×.
        let hint = Hint {
            units_per_sample: 100_000 * 1000,
        };
        let m = Sampler::new(opts(3, 10), &stop)
            .measure(&mut w, Some(hint))
            .unwrap();
        assert_eq!(w.calls.borrow()[0], 100_000, "started from the hint");
        assert!(m.reps <= 10_600 && m.reps >= 10_000, "{}", m.reps);
        // One calibration call only: the hinted call was long enough.
        assert_eq!(w.calls.borrow().len(), 1 + 3);
    }

    /// A call just short of the minimum grows by what it lacks, so the
    /// next call lands just above the minimum instead of ×1.5 past the
    /// short one (which would then be trimmed: a wasted 13.5 ms here).
    #[test]
    fn a_near_miss_grows_by_what_it_lacks() {
        let stop = AtomicBool::new(false);
        let mut w = Mock::new(vec![1_000]);
        // 9,000 repetitions of 1 µs: 9 ms, 10 % short of the minimum.
        let hint = Hint {
            units_per_sample: 9_000 * 1000,
        };
        let m = Sampler::new(opts(3, 10), &stop)
            .measure(&mut w, Some(hint))
            .unwrap();
        let calls = w.calls.borrow().clone();
        assert_eq!(calls[0], 9_000, "started from the hint");
        assert!((10_000..=11_000).contains(&calls[1]), "{calls:?}");
        assert_eq!(m.reps, calls[1], "no trim needed");
        assert_eq!(calls.len(), 2 + 3, "two calibration calls: {calls:?}");
        for t in &m.samples {
            assert!(t.seconds >= 0.010 && t.seconds < 0.011, "{}", t.seconds);
        }
    }

    /// A call that overshoots by a quarter (a rate that rose, a coarse
    /// step) is trimmed back to ~1.05× the minimum.
    #[test]
    fn a_call_that_overshoots_by_a_quarter_is_trimmed() {
        let stop = AtomicBool::new(false);
        let mut w = Mock::new(vec![1_000]);
        let hint = Hint {
            units_per_sample: 12_500 * 1000,
        };
        let m = Sampler::new(opts(3, 10), &stop)
            .measure(&mut w, Some(hint))
            .unwrap();
        assert_eq!(w.calls.borrow()[0], 12_500);
        assert_eq!(m.reps, 10_500);
        for t in &m.samples {
            assert!(t.seconds >= 0.010 && t.seconds < 0.011, "{}", t.seconds);
        }
    }

    #[test]
    fn span_is_earliest_start_to_latest_end_and_skew_is_computed() {
        let stop = AtomicBool::new(false);
        let mut w = Mock::new(vec![1_000, 2_000]);
        w.start_offset_ns = vec![0, 5_000];
        let m = Sampler::new(opts(2, 1), &stop)
            .measure(&mut w, None)
            .unwrap();
        let t = &m.samples[0];
        let slow = 2_000.0 * m.reps as f64 / 1e9;
        assert!((t.seconds - (5e-6 + slow)).abs() < 1e-12, "{t:?}");
        assert!((t.skew - 5e-6).abs() < 1e-12);
        assert!((t.per_worker[1] - slow).abs() < 1e-12);
        assert!((m.max_skew() - 5e-6).abs() < 1e-12);
        assert_eq!(m.per_worker_seconds().len(), 2);
        assert_eq!(t.device_seconds, Some(0.5));
        assert_eq!(span(&[]), (0.0, 0.0));
    }

    #[test]
    fn a_stop_request_ends_sampling_and_keeps_finished_samples() {
        static STOP: AtomicBool = AtomicBool::new(false);
        let mut w = Mock::new(vec![1_000]);
        // Calibration takes a few calls; stop once 2 samples are done.
        let probe = {
            let mut p = Mock::new(vec![1_000]);
            let s = AtomicBool::new(false);
            Sampler::new(opts(1, 10), &s).measure(&mut p, None).unwrap();
            let n = p.calls.borrow().len();
            n - 1
        };
        w.stop_after = Some((probe + 2, &STOP));
        let m = Sampler::new(opts(7, 10), &STOP)
            .measure(&mut w, None)
            .unwrap();
        assert!(m.cut_short);
        assert_eq!(m.samples.len(), 2);
        // Stopped before anything: no result.
        let mut w = Mock::new(vec![1_000]);
        assert_eq!(
            Sampler::new(opts(7, 10), &STOP).measure(&mut w, None).err(),
            Some(Failure::Stopped)
        );
    }

    #[test]
    fn fixed_work_skips_calibration() {
        let stop = AtomicBool::new(false);
        let mut w = Mock::new(vec![1_000]);
        let m = Sampler::new(opts(3, 10), &stop)
            .measure_fixed(&mut w, 77)
            .unwrap();
        assert_eq!(m.reps, 77);
        // One warm-up call, then the samples, all at the given work.
        assert_eq!(*w.calls.borrow(), vec![77; 4]);
    }

    /// A workload whose proof of work fails after sampling.
    struct Unproven(Mock);

    impl Workload for Unproven {
        fn units_per_rep(&self) -> u64 {
            self.0.units_per_rep()
        }
        fn run(&mut self, reps: u64) -> Result<Call, String> {
            self.0.run(reps)
        }
        fn verify(&mut self) -> Result<bool, String> {
            Err("checksum 0x1 where the stream sums to 0x2".into())
        }
    }

    #[test]
    fn a_failed_proof_of_work_fails_the_measurement() {
        let stop = AtomicBool::new(false);
        let mut w = Unproven(Mock::new(vec![1_000]));
        assert_eq!(
            Sampler::new(opts(2, 1), &stop).measure(&mut w, None).err(),
            Some(Failure::Failed(
                "checksum 0x1 where the stream sums to 0x2".into()
            ))
        );
        let mut w = Mock::new(vec![1_000]);
        let m = Sampler::new(opts(2, 1), &stop)
            .measure(&mut w, None)
            .unwrap();
        assert!(!m.verified, "nothing to prove");
    }

    #[test]
    fn a_failing_workload_is_an_error_not_a_panic() {
        let stop = AtomicBool::new(false);
        let mut w = Mock::new(vec![1_000]);
        w.fail_after = Some(3);
        match Sampler::new(opts(7, 10), &stop).measure(&mut w, None) {
            Err(Failure::Failed(m)) => assert_eq!(m, "device lost"),
            other => panic!("expected a failure, got {other:?}"),
        }
    }
}
