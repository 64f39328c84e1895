//! Thread scaling (`bwscope threads`): aggregate and per-thread bandwidth
//! for 1..N pinned threads, per kernel and total working set.
//!
//! The seed's "one instance per core, sum the results" done inside one
//! process: each thread is pinned, first-touches its own buffer (or, with
//! `--shared`, works on its chunk of one buffer the main thread touched),
//! and all are released by one spin barrier per sample. Aggregate = all
//! bytes over earliest start → latest end; per-thread = each thread's bytes
//! over its own interval. The working set is the **total** of all threads
//! (likwid's `-w S0:1GB:N`), so every point of a curve moves the same data
//! and a DRAM-sized point stays DRAM-sized at any thread count.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::cli::{OutputArgs, PlacementArg, ThreadsArgs};
use crate::commands;
use crate::error::{UserError, EXIT_INTERRUPTED, EXIT_OK};
use crate::kernels::{self, Kernel, KernelArgs, Op};
use crate::measure::team::{current_cpu, dst_offset, SpinBarrier, Team, ThreadTiming};
use crate::measure::{self, noise, Measured, SampleOpts};
use crate::memory::Buffer;
use crate::model::Host;
use crate::model::Warning;
use crate::model::{Record, Sample};
use crate::report::sink::Sink;
use crate::suites::procs::ProcTeam;
use crate::util::units::{self, format_bytes};

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
    pub memory: crate::cli::MemoryArg,
}

fn names<S: serde::Serializer>(k: &[&'static Kernel], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(k.iter().map(|k| k.name))
}

/// Read, write, NT write and copy at the widest ISA this CPU runs.
pub fn default_kernels(host: &Host) -> Vec<&'static Kernel> {
    let widest = kernels::registry()
        .iter()
        .filter(|k| k.name.starts_with("seq_read_") && k.supported(&host.features))
        .map(|k| k.width_bits)
        .max()
        .unwrap_or(64);
    let pick = |op: Op, nt: bool| {
        kernels::registry().iter().find(|k| {
            k.name.starts_with("seq_")
                && k.op == op
                && k.nontemporal == nt
                && k.width_bits == widest
        })
    };
    [
        pick(Op::Read, false),
        pick(Op::Write, false),
        pick(Op::Write, true),
        pick(Op::Copy, false),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Allowed cpus ordered by `placement`; without `smt` only the first
/// allowed sibling of each core.
pub fn placement_order(host: &Host, placement: PlacementArg, smt: bool) -> Vec<u32> {
    let mut cpus: Vec<&crate::model::Cpu> = host
        .cpus
        .iter()
        .filter(|c| host.allowed_cpus.contains(&c.id))
        .collect();
    cpus.sort_by_key(|c| (c.node, c.package, c.core, c.id));
    let mut primary: Vec<&crate::model::Cpu> = Vec::new();
    let mut secondary: Vec<&crate::model::Cpu> = Vec::new();
    for c in cpus {
        if primary
            .iter()
            .any(|p| (p.package, p.core) == (c.package, c.core))
        {
            secondary.push(c);
        } else {
            primary.push(c);
        }
    }
    if primary.is_empty() {
        return host.allowed_cpus.clone();
    }
    match placement {
        PlacementArg::Compact => {
            if smt {
                // Siblings next to each other: core 0's threads, then core 1's.
                let mut all: Vec<&crate::model::Cpu> =
                    primary.iter().chain(secondary.iter()).copied().collect();
                all.sort_by_key(|c| (c.node, c.package, c.core, c.id));
                all.iter().map(|c| c.id).collect()
            } else {
                primary.iter().map(|c| c.id).collect()
            }
        }
        PlacementArg::Scatter => {
            let mut out = round_robin(&primary);
            if smt {
                out.extend(round_robin(&secondary));
            }
            out
        }
    }
}

/// Take one cpu from each (node, package) group in turn.
fn round_robin(cpus: &[&crate::model::Cpu]) -> Vec<u32> {
    let mut groups: Vec<((u32, u32), Vec<u32>)> = Vec::new();
    for c in cpus {
        let key = (c.node, c.package);
        match groups.iter_mut().find(|g| g.0 == key) {
            Some(g) => g.1.push(c.id),
            None => groups.push((key, vec![c.id])),
        }
    }
    let mut out = Vec::new();
    let mut i = 0;
    while out.len() < cpus.len() {
        for g in &groups {
            if let Some(&c) = g.1.get(i) {
                out.push(c);
            }
        }
        i += 1;
    }
    out
}

/// Default counts: every count up to 16, then doublings, and N itself.
pub fn default_counts(n: usize) -> Vec<usize> {
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

/// An explicit cpu list, validated against the cpus this process may use.
pub fn parse_cpus(host: &Host, list: &str, flag: &'static str) -> Result<Vec<u32>, UserError> {
    // Keep the order given (threads are added in it); ranges expand in place.
    let mut parsed: Vec<u32> = Vec::new();
    for part in list.split(',').filter(|p| !p.trim().is_empty()) {
        let cpus = crate::util::cpulist::parse_cpu_list(part).ok_or_else(|| {
            UserError::flag(
                flag,
                format!("'{}' is not a cpu list: write e.g. 0,2,4-7", list),
            )
        })?;
        for c in cpus {
            if !parsed.contains(&c) {
                parsed.push(c);
            }
        }
    }
    if parsed.is_empty() {
        return Err(UserError::flag(flag, "the list is empty"));
    }
    if let Some(bad) = parsed.iter().find(|c| !host.allowed_cpus.contains(c)) {
        return Err(UserError::flag(
            flag,
            format!(
                "cpu {} is offline or not allowed for this process (allowed: {})",
                bad,
                crate::util::cpulist::format_cpu_list(&host.allowed_cpus)
            ),
        ));
    }
    Ok(parsed)
}

pub fn plan(a: &ThreadsArgs, host: &Host) -> Result<ThreadsPlan, UserError> {
    let kernels = match &a.kernel {
        Some(spec) => {
            kernels::select_streaming(spec).map_err(|m| UserError::flag("--kernel", m))?
        }
        None => default_kernels(host),
    };
    let mut sizes = match &a.sizes {
        Some(s) => {
            units::parse_size_list(s).map_err(|e| UserError::flag("--sizes", e.to_string()))?
        }
        None => {
            let llc = host.llc_size().unwrap_or(32 << 20);
            vec![(llc / 2).max(1 << 20), super::cache::default_top(host) * 4]
        }
    };
    sizes.sort_unstable();
    sizes.dedup();
    if sizes.iter().any(|&s| s < 4096) {
        return Err(UserError::flag(
            "--sizes",
            "each total working set must be at least 4KiB",
        ));
    }
    let (order, placement) = match &a.cpus {
        Some(list) => (parse_cpus(host, list, "--cpus")?, "cpus".to_string()),
        None => (
            placement_order(host, a.placement, a.smt),
            format!("{:?}", a.placement).to_lowercase(),
        ),
    };
    let n = a.threads.unwrap_or(order.len());
    if n == 0 {
        return Err(UserError::flag("--threads", "must be at least 1"));
    }
    if n > order.len() && !a.oversubscribe {
        return Err(UserError::flag(
            "--threads",
            format!(
                "{} threads but only {} cpus ({}) are available{}; use at most {} or add --oversubscribe",
                n,
                order.len(),
                crate::util::cpulist::format_cpu_list(&order),
                if a.smt || a.cpus.is_some() { "" } else { " without --smt" },
                order.len()
            ),
        ));
    }
    let order: Vec<u32> = (0..n).map(|i| order[i % order.len()]).collect();
    let counts = match &a.counts {
        Some(list) => {
            let mut c: Vec<usize> = list
                .split(',')
                .filter(|s| !s.trim().is_empty())
                .map(|s| s.trim().parse::<usize>())
                .collect::<Result<_, _>>()
                .map_err(|_| {
                    UserError::flag(
                        "--counts",
                        format!(
                            "'{}' is not a list of thread counts: write e.g. 1,2,4",
                            list
                        ),
                    )
                })?;
            c.sort_unstable();
            c.dedup();
            if c.is_empty() || c[0] == 0 || *c.last().unwrap() > n {
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
    let o = super::sample_opts(&a.sample, SampleOpts::default())?;
    Ok(ThreadsPlan {
        kernels,
        sizes,
        order,
        counts,
        placement,
        shared: a.shared,
        processes: a.processes,
        smt: a.smt,
        samples: o.samples,
        min_sample_ms: o.min_sample.as_secs_f64() * 1000.0,
        memory: a.memory,
    })
}

/// Per-thread bytes of a total working set, rounded down to 4 KiB.
fn per_thread(total: u64, threads: usize) -> usize {
    (total as usize / threads) / 4096 * 4096
}

/// Start skew above this fraction of a sample earns a warning.
pub const SKEW_LIMIT: f64 = 0.01;

/// Slack per thread for a copy's second stream offset.
const SLACK: usize = crate::measure::team::BUFFER_SLACK;

/// Measure `kernel` with worker `i` working on `bases[i]` (a chunk of the
/// shared buffer) instead of its own buffer. Same protocol as
/// `measure::measure_case`: calibrate, then timed samples between a barrier
/// and each thread's end.
fn measure_shared(
    team: &Team,
    kernel: &'static Kernel,
    bases: &[usize],
    ws: usize,
    opts: &SampleOpts,
    stop: &AtomicBool,
) -> Result<Option<Measured>, measure::Interrupted> {
    let Some(pass) = kernel.pass_bytes(ws) else {
        return Ok(None);
    };
    let bases: Arc<Vec<usize>> = Arc::new(bases.to_vec());
    let run = |reps: u64| -> Vec<ThreadTiming> {
        let barrier = Arc::new(SpinBarrier::new(team.threads()));
        let bases = bases.clone();
        team.run_each(move |i, _own| {
            let base = bases[i] as *mut u8;
            let mut args = KernelArgs::new(base, base, pass.stream_len, reps);
            // SAFETY: the chunk holds ws + SLACK bytes, so the write stream
            // at dst_offset fits; the chunk base is 4 KiB aligned.
            args.dst = unsafe { base.add(dst_offset(kernel, pass.stream_len)) };
            barrier.wait();
            let start = Instant::now();
            // SAFETY: as above; the plan only runs supported kernels.
            let checksum = unsafe { (kernel.func)(&args) };
            let end = Instant::now();
            ThreadTiming {
                start,
                end,
                checksum,
            }
        })
    };
    let span = |ts: &[ThreadTiming]| {
        let s = ts.iter().map(|t| t.start).min().expect("team");
        let e = ts.iter().map(|t| t.end).max().expect("team");
        let ls = ts.iter().map(|t| t.start).max().expect("team");
        (
            e.duration_since(s).as_secs_f64(),
            ls.duration_since(s).as_secs_f64(),
        )
    };
    let min = opts.min_sample.as_secs_f64();
    let mut reps = 1u64;
    loop {
        if stop.load(Ordering::Relaxed) {
            return Err(measure::Interrupted);
        }
        let (secs, _) = span(&run(reps));
        if secs >= min || reps >= 1 << 40 {
            break;
        }
        let f = if secs > 0.0 { min / secs * 1.1 } else { 16.0 };
        reps = ((reps as f64 * f.clamp(1.5, 1000.0)).ceil() as u64).max(reps + 1);
    }
    let before = noise::snapshot();
    let threads = team.threads();
    let bytes = (pass.read + pass.written) * reps * threads as u64;
    let mut samples = Vec::new();
    let mut per_thread = vec![Vec::new(); threads];
    let mut max_skew: f64 = 0.0;
    let mut checksums = Vec::new();
    for _ in 0..opts.samples.max(1) {
        if stop.load(Ordering::Relaxed) {
            return Err(measure::Interrupted);
        }
        let ts = run(reps);
        let (secs, skew) = span(&ts);
        max_skew = max_skew.max(skew);
        samples.push(Sample {
            seconds: secs,
            bytes,
        });
        for (i, t) in ts.iter().enumerate() {
            per_thread[i].push(t.seconds());
        }
        checksums = ts.iter().map(|t| t.checksum).collect();
    }
    let noise = noise::since(before);
    Ok(Some(Measured {
        pass,
        reps,
        samples,
        per_thread_seconds: per_thread,
        max_start_skew: max_skew,
        noise,
        checksums,
    }))
}

/// Largest start skew as a fraction of the median sample's duration.
pub fn skew_fraction(m: &Measured) -> f64 {
    let secs: Vec<f64> = m.samples.iter().map(|s| s.seconds).collect();
    match crate::measure::stats::summarize(&secs, false) {
        Some(s) if s.median > 0.0 => m.max_start_skew / s.median,
        _ => 0.0,
    }
}

/// Run the curve. Returns true when interrupted.
pub fn run(
    plan: &ThreadsPlan,
    host: &Host,
    sink: &mut Sink,
    stop: &AtomicBool,
) -> anyhow::Result<bool> {
    let runnable: Vec<&'static Kernel> = plan
        .kernels
        .iter()
        .copied()
        .filter(|k| match k.skip_reason(&host.features) {
            Some(reason) => {
                let _ = sink.push(Record::skipped("threads", k.name, reason));
                false
            }
            None => true,
        })
        .collect();
    if runnable.is_empty() {
        return Ok(false);
    }
    let page = super::cache::page_kind(plan.memory);
    let opts = SampleOpts {
        samples: plan.samples,
        min_sample: Duration::from_secs_f64(plan.min_sample_ms / 1000.0),
    };
    let max_total = *plan.sizes.last().expect("sizes");
    let bar = crate::report::progress::bar(
        (plan.counts.len() * plan.sizes.len() * runnable.len()) as u64,
        sink.stdout_taken(),
    );
    // Aggregate best GB/s at one thread, per (kernel, size): the
    // efficiency baseline.
    let mut baseline: std::collections::HashMap<(String, u64), f64> = Default::default();
    for &count in &plan.counts {
        let cpus: Vec<u32> = plan.order[..count].to_vec();
        let buf_len = per_thread(max_total, count) + SLACK;
        // Processes are forked while this process has no other thread:
        // the previous count's team was dropped (joined) at the end of its
        // iteration.
        let procs = if plan.processes {
            Some(ProcTeam::spawn(&cpus, buf_len, page)?)
        } else {
            None
        };
        let (team, mut shared) = if procs.is_some() {
            (None, None)
        } else if plan.shared {
            let team = Team::spawn(&cpus, 4096, page)?;
            // First touch by the main thread: the whole buffer lands on its node.
            let shared = Buffer::new(buf_len * count, page, 0x5eed)?;
            (Some(team), Some(shared))
        } else {
            (Some(Team::spawn(&cpus, buf_len, page)?), None)
        };
        let observed: Vec<Option<u32>> = match (&team, &procs) {
            (Some(t), _) => (0..count)
                .map(|i| t.inspect(i, |_| current_cpu()))
                .collect(),
            (None, Some(p)) => p.observed_cpus(),
            (None, None) => unreachable!("threads or processes"),
        };
        let mem = match (&shared, &team, &procs) {
            (Some(b), _, _) => Some(b.memory_info()),
            (None, Some(t), _) => t.memory().first().cloned(),
            (None, None, Some(p)) => p.memory(),
            _ => None,
        };
        for (si, &total) in plan.sizes.iter().enumerate() {
            let ws = per_thread(total, count);
            if ws == 0 {
                for &k in &runnable {
                    sink.push(Record::skipped(
                        "threads",
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
            let fill = (ws + SLACK).min(buf_len);
            // Fresh random data for every size, so reads never see a
            // previous write kernel's constant pattern.
            match (shared.as_mut(), &team, &procs) {
                (Some(b), _, _) => b.fill_random(0xabcd + si as u64),
                (None, Some(t), _) => {
                    for i in 0..count {
                        t.inspect(i, move |b| b.fill_random_prefix(fill, 0xabcd + si as u64));
                    }
                }
                (None, None, Some(p)) => p.fill(fill, 0xabcd + si as u64),
                _ => {}
            }
            let bases: Vec<usize> = shared
                .as_ref()
                .map(|b| {
                    (0..count)
                        .map(|i| b.as_ptr() as usize + i * buf_len)
                        .collect()
                })
                .unwrap_or_default();
            for &k in &runnable {
                bar.set_message(format!(
                    "{} {} × {}",
                    k.name,
                    count,
                    format_bytes(ws as u64)
                ));
                let measured = if let Some(p) = &procs {
                    p.measure(k, ws, &opts, stop)
                } else if shared.is_some() {
                    measure_shared(team.as_ref().expect("team"), k, &bases, ws, &opts, stop)
                } else {
                    measure::measure_case(team.as_ref().expect("team"), k, ws, &opts, stop)
                };
                let m = match measured {
                    Err(measure::Interrupted) => {
                        bar.finish_and_clear();
                        return Ok(true);
                    }
                    Ok(None) => {
                        sink.push(Record::skipped(
                            "threads",
                            k.name,
                            format!(
                                "{} per thread is smaller than one {}-byte block per stream",
                                format_bytes(ws as u64),
                                k.granule
                            ),
                        ))?;
                        bar.inc(1);
                        continue;
                    }
                    Ok(Some(m)) => m,
                };
                let mut r = super::bandwidth_record("threads", k, &m, host, &cpus);
                r.memory = mem.clone();
                let nodes: Vec<u32> = cpus
                    .iter()
                    .filter_map(|c| host.cpus.iter().find(|x| x.id == *c).map(|x| x.node))
                    .collect();
                let mut p = r.placement.take().unwrap_or_default();
                p.start_skew_seconds = Some(m.max_start_skew);
                if !nodes.is_empty() && nodes.iter().all(|&n| n == nodes[0]) {
                    p.cpu_node = Some(nodes[0]);
                }
                r.placement = Some(p);
                let best = r.gbps.map(|g| g.best).unwrap_or(0.0);
                let key = (k.name.to_string(), total);
                if count == 1 {
                    baseline.insert(key.clone(), best);
                }
                let eff = baseline.get(&key).map(|b| best / (b * count as f64));
                let e = &mut r.extra;
                e.insert("total_bytes".into(), total.into());
                e.insert("case_placement".into(), plan.placement.clone().into());
                e.insert("case_shared".into(), plan.shared.into());
                if plan.processes {
                    e.insert("case_processes".into(), true.into());
                }
                let skew = skew_fraction(&m);
                e.insert("start_skew_fraction".into(), skew.into());
                if skew > SKEW_LIMIT {
                    r.warnings.push(Warning::Other {
                        message: format!("threads started up to {:.1} % of a sample apart", skew * 100.0),
                        hint: "a worker was preempted at the barrier: quiet the machine, or raise --min-sample-ms".into(),
                    });
                }
                e.insert(
                    "scaling_efficiency".into(),
                    eff.map_or(serde_json::Value::Null, Into::into),
                );
                e.insert(
                    "observed_cpus".into(),
                    serde_json::to_value(&observed).expect("plain data"),
                );
                sink.push(r)?;
                bar.inc(1);
            }
        }
    }
    bar.finish_and_clear();
    Ok(false)
}

/// `bwscope threads`.
pub fn command(a: &ThreadsArgs, out: &OutputArgs) -> anyhow::Result<u8> {
    let host = crate::platform::detect_host(true);
    let plan = plan(a, &host)?;
    crate::commands::announce(&super::estimate::threads(&plan));
    let mut sink = commands::start_run("threads", serde_json::to_value(&plan)?, out, host.clone())?;
    let stop = crate::util::signal::install();
    let interrupted = run(&plan, &host, &mut sink, stop)?;
    let taken = sink.stdout_taken();
    let run = sink.finish(interrupted)?;
    if !taken {
        crate::util::out::print(&crate::report::views::render(&run));
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
    use crate::model::Cpu;

    fn host(spec: &[(u32, u32, u32)]) -> Host {
        // (id, core, node); package = node
        let mut h = Host::default();
        for &(id, core, node) in spec {
            h.cpus.push(Cpu {
                id,
                core,
                package: node,
                node,
                siblings: vec![id],
            });
            h.allowed_cpus.push(id);
        }
        h
    }

    #[test]
    fn compact_and_scatter_orders() {
        // 2 nodes × 2 cores × 2 threads; siblings are id and id+4.
        let h = host(&[
            (0, 0, 0),
            (1, 1, 0),
            (2, 0, 1),
            (3, 1, 1),
            (4, 0, 0),
            (5, 1, 0),
            (6, 0, 1),
            (7, 1, 1),
        ]);
        assert_eq!(
            placement_order(&h, PlacementArg::Compact, false),
            vec![0, 1, 2, 3]
        );
        assert_eq!(
            placement_order(&h, PlacementArg::Compact, true),
            vec![0, 4, 1, 5, 2, 6, 3, 7]
        );
        assert_eq!(
            placement_order(&h, PlacementArg::Scatter, false),
            vec![0, 2, 1, 3]
        );
        assert_eq!(
            placement_order(&h, PlacementArg::Scatter, true),
            vec![0, 2, 1, 3, 4, 6, 5, 7]
        );
    }

    #[test]
    fn explicit_cpus_keep_their_order() {
        let h = host(&[(0, 0, 0), (1, 1, 0), (2, 2, 0), (3, 3, 0)]);
        assert_eq!(parse_cpus(&h, "3,0-1,3", "--cpus").unwrap(), vec![3, 0, 1]);
        assert!(parse_cpus(&h, "7", "--cpus")
            .unwrap_err()
            .to_string()
            .contains("cpu 7"));
        assert!(parse_cpus(&h, "a", "--cpus").is_err());
        assert!(parse_cpus(&h, ",", "--cpus").is_err());
    }

    #[test]
    fn counts() {
        assert_eq!(default_counts(3), vec![1, 2, 3]);
        let c = default_counts(100);
        assert_eq!(&c[..3], &[1, 2, 3]);
        assert!(c.contains(&16) && c.contains(&32) && c.contains(&64) && c.ends_with(&[100]));
    }
}
