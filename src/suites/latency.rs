//! `bwscope latency`: load-to-use latency by pointer chase (suite
//! `latency`), swept over working-set sizes from L1 to DRAM.
//!
//! Method (lmbench `lat_mem_rd`, tinymembench, Drepper §3.3):
//! - Before timing, the working set is threaded into one chain of 8-byte
//!   pointers, one node per 64-byte line, in the order of a **random
//!   single cycle** through every line (`kernels::perm`). Each load's
//!   address is the previous load's value, so loads cannot overlap and the
//!   prefetchers cannot guess the next line: time per hop = latency.
//! - Views: `random` over the whole buffer (cache *and* TLB misses),
//!   `window` random within each `--window` (default 4 KiB, one page: the
//!   TLB miss is paid once per window, so what remains is the cache), and
//!   `stride`, the chain in address order every `--stride` bytes — there the
//!   prefetchers can and do help, which is what it shows (line size,
//!   prefetch distance).
//! - The chase is a `measure::chase::Chase` workload on the common sampler
//!   (units: loads); ns/load = sample seconds / hops; cycles/load = ns × the
//!   measured clock. Best = the lowest latency; median and CV as for
//!   bandwidth.
//! - Pages are explicit (`--pages 4k,thp,hugetlb`: one set of records per
//!   kind) and the page size actually obtained is read back from
//!   `/proc/self/smaps` and reported.

use std::time::Duration;

use serde_json::json;

use super::estimate::Estimate;
use super::{Ctx, Descriptor, Flow, Key, Plan, Planned, Sampling};
use crate::error::UserError;
use crate::kernels::{perm, Kernel};
use crate::measure::chase::{self, Chase, HOPS_PER_REP};
use crate::measure::{team, Failure, Hint, SampleOpts};
use crate::memory::{Buffer, PageKind};
use crate::model::detail::LatencyDetail;
use crate::model::{Curve, Host, MemoryInfo, Record, SuiteId};
use crate::stats;
use crate::util::units::{self, format_bytes};

/// Bytes per chase node in the random and window views: one cache line.
pub const LINE: u64 = perm::LINE as u64;
/// The huge page size `--pages hugetlb` maps (x86-64 default).
const HUGE: u64 = 2 << 20;

pub use crate::model::detail::{Pages, View};

/// The page kind a chase buffer maps for `pages`.
fn page_kind(pages: Pages) -> PageKind {
    match pages {
        Pages::Small => PageKind::NoHuge,
        Pages::Thp => PageKind::Thp,
        Pages::Hugetlb => PageKind::Hugetlb2M,
    }
}

/// What a latency run is asked for; `None` is this machine's default.
#[derive(Debug, Clone, Default)]
pub struct LatencyOptions {
    pub sizes: Option<Vec<u64>>,
    /// Page kinds, one set of records each (empty: THP).
    pub pages: Vec<Pages>,
    pub views: Option<Vec<View>>,
    pub window: Option<u64>,
    pub stride: Option<u64>,
    pub cpu: Option<u32>,
    pub quick: bool,
    pub sampling: Sampling,
}

/// Resolved options.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LatencyPlan {
    pub sizes: Vec<u64>,
    pub views: Vec<View>,
    pub window_bytes: u64,
    pub stride_bytes: u64,
    pub pages: Vec<Pages>,
    pub cpu: u32,
    pub samples: usize,
    pub min_sample_ms: f64,
    pub quick: bool,
    /// A cap on the warm-up walk, in reps (the knee probe's: it does not
    /// know the cache sizes yet, and a full cycle at DRAM latency through
    /// a CPUID-sized chain takes seconds).
    #[serde(skip)]
    pub warm_max_reps: Option<u64>,
}

impl LatencyPlan {
    pub fn sample_opts(&self) -> SampleOpts {
        SampleOpts::new(self.samples, self.min_sample_ms)
    }
}

/// Huge pages free for MAP_HUGETLB and their size.
fn hugetlb_free() -> (u64, u64) {
    let (free, size) = crate::os::mem::default_huge_pages_free();
    (free, size.unwrap_or(HUGE))
}

pub fn plan(o: &LatencyOptions, host: &Host) -> Result<LatencyPlan, UserError> {
    if let Some(v) = o.stride.filter(|&v| v == 0 || v % 8 != 0) {
        return Err(UserError::flag(
            "--stride",
            format!("{v} B is not a positive multiple of 8 bytes (one pointer per node): use e.g. 64, 128 or 4KiB"),
        ));
    }
    let views = match &o.views {
        Some(v) if v.is_empty() => {
            return Err(UserError::flag(
                "--view",
                "empty list: use random, window or stride",
            ))
        }
        Some(v) => {
            let mut out: Vec<View> = Vec::new();
            for &x in v {
                if !out.contains(&x) {
                    out.push(x);
                }
            }
            out
        }
        None if o.stride.is_some() => vec![View::Stride],
        None => vec![View::Random, View::Window],
    };
    let window = o.window.unwrap_or(4096);
    if window < 2 * LINE || window % LINE != 0 {
        return Err(UserError::flag(
            "--window",
            format!("{} must be a multiple of 64 bytes and at least 128 B (two lines): use e.g. 4KiB or 2MiB", format_bytes(window)),
        ));
    }
    let sizes = match &o.sizes {
        Some(s) if s.is_empty() => return Err(UserError::flag("--sizes", "the list is empty")),
        Some(s) => s.clone(),
        // 4× the LLC: a random chase still hits it at 2× (16 MiB read
        // 125 ns on a guest whose DRAM is 170 ns), and the largest size is
        // the survey's DRAM latency.
        None if o.quick => units::geometric(
            4 << 10,
            (host.llc_size(Curve::Latency).unwrap_or(32 << 20) * 4).next_power_of_two(),
            2.0,
        ),
        None => units::geometric(
            4 << 10,
            crate::plan::sizes::default_top(host, Curve::Latency),
            2.0,
        ),
    };
    if let Some(&small) = sizes.iter().find(|&&s| s < LINE) {
        return Err(UserError::flag(
            "--sizes",
            format!(
                "{} is smaller than one cache line (64 B): the chase needs at least one line",
                format_bytes(small)
            ),
        ));
    }
    let max = *sizes.iter().max().expect("non-empty size list");
    let mut pages: Vec<Pages> = Vec::new();
    for &p in &o.pages {
        if !pages.contains(&p) {
            pages.push(p);
        }
    }
    if pages.is_empty() {
        pages.push(Pages::Thp);
    }
    if pages.contains(&Pages::Hugetlb) {
        check_hugetlb(host, max)?;
    }
    let cpu = crate::plan::cpus::resolve_cpu(host, o.cpu)?;
    // The buffer plus a u32 per line for the order.
    super::check_memory(max + max / 16 + (4 << 20), "--sizes", "use smaller --sizes")?;
    let default = if o.quick {
        SampleOpts {
            samples: 5,
            min_sample: Duration::from_millis(5),
            settle: None,
        }
    } else {
        SampleOpts::default()
    };
    let s = o.sampling.resolve(default)?;
    Ok(LatencyPlan {
        sizes,
        views,
        window_bytes: window,
        stride_bytes: o.stride.unwrap_or(LINE),
        pages,
        cpu,
        samples: s.samples,
        min_sample_ms: s.min_sample.as_secs_f64() * 1000.0,
        quick: o.quick,
        warm_max_reps: None,
    })
}

/// Refuse `--pages hugetlb` up front when the pool cannot hold `max`.
fn check_hugetlb(host: &Host, max: u64) -> Result<(), UserError> {
    let reserved = host.env.hugepages_2m_reserved.unwrap_or(0);
    let (free, size) = hugetlb_free();
    let need = max.div_ceil(size);
    if reserved == 0 {
        return Err(UserError::flag(
            "--pages",
            format!("hugetlb needs reserved huge pages but vm.nr_hugepages = 0: run `sudo sysctl vm.nr_hugepages={need}` (for {}) or use --pages thp", format_bytes(max)),
        ));
    }
    if free < need {
        return Err(UserError::flag(
            "--pages",
            format!(
                "hugetlb: {} needs {need} free huge pages of {} but only {free} are free: raise vm.nr_hugepages (sudo sysctl vm.nr_hugepages={}) or use smaller --sizes",
                format_bytes(max),
                format_bytes(size),
                reserved + need - free
            ),
        ));
    }
    Ok(())
}

pub const DESCRIPTOR: Descriptor = Descriptor {
    id: SuiteId::Latency,
    about: "load-to-use latency by pointer chase, one size per octave from L1 to DRAM",
    reads_clock: true,
    quick: Some(quick),
    key: Some(Key {
        about: "pointer-chase latency at the same points",
        plan: key,
    }),
};

/// The survey's run: random and window views at one size per octave from
/// L1 to twice the LLC.
fn quick(host: &Host) -> Planned {
    let o = LatencyOptions {
        quick: true,
        ..LatencyOptions::default()
    };
    Ok(Box::new(plan(&o, host)?))
}

/// A fleet node's run: the random chase at the cache sweep's key sizes.
fn key(host: &Host, sampling: Sampling) -> Planned {
    let o = LatencyOptions {
        sizes: Some(crate::plan::sizes::key_sizes(host)),
        views: Some(vec![View::Random]),
        quick: true,
        sampling,
        ..LatencyOptions::default()
    };
    Ok(Box::new(plan(&o, host)?))
}

/// What a chase buffer got, and the page size that covers most of it.
pub fn memory_info(b: &Buffer) -> (MemoryInfo, Option<u64>) {
    let m = b.memory_info();
    let page = match (m.page_bytes, m.thp_fraction) {
        (Some(_), Some(f)) if f >= 0.5 => Some(HUGE),
        (p, _) => p,
    };
    (m, page)
}

/// The node size and count of a case, or why it cannot run.
fn geometry(plan: &LatencyPlan, view: View, size: u64) -> Result<(u64, u64), String> {
    let node = if view == View::Stride {
        plan.stride_bytes
    } else {
        LINE
    };
    let nodes = size / node;
    match view {
        View::Stride if nodes < 2 => Err(format!(
            "stride view needs a working set of at least two strides ({} × 2)",
            format_bytes(plan.stride_bytes)
        )),
        View::Window if size < 2 * plan.window_bytes => Err(format!(
            "window view needs a working set of at least two windows (--window {} × 2)",
            format_bytes(plan.window_bytes)
        )),
        _ if nodes == 0 => Err("working set smaller than one node".into()),
        _ => Ok((node, nodes)),
    }
}

/// One case: a chain of `nodes` nodes of `node` bytes in `view` order,
/// built in `mem`, chased with the sampler.
pub struct Case<'a> {
    pub plan: &'a LatencyPlan,
    pub view: View,
    pub size: u64,
    pub pages: Pages,
    pub seed: u64,
}

/// A measured (or skipped) case.
pub struct Measured {
    pub record: Record,
    /// Where the next size of the same view starts calibrating.
    pub hint: Option<Hint>,
    /// A stop request cut the sampling short.
    pub cut_short: bool,
}

/// Build the chain for one case in `mem` and measure it on the calling
/// (pinned) thread. `Err(Stopped)` when a stop request came first.
pub fn measure_case(
    k: &'static Kernel,
    mem: &mut Buffer,
    case: &Case,
    host: &Host,
    sampler: &crate::measure::Sampler,
    hint: Option<Hint>,
) -> Result<Measured, Failure> {
    let plan = case.plan;
    let (node, nodes) = match geometry(plan, case.view, case.size) {
        Ok(g) => g,
        Err(reason) => {
            return Ok(Measured {
                record: Record::skipped(SuiteId::Latency, k.name, reason),
                hint,
                cut_short: false,
            })
        }
    };
    let ws = node * nodes;
    assert!(
        ws as usize <= mem.len(),
        "working set larger than the chase buffer"
    );
    let order = match case.view {
        View::Random => perm::random_cycle(nodes as usize, case.seed),
        View::Window => perm::windowed_cycle(
            nodes as usize,
            (plan.window_bytes / LINE) as usize,
            case.seed,
        ),
        View::Stride => perm::strided_cycle(nodes as usize),
    };
    // SAFETY: ws ≤ mem.len(), the base is 2 MiB aligned, node is a multiple
    // of 8.
    let start = unsafe { chase::write_chain(mem.as_mut_ptr(), node as usize, &order) };
    drop(order);
    let warm = warm_reps(plan, host, ws, nodes);
    // SAFETY: the chain was just written into `mem`, which outlives `w`.
    let mut w = unsafe { Chase::new(k, start, warm) }.with_probes();
    let m = sampler.measure(&mut w, hint)?;
    Ok(Measured {
        record: chase_record(k, case, host, &m, mem, (node, nodes)),
        hint: Some(m.hint()),
        cut_short: m.cut_short,
    })
}

/// Warm-up: one full cycle while the set fits the caches (so the first
/// sample does not pay for the cold misses), a short run beyond that
/// (DRAM misses every hop whatever we do).
fn warm_reps(plan: &LatencyPlan, host: &Host, ws: u64, nodes: u64) -> u64 {
    let fits = host.llc_size(Curve::Latency).is_none_or(|l| ws <= 2 * l);
    let cycle_reps = nodes.div_ceil(HOPS_PER_REP);
    let warm = if fits {
        cycle_reps
    } else {
        cycle_reps.min(1 << 12)
    };
    plan.warm_max_reps.map_or(warm, |m| warm.min(m.max(1)))
}

/// The record of a chase of `nodes` nodes of `node` bytes each in `mem`,
/// measured as `m`.
fn chase_record(
    k: &'static Kernel,
    case: &Case,
    host: &Host,
    m: &crate::measure::Measured,
    mem: &Buffer,
    (node, nodes): (u64, u64),
) -> Record {
    let plan = case.plan;
    let ws = node * nodes;
    let ns: Vec<f64> = m
        .rates(1.0)
        .iter()
        .map(|loads_per_s| 1e9 / loads_per_s)
        .collect();
    let lat = stats::summarize(&ns, false);
    let cycles = host.clock_hz.and_then(|hz| {
        let c: Vec<f64> = ns.iter().map(|n| n * hz / 1e9).collect();
        stats::summarize(&c, false)
    });
    let (memory, page) = memory_info(mem);
    let hops = m.units_per_sample;
    let detail = LatencyDetail {
        case_view: Some(case.view),
        case_pages: Some(case.pages),
        case_window_bytes: (case.view == View::Window).then_some(plan.window_bytes),
        case_stride_bytes: (case.view == View::Stride).then_some(plan.stride_bytes),
        latency_ns: lat.into(),
        cycles_per_load: cycles.into(),
        clock_hz: host.clock_hz.into(),
        hops_per_sample: Some(hops),
        chain_nodes: Some(nodes),
        node_bytes: Some(node),
        page_bytes: page.into(),
    };
    let mut r = Record {
        kernel: k.name.into(),
        op: crate::model::Op::Latency,
        width_bits: Some(64),
        nontemporal: None,
        pattern: Some(if case.view == View::Stride {
            crate::model::Pattern::Strided
        } else {
            crate::model::Pattern::Chase
        }),
        size_bytes: Some(ws),
        threads: 1,
        cpus: vec![plan.cpu],
        // The random chase is what the knee probe measured: its plateaus
        // place a transition; other views keep the size's regime.
        regime: if case.view == View::Random {
            host.chase_regime(ws, lat.map(|s| s.median))
        } else {
            host.regime_of(ws, 1, Curve::Latency)
        },
        bytes_read_per_pass: Some(nodes * 8),
        bytes_written_per_pass: Some(0),
        reps_per_sample: Some(m.reps),
        // The model's `bytes` of a latency sample: 8 bytes per hop.
        samples: m
            .samples
            .iter()
            .map(|t| crate::model::Sample {
                seconds: t.seconds,
                bytes: t.units * 8,
                probe: t.probe,
            })
            .collect(),
        noise: m.noise,
        memory: Some(memory),
        ..Record::new(detail)
    };
    super::record::label(&mut r, k, host);
    r.warnings
        .extend(super::record::spread_warnings(lat.as_ref(), false));
    r.warnings.extend(super::record::noise_warnings(&r));
    super::record::sampled(&mut r, m);
    r
}

/// How long the plan will take (see `suites::estimate` for the rule).
fn estimate(p: &LatencyPlan) -> Estimate {
    let top = p.sizes.iter().max().copied().unwrap_or(0) as f64;
    let chains: u64 = p.sizes.iter().sum::<u64>() * (p.views.len() * p.pages.len()) as u64;
    Estimate::sampled(
        p.sizes.len() * p.views.len() * p.pages.len(),
        p.samples,
        p.min_sample_ms,
    )
    .faulting(top * p.pages.len() as f64, "chase buffers")
    .chasing(chains as f64)
}

impl Plan for LatencyPlan {
    const ID: SuiteId = SuiteId::Latency;

    fn estimate(&self) -> Estimate {
        estimate(self)
    }

    fn execute(&self, cx: &mut Ctx) -> anyhow::Result<Flow> {
        let cpu = self.cpu;
        team::on_cpu(cpu, || run(self, cx)).map_err(|e| UserError::flag("--cpu", e))?
    }
}

/// Run the plan on the calling (pinned) thread.
pub fn run(plan: &LatencyPlan, cx: &mut Ctx) -> anyhow::Result<Flow> {
    let Some(k) = chase::kernel() else {
        cx.push(Record::skipped(
            SuiteId::Latency,
            "chase",
            "no pointer-chase kernel on this architecture",
        ))?;
        return Ok(Flow::Done);
    };
    if let Some(reason) = k.skip_reason(&cx.host.features) {
        cx.push(Record::skipped(SuiteId::Latency, k.name, reason))?;
        return Ok(Flow::Done);
    }
    let max = *plan.sizes.iter().max().expect("sizes");
    let sampler = cx.sampler(plan.sample_opts());
    cx.plan_steps((plan.pages.len() * plan.sizes.len() * plan.views.len()) as u64);
    for &pages in &plan.pages {
        // Touched and filled up front: page faults and THP allocation
        // never land in a warm-up or a sample.
        let mut mem = Buffer::new(max as usize, page_kind(pages), 0xc4a5e)?;
        // One hint per view: each view's latency rises with the size.
        let mut hints = vec![None; plan.views.len()];
        for (si, &size) in plan.sizes.iter().enumerate() {
            for (vi, &view) in plan.views.iter().enumerate() {
                cx.step(&format!(
                    "{} {} {}",
                    view.name(),
                    format_bytes(size),
                    json!(pages)
                ));
                let case = Case {
                    plan,
                    view,
                    size,
                    pages,
                    seed: 0x1a7e ^ (si as u64) << 16 ^ vi as u64,
                };
                let measured = measure_case(k, &mut mem, &case, cx.host, &sampler, hints[vi]);
                let flow = cx.finish_case(SuiteId::Latency, k.name, measured, |m| {
                    hints[vi] = m.hint;
                    (m.record, m.cut_short)
                })?;
                if flow == Flow::Stopped {
                    return Ok(Flow::Stopped);
                }
            }
        }
    }
    Ok(Flow::Done)
}
