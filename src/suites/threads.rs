//! Thread scaling (`bwscope threads`): aggregate and per-thread bandwidth
//! for 1..N pinned threads, per kernel and total working set.
//!
//! Z. Smith's `bandwidth`: "one instance per core, sum the results", done inside one
//! process: each thread is pinned, first-touches its own buffer (or, with
//! `--shared`, works on its chunk of one buffer the main thread touched;
//! or, with `--processes`, is a forked process), and all are released by
//! one spin barrier per sample. The same sampler as every suite: aggregate
//! = all bytes over earliest start → latest end; per-thread = each
//! thread's bytes over its own interval. The working set is the **total**
//! of all threads (likwid's `-w S0:1GB:N`), so every point of a curve moves
//! the same data and a DRAM-sized point stays DRAM-sized at any count.

use std::collections::HashMap;

use super::estimate::Estimate;
use super::{Ctx, Descriptor, Flow, Key, Plan, Planned, Sampling};
use crate::error::UserError;
use crate::kernels::{self, Kernel, Op, PassBytes, Pattern};
use crate::measure::procs::ProcTeam;
use crate::measure::team::{Team, BUFFER_SLACK};
use crate::measure::workers::{SharedTeam, Workers};
use crate::measure::{Hint, Measured, SampleOpts};
use crate::memory::PageKind;
use crate::model::detail::ThreadsDetail;
use crate::model::{Curve, Host, MemoryInfo, Record, SuiteId, Warning};
use crate::plan::cpus::Placement;
use crate::plan::sizes::names;
use crate::stats;
use crate::util::cpulist::format_cpu_list;
use crate::util::units::format_bytes;

/// What a scaling run is asked for; `None` is this machine's default.
#[derive(Debug, Clone, Default)]
pub struct ThreadsOptions {
    pub kernel: Option<String>,
    /// Total working sets (all threads together).
    pub sizes: Option<Vec<u64>>,
    pub threads: Option<usize>,
    pub counts: Option<Vec<usize>>,
    /// An explicit cpu list, in the order threads are added.
    pub cpus: Option<String>,
    pub placement: Placement,
    pub smt: bool,
    pub shared: bool,
    pub oversubscribe: bool,
    pub processes: bool,
    pub memory: PageKind,
    pub sampling: Sampling,
}

/// Resolved options of one scaling run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ThreadsPlan {
    #[serde(serialize_with = "names")]
    pub kernels: Vec<&'static Kernel>,
    /// Total working sets (all threads together), ascending.
    pub sizes: Vec<u64>,
    /// Cpus in the order threads are added.
    pub order: Vec<u32>,
    pub counts: Vec<usize>,
    pub placement: String,
    pub shared: bool,
    /// Workers are processes, not threads.
    pub processes: bool,
    pub smt: bool,
    pub samples: usize,
    pub min_sample_ms: f64,
    pub memory: PageKind,
}

/// Read, write, NT write, copy and NT copy at the widest ISA this CPU runs,
/// and the NT copy over four pages in step. The NT copies are what
/// STREAM's Copy becomes at DRAM sizes (compilers turn its loop into
/// memcpy, and glibc's copies large blocks with non-temporal stores four
/// pages at a time), so the two can be compared at every thread count.
/// Which shape is faster depends on the core: on an Emerald Rapids-class
/// Xeon with 4 KiB pages the four-page copy read 23.1 GB/s on one core
/// where one stream read 19.8 (and STREAM 21.2); on a Zen 4 guest one
/// stream led, 32.9 to 28.3.
pub fn default_kernels(host: &Host) -> Vec<&'static Kernel> {
    let f = &host.features;
    let widest = kernels::widest(Op::Read, Pattern::Seq, f).map_or(64, |k| k.width_bits);
    let pick = |op: Op, nt: bool, pattern: Pattern| {
        kernels::loops(op, pattern, f).find(|k| k.nontemporal == nt && k.width_bits == widest)
    };
    [
        pick(Op::Read, false, Pattern::Seq),
        pick(Op::Write, false, Pattern::Seq),
        pick(Op::Write, true, Pattern::Seq),
        pick(Op::Copy, false, Pattern::Seq),
        pick(Op::Copy, true, Pattern::Seq),
        pick(Op::Copy, true, Pattern::Pages),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Default counts: every count up to 16, then doublings, and N itself.
fn default_counts(n: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (1..=n.min(16)).collect();
    let mut c = 32;
    while c < n {
        v.push(c);
        c *= 2;
    }
    if !v.contains(&n) {
        v.push(n);
    }
    v
}

pub fn plan(o: &ThreadsOptions, host: &Host) -> Result<ThreadsPlan, UserError> {
    let kernels = match &o.kernel {
        Some(spec) => {
            kernels::select_streaming(spec).map_err(|m| UserError::flag("--kernel", m))?
        }
        None => default_kernels(host),
    };
    let mut sizes = match &o.sizes {
        Some(s) => s.clone(),
        None => {
            let llc = host.llc_size(Curve::Bandwidth).unwrap_or(32 << 20);
            vec![
                (llc / 2).max(1 << 20),
                crate::plan::sizes::default_top(host, Curve::Bandwidth) * 4,
            ]
        }
    };
    sizes.sort_unstable();
    sizes.dedup();
    if sizes.is_empty() || sizes.iter().any(|&s| s < 4096) {
        return Err(UserError::flag(
            "--sizes",
            "each total working set must be at least 4KiB",
        ));
    }
    let (order, placement) = match &o.cpus {
        Some(list) => (
            crate::plan::cpus::parse_cpus(host, list, "--cpus")?,
            "cpus".to_string(),
        ),
        None => (
            crate::plan::cpus::placement_order(host, o.placement, o.smt),
            format!("{:?}", o.placement).to_lowercase(),
        ),
    };
    let n = o.threads.unwrap_or(order.len());
    if n == 0 {
        return Err(UserError::flag("--threads", "must be at least 1"));
    }
    if n > order.len() && !o.oversubscribe {
        return Err(UserError::flag(
            "--threads",
            format!(
                "{} threads but only {} cpus ({}) are available{}; use at most {} or add --oversubscribe",
                n,
                order.len(),
                format_cpu_list(&order),
                if o.smt || o.cpus.is_some() { "" } else { " without --smt" },
                order.len()
            ),
        ));
    }
    let order: Vec<u32> = (0..n).map(|i| order[i % order.len()]).collect();
    let counts = match &o.counts {
        Some(c) => {
            let mut c = c.clone();
            c.sort_unstable();
            c.dedup();
            if c.is_empty() || c[0] == 0 || *c.last().expect("non-empty") > n {
                return Err(UserError::flag(
                    "--counts",
                    format!("counts must be between 1 and {} (--threads)", n),
                ));
            }
            c
        }
        None => default_counts(n),
    };
    let max = *sizes.last().expect("non-empty size list");
    super::check_memory(
        max + (8 << 20) * n as u64,
        "--sizes",
        "use smaller --sizes (the total of all threads)",
    )?;
    let s = o.sampling.resolve(SampleOpts::default())?;
    Ok(ThreadsPlan {
        kernels,
        sizes,
        order,
        counts,
        placement,
        shared: o.shared,
        processes: o.processes,
        smt: o.smt,
        samples: s.samples,
        min_sample_ms: s.min_sample.as_secs_f64() * 1000.0,
        memory: o.memory.available(),
    })
}

pub const DESCRIPTOR: Descriptor = Descriptor {
    id: SuiteId::Threads,
    about: "read bandwidth over 1..N pinned threads (one per physical core) at a DRAM-sized set",
    reads_clock: true,
    quick: Some(quick),
    key: Some(Key {
        about: "read bandwidth with 1 and all cores at a DRAM-sized set",
        plan: key,
    }),
};

/// The widest read kernel at a DRAM-sized total set ([`dram_total`]).
fn dram_read(host: &Host, sampling: Sampling) -> Result<ThreadsPlan, UserError> {
    let widest = kernels::widest(Op::Read, Pattern::Seq, &host.features)
        .map_or("seq_read_64_scalar", |k| k.name);
    let o = ThreadsOptions {
        kernel: Some(widest.into()),
        sizes: Some(vec![dram_total(host)]),
        sampling,
        ..ThreadsOptions::default()
    };
    plan(&o, host)
}

/// The total set of the survey's and a fleet node's DRAM point: the cache
/// sweep's top, and at least twice the last-level cache CPUID states.
/// The sweep's top follows one core's read curve, which in a guest can
/// leave the cache long before CPUID's size does; all cores together hold
/// more of it (a 16-vCPU Emerald Rapids-class guest whose one-core knee
/// ended its 300 MiB L3 at 128 MiB read a 256 MiB total at 12 threads 1.39×
/// faster than linear scaling from one, labelled DRAM). Twice CPUID's size
/// is DRAM however many cores share the cache.
fn dram_total(host: &Host) -> u64 {
    let top = crate::plan::sizes::default_top(host, Curve::Bandwidth);
    let cpuid_llc = host
        .data_caches()
        .map(|c| c.size_bytes)
        .max()
        .unwrap_or(0);
    top.max((2 * cpuid_llc).div_ceil(1 << 20) << 20)
}

/// The survey's run: [`dram_read`] over every thread count.
fn quick(host: &Host) -> Planned {
    Ok(Box::new(dram_read(host, Sampling::default())?))
}

/// A fleet node's run: one core and all of them, the two ends of the
/// curve that tell nodes apart.
fn key(host: &Host, sampling: Sampling) -> Planned {
    let mut p = dram_read(host, sampling)?;
    let n = p.order.len();
    p.counts = if n > 1 { vec![1, n] } else { vec![1] };
    Ok(Box::new(p))
}

/// Per-thread bytes of a total working set, rounded down to 4 KiB.
fn per_thread(total: u64, threads: usize) -> usize {
    (total as usize / threads) / 4096 * 4096
}

/// Start skew above this fraction of a sample earns a warning.
pub const SKEW_LIMIT: f64 = 0.01;

/// Largest start skew as a fraction of the median sample's duration.
fn skew_fraction(m: &Measured) -> f64 {
    let secs: Vec<f64> = m.samples.iter().map(|s| s.seconds).collect();
    match stats::summarize(&secs, false) {
        Some(s) if s.median > 0.0 => m.max_skew() / s.median,
        _ => 0.0,
    }
}

/// The workers of one thread count: threads with private buffers, threads
/// sharing one buffer, or processes.
fn spawn(plan: &ThreadsPlan, cpus: &[u32], buf_len: usize) -> Result<Box<dyn Workers>, UserError> {
    Ok(if plan.processes {
        // Forked while this process has no other thread: the previous
        // count's team was dropped (joined) at the end of its turn.
        Box::new(ProcTeam::spawn(cpus, buf_len, plan.memory)?)
    } else if plan.shared {
        Box::new(SharedTeam::spawn(cpus, buf_len, plan.memory)?)
    } else {
        Box::new(Team::spawn(cpus, buf_len, plan.memory)?)
    })
}

/// How long the plan will take (see `suites::estimate` for the rule).
fn estimate(p: &ThreadsPlan) -> Estimate {
    let top = p.sizes.iter().max().copied().unwrap_or(0) as f64;
    Estimate::sampled(
        p.kernels.len() * p.sizes.len() * p.counts.len(),
        p.samples,
        p.min_sample_ms,
    )
    .faulting(p.counts.len() as f64 * top, "buffers")
}

impl Plan for ThreadsPlan {
    const ID: SuiteId = SuiteId::Threads;

    fn estimate(&self) -> Estimate {
        estimate(self)
    }

    fn execute(&self, cx: &mut Ctx) -> anyhow::Result<Flow> {
        run(self, cx)
    }
}

/// What the records of one thread count and total size share.
struct Point<'a> {
    plan: &'a ThreadsPlan,
    host: &'a Host,
    cpus: &'a [u32],
    /// The working set of all threads together.
    total: u64,
    observed: &'a [Option<u32>],
    memory: &'a Option<MemoryInfo>,
    /// Pairs of the team's cpus measured as one physical core.
    shared: &'a [super::cores::Shared],
}

impl Point<'_> {
    /// The record of `k` measured at this point; `eff` its scaling
    /// efficiency against one thread.
    fn record(&self, k: &Kernel, m: &Measured, pass: PassBytes, eff: Option<f64>) -> Record {
        let plan = self.plan;
        let skew = skew_fraction(m);
        let mut r = super::record::bandwidth(k, m, pass, self.host, self.cpus, |b| {
            ThreadsDetail {
                bandwidth: b,
                total_bytes: Some(self.total),
                case_placement: Some(plan.placement.clone()),
                case_shared: Some(plan.shared),
                case_processes: plan.processes.then_some(true),
                start_skew_fraction: Some(skew),
                scaling_efficiency: eff.into(),
                observed_cpus: Some(self.observed.to_vec()),
            }
            .into()
        });
        r.memory = self.memory.clone();
        let nodes: Vec<u32> = self
            .cpus
            .iter()
            .filter_map(|&c| self.host.node_of(c))
            .collect();
        let mut p = r.placement.take().unwrap_or_default();
        p.start_skew_seconds = Some(m.max_skew());
        if !nodes.is_empty() && nodes.iter().all(|&n| n == nodes[0]) {
            p.cpu_node = Some(nodes[0]);
        }
        r.placement = Some(p);
        // Two threads on one core do not make two cores' figure: said
        // beside it wherever the team holds such a pair.
        for sh in self.shared {
            if sh.pair.iter().all(|c| self.cpus.contains(c)) {
                r.warnings.push(sh.warning.clone());
            }
        }
        if skew > SKEW_LIMIT {
            r.warnings.push(Warning::Other {
                message: format!(
                    "threads started up to {:.1} % of a sample apart",
                    skew * 100.0
                ),
                hint: "a worker was preempted at the barrier: quiet the machine, or raise --min-sample-ms".into(),
            });
        }
        r
    }
}

/// Run the curve.
pub fn run(plan: &ThreadsPlan, cx: &mut Ctx) -> anyhow::Result<Flow> {
    let runnable = cx.runnable(SuiteId::Threads, &plan.kernels)?;
    if runnable.is_empty() {
        return Ok(Flow::Done);
    }
    let sampler = cx.sampler(SampleOpts::new(plan.samples, plan.min_sample_ms));
    let max_total = *plan.sizes.last().expect("sizes");
    cx.plan_steps((plan.counts.len() * plan.sizes.len() * runnable.len()) as u64);
    // Aggregate best GB/s at one thread, per (kernel, size): the
    // efficiency baseline.
    let mut baseline: HashMap<(&str, u64), f64> = HashMap::new();
    // In a guest, whether neighbouring cpus of the order are one core on
    // the host (a few milliseconds per pair; nothing on bare metal).
    let most = plan.counts.iter().copied().max().unwrap_or(1);
    let shared = if most > 1 {
        super::cores::same_core(cx.host, &plan.order[..most], cx.stop)
    } else {
        Vec::new()
    };
    for &count in &plan.counts {
        let cpus: Vec<u32> = plan.order[..count].to_vec();
        let buf_len = per_thread(max_total, count) + BUFFER_SLACK;
        let mut workers = spawn(plan, &cpus, buf_len)?;
        let observed = workers.observed_cpus();
        let mem = workers.memory();
        // Each kernel's calibration starts from its previous size's work.
        let mut hints: HashMap<&str, Hint> = HashMap::new();
        for (si, &total) in plan.sizes.iter().enumerate() {
            let ws = per_thread(total, count);
            if ws == 0 {
                for &k in &runnable {
                    cx.push(Record::skipped(
                        SuiteId::Threads,
                        k.name,
                        format!(
                            "{} split over {} threads is less than 4KiB each",
                            format_bytes(total),
                            count
                        ),
                    ))?;
                }
                continue;
            }
            workers.refill((ws + BUFFER_SLACK).min(buf_len), 0xabcd + si as u64);
            for &k in &runnable {
                cx.step(&format!(
                    "{} {} × {}",
                    k.name,
                    count,
                    format_bytes(ws as u64)
                ));
                let Some(mut w) = workers.kernel(k, ws) else {
                    cx.push(Record::skipped(
                        SuiteId::Threads,
                        k.name,
                        format!(
                            "{} per thread is smaller than one {}-byte block per stream",
                            format_bytes(ws as u64),
                            k.granule
                        ),
                    ))?;
                    continue;
                };
                let pass = w.pass();
                let measured = sampler.measure(w.workload(), hints.get(k.name).copied());
                drop(w);
                let point = Point {
                    plan,
                    host: cx.host,
                    cpus: &cpus,
                    total,
                    observed: &observed,
                    memory: &mem,
                    shared: &shared,
                };
                let flow = cx.finish_case(SuiteId::Threads, k.name, measured, |m| {
                    hints.insert(k.name, m.hint());
                    // The aggregate best, as the record's `gbps` states it.
                    let best = stats::summarize(&m.rates(1e9), true).map_or(0.0, |g| g.best);
                    if count == 1 {
                        baseline.insert((k.name, total), best);
                    }
                    let eff = baseline
                        .get(&(k.name, total))
                        .map(|b| best / (b * count as f64));
                    (point.record(k, &m, pass, eff), m.cut_short)
                })?;
                if flow == Flow::Stopped {
                    return Ok(Flow::Stopped);
                }
            }
        }
    }
    Ok(Flow::Done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts() {
        assert_eq!(default_counts(3), vec![1, 2, 3]);
        let c = default_counts(100);
        assert_eq!(&c[..3], &[1, 2, 3]);
        assert!(c.contains(&16) && c.contains(&32) && c.contains(&64) && c.ends_with(&[100]));
    }

    /// The Emerald Rapids-class guest of docs/peers/gpu-host-16-cores.md:
    /// CPUID's 300 MiB L3 on 16 cpus, one core's reads at DRAM's rate
    /// from 128 MiB. The DRAM point is twice the whole L3, and DRAM by
    /// CPUID's size at every thread count; a 32 MiB L3 keeps the sweep's
    /// 256 MiB top.
    #[test]
    fn the_dram_point_exceeds_the_whole_cpuid_cache_twice() {
        use crate::model::{BandwidthKnee, Cache, KneeProbe};
        const M: u64 = 1 << 20;
        let mut h = Host::default();
        let all: Vec<u32> = (0..16).collect();
        for (level, size) in [(1, 48 << 10), (2, 2 * M), (3, 300 * M)] {
            let shared = if level == 3 { all.clone() } else { vec![0] };
            let kind = if level == 1 { "data" } else { "unified" };
            h.caches.push(Cache::new(level, kind, size, 64, shared, "test".into()));
        }
        h.knees = Some(KneeProbe {
            bandwidth_knee: Some(BandwidthKnee {
                end_bytes: 90 * M,
                plateau_gbps: 26.0,
                dram_gbps: 15.0,
                dram_from_bytes: 128 * M,
                level: Some(3),
            }),
            ..KneeProbe::default()
        });
        assert_eq!(crate::plan::sizes::default_top(&h, Curve::Bandwidth), 256 * M);
        let total = dram_total(&h);
        assert_eq!(total, 600 * M);
        for t in 1..=16u64 {
            let per = total / t;
            assert!(per * t.min(16) > 300 * M, "{t} threads");
            assert_eq!(h.regime(per, t as u32, Curve::Bandwidth), crate::model::Regime::Dram);
        }
        let small = crate::platform::knees::tests::host_with(&[(1, 32 << 10), (3, 32 * M)]);
        assert_eq!(dram_total(&small), 256 * M);
    }

    /// Both shapes of the NT copy run by default where the core has them,
    /// at the width of the other kernels, so a comparison with STREAM's
    /// Copy has glibc's shape beside the one-stream one; on a core with no
    /// four-page kernel (AArch64) the list is the five sequential ones.
    #[test]
    fn the_defaults_hold_both_nt_copy_shapes_at_the_widest_width() {
        let host = crate::platform::detect_host(false);
        let ks = default_kernels(&host);
        let widest = ks[0].width_bits;
        assert!(ks.iter().all(|k| k.width_bits == widest), "{ks:?}");
        let pages_here = kernels::loops(Op::Copy, Pattern::Pages, &host.features)
            .any(|k| k.width_bits == widest);
        let pages: Vec<_> = ks.iter().filter(|k| k.pattern == Pattern::Pages).collect();
        assert_eq!(pages.len(), pages_here as usize, "{ks:?}");
        for p in pages {
            assert!(p.op == Op::Copy && p.nontemporal, "{}", p.name);
            let twin = p.counterpart(Pattern::Seq).unwrap();
            assert!(ks.iter().any(|k| k.name == twin.name), "{ks:?}");
        }
        #[cfg(target_arch = "x86_64")]
        if host.features.avx2 {
            assert!(pages_here, "x86-64 with AVX2 has a four-page copy at its widest width");
        }
    }
}
