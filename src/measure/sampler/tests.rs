//! The sampler's tests: calibration, retakes of descheduled samples,
//! and workloads that cannot tell.

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
    /// Calls (by index) in which worker 0 is preempted: they last
    /// twice as long and say so; None: the mock tells nothing.
    preempted: Option<Vec<usize>>,
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
            preempted: None,
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
        let hit = self.preempted.as_ref().map(|p| p.contains(&n));
        let stamps: Vec<Stamp> = self
            .ns_per_rep
            .iter()
            .zip(&self.start_offset_ns)
            .enumerate()
            .map(|(i, (&ns, &off))| {
                let ran = ns * reps;
                let lost = if i == 0 && hit == Some(true) { ran } else { 0 };
                Stamp {
                    start_ns: base + off,
                    end_ns: base + off + ran + lost,
                    checksum: reps,
                    on_cpu: hit.map(|_| ThreadRun { cpu_ns: ran }),
                }
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
    assert_eq!(m.per_worker_best(|_| 1000, 1.0).len(), 2);
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

#[test]
fn a_worker_off_its_cpu_for_more_than_a_percent_was_descheduled() {
    let at = |cpu_ns| Stamp {
        start_ns: 0,
        end_ns: 10_000_000,
        checksum: 0,
        on_cpu: Some(ThreadRun { cpu_ns }),
    };
    assert!(!at(10_000_500).descheduled(), "ran throughout");
    assert!(
        !at(9_950_000).descheduled(),
        "0.5 % off: IRQs, a kernel thread's slice"
    );
    assert!(
        at(9_800_000).descheduled(),
        "2 % off: another task or stolen"
    );
    let untold = Stamp {
        on_cpu: None,
        ..at(0)
    };
    assert!(!untold.descheduled(), "a workload that cannot tell");
}

#[test]
fn descheduled_samples_are_taken_again_and_counted() {
    let stop = AtomicBool::new(false);
    // Which calls are calibration: measure a clean twin first.
    let calib = {
        let mut p = Mock::new(vec![1_000]);
        p.preempted = Some(vec![]);
        let m = Sampler::new(opts(5, 10), &stop)
            .measure(&mut p, None)
            .unwrap();
        assert_eq!((m.retaken, m.descheduled), (Some(0), Some(0)));
        let calls = p.calls.borrow().len();
        calls - 5
    };
    // The 2nd and 4th samples are preempted (and twice as slow).
    let mut w = Mock::new(vec![1_000]);
    w.preempted = Some(vec![calib + 1, calib + 3]);
    let m = Sampler::new(opts(5, 10), &stop)
        .measure(&mut w, None)
        .unwrap();
    assert_eq!(m.samples.len(), 5);
    assert_eq!((m.retaken, m.descheduled), (Some(2), Some(0)));
    let calls = w.calls.borrow().clone();
    assert_eq!(calls.len(), calib + 7);
    // Each retake did half the work of the sample before it.
    let r = m.reps;
    assert_eq!(calls[calib..], [r, r, r / 2, r / 2, r / 4, r / 4, r / 4]);
    let rates = m.rates(1.0);
    assert!(
        rates.iter().all(|&g| (g / 1e9 - 1.0).abs() < 1e-9),
        "only the hardware's rate stands, never a time share: {rates:?}"
    );
    let bytes: Vec<u64> = m.model_samples().iter().map(|s| s.bytes).collect();
    assert_eq!(bytes, [r, r / 2, r / 4, r / 4, r / 4].map(|x| x * 1000));
    // A workload that cannot tell: nothing retaken, nothing said.
    let mut w = Mock::new(vec![1_000]);
    let m = Sampler::new(opts(5, 10), &stop)
        .measure(&mut w, None)
        .unwrap();
    assert_eq!((m.retaken, m.descheduled), (None, None));
}

#[test]
fn without_a_clean_sample_the_budget_ends_and_says_so() {
    let stop = AtomicBool::new(false);
    // Every call preempted, calibration included.
    let mut w = Mock::new(vec![1_000]);
    w.preempted = Some((0..1000).collect());
    let m = Sampler::new(opts(3, 10), &stop)
        .measure(&mut w, None)
        .unwrap();
    assert_eq!(m.samples.len(), 3);
    assert_eq!(m.descheduled, Some(3));
    assert_eq!(m.retaken, Some((RETAKES * 3) as u32));
    // Calibration judged each preempted call by the time its worker
    // ran, so it found the repetitions a clean run finds.
    let mut clean = Mock::new(vec![1_000]);
    clean.preempted = Some(vec![]);
    let c = Sampler::new(opts(3, 10), &stop)
        .measure(&mut clean, None)
        .unwrap();
    assert_eq!(m.reps, c.reps);
    let calls = w.calls.borrow().clone();
    // Retakes shorten to an eighth of the calibrated work, no less.
    assert!(calls
        .iter()
        .rev()
        .take(4)
        .all(|&r| r == (m.reps / 8).max(1)));
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
