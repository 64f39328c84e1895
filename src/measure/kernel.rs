//! Streaming kernels as workloads: one kernel over each worker's working
//! set, on a thread team with private buffers, a thread team sharing one
//! buffer, or a team of forked processes. Bytes per repetition come only
//! from the kernel's declaration ([`PassBytes`]).

use std::sync::Arc;

use super::procs::ProcTeam;
use super::sampler::{Call, Workload};
use super::team::{Job, Team};
use crate::kernels::{perm, Kernel, KernelArgs, PassBytes};

/// What write kernels store.
pub const PATTERN: u64 = 0x5a5a_1234_9876_a5a5;

/// One pass of `kernel` over `ws` bytes of each of `workers` workers'
/// own buffers, as every thread team runs it (`threads`, `contend`): the
/// job (one repetition; `Job::args` places the streams in a buffer) and
/// the bytes the kernel declares for it. `None` when `ws` holds less than
/// one granule per stream.
pub fn pass_job(kernel: &'static Kernel, ws: usize, workers: usize) -> Option<(Job, PassBytes)> {
    let pass = kernel.pass_bytes(ws)?;
    let job = Job {
        kernel,
        stream_len: pass.stream_len,
        reps: 1,
        pattern: PATTERN,
        index: perm::index_for(kernel, pass.stream_len, workers),
        shared: None,
    };
    Some((job, pass))
}

/// A kernel on a thread team, over private buffers or chunks of a shared
/// one.
pub struct TeamKernel<'a> {
    team: &'a Team,
    job: Job,
    pass: PassBytes,
    /// Run the spell probes after each sample ([`Workload::probe`]).
    probes: bool,
}

impl<'a> TeamKernel<'a> {
    /// `kernel` over a per-worker working set of `ws` bytes of each
    /// worker's own buffer; `None` when `ws` holds less than one granule
    /// per stream.
    pub fn private(team: &'a Team, kernel: &'static Kernel, ws: usize) -> Option<TeamKernel<'a>> {
        let (job, pass) = pass_job(kernel, ws, team.threads())?;
        Some(TeamKernel {
            team,
            job,
            pass,
            probes: true,
        })
    }

    /// This workload without the spell probes: for a suite that loads the
    /// memory itself while it samples (a bystander under `numa --load`),
    /// where the memory probe would read the suite's own load.
    pub fn without_probes(self) -> TeamKernel<'a> {
        TeamKernel {
            probes: false,
            ..self
        }
    }

    /// Like [`TeamKernel::private`], but worker `i` works at `bases[i]`,
    /// its chunk of a buffer the caller owns and keeps alive, each chunk
    /// at least `ws + team::BUFFER_SLACK` bytes and 4 KiB aligned.
    pub fn shared(
        team: &'a Team,
        kernel: &'static Kernel,
        ws: usize,
        bases: Vec<usize>,
    ) -> Option<TeamKernel<'a>> {
        assert_eq!(bases.len(), team.threads(), "one chunk per worker");
        let mut w = TeamKernel::private(team, kernel, ws)?;
        w.job.shared = Some(Arc::new(bases));
        Some(w)
    }

    pub fn pass(&self) -> PassBytes {
        self.pass
    }
}

impl Workload for TeamKernel<'_> {
    fn units_per_rep(&self) -> u64 {
        (self.pass.read + self.pass.written) * self.team.threads() as u64
    }

    fn run(&mut self, reps: u64) -> Result<Call, String> {
        self.job.reps = reps;
        Ok(Call {
            stamps: self.team.run(&self.job),
            device_seconds: None,
        })
    }

    fn verify(&mut self) -> Result<bool, String> {
        self.team.verify(&self.job)
    }

    fn probe(&mut self, probes: &Arc<super::probe::SpellProbes>) -> Option<crate::model::Probe> {
        if !self.probes {
            return None;
        }
        let probes = probes.clone();
        let each = self.team.run_each(move |i, _| probes.read(i == 0));
        super::probe::combine(&each)
    }

    /// The cheap probe on every worker at once (~1.5 ms), the highest
    /// plausible reading: a bound checked against it is never too tight
    /// for the fastest core.
    fn clock_after(&mut self) -> Option<f64> {
        self.team
            .run_each(|_, _| crate::platform::clock::quick().hz)
            .into_iter()
            .flatten()
            .max_by(f64::total_cmp)
    }
}

/// A kernel on a team of forked processes, each over its own buffer.
pub struct ProcKernel<'a> {
    team: &'a ProcTeam,
    kernel: &'static Kernel,
    pass: PassBytes,
}

impl<'a> ProcKernel<'a> {
    pub fn new(team: &'a ProcTeam, kernel: &'static Kernel, ws: usize) -> Option<ProcKernel<'a>> {
        Some(ProcKernel {
            team,
            kernel,
            pass: kernel.pass_bytes(ws)?,
        })
    }

    pub fn pass(&self) -> PassBytes {
        self.pass
    }
}

impl Workload for ProcKernel<'_> {
    fn units_per_rep(&self) -> u64 {
        (self.pass.read + self.pass.written) * self.team.cpus.len() as u64
    }

    fn run(&mut self, reps: u64) -> Result<Call, String> {
        Ok(Call {
            stamps: self.team.run(self.kernel, self.pass.stream_len, reps),
            device_seconds: None,
        })
    }
}

/// A read or write kernel over a region the caller owns, on the calling
/// thread (the CPU's view of device-visible host memory).
pub struct Here {
    kernel: &'static Kernel,
    addr: *mut u8,
    len: usize,
}

impl Here {
    /// # Safety
    /// `addr..addr + len` must stay valid, writable memory aligned for the
    /// kernel while the workload is used; `len` a multiple of its granule;
    /// the CPU must support the kernel; it must read or write one stream.
    pub unsafe fn new(kernel: &'static Kernel, addr: *mut u8, len: usize) -> Here {
        assert_eq!(kernel.streams(), 1, "one stream: a read or a write kernel");
        Here { kernel, addr, len }
    }
}

impl Workload for Here {
    fn units_per_rep(&self) -> u64 {
        self.len as u64
    }

    fn run(&mut self, reps: u64) -> Result<Call, String> {
        let mut args = KernelArgs::new(self.addr, self.addr, self.len, reps);
        args.pattern = PATTERN;
        Ok(Call {
            // SAFETY: see `new`.
            stamps: vec![super::sampler::timed(|| unsafe {
                (self.kernel.func)(&args)
            })],
            device_seconds: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{SampleOpts, Sampler};
    use crate::memory::PageKind;

    fn kernel(name: &str) -> &'static Kernel {
        crate::kernels::registry()
            .iter()
            .find(|k| k.name == name)
            .unwrap()
    }

    #[test]
    fn reads_timed_as_pure_loads_are_proven_after_the_samples() {
        let cpu = *crate::platform::topology::allowed_cpus().last().unwrap();
        let team = Team::spawn(&[cpu], 1 << 20, PageKind::Regular).unwrap();
        let stop = std::sync::atomic::AtomicBool::new(false);
        let s = Sampler::new(SampleOpts::new(2, 1.0), &stop);
        for (name, proven) in [
            ("seq_read_64_scalar", true),
            ("rand_read_64_scalar", true),
            ("seq_write_64_scalar", false),
        ] {
            let mut w = TeamKernel::private(&team, kernel(name), 256 << 10).unwrap();
            let m = s.measure(&mut w, None).unwrap();
            assert_eq!(m.verified, proven, "{name}");
        }
    }
}
