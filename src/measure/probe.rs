//! The spell probes (`model::Spells`, `docs/noise.md`): two fixed, short
//! measurements taken right after every sample, on the worker's own cpu,
//! whose readings say what the machine was going through while the
//! sample ran.
//!
//! - **Core share.** A dependent `add` chain (one per cycle whatever a
//!   sibling hyperthread does: it needs one ALU of four) times the core
//!   clock, and a pure-load kernel over 16 KiB times L1 load throughput;
//!   their ratio is L1 load bytes per core cycle. A core of its own gives
//!   its load ports' rate; a busy SMT sibling takes about half the ports
//!   at an unchanged clock, which no clock probe, steal counter or load
//!   figure in the guest shows. The probe uses the widest read of at most
//!   256 bits: 512-bit instructions move some Intel cores to a lower
//!   clock licence for milliseconds, which would slow the next sample.
//! - **Memory.** A random pointer chase over a DRAM-sized set, continued
//!   from where the last probe stopped (so it never walks a cached
//!   prefix), its pages' translations loaded first (so it never reads
//!   page walks that depend on what ran before): the idle latency of
//!   one miss. It is this process's constant
//!   small demand; when it rises, someone else's demand on the memory
//!   controllers did (the "constant small probe" of interference studies:
//!   Maricq et al., OSDI 2018; Duet benchmarking, ICPE 2020).
//!
//! Together they cost well under a millisecond after a sample of ≥ 10 ms
//! (the survey prints their total beside its own time).

use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use crate::kernels::{loops, Kernel, KernelArgs, Op, Pattern};
use crate::memory::{Buffer, PageKind};
use crate::model::{limits, CoreReference, Curve, Host, Probe, SpellBaseline};
use crate::os::time::thread_run;

/// Bytes the core probe reads: inside every core's L1.
const L1_BYTES: usize = 16 << 10;
/// Passes over [`L1_BYTES`] per timed load call: 1 MiB, ~16,000 cycles at
/// 64 B/cycle (~5 µs), 200 clock reads' worth of resolution.
const LOAD_REPS: u64 = 64;
/// Iterations of the 64-add chain per timed call: 16,384 cycles.
const CHAIN_ITERS: u64 = 256;
/// Alternations of chain and loads; the best of each counts (a probe's
/// first pass refills L1 after the sample evicted it).
const ROUNDS: usize = 2;
/// Repetitions of the 16-hop chase kernel per memory probe: 256 misses,
/// ~25-50 µs at DRAM latency. Their mean moves by ~1 % between quiet
/// probes (a miss's own latency spreads by ~20 %, over √256 = 16); the
/// spells it looks for move it by half or more. With 512 the probes took
/// 3.3 % of a survey on a loaded 2-vCPU Zen 4 guest (0.88 of 27 s).
const CHASE_REPS: u64 = 16;
/// The memory probe's smallest set, and its set unless the run says
/// otherwise: four times the 16 MiB L3 of most server cores' complex,
/// and cheap to build (~1 M lines, ~50 ms).
pub const DEFAULT_CHASE_BYTES: usize = 64 << 20;

/// The read kernel the core probe times: the widest cached sequential
/// read of at most 256 bits this CPU runs (see the module doc).
pub fn core_kernel() -> Option<&'static Kernel> {
    static K: OnceLock<Option<&'static Kernel>> = OnceLock::new();
    *K.get_or_init(|| {
        let f = crate::platform::cpu::detect_features();
        loops(Op::Read, Pattern::Seq, &f)
            .filter(|k| !k.nontemporal && k.width_bits > 0 && k.width_bits <= 256)
            .filter(|k| k.pass_bytes(L1_BYTES).is_some())
            .max_by_key(|k| k.width_bits)
    })
}

// Debian's clippy 1.96 asks for a `const` initializer on the Windows
// target even where it is one (its lint reads the macro's expansion for
// targets without native thread-locals); stable clippy is content.
#[allow(clippy::missing_const_for_thread_local)]
mod per_thread {
    use super::{Buffer, RefCell};
    thread_local! {
        /// Each thread's own L1 buffer for the core probe.
        pub static L1: RefCell<Option<Buffer>> = const { RefCell::new(None) };
    }
}
use per_thread::L1;

/// Seconds one call of `f` took.
fn secs(f: impl FnOnce() -> u64) -> f64 {
    let t = Instant::now();
    std::hint::black_box(f());
    t.elapsed().as_secs_f64().max(1e-9)
}

/// Tries of a probe in which the thread was descheduled (its reading is
/// then a time share of the cpu, not the core's rate) before it gives up.
const TRIES: usize = 3;

/// `f` on the calling thread until one call ran without being
/// descheduled ([`limits::DESCHEDULED`]), at most [`TRIES`] times.
fn undisturbed<T>(mut f: impl FnMut() -> Option<T>) -> Option<T> {
    for _ in 0..TRIES {
        let before = thread_run();
        let t = Instant::now();
        let got = f();
        let wall = t.elapsed().as_nanos() as u64;
        let ran = thread_run().zip(before).map(|(after, b)| after.since(b));
        if !ran.is_some_and(|r| r.descheduled(wall, limits::DESCHEDULED)) {
            return got;
        }
    }
    None
}

/// L1 load bytes per core cycle on the calling thread, now; None where
/// the CPU has no probe kernel or its buffer cannot be had, or the thread
/// was descheduled in every try.
pub fn core_bytes_per_cycle() -> Option<f64> {
    undisturbed(core_once)
}

fn core_once() -> Option<f64> {
    let k = core_kernel()?;
    let pass = k.pass_bytes(L1_BYTES)?;
    L1.with(|cell| {
        let mut cell = cell.borrow_mut();
        if cell.is_none() {
            *cell = Buffer::new(L1_BYTES, PageKind::Thp, 0x51e1).ok();
        }
        let buf = cell.as_mut()?;
        let base = buf.as_mut_ptr();
        let args = KernelArgs::new(base, base, pass.stream_len, LOAD_REPS);
        let (mut chain, mut load) = (f64::MAX, f64::MAX);
        for _ in 0..ROUNDS {
            chain = chain.min(secs(|| crate::platform::clock::add_chain(CHAIN_ITERS)));
            // SAFETY: the thread's own buffer of L1_BYTES, aligned to
            // 2 MiB, covers one stream of `stream_len` ≤ L1_BYTES; the
            // kernel runs on this CPU (`core_kernel` picked it so).
            load = load.min(secs(|| unsafe { (k.func)(&args) }));
        }
        let hz = (CHAIN_ITERS * 64) as f64 / chain;
        let bytes = (pass.read * LOAD_REPS) as f64;
        Some(bytes / load / hz)
    })
}

/// The process's chase for the memory probe: a random single cycle of
/// cache lines over its set, and where the last probe stopped.
struct MemChain {
    buf: Buffer,
    /// The walk's lines in order (the chain is their single cycle): the
    /// next probe's lines are known without walking to them.
    order: Vec<u32>,
    /// Where in `order` the next probe starts.
    pos: usize,
    kernel: &'static Kernel,
}

// SAFETY: the chain is only read by whichever thread holds the mutex
// around it (`SpellProbes::chain`); the buffer is owned and never freed
// while shared.
unsafe impl Send for MemChain {}

/// The memory probe's set for a run whose last-level cache is
/// `last_level_cache`: four times it, at least [`DEFAULT_CHASE_BYTES`], at
/// most 256 MiB. The part of the chain that the caches hold after it is
/// written (the last-level cache's worth of the highest addresses) reads
/// at L3 latency until a DRAM-sized sample evicts it: at twice the cache,
/// half the chain did, the quiet reading (10th percentile) came from
/// those probes, and a 2-vCPU Zen 4 guest's survey called the probes
/// after every DRAM sample "loaded" (39-60 of 254 records, none of them
/// contended). At four times, a quarter, spread over every probe (the
/// chain is written in address order, not walk order).
pub fn chase_bytes_for(last_level_cache: Option<u64>) -> usize {
    let want = last_level_cache.map_or(DEFAULT_CHASE_BYTES, |l| (4 * l) as usize);
    want.clamp(DEFAULT_CHASE_BYTES, 256 << 20)
}

fn build_chain(bytes: usize) -> Result<MemChain, ()> {
    use crate::kernels::perm;
    let kernel = perm::chase_kernel().ok_or(())?;
    // Whole 4 KiB pages (`chase_once` loads a line in each hop's page).
    let bytes = bytes & !4095;
    let lines = bytes / perm::LINE;
    let mut buf = Buffer::new(bytes, PageKind::Thp, 0xc4a5e).map_err(|_| ())?;
    let order = perm::random_cycle(lines, 0x5be11);
    // Written in address order: the lines the caches keep afterwards are
    // scattered along the walk, not one stretch of it (see
    // `chase_bytes_for`).
    let next = perm::successors(&order);
    let base = buf.as_mut_ptr();
    for (i, &n) in next.iter().enumerate() {
        // SAFETY: `i` and `n` are lines of the buffer (`lines` of them),
        // which is 2 MiB aligned: every write is an aligned u64 inside it.
        unsafe {
            (base.add(i * perm::LINE) as *mut u64).write(base.add(n as usize * perm::LINE) as u64);
        }
    }
    Ok(MemChain {
        buf,
        order,
        pos: 0,
        kernel,
    })
}

/// Lines of a 4 KiB page: a line `PAGE_LINES / 2` away from a node is in
/// the node's page, whatever page size the guest and the host use.
const PAGE_LINES: u32 = 4096 / crate::kernels::perm::LINE as u32;

fn chase_once(chain: &mut MemChain) -> Option<f64> {
    use crate::kernels::perm::{HOPS_PER_REP, LINE};
    let hops = (CHASE_REPS * HOPS_PER_REP) as usize;
    let n = chain.order.len();
    let base = chain.buf.as_ptr();
    let node = |k: usize| chain.order[(chain.pos + k) % n] as usize;
    // The translations first: one load, all in parallel, to another line
    // of each hop's 4 KiB page. Without them every hop also walked the
    // page tables, from wherever the sample before had left them: in a
    // guest whose host maps it with 4 KiB pages (a 2 MiB guest page is
    // then 512 TLB entries) the 128 MiB chase read 240 ns back to back,
    // 280 after 10 ms of L1 reads and 300 after a DRAM sweep (2-vCPU Zen 4
    // guest; its DRAM latency is ~140 ns), and every DRAM record's probes
    // looked "loaded". With them: 141, 143 and 149 ns.
    let mut sum = 0u64;
    for k in 0..hops {
        let other = node(k) ^ (PAGE_LINES / 2) as usize;
        // SAFETY: `other` differs from a line of the buffer only in a bit
        // below the page's size, so it is a line of the buffer too.
        sum = sum
            .wrapping_add(unsafe { std::ptr::read_volatile(base.add(other * LINE) as *const u64) });
    }
    std::hint::black_box(sum);
    // SAFETY: `node(0)` is a line of the chain (`build_chain`).
    let start = unsafe { base.add(node(0) * LINE) };
    let a = KernelArgs::new(start, std::ptr::null_mut(), 0, CHASE_REPS);
    let t = Instant::now();
    // SAFETY: `start` is a node of the intact chain.
    let end = unsafe { (chain.kernel.func)(&a) };
    let dt = t.elapsed().as_secs_f64();
    debug_assert_eq!(end as usize, base as usize + node(hops) * LINE);
    chain.pos = (chain.pos + hops) % n;
    Some(dt * 1e9 / hops as f64)
}

/// Readings kept for a run's baseline: a ring of this many per probe.
const KEPT: usize = 4096;

/// The spell probes of one run (a survey, a command, a watch's series of
/// samples, a fleet node's run): the memory probe's chain, the readings
/// so far and what they are judged against. A value the run owns and
/// hands to its sampler, never a process static, so a record's judgement
/// depends on its own run's readings alone — not on another test, an
/// earlier suite of a fleet node or a watch loop that ran before in the
/// process. Shared by the run's worker threads (`Arc`).
pub struct SpellProbes {
    /// The memory probe's chain, built at its first reading (~50 ms).
    chain: Mutex<Option<Result<MemChain, ()>>>,
    /// Its set, bytes ([`chase_bytes_for`]).
    chase_bytes: usize,
    /// The core's L1 load ports at the probe kernel's width, bytes per
    /// cycle, from the microarchitecture table (None: not known).
    core_limit: Option<f64>,
    /// The core probe's latest readings. Without a table row its
    /// reference is their 90th percentile, never their highest: one
    /// reading whose chain was slowed unseen (an interrupt that cost no
    /// context switch) reads a low clock and so a high rate — one such
    /// reading of twice the ports once made every sample of a survey
    /// "shared".
    cores: Mutex<VecDeque<f64>>,
    /// The memory probe's latest readings: its baseline is their 10th
    /// percentile, not their lowest. A lone fast reading (the first probe
    /// after the chain is built, a moment when the host's memory was
    /// idle) is not what the memory gives; the probe's own reading moves
    /// by a few per cent with what ran before it (a 2-vCPU Zen 4 guest:
    /// medians 141 ns back to back, 143 after 10 ms of L1 reads, 149
    /// after a DRAM sweep; see `chase_once`).
    chases: Mutex<VecDeque<f64>>,
    /// Time the probes took, all threads together (the survey says it
    /// beside its own time: their cost is part of the run's).
    spent_ns: AtomicU64,
}

impl SpellProbes {
    /// The probes of a run on `host`: what its core's load ports allow at
    /// the probe kernel's width (`Host::l1_bytes_per_cycle`), and a chase
    /// over four times the last cache the latency curve found (the knee
    /// probe's where it measured it, else CPUID's).
    pub fn for_host(host: &Host) -> Arc<SpellProbes> {
        let width = core_kernel().map(|k| k.width_bits);
        Arc::new(SpellProbes::new(
            width.and_then(|w| host.l1_bytes_per_cycle("read", Some(w))),
            chase_bytes_for(host.llc_size(Curve::Latency)),
        ))
    }

    /// Probes with the core limit `core_limit` (bytes per cycle; None:
    /// unknown, the readings' 90th percentile is the reference) and a
    /// chase over `chase_bytes`.
    pub fn new(core_limit: Option<f64>, chase_bytes: usize) -> SpellProbes {
        SpellProbes {
            chain: Mutex::new(None),
            chase_bytes,
            core_limit: core_limit.filter(|b| b.is_finite() && *b > 0.0),
            cores: Mutex::new(VecDeque::new()),
            chases: Mutex::new(VecDeque::new()),
            spent_ns: AtomicU64::new(0),
        }
    }

    /// Both probes on the calling thread (`memory`: the chase too; one
    /// worker of a team is enough for the memory system they all share).
    /// The readings also move the run's baseline ([`SpellProbes::baseline`]).
    pub fn read(&self, memory: bool) -> Probe {
        self.taken(true, memory)
    }

    /// The memory probe alone, on the calling thread: for a suite whose
    /// own agents load the memory while they run (`contend`), taken once
    /// they have all stopped. The reading also moves the run's baseline.
    pub fn read_memory(&self) -> Option<f64> {
        self.taken(false, true).chase_ns
    }

    /// Nanoseconds per load of a chase over the DRAM-sized set, now; None
    /// where the chase or its buffer cannot be had, or the thread was
    /// descheduled in every try.
    fn chase_ns(&self) -> Option<f64> {
        let mut guard = self.chain.lock().unwrap_or_else(|e| e.into_inner());
        let chain = guard
            .get_or_insert_with(|| build_chain(self.chase_bytes))
            .as_mut()
            .ok()?;
        undisturbed(|| chase_once(chain))
    }

    /// The probes asked for, kept for the baseline and counted in
    /// [`SpellProbes::spent`].
    fn taken(&self, core: bool, memory: bool) -> Probe {
        let t = Instant::now();
        let p = Probe {
            core_bytes_per_cycle: if core { core_bytes_per_cycle() } else { None },
            chase_ns: if memory { self.chase_ns() } else { None },
        };
        keep(&self.cores, p.core_bytes_per_cycle);
        keep(&self.chases, p.chase_ns);
        self.spent_ns
            .fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
        p
    }

    /// The time the probes of this run took so far, on all threads.
    pub fn spent(&self) -> std::time::Duration {
        std::time::Duration::from_nanos(self.spent_ns.load(Ordering::Relaxed))
    }

    /// What this run's probe readings are judged against so far: the
    /// core's load ports where known (or the readings' 90th percentile
    /// where that is higher: a table row the core beats is not its limit),
    /// and the chase's 10th percentile.
    pub fn baseline(&self) -> SpellBaseline {
        let usual = percentile(&self.cores, 0.9);
        let (core, reference) = match (self.core_limit, usual) {
            (Some(l), Some(b)) if b > l => (Some(b), CoreReference::RunBest),
            (Some(l), _) => (Some(l), CoreReference::Limit),
            (None, b) => (b, CoreReference::RunBest),
        };
        SpellBaseline {
            core_bytes_per_cycle: core,
            core_reference: core.map(|_| reference),
            chase_ns: percentile(&self.chases, 0.1),
        }
    }
}

fn keep(ring: &Mutex<VecDeque<f64>>, v: Option<f64>) {
    if let Some(v) = v.filter(|v| v.is_finite() && *v > 0.0) {
        let mut q = ring.lock().unwrap_or_else(|e| e.into_inner());
        if q.len() == KEPT {
            q.pop_front();
        }
        q.push_back(v);
    }
}

/// The `q` quantile of a ring's readings (None when empty).
fn percentile(ring: &Mutex<VecDeque<f64>>, q: f64) -> Option<f64> {
    let v: Vec<f64> = ring
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .copied()
        .collect();
    crate::stats::quantile(&v, q)
}

/// One reading for a team: the slowest worker's core share (the
/// aggregate waits for it) and the first worker's chase.
pub fn combine(each: &[Probe]) -> Option<Probe> {
    let first = each.first()?;
    Some(Probe {
        core_bytes_per_cycle: each
            .iter()
            .filter_map(|p| p.core_bytes_per_cycle)
            .min_by(f64::total_cmp),
        chase_ns: first.chase_ns,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The probe reads a plausible rate on any core that has a kernel for
    /// it (between 4 and 512 bytes per cycle), and a chase latency
    /// between 1 ns and 10 µs. (Under an emulator the ratio means
    /// nothing: only that it is finite.)
    #[test]
    fn probes_read_plausible_values() {
        let probes = SpellProbes::new(None, DEFAULT_CHASE_BYTES);
        let p = probes.read(true);
        if let Some(b) = p.core_bytes_per_cycle {
            assert!(b.is_finite() && b > 0.0, "{p:?}");
            if !crate::platform::skip_timing_test("the core probe's rate") {
                assert!((4.0..=512.0).contains(&b), "{p:?}");
            }
        } else {
            assert!(core_kernel().is_none(), "{p:?}");
        }
        let ns = p
            .chase_ns
            .expect("every architecture bwscope builds for has a chase");
        assert!(ns.is_finite() && ns > 0.0, "{p:?}");
        if !crate::platform::skip_timing_test("the memory probe's latency") {
            assert!((1.0..=10_000.0).contains(&ns), "{p:?}");
        }
    }

    /// Records a trace of the probes for the classification tests
    /// (`stats::spells`): `BWSCOPE_TRACE_OUT=FILE cargo test --release
    /// --lib record_probe_trace -- --ignored`. Each reading follows 10 ms
    /// of a 16 KiB read on the same thread, as a sample would.
    #[test]
    #[ignore]
    fn record_probe_trace() {
        let out = std::env::var("BWSCOPE_TRACE_OUT").expect("BWSCOPE_TRACE_OUT");
        let cpu = *crate::platform::topology::allowed_cpus().last().unwrap();
        crate::os::cpu::pin_current(cpu).unwrap();
        let host = crate::platform::detect_host(true);
        let k = core_kernel().unwrap();
        let limit = host.l1_bytes_per_cycle("read", Some(k.width_bits));
        let spells = SpellProbes::for_host(&host);
        let mut probes = Vec::new();
        for _ in 0..300 {
            let t = Instant::now();
            while t.elapsed().as_millis() < 10 {
                std::hint::black_box(core_once());
            }
            let p = spells.read(true);
            probes.push(serde_json::json!({
                "core_bytes_per_cycle": p.core_bytes_per_cycle,
                "chase_ns": p.chase_ns,
            }));
        }
        let v = serde_json::json!({
            "what": format!("300 spell probe readings after 10 ms of L1 reads each, on cpu {cpu} of {} (family {:#x} model {:#x}), core kernel {}", host.cpu.model_name, host.cpu.family, host.cpu.model, k.name),
            "limit_bytes_per_cycle": limit,
            "probes": probes,
        });
        std::fs::write(out, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    }

    #[test]
    fn a_team_reading_is_its_slowest_core_and_first_chase() {
        let p = |c: Option<f64>, n: Option<f64>| Probe {
            core_bytes_per_cycle: c,
            chase_ns: n,
        };
        let t = combine(&[
            p(Some(60.0), Some(100.0)),
            p(Some(31.0), None),
            p(None, None),
        ]);
        assert_eq!(t, Some(p(Some(31.0), Some(100.0))));
        assert_eq!(combine(&[]), None);
    }
}
