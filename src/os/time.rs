//! Clocks: one monotonic clock every worker stamps (threads and forked
//! processes alike, so their stamps compare), CPU-time clocks of
//! processes, and what the calling thread has had of its cpu.

pub use super::imp::time::{now_ns, process_cpu_ns, self_cpu_ns, thread_run};

/// What the calling thread has had of its cpu so far ([`thread_run`],
/// None where the system cannot say it finely enough): read before and
/// after a timed interval, the difference says whether the thread was
/// descheduled inside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ThreadRun {
    /// The thread's CPU time, ns (`CLOCK_THREAD_CPUTIME_ID`: exact, read
    /// at the call; where the kernel accounts hypervisor steal, as Linux
    /// guests with paravirtual steal time do, stolen time is not in it).
    pub cpu_ns: u64,
    /// Involuntary context switches: times the scheduler took the cpu
    /// away from the thread for another task (`getrusage(RUSAGE_THREAD)`
    /// `ru_nivcsw`).
    pub preempted: u64,
}

impl ThreadRun {
    /// What the thread had of its cpu from `before` to this reading.
    pub fn since(&self, before: ThreadRun) -> ThreadRun {
        ThreadRun {
            cpu_ns: self.cpu_ns.saturating_sub(before.cpu_ns),
            preempted: self.preempted.saturating_sub(before.preempted),
        }
    }

    /// Over an interval of `wall_ns` in which the thread had this much of
    /// its cpu (a [`ThreadRun::since`]): it was descheduled — preempted,
    /// or off its cpu for more than `fraction` of the interval.
    pub fn descheduled(&self, wall_ns: u64, fraction: f64) -> bool {
        self.preempted > 0 || wall_ns.saturating_sub(self.cpu_ns) as f64 > fraction * wall_ns as f64
    }
}
