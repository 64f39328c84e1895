//! How time is taken: calibration, samples, statistics, noise, pinned teams.
//!
//! One case = one kernel at one working-set size on one team:
//! 1. **Calibrate** (also the warm-up, never reported): start at one pass
//!    and grow the repetitions until one call lasts at least
//!    `min_sample`. Short samples dwarf the clock's ~25 ns resolution by
//!    10^5 and are short enough that preemption hits few of them.
//! 2. **Sample** `samples` times at the calibrated repetitions. Each sample
//!    records its wall time and the bytes the kernel declares it moved.
//! 3. **Summarise** as GB/s: best (max) and median, min, max, mean, CV.

pub mod noise;
pub mod stats;
pub mod team;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::kernels::{Kernel, PassBytes};
use crate::model::{Noise, Sample};
use team::{Job, Team, ThreadTiming};

/// How to sample.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct SampleOpts {
    pub samples: usize,
    pub min_sample: Duration,
}

impl Default for SampleOpts {
    fn default() -> Self {
        SampleOpts {
            samples: 7,
            min_sample: Duration::from_millis(10),
        }
    }
}

/// The raw result of one case.
#[derive(Debug, Clone)]
pub struct Measured {
    pub pass: PassBytes,
    pub reps: u64,
    /// Aggregate samples: all threads' bytes over earliest start → latest end.
    pub samples: Vec<Sample>,
    /// Per-thread samples (seconds of each thread's own interval).
    pub per_thread_seconds: Vec<Vec<f64>>,
    /// Largest start skew seen over the samples, seconds.
    pub max_start_skew: f64,
    pub noise: Option<Noise>,
    /// Checksum of each thread in the last sample (read kernels).
    pub checksums: Vec<u64>,
    /// Core clock read right after the samples on the team's cpus (the
    /// highest of them), Hz; None where it could not be read.
    pub clock_hz: Option<f64>,
}

/// The core clock right after a case's samples: the cheap probe on every
/// worker at once (~1.5 ms), the highest plausible reading. A bound
/// checked against it is never too tight for the fastest core.
pub fn clock_after(team: &Team) -> Option<f64> {
    team.run_each(|_, _| crate::platform::clock::quick().hz)
        .into_iter()
        .flatten()
        .max_by(f64::total_cmp)
}

/// The run was interrupted (SIGINT) before this case finished.
#[derive(Debug)]
pub struct Interrupted;

fn aggregate(ts: &[ThreadTiming]) -> (f64, f64) {
    let start = ts.iter().map(|t| t.start).min().expect("non-empty team");
    let end = ts.iter().map(|t| t.end).max().expect("non-empty team");
    let last_start = ts.iter().map(|t| t.start).max().expect("non-empty team");
    (
        end.duration_since(start).as_secs_f64(),
        last_start.duration_since(start).as_secs_f64(),
    )
}

/// Measure `kernel` over a per-thread working set of `ws` bytes.
/// `pattern` is what write kernels store. Returns `None` from the outer
/// option when the working set is smaller than one granule per stream.
pub fn measure_case(
    team: &Team,
    kernel: &'static Kernel,
    ws: usize,
    opts: &SampleOpts,
    stop: &AtomicBool,
) -> Result<Option<Measured>, Interrupted> {
    measure_case_from(team, kernel, ws, opts, stop, 1)
}

/// Repetitions to start calibrating from at `ws`, given that `prev_reps`
/// passes over `prev_ws` bytes lasted at least a sample: the same bytes per
/// sample. Bandwidth only falls as the working set grows, so in a sweep of
/// rising sizes the first calibration call already lasts long enough and
/// doubles as the warm-up (a full sweep spent ~15 % of its time climbing
/// from one repetition at every point).
pub fn reps_hint(prev_reps: u64, prev_ws: usize, ws: usize) -> u64 {
    ((prev_reps as u128 * prev_ws as u128) / ws.max(1) as u128).clamp(1, 1 << 40) as u64
}

/// [`measure_case`], calibrating from `start_reps` instead of one pass.
pub fn measure_case_from(
    team: &Team,
    kernel: &'static Kernel,
    ws: usize,
    opts: &SampleOpts,
    stop: &AtomicBool,
    start_reps: u64,
) -> Result<Option<Measured>, Interrupted> {
    let Some(pass) = kernel.pass_bytes(ws) else {
        return Ok(None);
    };
    let mut job = Job {
        kernel,
        stream_len: pass.stream_len,
        reps: start_reps.max(1),
        pattern: 0x5a5a_1234_9876_a5a5,
        index: crate::kernels::perm::index_for(kernel, pass.stream_len, team.threads()),
    };
    let min = opts.min_sample.as_secs_f64();
    // Calibrate: grow until one call lasts ≥ min_sample. Aim 5 % over so
    // the next call does not fall just short.
    loop {
        if stop.load(Ordering::Relaxed) {
            return Err(Interrupted);
        }
        let (secs, _) = aggregate(&team.run(&job));
        if secs >= min || job.reps >= 1 << 40 {
            // A call that overshot (a hinted start, or bandwidth that fell)
            // is trimmed back to ~min: its duration is long enough to
            // scale from, and longer samples only cost time.
            if secs > 1.3 * min && job.reps > 1 {
                let scaled = (job.reps as f64 * min * 1.05 / secs).ceil() as u64;
                job.reps = scaled.clamp(1, job.reps);
            }
            break;
        }
        let factor = if secs > 0.0 {
            (min / secs) * 1.05
        } else {
            16.0
        };
        let next = (job.reps as f64 * factor.clamp(1.5, 1000.0)).ceil() as u64;
        job.reps = next.max(job.reps + 1);
    }
    let before = noise::snapshot();
    let threads = team.threads();
    let bytes_per_sample = (pass.read + pass.written) * job.reps * threads as u64;
    let mut samples = Vec::with_capacity(opts.samples);
    let mut per_thread = vec![Vec::with_capacity(opts.samples); threads];
    let mut max_skew: f64 = 0.0;
    let mut checksums = Vec::new();
    for _ in 0..opts.samples.max(1) {
        if stop.load(Ordering::Relaxed) {
            return Err(Interrupted);
        }
        let ts = team.run(&job);
        let (secs, skew) = aggregate(&ts);
        max_skew = max_skew.max(skew);
        samples.push(Sample {
            seconds: secs,
            bytes: bytes_per_sample,
        });
        for (i, t) in ts.iter().enumerate() {
            per_thread[i].push(t.seconds());
        }
        checksums = ts.iter().map(|t| t.checksum).collect();
    }
    let noise = noise::since(before);
    Ok(Some(Measured {
        pass,
        reps: job.reps,
        samples,
        per_thread_seconds: per_thread,
        max_start_skew: max_skew,
        noise,
        checksums,
        clock_hz: clock_after(team),
    }))
}

/// GB/s (10^9 B/s) of each sample.
pub fn gbps(samples: &[Sample]) -> Vec<f64> {
    samples
        .iter()
        .map(|s| s.bytes as f64 / s.seconds / 1e9)
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn reps_hint_keeps_bytes_per_sample() {
        assert_eq!(super::reps_hint(1000, 1024, 2048), 500);
        assert_eq!(super::reps_hint(3, 1024, 1 << 30), 1);
        assert_eq!(super::reps_hint(u64::MAX, usize::MAX, 1), 1 << 40);
    }
}
