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
//! - Reps (16 hops each) are calibrated so a sample lasts ≥ min-sample;
//!   ns/load = sample seconds / hops; cycles/load = ns × the measured clock.
//!   Best = the lowest latency; median and CV as for bandwidth.
//! - Pages are explicit (`--pages 4k|thp|hugetlb`) and the page size
//!   actually obtained is read back from `/proc/self/smaps` and reported.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::cli::{LatencyArgs, OutputArgs, PagesArg};
use crate::error::{UserError, EXIT_INTERRUPTED, EXIT_OK};
use crate::kernels::{perm, Kernel, KernelArgs, Pattern};
use crate::measure::{noise, stats, Interrupted, SampleOpts};
use crate::memory::{smaps, Buffer, PageKind};
use crate::model::Host;
use crate::model::{MemoryInfo, Record, Sample};
use crate::util::units::{self, format_bytes};

use super::pinned;

/// Bytes per chase node in the random and window views: one cache line.
pub const LINE: u64 = perm::LINE as u64;
/// Hops per kernel rep.
const HOPS_PER_REP: u64 = 16;
/// The huge page size `--pages hugetlb` maps (x86-64 default).
const HUGE: u64 = 2 << 20;

/// Which chain to walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum View {
    /// Random single cycle over every line of the buffer.
    Random,
    /// Random within each window, windows in random order.
    Window,
    /// Address order every `stride` bytes.
    Stride,
}

impl View {
    pub fn name(self) -> &'static str {
        match self {
            View::Random => "random",
            View::Window => "window",
            View::Stride => "stride",
        }
    }
}

/// Resolved options.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LatencyPlan {
    pub sizes: Vec<u64>,
    pub views: Vec<View>,
    pub window_bytes: u64,
    pub stride_bytes: u64,
    pub pages: PagesArg,
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
        SampleOpts {
            samples: self.samples,
            min_sample: Duration::from_secs_f64(self.min_sample_ms / 1000.0),
        }
    }
}

/// The chase kernel from the registry.
pub fn chase_kernel() -> Option<&'static Kernel> {
    crate::kernels::registry()
        .iter()
        .find(|k| k.pattern == Pattern::Chase)
}

fn parse_bytes(flag: &'static str, text: &str) -> Result<u64, UserError> {
    units::parse_size(text).map_err(|e| UserError::flag(flag, e.to_string()))
}

/// Huge pages free for MAP_HUGETLB and their size, from /proc/meminfo
/// (`HugePages_Free` is a count, not kB).
pub fn hugetlb_free() -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let field = |key: &str| {
        text.lines()
            .find(|l| l.starts_with(key))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
    };
    let free = field("HugePages_Free:").unwrap_or(0);
    let size = field("Hugepagesize:").map_or(HUGE, |kb| kb * 1024);
    (free, size)
}

pub fn plan(args: &LatencyArgs, host: &Host) -> Result<LatencyPlan, UserError> {
    let stride = match &args.stride {
        Some(s) => {
            let v = units::parse_size(s).unwrap_or(0);
            if v == 0 || v % 8 != 0 {
                return Err(UserError::flag(
                    "--stride",
                    format!("'{s}' is not a positive multiple of 8 bytes (one pointer per node): use e.g. 64, 128 or 4KiB"),
                ));
            }
            Some(v)
        }
        None => None,
    };
    let views = match &args.view {
        Some(list) => {
            let mut v = Vec::new();
            for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                let view = match item {
                    "random" => View::Random,
                    "window" => View::Window,
                    "stride" => View::Stride,
                    other => {
                        return Err(UserError::flag(
                            "--view",
                            format!("unknown view '{other}': use random, window, stride or a list like random,window"),
                        ))
                    }
                };
                if !v.contains(&view) {
                    v.push(view);
                }
            }
            if v.is_empty() {
                return Err(UserError::flag(
                    "--view",
                    "empty list: use random, window or stride",
                ));
            }
            v
        }
        None if stride.is_some() => vec![View::Stride],
        None => vec![View::Random, View::Window],
    };
    let window = match &args.window {
        Some(w) => {
            let v = parse_bytes("--window", w)?;
            if v < 2 * LINE || v % LINE != 0 {
                return Err(UserError::flag(
                    "--window",
                    format!("'{w}' must be a multiple of 64 bytes and at least 128 B (two lines): use e.g. 4KiB or 2MiB"),
                ));
            }
            v
        }
        None => 4096,
    };
    let top = super::cache::default_top(host);
    let sizes = match &args.sizes {
        Some(s) => {
            units::parse_size_list(s).map_err(|e| UserError::flag("--sizes", e.to_string()))?
        }
        // 4× the LLC: a random chase still hits it at 2× (16 MiB read
        // 125 ns on a guest whose DRAM is 170 ns), and the largest size is
        // the survey's DRAM latency.
        None if args.quick => units::geometric(
            4 << 10,
            (host.llc_size().unwrap_or(32 << 20) * 4).next_power_of_two(),
            2.0,
        ),
        None => units::geometric(4 << 10, top, 2.0),
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
    if args.pages == PagesArg::Hugetlb {
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
    }
    let cpu = pinned::resolve_cpu(host, args.cpu)?;
    // The buffer plus a u32 per line for the order.
    super::check_memory(max + max / 16 + (4 << 20), "--sizes")?;
    let default = if args.quick {
        SampleOpts {
            samples: 5,
            min_sample: Duration::from_millis(5),
        }
    } else {
        SampleOpts::default()
    };
    let o = super::sample_opts(&args.sample, default)?;
    Ok(LatencyPlan {
        sizes,
        views,
        window_bytes: window,
        stride_bytes: stride.unwrap_or(LINE),
        pages: args.pages,
        cpu,
        samples: o.samples,
        min_sample_ms: o.min_sample.as_secs_f64() * 1000.0,
        quick: args.quick,
        warm_max_reps: None,
    })
}

/// An anonymous MAP_HUGETLB mapping (pre-faulted), unmapped on drop.
pub struct HugeMap {
    ptr: *mut u8,
    len: usize,
}

impl HugeMap {
    pub fn new(len: usize) -> Result<HugeMap, UserError> {
        let len = len.next_multiple_of(HUGE as usize);
        // SAFETY: anonymous private mapping, checked for MAP_FAILED.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_HUGETLB | libc::MAP_POPULATE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(UserError::flag(
                "--pages",
                format!(
                    "hugetlb mapping of {} failed ({}): raise vm.nr_hugepages or use --pages thp",
                    format_bytes(len as u64),
                    std::io::Error::last_os_error()
                ),
            ));
        }
        Ok(HugeMap {
            ptr: p as *mut u8,
            len,
        })
    }
}

impl Drop for HugeMap {
    fn drop(&mut self) {
        // SAFETY: exactly what mmap returned.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
    }
}

/// The chase's memory: a regular buffer (4k or THP) or a hugetlb mapping.
pub enum ChaseMem {
    Buf(Buffer),
    Huge(HugeMap),
}

impl ChaseMem {
    pub fn new(pages: PagesArg, len: usize) -> Result<ChaseMem, UserError> {
        Ok(match pages {
            PagesArg::Small => ChaseMem::Buf(Buffer::new(len, PageKind::NoHuge, 0xc4a5e)?),
            PagesArg::Thp => ChaseMem::Buf(Buffer::new(len, PageKind::Thp, 0xc4a5e)?),
            PagesArg::Hugetlb => ChaseMem::Huge(HugeMap::new(len)?),
        })
    }

    pub fn ptr(&mut self) -> *mut u8 {
        match self {
            ChaseMem::Buf(b) => b.as_mut_ptr(),
            ChaseMem::Huge(h) => h.ptr,
        }
    }

    pub fn len(&self) -> usize {
        match self {
            ChaseMem::Buf(b) => b.len(),
            ChaseMem::Huge(h) => h.len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// What the kernel gave us, and the page size that covers most of it.
    pub fn memory_info(&self) -> (MemoryInfo, Option<u64>) {
        match self {
            ChaseMem::Buf(b) => {
                let m = b.memory_info();
                let page = match (m.page_bytes, m.thp_fraction) {
                    (Some(_), Some(f)) if f >= 0.5 => Some(HUGE),
                    (p, _) => p,
                };
                (m, page)
            }
            ChaseMem::Huge(h) => {
                let s = smaps::lookup(h.ptr as usize);
                let page = s.map(|s| s.kernel_page_bytes);
                (
                    MemoryInfo {
                        kind: format!(
                            "hugetlb-{}",
                            page.map_or("?".into(), |p| format!("{}M", p >> 20))
                        ),
                        page_bytes: page,
                        thp_fraction: Some(0.0),
                        locked_fraction: None,
                    },
                    page,
                )
            }
        }
    }
}

/// Write the chain for `order` into `base`: node `order[k]` (at
/// `order[k] × node_bytes`) holds the address of node `order[k + 1]`, the
/// last one the first's. Returns the address of the first node.
///
/// # Safety
/// `base` must be valid for writes of `order.len() × node_bytes` bytes,
/// 8-byte aligned, and `node_bytes` a multiple of 8.
pub unsafe fn write_chain(base: *mut u8, node_bytes: usize, order: &[u32]) -> *const u8 {
    let n = order.len();
    for k in 0..n {
        let from = base.add(order[k] as usize * node_bytes) as *mut u64;
        let to = base.add(order[(k + 1) % n] as usize * node_bytes);
        from.write(to as u64);
    }
    base.add(order[0] as usize * node_bytes)
}

/// Follow the chain for `reps × 16` hops with the chase kernel; returns the
/// seconds it took and where the chain ended.
///
/// # Safety
/// `start` must be the head of a chain written by [`write_chain`] that is
/// still intact.
pub unsafe fn chase(k: &Kernel, start: *const u8, reps: u64) -> (f64, u64) {
    let a = KernelArgs::new(start, std::ptr::null_mut(), 0, reps);
    let t0 = Instant::now();
    let end = (k.func)(&a);
    let secs = t0.elapsed().as_secs_f64();
    (secs, std::hint::black_box(end))
}

/// One measured (or skipped) latency case.
pub struct Case {
    pub view: View,
    pub size: u64,
}

/// The node size and count of a case, or why it cannot run.
pub fn geometry(plan: &LatencyPlan, view: View, size: u64) -> Result<(u64, u64), String> {
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

/// Build the chain for one case in `mem` and measure it.
#[allow(clippy::too_many_arguments)]
pub fn measure_case(
    k: &'static Kernel,
    mem: &mut ChaseMem,
    plan: &LatencyPlan,
    view: View,
    size: u64,
    host: &Host,
    seed: u64,
    stop: &AtomicBool,
) -> Result<Record, Interrupted> {
    let (node, nodes) = match geometry(plan, view, size) {
        Ok(g) => g,
        Err(reason) => return Ok(Record::skipped("latency", k.name, reason)),
    };
    let ws = node * nodes;
    assert!(
        ws as usize <= mem.len(),
        "working set larger than the chase buffer"
    );
    let order = match view {
        View::Random => perm::random_cycle(nodes as usize, seed),
        View::Window => {
            perm::windowed_cycle(nodes as usize, (plan.window_bytes / LINE) as usize, seed)
        }
        View::Stride => perm::strided_cycle(nodes as usize),
    };
    // SAFETY: ws ≤ mem.len(), the base is 2 MiB aligned, node is a multiple
    // of 8.
    let start = unsafe { write_chain(mem.ptr(), node as usize, &order) };
    drop(order);
    let opts = plan.sample_opts();
    let min = opts.min_sample.as_secs_f64();
    // Warm-up: one full cycle while it fits the caches (so the first
    // sample does not pay for the cold misses), a short run beyond that
    // (DRAM misses every hop whatever we do).
    let fits = host.llc_size().is_none_or(|l| ws <= 2 * l);
    let cycle_reps = nodes.div_ceil(HOPS_PER_REP);
    let warm = if fits {
        cycle_reps
    } else {
        cycle_reps.min(1 << 12)
    };
    let warm = plan.warm_max_reps.map_or(warm, |m| warm.min(m.max(1)));
    // Every call continues where the previous one stopped: restarting from
    // the head would re-walk the same prefix of the cycle, which then sits
    // in the caches (a DRAM-sized chain measured at L3 latency).
    // SAFETY (all chase calls): `cur` is always a node of the chain just
    // written, which nothing else touches.
    let (_, mut cur) = unsafe { chase(k, start, warm) };
    let reps = pinned::calibrate(min, 64.min(cycle_reps.max(1)), stop, |r| {
        let (secs, end) = unsafe { chase(k, cur as *const u8, r) };
        cur = end;
        secs
    })?;
    let hops = reps * HOPS_PER_REP;
    let before = noise::snapshot();
    let mut samples = Vec::with_capacity(opts.samples);
    let mut ns = Vec::with_capacity(opts.samples);
    for _ in 0..opts.samples.max(1) {
        if stop.load(Ordering::Relaxed) {
            return Err(Interrupted);
        }
        let (secs, end) = unsafe { chase(k, cur as *const u8, reps) };
        cur = end;
        samples.push(Sample {
            seconds: secs,
            bytes: hops * 8,
        });
        ns.push(secs * 1e9 / hops as f64);
    }
    let noise = noise::since(before);
    let lat = stats::summarize(&ns, false);
    let cycles = host.clock_hz.and_then(|hz| {
        let c: Vec<f64> = ns.iter().map(|n| n * hz / 1e9).collect();
        stats::summarize(&c, false)
    });
    let (memory, page) = mem.memory_info();
    let mut r = Record {
        suite: "latency".into(),
        kernel: k.name.into(),
        op: "latency".into(),
        width_bits: Some(64),
        nontemporal: None,
        pattern: Some(
            if view == View::Stride {
                "strided"
            } else {
                "chase"
            }
            .into(),
        ),
        size_bytes: Some(ws),
        threads: 1,
        cpus: vec![plan.cpu],
        regime: Some(host.regime(ws, 1)),
        bytes_read_per_pass: Some(nodes * 8),
        bytes_written_per_pass: Some(0),
        reps_per_sample: Some(reps),
        samples,
        noise,
        memory: Some(memory),
        ..Record::default()
    };
    let e = &mut r.extra;
    e.insert("case_view".into(), json!(view.name()));
    e.insert("case_pages".into(), json!(plan.pages));
    match view {
        View::Window => {
            e.insert("case_window_bytes".into(), json!(plan.window_bytes));
        }
        View::Stride => {
            e.insert("case_stride_bytes".into(), json!(plan.stride_bytes));
        }
        View::Random => {}
    }
    e.insert("latency_ns".into(), json!(lat));
    e.insert("cycles_per_load".into(), json!(cycles));
    e.insert("clock_hz".into(), json!(host.clock_hz));
    e.insert("hops_per_sample".into(), json!(hops));
    e.insert("chain_nodes".into(), json!(nodes));
    e.insert("node_bytes".into(), json!(node));
    e.insert("page_bytes".into(), json!(page));
    r.warnings = pinned::spread_warnings(lat.as_ref(), false);
    r.warnings.extend(pinned::noise_warnings(&r));
    Ok(r)
}

/// Run the plan on the calling (pinned) thread, sending each record.
pub fn run_cases(
    plan: &LatencyPlan,
    host: &Host,
    tx: &std::sync::mpsc::Sender<Record>,
    stop: &AtomicBool,
) -> anyhow::Result<bool> {
    let Some(k) = chase_kernel() else {
        let _ = tx.send(Record::skipped(
            "latency",
            "chase",
            "no pointer-chase kernel on this architecture",
        ));
        return Ok(false);
    };
    if let Some(reason) = k.skip_reason(&host.features) {
        let _ = tx.send(Record::skipped("latency", k.name, reason));
        return Ok(false);
    }
    let max = *plan.sizes.iter().max().expect("sizes");
    let mut mem = ChaseMem::new(plan.pages, max as usize)?;
    for (si, &size) in plan.sizes.iter().enumerate() {
        for (vi, &view) in plan.views.iter().enumerate() {
            let seed = 0x1a7e ^ (si as u64) << 16 ^ vi as u64;
            match measure_case(k, &mut mem, plan, view, size, host, seed, stop) {
                Ok(r) => {
                    if tx.send(r).is_err() {
                        return Ok(false);
                    }
                }
                Err(Interrupted) => return Ok(true),
            }
        }
    }
    Ok(false)
}

/// `bwscope latency`.
pub fn command(a: &LatencyArgs, out: &OutputArgs) -> anyhow::Result<u8> {
    let host = crate::platform::detect_host(true);
    let plan = plan(a, &host)?;
    let mut sink =
        crate::commands::start_run("latency", serde_json::to_value(&plan)?, out, host.clone())?;
    let stop = crate::util::signal::install();
    let mut interrupted = false;
    let flag = &mut interrupted;
    let (h, p) = (&host, &plan);
    let total = (plan.sizes.len() * plan.views.len()) as u64;
    pinned::run_on_cpu(plan.cpu, &mut sink, total, move |tx| {
        *flag = run_cases(p, h, tx, stop)?;
        Ok(())
    })?;
    let taken = sink.stdout_taken();
    let run = sink.finish(interrupted)?;
    if !taken {
        print!("{}", crate::report::views::render(&run));
    }
    if interrupted {
        eprintln!("interrupted: {} records kept", run.records.len());
        return Ok(EXIT_INTERRUPTED);
    }
    Ok(EXIT_OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_in_memory_is_one_cycle_through_every_line() {
        let Some(k) = chase_kernel() else { return };
        let lines = 64 * 16; // 64 KiB, a multiple of 16 hops
        let mut b = Buffer::new(lines * 64, PageKind::NoHuge, 3).unwrap();
        let order = perm::random_cycle(lines, 11);
        let base = b.as_mut_ptr();
        let start = unsafe { write_chain(base, 64, &order) };
        // One full cycle (lines / 16 reps) ends where it started...
        let (_, end) = unsafe { chase(k, start, lines as u64 / 16) };
        assert_eq!(end, start as u64);
        // ...and no shorter multiple of 16 hops does.
        for reps in 1..lines as u64 / 16 {
            let (_, e) = unsafe { chase(k, start, reps) };
            assert_ne!(e, start as u64, "chain closed after {} hops", reps * 16);
        }
        // Walk it node by node: every line once.
        let mut seen = vec![false; lines];
        let mut p = start as usize;
        for _ in 0..lines {
            let idx = (p - base as usize) / 64;
            assert_eq!((p - base as usize) % 64, 0);
            assert!(!seen[idx], "line {idx} visited twice");
            seen[idx] = true;
            p = unsafe { *(p as *const u64) } as usize;
        }
        assert!(seen.iter().all(|&s| s));
    }
}
