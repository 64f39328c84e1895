//! A cache line handed between cores, as workloads of the one sampler.
//!
//! A [`Pair`] is two threads pinned to two cpus (a [`Team`]); the lines
//! live in the first one's buffer (first touched there: on its node).
//!
//! - [`Cas`]: both threads ping-pong one line with compare-and-swap
//!   (`kernels::c2c::cas_pingpong`); a repetition is one round trip, two
//!   one-way transfers, so one-way = sample time / (2 × round trips). The
//!   line's value after a call proves every swap happened.
//! - [`Handoff`] (HIT, HITM; Intel MLC's `--c2c_latency` pair): per
//!   round, the holder (first cpu) prepares [`LINES`] lines — writes each
//!   (HITM: the line is modified in its cache), or flushes each and reads
//!   it back (HIT: clean in its cache, in no other) — then the reader
//!   (second cpu) chases them once in a random order, timed. One load per
//!   line, each dependent on the last, so each costs one transfer. The
//!   lines are [`LINE_SPACING`] bytes apart, so the line an adjacent-line
//!   prefetcher pairs with a node is never another node.
//! - [`Fairness`]: N threads increment one line until it reaches a
//!   target; each thread's count is its share.

use std::sync::Arc;

use super::sampler::{timed, Call, Workload};
use super::team::{SpinBarrier, Team};
use super::{now_ns, Stamp};
use crate::error::UserError;
use crate::kernels::c2c;
use crate::kernels::perm::{self, HOPS_PER_REP};
use crate::kernels::{Kernel, KernelArgs};
use crate::memory::PageKind;
use crate::os::time::{thread_run, ThreadRun};

/// Lines per HIT/HITM round: 16 KiB of lines, which the holder's L1
/// (32-64 KiB on every core bwscope knows) or at worst its L2 holds.
pub const LINES: usize = 256;
/// Bytes from one line of a round to the next: two lines, so an
/// adjacent-line prefetch (Intel's spatial prefetcher pairs 128-byte
/// halves) never brings in the next node.
pub const LINE_SPACING: usize = 128;
/// Where the CAS line sits in the holder's buffer: past the round's lines.
const CAS_OFFSET: usize = LINES * LINE_SPACING;
/// Each pair thread's buffer.
const PAIR_BUFFER: usize = CAS_OFFSET + 4096;

/// Two threads pinned to two cpus, the lines in the first one's buffer.
pub struct Pair {
    team: Team,
    base: usize,
}

impl Pair {
    /// Pin a thread to `holder` and one to `reader`; a cpu that cannot be
    /// had is an error naming `--cpus`.
    pub fn new(holder: u32, reader: u32) -> Result<Pair, UserError> {
        let team = Team::spawn(&[holder, reader], PAIR_BUFFER, PageKind::Thp)?;
        let base = team.inspect(0, |b| b.as_mut_ptr() as usize);
        Ok(Pair { team, base })
    }

    fn cas_line(&self) -> *mut u64 {
        (self.base + CAS_OFFSET) as *mut u64
    }

    /// The cpu each thread reports it runs on (`sched_getcpu`), in order.
    pub fn observed(&self) -> Vec<Option<u32>> {
        self.team.run_each(|_, _| super::team::current_cpu())
    }
}

/// The CAS ping-pong on a pair.
pub struct Cas<'a> {
    pair: &'a Pair,
    /// The line's value before the next call.
    value: u64,
}

impl<'a> Cas<'a> {
    pub fn new(pair: &'a Pair) -> Cas<'a> {
        let line = pair.cas_line();
        // SAFETY: the line lies in the holder's buffer, which `pair` keeps
        // alive, and no thread runs on it now.
        unsafe { line.write_volatile(0) };
        Cas { pair, value: 0 }
    }
}

impl Workload for Cas<'_> {
    /// A round trip: two one-way transfers.
    fn units_per_rep(&self) -> u64 {
        2
    }

    fn run(&mut self, reps: u64) -> Result<Call, String> {
        let line = self.pair.cas_line() as usize;
        let start = self.value;
        let bar = Arc::new(SpinBarrier::new(2));
        let stamps = self.pair.team.run_each(move |side, _| {
            bar.wait();
            // SAFETY: both sides run the same start and reps on the line.
            timed(|| unsafe { c2c::cas_pingpong(line as *mut u64, start, side as u64, reps) })
        });
        self.value = start + 2 * reps;
        // SAFETY: as in `new`; both sides have returned.
        let now = unsafe { (line as *const u64).read_volatile() };
        if now != self.value {
            return Err(format!(
                "the CAS line holds {now} after {reps} round trips from {start}, not {}: a swap was lost",
                self.value
            ));
        }
        Ok(Call {
            stamps,
            device_seconds: None,
        })
    }
}

/// HIT (the holder's lines clean) or HITM (modified), read by the reader.
pub struct Handoff<'a> {
    pair: &'a Pair,
    modified: bool,
    chase: &'static Kernel,
    start: usize,
    /// Two clock reads back to back, the least of many, ns: taken off
    /// each round's time.
    pub overhead_ns: u64,
}

impl<'a> Handoff<'a> {
    /// The chain of [`LINES`] lines in a random order in the holder's
    /// buffer; `modified` for HITM. None where this architecture has no
    /// chase kernel.
    pub fn new(pair: &'a Pair, modified: bool, seed: u64) -> Option<Handoff<'a>> {
        let chase = perm::chase_kernel()?;
        let order = perm::random_cycle(LINES, seed);
        // SAFETY: LINES × LINE_SPACING bytes lie inside the holder's
        // buffer (CAS_OFFSET), 8-byte aligned; no thread uses them now.
        let start = unsafe { perm::write_chain(pair.base as *mut u8, LINE_SPACING, &order) };
        Some(Handoff {
            pair,
            modified,
            chase,
            start: start as usize,
            overhead_ns: clock_overhead_ns(),
        })
    }

    /// The instruction that reads the line.
    pub fn instruction(&self) -> &'static str {
        "mov (dependent loads)"
    }
}

/// The least time between two clock reads back to back, ns.
fn clock_overhead_ns() -> u64 {
    (0..1000)
        .map(|_| {
            let a = now_ns();
            let b = now_ns();
            b.saturating_sub(a)
        })
        .min()
        .unwrap_or(0)
}

/// Walk the whole chain once from `start` with `k`; returns where it
/// ended (the start again, for a whole cycle).
///
/// # Safety
/// `start` heads a chain of [`LINES`] nodes that stays mapped.
unsafe fn walk(k: &'static Kernel, start: usize) -> u64 {
    let a = KernelArgs::new(
        start as *const u8,
        std::ptr::null_mut(),
        0,
        LINES as u64 / HOPS_PER_REP,
    );
    (k.func)(&a)
}

/// The holder's part of a round: each line modified (a store to its
/// second word: the chain's pointer stays), or flushed from every cache
/// and read back in chain order (clean, and in no other core's cache).
///
/// # Safety
/// `base` holds the chain that starts at `start`.
unsafe fn prepare(k: &'static Kernel, base: usize, start: usize, modified: bool, round: u64) {
    for i in 0..LINES {
        let line = (base + i * LINE_SPACING) as *mut u64;
        if modified {
            line.add(1).write_volatile(round);
        } else {
            c2c::flush(line as *const u8);
        }
    }
    if !modified {
        c2c::flush_fence();
        walk(k, start);
    }
}

/// What the holder and the reader return from one call.
enum Side {
    Holder,
    Reader(Stamp),
}

impl Workload for Handoff<'_> {
    /// A round: one transfer per line.
    fn units_per_rep(&self) -> u64 {
        LINES as u64
    }

    fn run(&mut self, reps: u64) -> Result<Call, String> {
        let (k, base, start, modified, overhead) = (
            self.chase,
            self.pair.base,
            self.start,
            self.modified,
            self.overhead_ns,
        );
        let bar = Arc::new(SpinBarrier::new(2));
        let sides = self.pair.team.run_each(move |i, _| {
            if i == 0 {
                for r in 0..reps {
                    // SAFETY: the chain in the holder's buffer.
                    unsafe { prepare(k, base, start, modified, r) };
                    bar.wait();
                    bar.wait();
                }
                return Side::Holder;
            }
            let before = thread_run();
            let t0 = now_ns();
            let (mut chased, mut end) = (0u64, 0u64);
            for _ in 0..reps {
                bar.wait();
                let s = now_ns();
                // SAFETY: as above; the holder waits while the reader walks.
                end = unsafe { walk(k, start) };
                chased += now_ns().saturating_sub(s).saturating_sub(overhead);
                bar.wait();
            }
            let wall = now_ns().saturating_sub(t0);
            let ran = thread_run().zip(before).map(|(a, b)| a.since(b));
            Side::Reader(reader_stamp(t0, chased, wall, ran, end))
        });
        let stamp = sides
            .into_iter()
            .find_map(|s| match s {
                Side::Reader(s) => Some(s),
                Side::Holder => None,
            })
            .ok_or("the reader did not report")?;
        if stamp.checksum != start as u64 {
            return Err(format!(
                "the chase ended at {:#x}, not at its start {start:#x}: a load was lost",
                stamp.checksum
            ));
        }
        Ok(Call {
            stamps: vec![stamp],
            device_seconds: None,
        })
    }
}

/// The reader's timed reads as one stamp: from its first round's start,
/// lasting the rounds' chases together (`chased`, ns), with what it had
/// of its cpu scaled by the share of the whole call (`wall`) it had: a
/// preemption between rounds cannot be told from one inside them, so
/// both retake the sample, and a descheduled call's work (what the
/// sampler calibrates by) is the chases' time at that share, never less.
fn reader_stamp(t0: u64, chased: u64, wall: u64, ran: Option<ThreadRun>, end: u64) -> Stamp {
    Stamp {
        start_ns: t0,
        end_ns: t0 + chased,
        checksum: std::hint::black_box(end),
        on_cpu: ran.map(|r| ThreadRun {
            cpu_ns: (chased as f64 * (r.cpu_ns as f64 / wall.max(1) as f64).min(1.0)) as u64,
        }),
    }
}

/// N threads on one line, each incrementing it until it reaches the
/// call's target.
pub struct Fairness {
    team: Team,
    line: usize,
    value: u64,
    /// Each thread's increments over every call so far.
    pub counts: Vec<u64>,
}

/// Increments per repetition (all threads together).
pub const INCREMENTS_PER_REP: u64 = 1024;

impl Fairness {
    pub fn new(cpus: &[u32]) -> Result<Fairness, UserError> {
        let team = Team::spawn(cpus, 4096, PageKind::Regular)?;
        let line = team.inspect(0, |b| b.as_mut_ptr() as usize);
        // SAFETY: the first thread's buffer, kept alive by `team`; idle.
        unsafe { (line as *mut u64).write_volatile(0) };
        Ok(Fairness {
            counts: vec![0; cpus.len()],
            team,
            line,
            value: 0,
        })
    }
}

impl Workload for Fairness {
    fn units_per_rep(&self) -> u64 {
        INCREMENTS_PER_REP
    }

    fn run(&mut self, reps: u64) -> Result<Call, String> {
        let line = self.line;
        let target = self.value + reps * INCREMENTS_PER_REP;
        let bar = Arc::new(SpinBarrier::new(self.counts.len()));
        let stamps = self.team.run_each(move |_, _| {
            bar.wait();
            // SAFETY: the aligned line every thread increments.
            timed(|| unsafe { c2c::increment_until(line as *mut u64, target) })
        });
        let done: u64 = stamps.iter().map(|s| s.checksum).sum();
        if done != reps * INCREMENTS_PER_REP {
            return Err(format!(
                "{done} increments counted below the target, not {}",
                reps * INCREMENTS_PER_REP
            ));
        }
        for (c, s) in self.counts.iter_mut().zip(&stamps) {
            *c += s.checksum;
        }
        // SAFETY: as in `new`; every thread has returned. Each thread's
        // last increment went past the target.
        self.value = unsafe { (line as *const u64).read_volatile() };
        Ok(Call {
            stamps,
            device_seconds: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{SampleOpts, Sampler};
    use std::sync::atomic::AtomicBool;
    use std::time::Duration;

    static NO_STOP: AtomicBool = AtomicBool::new(false);

    fn sampler() -> Sampler<'static> {
        Sampler::new(
            SampleOpts {
                samples: 3,
                min_sample: Duration::from_micros(200),
                settle: None,
            },
            &NO_STOP,
        )
    }

    fn two_cpus() -> (u32, u32) {
        let c = crate::os::cpu::allowed_cpus();
        (c[0], *c.last().unwrap())
    }

    // What these assert holds on a busy machine and a single cpu: the
    // work was done (the line's count, the chase's end) and the figures
    // are positive; never how fast.
    #[test]
    fn cas_ping_pong_counts_its_round_trips() {
        let (a, b) = two_cpus();
        let pair = Pair::new(a, b).unwrap();
        let mut w = Cas::new(&pair);
        let m = sampler().measure(&mut w, None).unwrap();
        assert!(m.samples.iter().all(|t| t.seconds > 0.0 && t.units > 0));
    }

    #[test]
    fn handoff_chases_every_line_each_round() {
        let (a, b) = two_cpus();
        let pair = Pair::new(a, b).unwrap();
        for modified in [false, true] {
            let mut w = Handoff::new(&pair, modified, 3).unwrap();
            let m = sampler().measure(&mut w, None).unwrap();
            assert!(m.samples.iter().all(|t| t.seconds > 0.0));
            assert_eq!(m.units_per_sample % LINES as u64, 0);
        }
    }

    #[test]
    fn fairness_shares_add_up() {
        let (a, b) = two_cpus();
        let mut w = Fairness::new(&[a, b]).unwrap();
        let m = sampler().measure(&mut w, None).unwrap();
        let total: u64 = w.counts.iter().sum();
        assert!(total >= m.units_per_sample * m.samples.len() as u64);
        assert_eq!(total % INCREMENTS_PER_REP, 0);
    }

    #[test]
    fn time_lost_between_rounds_counts_against_the_chases() {
        let run = |cpu_ns| Some(ThreadRun { cpu_ns });
        // 1 ms of chases in a 10 ms call; the thread ran 9.5 ms of it.
        let s = reader_stamp(0, 1_000_000, 10_000_000, run(9_500_000), 7);
        assert_eq!(s.seconds(), 1e-3);
        assert!(s.descheduled(), "5 % of the call lost");
        assert_eq!(s.on_cpu.unwrap().cpu_ns, 950_000);
        let quiet = reader_stamp(0, 1_000_000, 10_000_000, run(10_000_000), 7);
        assert!(!quiet.descheduled());
        // Lost more than the chases took: the call's work is still the
        // chases at that share, not nothing (calibration grows by it; at
        // nothing it grew 16-fold a call and a HIT run never ended).
        let gone = reader_stamp(0, 1_000_000, 10_000_000, run(5_000_000), 7);
        assert_eq!(gone.on_cpu.unwrap().cpu_ns, 500_000);
    }
}
