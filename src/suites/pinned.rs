//! Single-thread suites (latency, regs): one measuring thread pinned to a
//! cpu, records streamed back to the caller's sink as they complete, and a
//! calibration loop for kernels that are not bandwidth passes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Sender};

use crate::error::UserError;
use crate::measure::{team, Interrupted};
use crate::model::Host;
use crate::model::{limits, Warning};
use crate::model::{Record, Stats};
use crate::report::sink::Sink;

/// The cpu a single-thread suite runs on: `--cpu` (checked against the
/// allowed set) or the first of the default order (the last core).
pub fn resolve_cpu(host: &Host, cpu: Option<u32>) -> Result<u32, UserError> {
    match cpu {
        Some(c) => Ok(
            super::resolve_cpus(host, None, Some(&c.to_string())).map_err(|_| {
                UserError::flag(
                    "--cpu",
                    format!(
                        "cpu {} is offline or not allowed for this process (allowed: {})",
                        c,
                        crate::util::cpulist::format_cpu_list(&host.allowed_cpus)
                    ),
                )
            })?[0],
        ),
        None => Ok(super::resolve_cpus(host, Some(1), None)?[0]),
    }
}

/// Run `work` on a thread pinned to `cpu`; every record it sends is pushed
/// into `sink` as it arrives, so an interrupted or failing run keeps what
/// it measured. `work` should stop when a send fails (the sink failed).
pub fn run_on_cpu<F>(cpu: u32, sink: &mut Sink, total: u64, work: F) -> anyhow::Result<()>
where
    F: FnOnce(&Sender<Record>) -> anyhow::Result<()> + Send,
{
    let (tx, rx) = channel::<Record>();
    let bar = crate::report::progress::bar(total, sink.stdout_taken());
    let result = std::thread::scope(|s| {
        let h = std::thread::Builder::new()
            .name("bwscope-pinned".into())
            .spawn_scoped(s, move || -> anyhow::Result<()> {
                team::pin_current(cpu).map_err(|e| UserError::flag("--cpu", e))?;
                work(&tx)
            })?;
        let mut push_err = None;
        for r in rx {
            bar.set_message(format!(
                "{} {}",
                r.kernel,
                r.size_bytes
                    .map_or(String::new(), crate::util::units::format_bytes)
            ));
            bar.inc(1);
            if push_err.is_none() {
                if let Err(e) = sink.push(r) {
                    // Dropping the receiver would make the worker's next
                    // send fail; keep draining instead and report once.
                    push_err = Some(e);
                }
            }
        }
        let worked = h
            .join()
            .map_err(|_| anyhow::anyhow!("the measuring thread panicked"))?;
        if let Some(e) = push_err {
            return Err(e.into());
        }
        worked
    });
    bar.finish_and_clear();
    result
}

/// Grow `reps` from `start` until one call of `timed(reps)` (returning
/// seconds) lasts at least `min_secs` (aiming 10 % over); returns the reps.
/// The calls double as warm-up and are never reported.
pub fn calibrate(
    min_secs: f64,
    start: u64,
    stop: &AtomicBool,
    mut timed: impl FnMut(u64) -> f64,
) -> Result<u64, Interrupted> {
    let mut reps = start.max(1);
    loop {
        if stop.load(Ordering::Relaxed) {
            return Err(Interrupted);
        }
        let secs = timed(reps);
        if secs >= min_secs || reps >= 1 << 40 {
            return Ok(reps);
        }
        let factor = if secs > 0.0 {
            (min_secs / secs) * 1.1
        } else {
            16.0
        };
        let next = (reps as f64 * factor.clamp(1.5, 1000.0)).ceil() as u64;
        reps = next.max(reps + 1);
    }
}

/// The sample-spread warnings of a stats summary (no ceiling check: the
/// L1 ceilings do not bound register moves or latencies).
pub fn spread_warnings(s: Option<&Stats>, higher_is_better: bool) -> Vec<Warning> {
    let mut w = Vec::new();
    if let Some(s) = s {
        if s.cv > limits::CV {
            w.push(Warning::HighCv { cv: s.cv });
        }
        let ratio = if higher_is_better {
            s.best / s.median
        } else {
            s.median / s.best
        };
        if s.median > 0.0 && s.best > 0.0 && ratio > limits::BEST_OVER_MEDIAN {
            w.push(Warning::BestMedianSpread { ratio });
        }
    }
    w
}

/// Noise warnings for a record.
pub fn noise_warnings(r: &Record) -> Vec<Warning> {
    r.noise.as_ref().map_or_else(Vec::new, Warning::from_noise)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calibrate_grows_until_long_enough() {
        let stop = AtomicBool::new(false);
        // A fake timer: 1 µs per rep.
        let reps = calibrate(0.01, 1, &stop, |r| r as f64 * 1e-6).unwrap();
        assert!(reps >= 10_000, "{reps}");
        assert!(reps < 200_000, "{reps}");
        stop.store(true, Ordering::Relaxed);
        assert!(calibrate(0.01, 1, &stop, |r| r as f64).is_err());
    }

    #[test]
    fn spread_follows_direction() {
        let s = crate::measure::stats::summarize(&[1.0, 1.5, 1.5], false).unwrap();
        assert!(matches!(
            spread_warnings(Some(&s), false)[..],
            [Warning::HighCv { .. }, Warning::BestMedianSpread { .. }]
        ));
        let s = crate::measure::stats::summarize(&[2.0, 2.0, 2.0], true).unwrap();
        assert!(spread_warnings(Some(&s), true).is_empty());
    }
}
