//! [`Workers`]: what a streaming kernel can run on, whatever the workers
//! are — a thread team over private buffers ([`Team`]), a thread team over
//! one shared buffer ([`SharedTeam`]), or a team of forked processes
//! ([`ProcTeam`]) — so a suite that runs kernels on them writes its loop
//! once.

use super::kernel::{ProcKernel, TeamKernel};
use super::procs::ProcTeam;
use super::sampler::Workload;
use super::team::{current_cpu, Team};
use crate::error::UserError;
use crate::kernels::{Kernel, PassBytes};
use crate::memory::{Buffer, PageKind};
use crate::model::MemoryInfo;

/// A streaming kernel as a workload, and the bytes one of its passes
/// moves per worker.
pub trait Streaming: Workload {
    fn pass(&self) -> PassBytes;

    /// Itself, for the sampler.
    fn workload(&mut self) -> &mut dyn Workload;
}

impl Streaming for TeamKernel<'_> {
    fn pass(&self) -> PassBytes {
        TeamKernel::pass(self)
    }

    fn workload(&mut self) -> &mut dyn Workload {
        self
    }
}

impl Streaming for ProcKernel<'_> {
    fn pass(&self) -> PassBytes {
        ProcKernel::pass(self)
    }

    fn workload(&mut self) -> &mut dyn Workload {
        self
    }
}

/// Pinned workers that run a streaming kernel together.
pub trait Workers {
    /// How many there are.
    fn count(&self) -> usize;

    /// The cpu each worker reports it runs on (`sched_getcpu`), in worker
    /// order; None where a worker cannot say.
    fn observed_cpus(&self) -> Vec<Option<u32>>;

    /// What the workers' memory got (the first worker's buffer, or the
    /// shared one).
    fn memory(&self) -> Option<MemoryInfo>;

    /// Fresh random data in the first `len` bytes of every worker's memory,
    /// so reads never see a previous write kernel's pattern.
    fn refill(&mut self, len: usize, seed: u64);

    /// `kernel` over a working set of `ws` bytes per worker, ready to be
    /// sampled; None when `ws` holds less than one granule per stream.
    fn kernel(&self, kernel: &'static Kernel, ws: usize) -> Option<Box<dyn Streaming + '_>>;
}

impl Workers for Team {
    fn count(&self) -> usize {
        self.threads()
    }

    fn observed_cpus(&self) -> Vec<Option<u32>> {
        (0..self.threads())
            .map(|i| self.inspect(i, |_| current_cpu()))
            .collect()
    }

    fn memory(&self) -> Option<MemoryInfo> {
        Team::memory(self).first().cloned()
    }

    fn refill(&mut self, len: usize, seed: u64) {
        for i in 0..self.threads() {
            self.inspect(i, move |b| b.fill_random_prefix(len, seed));
        }
    }

    fn kernel(&self, kernel: &'static Kernel, ws: usize) -> Option<Box<dyn Streaming + '_>> {
        Some(Box::new(TeamKernel::private(self, kernel, ws)?))
    }
}

/// A thread team that works on one buffer, worker `i` on its `i`th chunk:
/// the memory is first touched by the thread that made it, so it all lands
/// on that thread's node (what a program that allocates, then spawns
/// threads, gets).
pub struct SharedTeam {
    team: Team,
    buffer: Buffer,
    chunk: usize,
}

impl SharedTeam {
    /// A team on `cpus` sharing a buffer of `chunk` bytes per worker.
    pub fn spawn(cpus: &[u32], chunk: usize, page: PageKind) -> Result<SharedTeam, UserError> {
        let team = Team::spawn(cpus, 4096, page)?;
        let buffer = Buffer::new(chunk * cpus.len(), page, 0x5eed)?;
        Ok(SharedTeam {
            team,
            buffer,
            chunk,
        })
    }
}

impl Workers for SharedTeam {
    fn count(&self) -> usize {
        self.team.threads()
    }

    fn observed_cpus(&self) -> Vec<Option<u32>> {
        self.team.observed_cpus()
    }

    fn memory(&self) -> Option<MemoryInfo> {
        Some(self.buffer.memory_info())
    }

    /// The whole buffer (every worker's chunk and its slack).
    fn refill(&mut self, _len: usize, seed: u64) {
        self.buffer.fill_random(seed);
    }

    fn kernel(&self, kernel: &'static Kernel, ws: usize) -> Option<Box<dyn Streaming + '_>> {
        let bases = (0..self.team.threads())
            .map(|i| self.buffer.as_ptr() as usize + i * self.chunk)
            .collect();
        Some(Box::new(TeamKernel::shared(&self.team, kernel, ws, bases)?))
    }
}

impl Workers for ProcTeam {
    fn count(&self) -> usize {
        self.cpus.len()
    }

    fn observed_cpus(&self) -> Vec<Option<u32>> {
        ProcTeam::observed_cpus(self)
    }

    fn memory(&self) -> Option<MemoryInfo> {
        ProcTeam::memory(self)
    }

    fn refill(&mut self, len: usize, seed: u64) {
        self.fill(len, seed);
    }

    fn kernel(&self, kernel: &'static Kernel, ws: usize) -> Option<Box<dyn Streaming + '_>> {
        Some(Box::new(ProcKernel::new(self, kernel, ws)?))
    }
}
