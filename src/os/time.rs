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
}

impl ThreadRun {
    /// What the thread had of its cpu from `before` to this reading.
    pub fn since(&self, before: ThreadRun) -> ThreadRun {
        ThreadRun {
            cpu_ns: self.cpu_ns.saturating_sub(before.cpu_ns),
        }
    }

    /// Over an interval of `wall_ns` in which the thread had this much of
    /// its cpu (a [`ThreadRun::since`]): it was descheduled — off its cpu
    /// for more than `fraction` of the interval, whatever took it (another
    /// task, the hypervisor where the guest accounts steal).
    ///
    /// Why the time lost and not the count of involuntary switches
    /// (`ru_nivcsw`), which this once also used: on a guest whose cpus all
    /// run workers, a kernel thread's few microseconds preempt some worker
    /// in most samples of a few hundred ms, and counting each one as a
    /// time share retook nearly every long DRAM sample on a quiet machine
    /// while the time lost stayed far below `fraction`. A preemption long
    /// enough to matter is lost time, and shows here.
    pub fn descheduled(&self, wall_ns: u64, fraction: f64) -> bool {
        wall_ns.saturating_sub(self.cpu_ns) as f64 > fraction * wall_ns as f64
    }
}
