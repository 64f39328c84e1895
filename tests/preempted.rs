//! Measurements whose thread is preempted on purpose (issue 29): it runs
//! in the idle scheduling class beside a thread on the same cpu, so it
//! loses its cpu whenever that thread wants it.
//!
//! - The clock probe (item 3). A record is judged by the clock read right
//!   after its samples (`platform::clock::quick`); on a quiet Zen 4 guest
//!   it read 3.377 GHz beside the run's 3.694, and a 4 KiB copy at exactly
//!   64 B/cycle × 3.694 GHz was flagged above its limit. Interrupted every
//!   ~45 µs, every ~0.1 ms sample is preempted: the probe must say it has
//!   no clock (the record falls back to the run's), never read a time
//!   share.
//! - The sampler (item 1). Beside a thread that takes the cpu 4 ms of
//!   every 8, no 10 ms sample is clean: the samples are retaken, shorter,
//!   until they fit in the worker's share, and the rate is the hardware's,
//!   not half of it.

// Unix: the idle scheduling class and timer slack are Linux calls.
#![cfg(target_os = "linux")]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bwscope::measure::kernel::TeamKernel;
use bwscope::measure::team::{pin_current, Team};
use bwscope::measure::{SampleOpts, Sampler};
use bwscope::memory::PageKind;
use bwscope::platform::clock;

/// The tests share the cpu: they take turns.
static CPU_IN_USE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The cpu both threads share: the last allowed one.
fn cpu() -> u32 {
    *bwscope::platform::topology::allowed_cpus().last().unwrap()
}

/// `f` on a new thread pinned to `cpu`, in the idle scheduling class when
/// `idle` (any runnable task preempts it at once; a thread may always
/// lower its own class).
fn on_thread<R: Send + 'static>(cpu: u32, idle: bool, f: fn() -> R) -> R {
    std::thread::spawn(move || {
        pin_current(cpu).expect("pin");
        if idle {
            idle_class();
        }
        f()
    })
    .join()
    .unwrap()
}

/// Put the calling thread in the idle scheduling class: any other
/// runnable task on its cpu preempts it at once (a thread may always
/// lower its own class).
fn idle_class() {
    let p = libc::sched_param { sched_priority: 0 };
    // SAFETY: pid 0 is the calling thread; p is a valid param.
    let rc = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &p) };
    assert_eq!(rc, 0, "SCHED_IDLE: {}", std::io::Error::last_os_error());
}

/// A thread on `cpu` that sleeps `off` and spins `on` by turns until
/// dropped (and never longer than a minute).
struct Interrupter {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<u64>>,
}

impl Interrupter {
    fn start(cpu: u32, off: Duration, on: Duration) -> Interrupter {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            pin_current(cpu).expect("pin the interrupter");
            // SAFETY: prctl with an integer argument; a 1 ns timer slack
            // lets the short sleeps end when asked.
            unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1u64) };
            let end = Instant::now() + Duration::from_secs(60);
            let mut wakes = 0u64;
            while !flag.load(Ordering::Relaxed) && Instant::now() < end {
                std::thread::sleep(off);
                let t = Instant::now();
                while t.elapsed() < on {
                    std::hint::spin_loop();
                }
                wakes += 1;
            }
            wakes
        });
        Interrupter {
            stop,
            thread: Some(thread),
        }
    }

    fn stop(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().unwrap().join().unwrap()
    }
}

impl Drop for Interrupter {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One try of the clock-probe test, in alternating rounds so every figure
/// it compares was read in the same spell: each round the run's probe, a
/// calm quick probe, then a quick probe interrupted every ~45 µs. `Err`
/// says what failed.
///
/// Why rounds and bests: the run's probe is the best of 400 samples over
/// ~0.15 s, a quick one the best of 8 over ~1.5 ms; on a guest whose
/// host moves its turbo with its other tenants' load, one calm quick
/// probe read 2.890 GHz beside the run's 2.996 (3.5 % low, no sample
/// descheduled: the clock, not a time share). A time share reads far
/// lower: a ~0.1 ms sample preempted by a 15 µs spin every 45 µs keeps
/// at most ~85 % of its cycles.
fn quick_probe_rounds(cpu: u32) -> Result<String, String> {
    let (mut run, mut calm, mut interrupted) = (Vec::new(), Vec::new(), Vec::new());
    let mut wakes = 0;
    for _ in 0..3 {
        match on_thread(cpu, false, clock::measure).hz {
            Some(hz) => run.push(hz),
            None => {
                return Ok(
                    "SKIP: no core clock here (an emulator or an implausible reading)".into(),
                )
            }
        }
        calm.push(on_thread(cpu, false, clock::quick));
        let i = Interrupter::start(cpu, Duration::from_micros(30), Duration::from_micros(15));
        interrupted.extend((0..2).map(|_| on_thread(cpu, true, clock::quick)));
        wakes += i.stop();
    }
    let run_hz = run.iter().copied().fold(0.0, f64::max);
    // Uninterrupted, the quick probe reads the run's clock.
    let calm_hz = calm.iter().filter_map(|p| p.hz).fold(0.0, f64::max);
    if calm_hz < run_hz * 0.97 {
        return Err(format!(
            "calm quick probes read at best {calm_hz:.4e} Hz against the run's {run_hz:.4e}: {calm:?}"
        ));
    }
    let retaken: usize = interrupted.iter().filter_map(|p| p.retaken).sum();
    if retaken == 0 {
        return Err(format!(
            "the interrupter ({wakes} wake-ups) never preempted the probe: {interrupted:?}"
        ));
    }
    // An interrupted probe has no clock or the clock, never a time share.
    if let Some(p) = interrupted
        .iter()
        .find(|p| p.hz.is_some_and(|hz| hz < calm_hz * 0.95))
    {
        return Err(format!(
            "an interrupted probe read {:.3} GHz beside calm probes' {:.3}: {p:?}",
            p.hz.unwrap() / 1e9,
            calm_hz / 1e9
        ));
    }
    Ok(format!(
        "run clock {:.3} GHz, calm quick {:.3}; interrupted probes: {:?}",
        run_hz / 1e9,
        calm_hz / 1e9,
        interrupted
            .iter()
            .map(|p| (p.hz.map(|h| (h / 1e7).round() / 100.0), p.retaken))
            .collect::<Vec<_>>()
    ))
}

/// Up to three tries of [`quick_probe_rounds`]: a host's other tenants
/// can move the clock by a few per cent within one try; a probe that
/// reads a time share does so in every try, so it still fails here.
#[test]
fn an_interrupted_quick_probe_has_no_clock_rather_than_a_low_one() {
    let _turn = CPU_IN_USE.lock().unwrap_or_else(|e| e.into_inner());
    let cpu = cpu();
    let mut failed = Vec::new();
    for _ in 0..3 {
        match quick_probe_rounds(cpu) {
            Ok(said) => {
                eprintln!("{said}");
                return;
            }
            Err(why) => {
                eprintln!("try failed: {why}");
                failed.push(why);
            }
        }
    }
    panic!("every try failed:\n{}", failed.join("\n"));
}

/// One try of the sampler test: the median of the worker's samples with
/// its cpu to itself, then the median of its samples beside a thread that
/// takes the cpu 4 ms of every ~8, the samples retaken and the samples
/// still descheduled. Medians both: the quiet best against the shared
/// median compared a lucky moment with a typical one, and with a tenant on
/// the host core's sibling (a 2-vCPU Xeon model 207 guest) the quiet best
/// read 32.2-36.7 GB/s from one try to the next and one shared median sat
/// at 0.90 of its quiet best.
fn quiet_then_shared() -> (f64, f64, Option<u32>, Option<u32>) {
    let cpu = cpu();
    let k = bwscope::kernels::registry()
        .iter()
        .find(|k| k.name == "seq_read_64_scalar")
        .unwrap();
    let team = Team::spawn(&[cpu], 1 << 20, PageKind::Regular).unwrap();
    let stop = AtomicBool::new(false);
    let sampler = Sampler::new(SampleOpts::new(7, 10.0), &stop);
    let measure = || {
        let mut w = TeamKernel::private(&team, k, 256 << 10).unwrap();
        sampler.measure(&mut w, None).unwrap()
    };
    // The worker's rate with its cpu to itself (what the machine allows
    // now: other work may run on the other cpus).
    let quiet = measure();
    let median_of = |m: &bwscope::measure::Measured| {
        bwscope::stats::median(&m.rates(1e9)).expect("a measurement has samples")
    };
    let quiet_gbps = median_of(&quiet);
    // From now on the worker has its cpu only while the other thread
    // sleeps: 4 ms of every ~8.
    team.run_each(|_, _| idle_class());
    let i = Interrupter::start(cpu, Duration::from_millis(4), Duration::from_millis(4));
    let shared = measure();
    drop(i);
    let median = median_of(&shared);
    eprintln!(
        "quiet median {quiet_gbps:.1} GB/s; beside the thread: median {median:.1}, retaken {:?}, descheduled {:?}, samples {:?}",
        shared.retaken,
        shared.descheduled,
        shared.samples.iter().map(|t| t.reps).collect::<Vec<_>>()
    );
    (quiet_gbps, median, shared.retaken, shared.descheduled)
}

/// Up to three tries, each measuring quiet and shared back to back: a
/// guest's vCPU can lose half its core to the host's other hyperthread
/// between the two measurements, which neither the thread's CPU time
/// nor steal shows (seen once on a Zen 4 guest: 61.1 GB/s quiet, then
/// clean samples at 43.7). A sampler that times a share of its cpu reads
/// about half the quiet rate in every try, so it still fails here.
#[test]
fn a_sampler_preempted_in_every_long_sample_measures_the_hardware() {
    let _turn = CPU_IN_USE.lock().unwrap_or_else(|e| e.into_inner());
    let mut tries = Vec::new();
    for _ in 0..3 {
        let (quiet, median, retaken, descheduled) = quiet_then_shared();
        if descheduled.unwrap_or(0) > 0 {
            eprintln!("SKIP: no sample fitted in the worker's share of its cpu here");
            return;
        }
        if median >= 0.9 * quiet {
            assert!(retaken.unwrap() > 0, "no sample was preempted");
            return;
        }
        tries.push((quiet, median));
    }
    panic!("a time share, not the hardware, in every try: (quiet median, median beside the thread) GB/s {tries:.1?}");
}
