//! NUMA (`bwscope numa`): where memory sits relative to the cores.
//!
//! Three modes share one placement protocol:
//! - **matrix** (default): for every cpu node × memory node, a team on the
//!   cpu node's cores with every buffer bound to the memory node by
//!   `mbind(MPOL_BIND)`; bandwidth per traffic mix, and the pointer-chase
//!   latency of one thread. After each cell `move_pages(…, NULL, …)` counts
//!   where the pages really are (`placement.verified_fraction`).
//! - **`--scenario write-pair`**: the AMD guide's experiment. Two write-only
//!   threads on node 0, memory local/local vs local/remote, same work,
//!   total time and percent difference; then the same with readers.
//! - **`--load N@NODE`**: N load threads stream at a controlled intensity
//!   (a delay after every 4 KiB) while a probe thread measures latency (or
//!   bandwidth): MLC's loaded-latency curve.
//!
//! On a one-node machine the matrix is 1×1 with a note, not an error.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::cli::{NumaArgs, OutputArgs, ProbeArg, ScenarioArg};
use crate::commands;
use crate::error::{UserError, EXIT_INTERRUPTED, EXIT_OK};
use crate::measure::team::{current_cpu, Team};
use crate::measure::{self, noise, stats, SampleOpts};
use crate::memory::{numa, PageKind};
use crate::platform::{topology, Host};
use crate::report::model::{Placement, Record, Run, Sample, Status, Units};
use crate::report::sink::Sink;
use crate::report::table;
use crate::report::warnings::Warning;
use crate::util::units::{self, format_bytes};

use super::chase;
use super::mix::{self, Mix, MixKernels};

/// Default injection steps: ns of delay after every 4 KiB a load thread
/// streams (0 = flat out; 20 µs ≈ 0.2 GB/s per thread).
pub const DEFAULT_DELAYS_NS: &[u64] = &[0, 100, 200, 500, 1000, 2000, 5000, 20000];

#[derive(Debug, Clone, serde::Serialize)]
#[serde(tag = "mode", rename_all = "kebab-case")]
pub enum Mode {
    Matrix {
        /// Traffic of every thread, one measurement per mix.
        mixes: Vec<Mix>,
        /// Per-thread roles instead (thread i runs roles[i]).
        roles: Option<Vec<Mix>>,
        latency: bool,
    },
    WritePair,
    Load {
        cpus: Vec<u32>,
        description: String,
        delays_ns: Vec<u64>,
        load_mix: Mix,
        probe_cpu: u32,
        probe: ProbeArg,
    },
}

/// Resolved options.
#[derive(Debug, Clone, serde::Serialize)]
pub struct NumaPlan {
    pub mode: Mode,
    pub cpu_nodes: Vec<u32>,
    pub memory_nodes: Vec<u32>,
    /// Cpus of a cell per cpu node.
    pub cell_cpus: Vec<(u32, Vec<u32>)>,
    pub size: u64,
    pub samples: usize,
    pub min_sample_ms: f64,
    pub memory: crate::cli::MemoryArg,
    pub numa_balancing: Option<u32>,
}

impl NumaPlan {
    fn opts(&self) -> SampleOpts {
        SampleOpts {
            samples: self.samples,
            min_sample: Duration::from_secs_f64(self.min_sample_ms / 1000.0),
        }
    }
}

fn parse_nodes(host: &Host, s: &str, flag: &'static str) -> Result<Vec<u32>, UserError> {
    let v = topology::parse_cpu_list(s).ok_or_else(|| {
        UserError::flag(
            flag,
            format!("'{}' is not a node list: write e.g. 0,1 or 0-3", s),
        )
    })?;
    if v.is_empty() {
        return Err(UserError::flag(flag, "the list is empty"));
    }
    let ids: Vec<u32> = host.nodes.iter().map(|n| n.id).collect();
    if let Some(bad) = v.iter().find(|n| !ids.contains(n)) {
        return Err(UserError::flag(
            flag,
            format!(
                "node {} does not exist (nodes here: {})",
                bad,
                topology::format_cpu_list(&ids)
            ),
        ));
    }
    Ok(v)
}

/// Allowed cpus of `node`, one per physical core first, then SMT siblings.
fn node_cpus(host: &Host, node: u32) -> Vec<u32> {
    let mut primary = Vec::new();
    let mut secondary = Vec::new();
    let mut cores = Vec::new();
    for c in host
        .cpus
        .iter()
        .filter(|c| c.node == node && host.allowed_cpus.contains(&c.id))
    {
        if cores.contains(&(c.package, c.core)) {
            secondary.push(c.id);
        } else {
            cores.push((c.package, c.core));
            primary.push(c.id);
        }
    }
    primary.extend(secondary);
    primary
}

fn physical_cores(host: &Host, node: u32) -> usize {
    let mut cores: Vec<(u32, u32)> = host
        .cpus
        .iter()
        .filter(|c| c.node == node && host.allowed_cpus.contains(&c.id))
        .map(|c| (c.package, c.core))
        .collect();
    cores.sort_unstable();
    cores.dedup();
    cores.len()
}

fn node_of(host: &Host, cpu: u32) -> u32 {
    host.cpus.iter().find(|c| c.id == cpu).map_or(0, |c| c.node)
}

/// Parse `N@K`, `N@nodeK` or `cpus:LIST` into load cpus.
pub fn parse_load(
    host: &Host,
    spec: &str,
    oversubscribe: bool,
) -> Result<(Vec<u32>, String), UserError> {
    let flag = "--load";
    let s = spec.trim();
    if let Some(list) = s.strip_prefix("cpus:") {
        let cpus = super::threads::parse_cpus(host, list, flag)?;
        let d = format!("cpus:{}", topology::format_cpu_list(&cpus));
        return Ok((cpus, d));
    }
    let bad = || {
        UserError::flag(
            flag,
            format!(
                "'{}' is not a load: write N@NODE (e.g. 2@0) or cpus:LIST (e.g. cpus:0-3)",
                s
            ),
        )
    };
    let (n, node) = s.split_once('@').ok_or_else(bad)?;
    let n: usize = n.trim().parse().map_err(|_| bad())?;
    let node: u32 = node
        .trim()
        .trim_start_matches("node")
        .parse()
        .map_err(|_| bad())?;
    if n == 0 {
        return Err(UserError::flag(flag, "needs at least 1 load thread"));
    }
    if !host.nodes.iter().any(|x| x.id == node) {
        let ids: Vec<u32> = host.nodes.iter().map(|n| n.id).collect();
        return Err(UserError::flag(
            flag,
            format!(
                "node {} does not exist (nodes here: {})",
                node,
                topology::format_cpu_list(&ids)
            ),
        ));
    }
    let avail = node_cpus(host, node);
    if avail.is_empty() {
        return Err(UserError::flag(
            flag,
            format!("node {} has no cpus this process may use", node),
        ));
    }
    if n > avail.len() && !oversubscribe {
        return Err(UserError::flag(
            flag,
            format!("{} load threads but node {} has {} usable cpus; use at most {} or add --oversubscribe", n, node, avail.len(), avail.len()),
        ));
    }
    let cpus: Vec<u32> = (0..n).map(|i| avail[i % avail.len()]).collect();
    Ok((cpus, format!("{}@node{}", n, node)))
}

/// The memory node of a loaded-latency run: the first of --memory-nodes,
/// else the probe cpu's node, else the load's node (everything local, as
/// MLC's loaded latency).
fn load_memory_node(host: &Host, a: &NumaArgs, load_cpus: &[u32]) -> u32 {
    a.memory_nodes
        .as_deref()
        .and_then(topology::parse_cpu_list)
        .and_then(|v| v.first().copied())
        .or_else(|| a.probe_cpu.map(|c| node_of(host, c)))
        .unwrap_or_else(|| node_of(host, load_cpus[0]))
}

pub fn plan(a: &NumaArgs, host: &Host) -> Result<NumaPlan, UserError> {
    let with_cpus: Vec<u32> = host
        .nodes
        .iter()
        .filter(|n| !node_cpus(host, n.id).is_empty())
        .map(|n| n.id)
        .collect();
    let with_memory: Vec<u32> = host
        .nodes
        .iter()
        .filter(|n| n.memory_bytes != Some(0))
        .map(|n| n.id)
        .collect();
    let explicit_cpus = match &a.cpus {
        Some(list) => Some(super::threads::parse_cpus(host, list, "--cpus")?),
        None => None,
    };
    let mut cpu_nodes = match (&a.cpu_nodes, &explicit_cpus) {
        (Some(s), _) => parse_nodes(host, s, "--cpu-nodes")?,
        (None, Some(c)) => {
            let mut v: Vec<u32> = c.iter().map(|&c| node_of(host, c)).collect();
            v.sort_unstable();
            v.dedup();
            v
        }
        (None, None) => with_cpus.clone(),
    };
    if let Some(bad) = cpu_nodes.iter().find(|n| !with_cpus.contains(n)) {
        return Err(UserError::flag(
            "--cpu-nodes",
            format!("node {} has no cpus this process may use", bad),
        ));
    }
    let memory_nodes = match &a.memory_nodes {
        Some(s) => parse_nodes(host, s, "--memory-nodes")?,
        None => with_memory,
    };
    if let Some(bad) = memory_nodes.iter().find(|n| {
        host.nodes
            .iter()
            .any(|x| x.id == **n && x.memory_bytes == Some(0))
    }) {
        return Err(UserError::flag(
            "--memory-nodes",
            format!("node {} has no memory", bad),
        ));
    }
    if matches!(a.scenario, Some(ScenarioArg::WritePair)) {
        // The pair runs on node 0 (the first cpu node).
        cpu_nodes.truncate(1);
    }
    // Cell cpus per cpu node.
    let mut cell_cpus = Vec::new();
    for &node in &cpu_nodes {
        let avail = node_cpus(host, node);
        let cpus = match &explicit_cpus {
            Some(c) => {
                if let Some(bad) = c.iter().find(|&&x| node_of(host, x) != node) {
                    if cpu_nodes.len() > 1 || a.cpu_nodes.is_some() {
                        return Err(UserError::flag(
                            "--cpus",
                            format!(
                                "cpu {} is on node {}, not on cpu node {}: give cpus of one node",
                                bad,
                                node_of(host, *bad),
                                node
                            ),
                        ));
                    }
                }
                if let Some(t) = a.threads {
                    if t != c.len() {
                        return Err(UserError::flag(
                            "--threads",
                            format!(
                                "{} threads but --cpus names {} cpus: give one or make them agree",
                                t,
                                c.len()
                            ),
                        ));
                    }
                }
                c.clone()
            }
            None => {
                let default = match a.scenario {
                    Some(ScenarioArg::WritePair) => 2,
                    None => physical_cores(host, node).max(1),
                };
                let n = a.threads.unwrap_or(default);
                if n == 0 {
                    return Err(UserError::flag("--threads", "must be at least 1"));
                }
                if n > avail.len() && !a.oversubscribe {
                    if a.scenario.is_some() && a.threads.is_none() {
                        // The scenario records a skip instead (see run_pair).
                        avail.clone()
                    } else {
                        return Err(UserError::flag(
                            "--threads",
                            format!(
                                "{} threads but node {} has {} usable cpus ({}); use at most {} or add --oversubscribe",
                                n,
                                node,
                                avail.len(),
                                topology::format_cpu_list(&avail),
                                avail.len()
                            ),
                        ));
                    }
                } else {
                    (0..n).map(|i| avail[i % avail.len()]).collect()
                }
            }
        };
        cell_cpus.push((node, cpus));
    }
    let size = match &a.size {
        Some(s) => units::parse_size(s).map_err(|e| UserError::flag("--size", e.to_string()))?,
        None => {
            // DRAM-sized in aggregate without growing with the thread
            // count: the sweep's top size split over the cell's threads,
            // but never below 64 MiB per thread.
            let threads = cell_cpus.iter().map(|c| c.1.len()).max().unwrap_or(1) as u64;
            (super::cache::default_top(host) / threads).max(64 << 20) / (2 << 20) * (2 << 20)
        }
    };
    if size < (2 * mix::CHUNK) as u64 {
        return Err(UserError::flag(
            "--size",
            format!(
                "must be at least {} per thread",
                format_bytes(2 * mix::CHUNK as u64)
            ),
        ));
    }
    let parse_mixes = |s: &str, flag: &'static str| -> Result<Vec<Mix>, UserError> {
        let s = if s.trim().eq_ignore_ascii_case("mlc") {
            mix::DEFAULT_MIXES
        } else {
            s
        };
        mix::parse_list(s).map_err(|m| UserError::flag(flag, m))
    };
    let mode = if let Some(ScenarioArg::WritePair) = a.scenario {
        Mode::WritePair
    } else if let Some(spec) = &a.load {
        let (cpus, description) = parse_load(host, spec, a.oversubscribe)?;
        let delays_ns = match &a.delays {
            Some(d) => d
                .split(',')
                .filter(|p| !p.trim().is_empty())
                .map(|p| p.trim().parse::<u64>().ok().filter(|&v| v <= 10_000_000))
                .collect::<Option<Vec<u64>>>()
                .filter(|v| !v.is_empty())
                .ok_or_else(|| UserError::flag("--delays", format!("'{}' is not a list of delays in ns (each ≤ 10000000): write e.g. 0,500,5000", d)))?,
            None => DEFAULT_DELAYS_NS.to_vec(),
        };
        let load_mix = match &a.load_mix {
            Some(m) => Mix::parse(m).map_err(|e| UserError::flag("--load-mix", e))?,
            None => Mix::READ,
        };
        let probe_cpu = match a.probe_cpu {
            Some(c) => {
                if !host.allowed_cpus.contains(&c) {
                    return Err(UserError::flag(
                        "--probe-cpu",
                        format!("cpu {} is offline or not allowed for this process", c),
                    ));
                }
                if cpus.contains(&c) {
                    return Err(UserError::flag(
                        "--probe-cpu",
                        format!("cpu {} also runs a load thread: pick another", c),
                    ));
                }
                c
            }
            None => {
                let mem_node = load_memory_node(host, a, &cpus);
                let mut pref = node_cpus(host, mem_node);
                pref.extend(host.allowed_cpus.iter().copied());
                pref.into_iter().find(|c| !cpus.contains(c)).ok_or_else(|| {
                    UserError::flag("--load", "the load takes every cpu: leave one for the probe thread (fewer load threads)")
                })?
            }
        };
        Mode::Load {
            cpus,
            description,
            delays_ns,
            load_mix,
            probe_cpu,
            probe: a.probe,
        }
    } else {
        let roles = match &a.roles {
            Some(r) => {
                let v = parse_mixes(r, "--roles")?;
                for (_, cpus) in &cell_cpus {
                    if v.len() != cpus.len() {
                        return Err(UserError::flag(
                            "--roles",
                            format!("{} roles for {} threads per cell: give one role per thread (or set --threads)", v.len(), cpus.len()),
                        ));
                    }
                }
                Some(v)
            }
            None => None,
        };
        let mixes = match &a.mix {
            Some(m) => parse_mixes(m, "--mix")?,
            None => vec![Mix::READ],
        };
        Mode::Matrix {
            mixes,
            roles,
            latency: !a.no_latency,
        }
    };
    // The load mode uses one memory node for probe and load alike.
    let memory_nodes = match &mode {
        Mode::Load { cpus, .. } => vec![load_memory_node(host, a, cpus)],
        _ => memory_nodes,
    };
    let threads_total = match &mode {
        Mode::Load { cpus, .. } => cpus.len() + 1,
        _ => cell_cpus.iter().map(|c| c.1.len()).max().unwrap_or(1) + 1,
    };
    super::check_memory((size + (4 << 20)) * threads_total as u64, "--size")?;
    let o = super::sample_opts(&a.sample, SampleOpts::default())?;
    Ok(NumaPlan {
        mode,
        cpu_nodes,
        memory_nodes,
        cell_cpus,
        size,
        samples: o.samples,
        min_sample_ms: o.min_sample.as_secs_f64() * 1000.0,
        memory: a.memory,
        numa_balancing: host.env.numa_balancing,
    })
}

/// Fraction of all pages of the team's buffers on `intended[i]`, and the
/// fraction per worker.
fn verify(team: &Team, intended: &[u32], ws: usize) -> Result<(f64, Vec<f64>), String> {
    let mut on = 0u64;
    let mut total = 0u64;
    let mut each = Vec::new();
    for (i, &node) in intended.iter().enumerate() {
        let c = team.inspect(i, move |b| numa::census(b.as_ptr(), ws.min(b.len())))?;
        on += c.on_node(node);
        total += c.pages;
        each.push(c.fraction_on(node));
    }
    Ok((
        if total > 0 {
            on as f64 / total as f64
        } else {
            0.0
        },
        each,
    ))
}

/// Fixed-work samples of per-thread mixes on `team`: aggregate samples
/// (all bytes / earliest start → latest end), per-thread best GB/s, the
/// largest start skew, and the passes per sample.
struct MixMeasured {
    samples: Vec<Sample>,
    per_thread_best: Vec<f64>,
    max_skew: f64,
    reps: u64,
    read_per_pass: u64,
    written_per_pass: u64,
    noise: Option<crate::report::model::Noise>,
}

fn measure_mix(
    team: &Team,
    ks: MixKernels,
    mixes: &[Mix],
    ws: usize,
    reps: Option<u64>,
    opts: &SampleOpts,
    stop: &AtomicBool,
) -> Option<MixMeasured> {
    let reps = match reps {
        Some(r) => {
            // Warm-up at the given work.
            mix::run_fixed(team, ks, mixes, ws, r);
            r
        }
        None => mix::calibrate(team, ks, mixes, ws, opts.min_sample, stop)?,
    };
    let before = noise::snapshot();
    let mut samples = Vec::new();
    let mut per_thread_best = vec![0.0f64; team.threads()];
    let mut max_skew: f64 = 0.0;
    let mut rw = (0, 0);
    for _ in 0..opts.samples.max(1) {
        if stop.load(Ordering::Relaxed) {
            return None;
        }
        let runs = mix::run_fixed(team, ks, mixes, ws, reps);
        let (secs, skew) = mix::span(&runs);
        max_skew = max_skew.max(skew);
        let bytes: u64 = runs.iter().map(|r| r.bytes()).sum();
        samples.push(Sample {
            seconds: secs,
            bytes,
        });
        for (i, r) in runs.iter().enumerate() {
            per_thread_best[i] = per_thread_best[i].max(r.bytes() as f64 / r.seconds() / 1e9);
        }
        rw = (runs[0].bytes_read / reps, runs[0].bytes_written / reps);
    }
    let noise = match (before, noise::snapshot()) {
        (Some(a), Some(b)) => Some(noise::between(&a, &b)),
        _ => None,
    };
    Some(MixMeasured {
        samples,
        per_thread_best,
        max_skew,
        reps,
        read_per_pass: rw.0,
        written_per_pass: rw.1,
        noise,
    })
}

/// A record for one measured mix on one team.
fn mix_record(
    kernel: String,
    mixes: &[Mix],
    ks: &MixKernels,
    m: &MixMeasured,
    host: &Host,
    cpus: &[u32],
    ws: u64,
) -> Record {
    let rates = measure::gbps(&m.samples);
    let uniform = mixes.iter().all(|x| *x == mixes[0]);
    let op = if !uniform {
        "mix"
    } else {
        match (mixes[0].reads, mixes[0].writes) {
            (_, 0) => "read",
            (0, _) => "write",
            _ => "mix",
        }
    };
    let mut r = Record {
        suite: "numa".into(),
        kernel,
        op: op.into(),
        width_bits: Some(ks.read.width_bits),
        nontemporal: Some(mixes.iter().any(|x| x.nt)),
        pattern: Some("seq".into()),
        size_bytes: Some(ws),
        threads: cpus.len() as u32,
        cpus: cpus.to_vec(),
        regime: Some(host.regime(ws, cpus.len() as u32)),
        bytes_read_per_pass: uniform.then_some(m.read_per_pass),
        bytes_written_per_pass: uniform.then_some(m.written_per_pass),
        payload_bytes_per_pass: uniform.then_some(m.read_per_pass + m.written_per_pass),
        reps_per_sample: Some(m.reps),
        samples: m.samples.clone(),
        gbps: stats::summarize(&rates, true),
        payload_gbps: stats::summarize(&rates, true),
        per_thread_gbps: if cpus.len() > 1 {
            m.per_thread_best.clone()
        } else {
            Vec::new()
        },
        noise: m.noise,
        ..Record::default()
    };
    let kernels: Vec<&str> = {
        let mut v: Vec<&str> = mixes.iter().flat_map(|x| ks.describe(x)).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    r.extra.insert(
        "kernels".into(),
        serde_json::to_value(kernels).expect("plain"),
    );
    r.extra.insert(
        "mix".into(),
        serde_json::to_value(mixes.iter().map(|x| x.name()).collect::<Vec<_>>()).expect("plain"),
    );
    r.extra
        .insert("chunk_bytes".into(), (mix::CHUNK as u64).into());
    if let Some(g) = r.gbps {
        if g.cv > crate::report::warnings::limits::CV {
            r.warnings.push(Warning::HighCv { cv: g.cv });
        }
    }
    r
}

fn mix_kernel_name(mixes: &[Mix], roles: bool) -> String {
    if roles {
        format!(
            "roles_{}",
            mixes.iter().map(|m| m.name()).collect::<Vec<_>>().join("+")
        )
    } else {
        format!("mix_{}", mixes[0].name())
    }
}

fn placement(
    cpu_node: u32,
    memory_node: u32,
    verified: Option<f64>,
    skew: Option<f64>,
) -> Placement {
    Placement {
        cpu_node: Some(cpu_node),
        memory_node: Some(memory_node),
        verified_fraction: verified,
        load: None,
        start_skew_seconds: skew,
    }
}

/// Skipped record carrying the cell it belongs to.
fn skipped_cell(kernel: &str, cpu_node: u32, memory_node: u32, reason: String) -> Record {
    let mut r = Record::skipped("numa", kernel, reason);
    r.placement = Some(placement(cpu_node, memory_node, None, None));
    r.extra.insert("case_cpu_node".into(), cpu_node.into());
    r.extra
        .insert("case_memory_node".into(), memory_node.into());
    r
}

fn page_kind(p: &NumaPlan) -> PageKind {
    super::cache::page_kind(p.memory)
}

/// Set on the first refused binding, so a run where nothing could be
/// placed ends with a user error naming the flag.
struct Refusals {
    any_ok: bool,
    first: Option<String>,
}

fn observed_cpus(team: &Team) -> serde_json::Value {
    let v: Vec<Option<u32>> = (0..team.threads())
        .map(|i| team.inspect(i, |_| current_cpu()))
        .collect();
    serde_json::to_value(v).expect("plain")
}

/// The matrix. Returns true when interrupted.
fn run_matrix(
    plan: &NumaPlan,
    host: &Host,
    sink: &mut Sink,
    stop: &'static AtomicBool,
    refusals: &mut Refusals,
) -> anyhow::Result<bool> {
    let Mode::Matrix {
        mixes,
        roles,
        latency,
    } = &plan.mode
    else {
        unreachable!("run_matrix on a matrix plan")
    };
    let ks = MixKernels::widest(host);
    let ws = plan.size as usize;
    let opts = plan.opts();
    let page = page_kind(plan);
    // One measurement per mix, or one with per-thread roles.
    let sets: Vec<(String, Option<Mix>)> = match roles {
        Some(r) => vec![(mix_kernel_name(r, true), None)],
        None => mixes
            .iter()
            .map(|m| (mix_kernel_name(&[*m], false), Some(*m)))
            .collect(),
    };
    let cells = plan.cell_cpus.len() * plan.memory_nodes.len();
    let bar = crate::report::progress::bar(cells as u64, sink.stdout_taken());
    for (cpu_node, cpus) in &plan.cell_cpus {
        for &mem in &plan.memory_nodes {
            bar.set_message(format!("cpu node {} × memory node {}", cpu_node, mem));
            let migrated_before = numa::pages_migrated();
            let intended = vec![mem; cpus.len()];
            let need = (ws as u64 + 8192) * cpus.len() as u64;
            if let Err(reason) = numa::check_node_room(mem, need) {
                for (name, _) in &sets {
                    sink.push(skipped_cell(name, *cpu_node, mem, reason.clone()))?;
                }
                bar.inc(1);
                continue;
            }
            let team = match Team::spawn_bound(cpus, ws + 8192, page, Some(&intended)) {
                Ok(t) => t,
                Err(e) => {
                    let reason = format!("cannot place memory on node {}: {}", mem, e);
                    refusals.first.get_or_insert(e.to_string());
                    for (name, _) in &sets {
                        sink.push(skipped_cell(name, *cpu_node, mem, reason.clone()))?;
                    }
                    bar.inc(1);
                    continue;
                }
            };
            refusals.any_ok = true;
            let observed = observed_cpus(&team);
            let mem_info = team.memory().first().cloned();
            let mut recs = Vec::new();
            for (name, m) in &sets {
                let per_thread: Vec<Mix> = match (m, roles) {
                    (Some(m), _) => vec![*m; cpus.len()],
                    (None, Some(r)) => r.clone(),
                    (None, None) => unreachable!("a mix or roles"),
                };
                if mix::pass_bytes(&per_thread[0], ws).is_none() {
                    sink.push(skipped_cell(
                        name,
                        *cpu_node,
                        mem,
                        format!(
                            "--size {} holds less than one group of 64 KiB chunks of this mix",
                            format_bytes(ws as u64)
                        ),
                    ))?;
                    continue;
                }
                let Some(mm) = measure_mix(&team, ks, &per_thread, ws, None, &opts, stop) else {
                    bar.finish_and_clear();
                    return Ok(true);
                };
                let mut r = mix_record(name.clone(), &per_thread, &ks, &mm, host, cpus, ws as u64);
                r.memory = mem_info.clone();
                r.placement = Some(placement(
                    *cpu_node,
                    mem,
                    None,
                    (cpus.len() > 1).then_some(mm.max_skew),
                ));
                r.extra.insert("case_cpu_node".into(), (*cpu_node).into());
                r.extra.insert("case_memory_node".into(), mem.into());
                if let Some(m) = m {
                    r.extra.insert("case_mix".into(), m.name().into());
                } else {
                    r.extra.insert("case_roles".into(), name.clone().into());
                }
                r.extra.insert("observed_cpus".into(), observed.clone());
                recs.push(r);
            }
            // Where the pages are after the measurement.
            let verified = verify(&team, &intended, ws);
            let migrated = match (migrated_before, numa::pages_migrated()) {
                (Some(a), Some(b)) => Some(b.saturating_sub(a)),
                _ => None,
            };
            drop(team);
            for mut r in recs {
                apply_verification(&mut r, &verified, migrated);
                sink.push(r)?;
            }
            if *latency {
                if let Some(r) = latency_cell(plan, host, cpus[0], *cpu_node, mem, stop, refusals)?
                {
                    sink.push(r)?;
                } else {
                    bar.finish_and_clear();
                    return Ok(true);
                }
            }
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    Ok(false)
}

fn apply_verification(
    r: &mut Record,
    verified: &Result<(f64, Vec<f64>), String>,
    migrated: Option<u64>,
) {
    match verified {
        Ok((f, each)) => {
            if let Some(p) = r.placement.as_mut() {
                p.verified_fraction = Some(*f);
            }
            r.extra.insert(
                "verified_fraction_per_thread".into(),
                serde_json::to_value(each).expect("plain"),
            );
            if *f < 0.999 {
                r.warnings.push(Warning::Other {
                    message: format!("only {:.1} % of the pages are on the intended node after the measurement", f * 100.0),
                    hint: "memory was short on that node or NUMA balancing moved pages; check numastat and kernel.numa_balancing".into(),
                });
            }
        }
        Err(e) => {
            r.extra.insert("verify_error".into(), e.clone().into());
        }
    }
    r.extra.insert(
        "numa_pages_migrated".into(),
        migrated.map_or(serde_json::Value::Null, Into::into),
    );
}

/// One thread's pointer-chase latency with memory on `mem`. `Ok(None)`
/// when interrupted.
fn latency_cell(
    plan: &NumaPlan,
    host: &Host,
    cpu: u32,
    cpu_node: u32,
    mem: u32,
    stop: &'static AtomicBool,
    refusals: &mut Refusals,
) -> anyhow::Result<Option<Record>> {
    let ws = plan.size as usize;
    if let Err(reason) = numa::check_node_room(mem, ws as u64) {
        return Ok(Some(skipped_cell(CHASE_KERNEL, cpu_node, mem, reason)));
    }
    let team = match Team::spawn_bound(&[cpu], ws, page_kind(plan), Some(&[mem])) {
        Ok(t) => t,
        Err(e) => {
            refusals.first.get_or_insert(e.to_string());
            return Ok(Some(skipped_cell(
                CHASE_KERNEL,
                cpu_node,
                mem,
                format!("cannot place memory on node {}: {}", mem, e),
            )));
        }
    };
    let opts = plan.opts();
    let lat = team.inspect(0, move |b| {
        // SAFETY: the worker's own buffer, 2 MiB aligned.
        let start = unsafe { chase::build(b.as_mut_ptr(), ws.min(b.len()), 0xc4a5e) };
        chase::measure(start, opts.samples, opts.min_sample, stop)
    });
    let Some(lat) = lat else {
        return Ok(None);
    };
    let verified = verify(&team, &[mem], ws);
    let mut r = latency_record(&lat, host, &[cpu], ws as u64);
    r.memory = team.memory().first().cloned();
    r.placement = Some(placement(cpu_node, mem, None, None));
    r.extra.insert("case_cpu_node".into(), cpu_node.into());
    r.extra.insert("case_memory_node".into(), mem.into());
    r.extra.insert("observed_cpus".into(), observed_cpus(&team));
    apply_verification(&mut r, &verified, None);
    Ok(Some(r))
}

/// Kernel name of the chase records.
pub const CHASE_KERNEL: &str = "chase_64_scalar";

fn latency_record(lat: &chase::Latency, host: &Host, cpus: &[u32], ws: u64) -> Record {
    let mut r = Record {
        suite: "numa".into(),
        kernel: CHASE_KERNEL.into(),
        op: "latency".into(),
        width_bits: Some(64),
        nontemporal: Some(false),
        pattern: Some("chase".into()),
        size_bytes: Some(ws),
        threads: cpus.len() as u32,
        cpus: cpus.to_vec(),
        regime: Some(host.regime(ws, 1)),
        ..Record::default()
    };
    r.extra.insert(
        "latency_ns".into(),
        serde_json::to_value(lat.stats).expect("plain"),
    );
    r.extra.insert(
        "latency_ns_samples".into(),
        serde_json::to_value(&lat.ns).expect("plain"),
    );
    r.extra
        .insert("loads_per_sample".into(), lat.loads_per_sample.into());
    r
}

/// The write-pair scenario. Returns true when interrupted.
fn run_pair(
    plan: &NumaPlan,
    host: &Host,
    sink: &mut Sink,
    stop: &AtomicBool,
    refusals: &mut Refusals,
) -> anyhow::Result<bool> {
    let ks = MixKernels::widest(host);
    let ws = plan.size as usize;
    let opts = plan.opts();
    let (node, cpus) = plan.cell_cpus[0].clone();
    let remotes: Vec<u32> = plan
        .memory_nodes
        .iter()
        .copied()
        .filter(|&m| m != node)
        .collect();
    for (pair, m) in [("write_pair", Mix::WRITE), ("read_pair", Mix::READ)] {
        if cpus.len() < 2 {
            sink.push(skipped_cell(
                pair,
                node,
                node,
                format!(
                    "needs 2 cpus on node {}; it has {} usable (add --oversubscribe to share one)",
                    node,
                    cpus.len()
                ),
            ))?;
            continue;
        }
        let pair_cpus = cpus[..2].to_vec();
        let mut cases: Vec<Vec<u32>> = vec![vec![node, node]];
        cases.extend(remotes.iter().map(|&r| vec![node, r]));
        let mut reps: Option<u64> = None;
        let mut local_median: Option<f64> = None;
        for nodes in cases {
            let label = format!("{}/{}", nodes[0], nodes[1]);
            let per_node =
                |n: u32| nodes.iter().filter(|&&x| x == n).count() as u64 * (ws as u64 + 8192);
            if let Some(reason) = nodes
                .iter()
                .find_map(|&n| numa::check_node_room(n, per_node(n)).err())
            {
                let mut r = skipped_cell(pair, node, nodes[1], reason);
                r.extra.insert("case_memory_nodes".into(), label.into());
                sink.push(r)?;
                continue;
            }
            let team = match Team::spawn_bound(&pair_cpus, ws + 8192, page_kind(plan), Some(&nodes))
            {
                Ok(t) => t,
                Err(e) => {
                    refusals.first.get_or_insert(e.to_string());
                    let mut r = skipped_cell(
                        pair,
                        node,
                        nodes[1],
                        format!("cannot place memory on nodes {}: {}", label, e),
                    );
                    r.extra.insert("case_memory_nodes".into(), label.into());
                    sink.push(r)?;
                    continue;
                }
            };
            refusals.any_ok = true;
            let per_thread = vec![m; 2];
            // The same work in every case: passes calibrated on local/local.
            let Some(mm) = measure_mix(&team, ks, &per_thread, ws, reps, &opts, stop) else {
                return Ok(true);
            };
            reps.get_or_insert(mm.reps);
            let verified = verify(&team, &nodes, ws);
            let observed = observed_cpus(&team);
            drop(team);
            let secs: Vec<f64> = mm.samples.iter().map(|s| s.seconds).collect();
            let t = stats::summarize(&secs, false).expect("samples");
            let pct = local_median.map(|l| (t.median / l - 1.0) * 100.0);
            local_median.get_or_insert(t.median);
            let mut r = mix_record(
                pair.into(),
                &per_thread,
                &ks,
                &mm,
                host,
                &pair_cpus,
                ws as u64,
            );
            r.memory = None;
            r.placement = Some(placement(node, nodes[1], None, Some(mm.max_skew)));
            apply_verification(&mut r, &verified, None);
            let e = &mut r.extra;
            e.insert("case_scenario".into(), "write-pair".into());
            e.insert("case_memory_nodes".into(), label.into());
            e.insert(
                "memory_nodes".into(),
                serde_json::to_value(&nodes).expect("plain"),
            );
            e.insert(
                "total_seconds".into(),
                serde_json::to_value(t).expect("plain"),
            );
            e.insert(
                "percent_vs_local".into(),
                pct.map_or(serde_json::Value::Null, Into::into),
            );
            e.insert("observed_cpus".into(), observed);
            sink.push(r)?;
        }
        if remotes.is_empty() {
            let mut r = skipped_cell(
                pair,
                node,
                node,
                "local/remote needs a second NUMA node with memory; this machine has one (only local/local was measured)".into(),
            );
            r.extra.insert(
                "case_memory_nodes".into(),
                format!("{}/remote", node).into(),
            );
            sink.push(r)?;
        }
    }
    Ok(false)
}

/// The loaded-latency curve. Returns true when interrupted.
fn run_load(
    plan: &NumaPlan,
    host: &Host,
    sink: &mut Sink,
    stop: &'static AtomicBool,
) -> anyhow::Result<bool> {
    let Mode::Load {
        cpus,
        description,
        delays_ns,
        load_mix,
        probe_cpu,
        probe,
    } = &plan.mode
    else {
        unreachable!("run_load on a load plan")
    };
    let ks = MixKernels::widest(host);
    let ws = plan.size as usize;
    let opts = plan.opts();
    let mem = plan.memory_nodes[0];
    let page = page_kind(plan);
    let probe_node = node_of(host, *probe_cpu);
    numa::check_node_room(mem, (ws as u64 + 8192) * (cpus.len() as u64 + 1))
        .map_err(|m| UserError::flag("--size", m))?;
    let mut load_team = Some(
        Team::spawn_bound(cpus, ws, page, Some(&vec![mem; cpus.len()])).map_err(|e| {
            UserError::flag(
                "--memory-nodes",
                format!("cannot place the load's memory on node {}: {}", mem, e),
            )
        })?,
    );
    let probe_team =
        Team::spawn_bound(&[*probe_cpu], ws + 8192, page, Some(&[mem])).map_err(|e| {
            UserError::flag(
                "--memory-nodes",
                format!("cannot place the probe's memory on node {}: {}", mem, e),
            )
        })?;
    let chase_start = if *probe == ProbeArg::Latency {
        Some(probe_team.inspect(0, move |b| {
            // SAFETY: the worker's own buffer.
            unsafe { chase::build(b.as_mut_ptr(), ws, 0x10ad) as usize }
        }))
    } else {
        None
    };
    let read = ks.read;
    // None = the unloaded baseline, then each delay.
    let steps: Vec<Option<u64>> = std::iter::once(None)
        .chain(delays_ns.iter().map(|&d| Some(d)))
        .collect();
    let bar = crate::report::progress::bar(steps.len() as u64, sink.stdout_taken());
    for step in steps {
        bar.set_message(match step {
            None => "unloaded".to_string(),
            Some(d) => format!("delay {} ns", d),
        });
        let load_stop = Arc::new(AtomicBool::new(false));
        let started = Arc::new(AtomicUsize::new(0));
        let handle = step.map(|d| {
            let team = load_team.take().expect("load team present");
            let (ls, st) = (load_stop.clone(), started.clone());
            let m = *load_mix;
            std::thread::spawn(move || {
                let inj = team.run_each(move |_, b| {
                    // SAFETY: the worker's own buffer.
                    unsafe {
                        mix::stream_until(
                            &ks,
                            &m,
                            b.as_mut_ptr(),
                            b.len(),
                            Duration::from_nanos(d),
                            &ls,
                            &st,
                        )
                    }
                });
                (team, inj)
            })
        });
        if handle.is_some() {
            while started.load(Ordering::Acquire) < cpus.len() {
                std::thread::yield_now();
            }
            // Let the load reach steady state.
            std::thread::sleep(Duration::from_millis(20));
        }
        let lat = chase_start.map(|s| {
            probe_team.inspect(0, move |_| {
                chase::measure(s as *const u8, opts.samples, opts.min_sample, stop)
            })
        });
        let bw = if *probe == ProbeArg::Bandwidth {
            Some(measure::measure_case(&probe_team, read, ws, &opts, stop))
        } else {
            None
        };
        load_stop.store(true, Ordering::Release);
        let injected = handle.map(|h| {
            let (team, inj) = h.join().expect("load thread");
            load_team = Some(team);
            inj
        });
        let interrupted = matches!(lat, Some(None)) || matches!(bw, Some(Err(_)));
        if interrupted {
            bar.finish_and_clear();
            return Ok(true);
        }
        let injected_gbps = injected.as_ref().map(|v| {
            v.iter()
                .map(|i| i.bytes as f64 / i.seconds.max(1e-9) / 1e9)
                .sum::<f64>()
        });
        let mut r = match (lat.flatten(), bw) {
            (Some(l), _) => latency_record(&l, host, &[*probe_cpu], ws as u64),
            (None, Some(Ok(Some(m)))) => {
                super::bandwidth_record("numa", read, &m, host, &[*probe_cpu])
            }
            _ => Record::skipped(
                "numa",
                read.name,
                "working set too small for the probe kernel",
            ),
        };
        r.kernel = format!("loaded_{}", r.kernel);
        let load_desc = match step {
            None => "none".to_string(),
            Some(d) => format!("{} {} delay={}ns/4KiB", description, load_mix.name(), d),
        };
        r.placement = Some(Placement {
            cpu_node: Some(probe_node),
            memory_node: Some(mem),
            verified_fraction: None,
            load: Some(load_desc),
            start_skew_seconds: None,
        });
        let e = &mut r.extra;
        e.insert(
            "case_delay_ns".into(),
            step.map_or(serde_json::Value::Null, Into::into),
        );
        e.insert("case_load".into(), description.clone().into());
        e.insert(
            "injected_gbps".into(),
            injected_gbps.map_or(serde_json::Value::Null, Into::into),
        );
        e.insert(
            "load_threads".into(),
            (if step.is_some() { cpus.len() } else { 0 }).into(),
        );
        e.insert(
            "load_cpus".into(),
            serde_json::to_value(cpus).expect("plain"),
        );
        e.insert("load_mix".into(), load_mix.name().into());
        let verified = verify(&probe_team, &[mem], ws);
        apply_verification(&mut r, &verified, None);
        sink.push(r)?;
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(false)
}

pub fn run(
    plan: &NumaPlan,
    host: &Host,
    sink: &mut Sink,
    stop: &'static AtomicBool,
) -> anyhow::Result<bool> {
    let mut refusals = Refusals {
        any_ok: false,
        first: None,
    };
    let interrupted = match plan.mode {
        Mode::Matrix { .. } => run_matrix(plan, host, sink, stop, &mut refusals)?,
        Mode::WritePair => run_pair(plan, host, sink, stop, &mut refusals)?,
        Mode::Load { .. } => return run_load(plan, host, sink, stop),
    };
    if !interrupted && !refusals.any_ok {
        if let Some(e) = refusals.first {
            // Nothing could be placed at all: the flag is wrong for this
            // machine, not one cell. Records are already written.
            return Err(UserError::flag(
                "--memory-nodes",
                format!(
                    "no cell could be placed: {}",
                    e.trim_start_matches("--memory-nodes: ")
                ),
            )
            .into());
        }
    }
    Ok(interrupted)
}

fn cell<'a>(recs: &[&'a Record], kernel: &str, c: u32, m: u32) -> Option<&'a Record> {
    recs.iter()
        .find(|r| {
            r.kernel == kernel
                && r.placement.as_ref().and_then(|p| p.cpu_node) == Some(c)
                && r.placement.as_ref().and_then(|p| p.memory_node) == Some(m)
        })
        .copied()
}

fn rate(g: f64, u: Units) -> String {
    let v = g * 1e9 / u.bytes_per_unit();
    if v >= 100.0 {
        format!("{:.0}", v)
    } else if v >= 10.0 {
        format!("{:.1}", v)
    } else {
        format!("{:.2}", v)
    }
}

fn latency_of(r: &Record) -> Option<crate::report::model::Stats> {
    r.extra
        .get("latency_ns")
        .and_then(|v| serde_json::from_value(v.clone()).ok())
}

/// Matrices, scenario and load tables, then notes.
pub fn render(run: &Run) -> String {
    let u = run.display_units;
    let recs: Vec<&Record> = run.records.iter().filter(|r| r.suite == "numa").collect();
    let mut out = String::new();
    let opts = &run.options;
    let cpu_nodes: Vec<u32> = serde_json::from_value(opts["cpu_nodes"].clone()).unwrap_or_default();
    let mem_nodes: Vec<u32> =
        serde_json::from_value(opts["memory_nodes"].clone()).unwrap_or_default();
    let mode = opts["mode"]["mode"].as_str().unwrap_or("matrix");
    let mark = |r: &Record| match r.placement.as_ref().and_then(|p| p.verified_fraction) {
        Some(f) if f < 0.999 => format!(" ({:.0}% placed)", f * 100.0),
        _ => String::new(),
    };
    if mode == "matrix" {
        let mut kernels: Vec<String> = Vec::new();
        for r in &recs {
            if !kernels.contains(&r.kernel) {
                kernels.push(r.kernel.clone());
            }
        }
        for k in &kernels {
            let lat = k == CHASE_KERNEL;
            let title = if lat {
                "latency, ns per dependent load (pointer chase, 1 thread), best/median".to_string()
            } else {
                let threads = recs
                    .iter()
                    .find(|r| &r.kernel == k)
                    .map_or(0, |r| r.threads);
                format!(
                    "{}: bandwidth {} best/median, {} thread(s) per cell",
                    k.trim_start_matches("mix_"),
                    u.label(),
                    threads
                )
            };
            let _ = writeln_s(
                &mut out,
                &format!("{} (rows: cpu node, columns: memory node)", title),
            );
            let mut rows = vec![{
                let mut h = vec!["cpu \\ mem".to_string(), String::new()];
                h.extend(mem_nodes.iter().map(|m| format!("node {}", m)));
                h
            }];
            for &c in &cpu_nodes {
                let mut row = vec![format!("node {}", c), String::new()];
                for &m in &mem_nodes {
                    row.push(match cell(&recs, k, c, m) {
                        Some(r) if r.status == Status::Ok => {
                            if lat {
                                latency_of(r).map_or("-".into(), |s| {
                                    format!("{:.1}/{:.1}{}", s.best, s.median, mark(r))
                                })
                            } else {
                                r.gbps.map_or("-".into(), |g| {
                                    format!("{}/{}{}", rate(g.best, u), rate(g.median, u), mark(r))
                                })
                            }
                        }
                        Some(_) => "skipped".into(),
                        None => "-".into(),
                    });
                }
                rows.push(row);
            }
            out.push_str(&table::grid(&rows));
            out.push('\n');
        }
    } else if mode == "write-pair" {
        let _ = writeln_s(
            &mut out,
            "write-pair: two threads on node 0, same work in every case; total time = first start → last end",
        );
        let mut rows = vec![vec![
            "pair".to_string(),
            "memory (t0/t1)".into(),
            "total s best".into(),
            "median".into(),
            format!("{} best", u.label()),
            "vs local/local".into(),
            "placed".into(),
        ]];
        for r in recs.iter().filter(|r| r.status == Status::Ok) {
            let t: Option<crate::report::model::Stats> = r
                .extra
                .get("total_seconds")
                .and_then(|v| serde_json::from_value(v.clone()).ok());
            rows.push(vec![
                r.kernel.trim_end_matches("_pair").to_string(),
                r.extra
                    .get("case_memory_nodes")
                    .and_then(|v| v.as_str())
                    .unwrap_or("?")
                    .to_string(),
                t.map_or("-".into(), |t| format!("{:.4}", t.best)),
                t.map_or("-".into(), |t| format!("{:.4}", t.median)),
                r.gbps.map_or("-".into(), |g| rate(g.best, u)),
                r.extra
                    .get("percent_vs_local")
                    .and_then(|v| v.as_f64())
                    .map_or("(baseline)".into(), |p| format!("{:+.1} %", p)),
                r.placement
                    .as_ref()
                    .and_then(|p| p.verified_fraction)
                    .map_or("-".into(), |f| format!("{:.3}", f)),
            ]);
        }
        out.push_str(&table::grid(&rows));
        out.push('\n');
    } else {
        let probe_lat = recs.iter().any(|r| r.op == "latency");
        let _ = writeln_s(
            &mut out,
            &format!(
                "loaded {}: probe on cpu {}, memory on node {}, load {} (delay after every 4 KiB each load thread streams)",
                if probe_lat { "latency" } else { "bandwidth" },
                opts["mode"]["probe_cpu"],
                mem_nodes.first().map_or("?".into(), |n| n.to_string()),
                opts["mode"]["description"].as_str().unwrap_or("?")
            ),
        );
        let mut rows = vec![vec![
            "delay ns".to_string(),
            "".into(),
            format!("injected {}", u.label()),
            if probe_lat {
                "latency ns best".into()
            } else {
                format!("probe {} best", u.label())
            },
            "median".into(),
        ]];
        for r in recs.iter().filter(|r| r.status == Status::Ok) {
            let (b, m) = if probe_lat {
                latency_of(r).map_or(("-".into(), "-".into()), |s| {
                    (format!("{:.1}", s.best), format!("{:.1}", s.median))
                })
            } else {
                r.gbps.map_or(("-".into(), "-".into()), |g| {
                    (rate(g.best, u), rate(g.median, u))
                })
            };
            rows.push(vec![
                r.extra
                    .get("case_delay_ns")
                    .and_then(|v| v.as_u64())
                    .map_or("unloaded".into(), |d| d.to_string()),
                String::new(),
                r.extra
                    .get("injected_gbps")
                    .and_then(|v| v.as_f64())
                    .map_or("0".into(), |g| rate(g, u)),
                b,
                m,
            ]);
        }
        out.push_str(&table::grid(&rows));
        out.push('\n');
    }
    // Distances and notes.
    let nodes = &run.host.nodes;
    if !nodes.is_empty() {
        let mut rows = vec![{
            let mut h = vec!["distance".to_string(), String::new()];
            h.extend(nodes.iter().map(|n| format!("node {}", n.id)));
            h
        }];
        for n in nodes {
            let mut row = vec![format!("node {}", n.id), String::new()];
            row.extend(n.distances.iter().map(|d| d.to_string()));
            rows.push(row);
        }
        out.push_str(&table::grid(&rows));
    }
    let _ = writeln_s(
        &mut out,
        &format!(
            "kernel.numa_balancing = {}; memory bound with mbind(MPOL_BIND), pages verified with move_pages after each cell",
            run.host.env.numa_balancing.map_or("unknown".into(), |v| v.to_string())
        ),
    );
    if nodes.len() == 1 {
        let _ = writeln_s(
            &mut out,
            "note: this machine has one NUMA node, so the matrix is 1×1 (local only).",
        );
    }
    if mode == "matrix" && !recs.iter().any(|r| r.kernel == CHASE_KERNEL) {
        let _ = writeln_s(
            &mut out,
            "note: latency matrix not measured (--no-latency): bandwidth only.",
        );
    }
    out.push_str(&super::threads::footer(run));
    out
}

fn writeln_s(out: &mut String, s: &str) -> std::fmt::Result {
    out.push_str(s);
    out.push('\n');
    Ok(())
}

/// `bwscope numa`.
pub fn command(a: &NumaArgs, out: &OutputArgs) -> anyhow::Result<u8> {
    let host = Host::detect(false);
    let plan = plan(a, &host)?;
    let mut sink = commands::start_run("numa", serde_json::to_value(&plan)?, out, host.clone())?;
    let stop = crate::util::signal::install();
    let result = run(&plan, &host, &mut sink, stop);
    let interrupted = match &result {
        Ok(i) => *i,
        Err(_) => false,
    };
    let taken = sink.stdout_taken();
    let finished = sink.finish(interrupted)?;
    let interrupted = result?;
    if !taken {
        print!("{}", render(&finished));
    }
    if interrupted {
        eprintln!("interrupted: {} records kept", finished.records.len());
        return Ok(EXIT_INTERRUPTED);
    }
    Ok(EXIT_OK)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::topology::{Cpu, Node};

    fn two_node_host() -> Host {
        let mut h = Host::default();
        for (id, node) in [(0u32, 0u32), (1, 0), (2, 1), (3, 1)] {
            h.cpus.push(Cpu {
                id,
                core: id,
                package: node,
                node,
                siblings: vec![id],
            });
            h.allowed_cpus.push(id);
        }
        for n in 0..2u32 {
            h.nodes.push(Node {
                id: n,
                cpus: vec![2 * n, 2 * n + 1],
                memory_bytes: Some(1 << 30),
                distances: if n == 0 { vec![10, 20] } else { vec![20, 10] },
            });
        }
        h
    }

    #[test]
    fn load_specs() {
        let h = two_node_host();
        assert_eq!(parse_load(&h, "2@1", false).unwrap().0, vec![2, 3]);
        assert_eq!(parse_load(&h, "1@node0", false).unwrap().1, "1@node0");
        assert_eq!(parse_load(&h, "cpus:1-2", false).unwrap().0, vec![1, 2]);
        assert!(parse_load(&h, "3@1", false)
            .unwrap_err()
            .to_string()
            .contains("--oversubscribe"));
        assert_eq!(parse_load(&h, "3@1", true).unwrap().0, vec![2, 3, 2]);
        for bad in ["2", "x@1", "0@0", "1@7", "cpus:9"] {
            let e = parse_load(&h, bad, false).unwrap_err().to_string();
            assert!(e.starts_with("--load:"), "{bad}: {e}");
        }
    }

    #[test]
    fn node_lists_are_checked() {
        let h = two_node_host();
        assert_eq!(parse_nodes(&h, "0-1", "--cpu-nodes").unwrap(), vec![0, 1]);
        let e = parse_nodes(&h, "3", "--memory-nodes")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--memory-nodes") && e.contains("node 3 does not exist"),
            "{e}"
        );
        assert_eq!(node_cpus(&h, 1), vec![2, 3]);
    }
}
