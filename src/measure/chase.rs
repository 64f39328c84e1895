//! The pointer chase as a workload: load-to-use latency.
//!
//! Before timing, the working set is threaded into one chain of 8-byte
//! pointers, one node per `node_bytes`, in the order the caller gives
//! (`kernels::perm`: a random single cycle, random within windows, or
//! address order). Each load's address is the previous load's value, so
//! loads cannot overlap and the time per hop is the latency of wherever
//! the line lives. Units are loads (hops), not bytes.
//!
//! Every call continues where the previous one stopped: restarting from the
//! head would re-walk the same prefix of the cycle, which then sits in the
//! caches (a DRAM-sized chain measured at L3 latency).

use super::sampler::{timed, Call, Workload};
use super::Stamp;
use crate::kernels::{Kernel, KernelArgs};

/// Bytes per chase node in a line-granular chain: one cache line.
pub const LINE: usize = crate::kernels::perm::LINE;

// The chain's pieces live in `kernels::perm`, below both this workload and
// the spell probes (`measure::probe`), which chase a chain of their own.
pub use crate::kernels::perm::{chase_kernel as kernel, write_chain, HOPS_PER_REP};

/// Follow a chain with the chase kernel on the calling thread.
pub struct Chase {
    kernel: &'static Kernel,
    cur: u64,
    warm_reps: u64,
    /// Run the spell probes after each sample (`Chase::with_probes`).
    probes: bool,
}

impl Chase {
    /// A chase from `start`; `warm_reps` repetitions are walked untimed
    /// before calibration (one full cycle while the chain fits the caches,
    /// so the first sample does not pay for cold misses).
    ///
    /// # Safety
    /// `start` must be the head of a chain written by [`write_chain`] that
    /// stays intact and mapped while the `Chase` is used.
    pub unsafe fn new(kernel: &'static Kernel, start: *const u8, warm_reps: u64) -> Chase {
        Chase {
            kernel,
            cur: start as u64,
            warm_reps,
            probes: false,
        }
    }

    /// This chase with the spell probes after each sample, on the calling
    /// thread (the latency suite's; a chase beside a load the suite
    /// makes itself would read that load).
    pub fn with_probes(self) -> Chase {
        Chase {
            probes: true,
            ..self
        }
    }

    fn walk(&mut self, reps: u64) -> Stamp {
        let a = KernelArgs::new(self.cur as *const u8, std::ptr::null_mut(), 0, reps);
        // SAFETY: `cur` is always a node of the chain (see `new`).
        let s = timed(|| unsafe { (self.kernel.func)(&a) });
        self.cur = s.checksum;
        s
    }

    /// Where the chase stands now (tests check the chain's shape with it).
    pub fn position(&self) -> u64 {
        self.cur
    }
}

impl Workload for Chase {
    fn units_per_rep(&self) -> u64 {
        HOPS_PER_REP
    }

    fn warm_up(&mut self) -> Result<(), String> {
        if self.warm_reps > 0 {
            self.walk(self.warm_reps);
        }
        Ok(())
    }

    fn run(&mut self, reps: u64) -> Result<Call, String> {
        Ok(Call {
            stamps: vec![self.walk(reps)],
            device_seconds: None,
        })
    }

    fn probe(
        &mut self,
        probes: &std::sync::Arc<super::probe::SpellProbes>,
    ) -> Option<crate::model::Probe> {
        self.probes.then(|| probes.read(true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::perm;
    use crate::memory::{Buffer, PageKind};

    #[test]
    fn chain_in_memory_is_one_cycle_through_every_line() {
        let Some(k) = kernel() else { return };
        let lines = 64 * 16; // 64 KiB, a multiple of 16 hops
        let mut b = Buffer::new(lines * 64, PageKind::NoHuge, 3).unwrap();
        let order = perm::random_cycle(lines, 11);
        let base = b.as_mut_ptr();
        // SAFETY: the buffer holds `lines` lines.
        let start = unsafe { write_chain(base, 64, &order) };
        let end_after = |reps: u64| {
            // SAFETY: the chain above, intact.
            let mut w = unsafe { Chase::new(k, start, 0) };
            w.run(reps).unwrap().stamps[0].checksum
        };
        // One full cycle (lines / 16 reps) ends where it started...
        assert_eq!(end_after(lines as u64 / 16), start as u64);
        // ...and no shorter multiple of 16 hops does.
        for reps in 1..lines as u64 / 16 {
            assert_ne!(
                end_after(reps),
                start as u64,
                "closed after {} hops",
                reps * 16
            );
        }
        // Walk it node by node: every line once.
        let mut seen = vec![false; lines];
        let mut p = start as usize;
        for _ in 0..lines {
            let idx = (p - base as usize) / 64;
            assert_eq!((p - base as usize) % 64, 0);
            assert!(!seen[idx], "line {idx} visited twice");
            seen[idx] = true;
            // SAFETY: p is a node of the chain.
            p = unsafe { *(p as *const u64) } as usize;
        }
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn calls_continue_where_the_last_one_stopped() {
        let Some(k) = kernel() else { return };
        let lines = 64 * 16;
        let mut b = Buffer::new(lines * 64, PageKind::NoHuge, 3).unwrap();
        let order = perm::random_cycle(lines, 5);
        // SAFETY: the buffer holds `lines` lines.
        let start = unsafe { write_chain(b.as_mut_ptr(), 64, &order) };
        // SAFETY: the chain above, intact.
        let mut w = unsafe { Chase::new(k, start, 0) };
        // Half a cycle twice is one full cycle: back at the start.
        w.run(lines as u64 / 32).unwrap();
        assert_ne!(w.position(), start as u64);
        w.run(lines as u64 / 32).unwrap();
        assert_eq!(w.position(), start as u64);
        assert_eq!(w.units_per_rep(), HOPS_PER_REP);
    }
}
