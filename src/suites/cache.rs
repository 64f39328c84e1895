//! The cache → DRAM sweep: every selected kernel at every working-set size,
//! on a team of pinned threads each owning its buffer.
//!
//! Order: sizes ascending, and at each size the kernels in registry order
//! (reads first), after refilling the working set with random data so
//! reads never see a previous write kernel's constant pattern.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::cli::{CacheArgs, MemoryArg};
use crate::error::UserError;
use crate::kernels::{self, Kernel};
use crate::measure::{self, team::Team, SampleOpts};
use crate::memory::PageKind;
use crate::model::Host;
use crate::model::Record;
use crate::report::sink::Sink;
use crate::util::units;

/// Resolved options of one sweep.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CachePlan {
    #[serde(serialize_with = "names")]
    pub kernels: Vec<&'static Kernel>,
    pub sizes: Vec<u64>,
    pub cpus: Vec<u32>,
    pub samples: usize,
    pub min_sample_ms: f64,
    pub memory: MemoryArg,
    pub quick: bool,
    /// Record first-use cost per size (`--first-use`), see `suites::first_use`.
    #[serde(default)]
    pub first_use: bool,
    /// `--pattern` as given (null: the kernels as selected).
    pub pattern: Option<String>,
}

fn names<S: serde::Serializer>(k: &[&'static Kernel], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(k.iter().map(|k| k.name))
}

impl CachePlan {
    pub fn sample_opts(&self) -> SampleOpts {
        SampleOpts {
            samples: self.samples,
            min_sample: Duration::from_secs_f64(self.min_sample_ms / 1000.0),
        }
    }
}

/// The largest default size: at least 4× the last-level cache and 256 MiB,
/// so the top of the sweep is unambiguously DRAM. The cache as this
/// process measured it where that is far from CPUID's (a guest told the
/// host socket's 480 MiB L3 swept to 2 GiB for 245 s).
pub fn default_top(host: &Host) -> u64 {
    let llc4 = host.llc_size().unwrap_or(32 << 20) * 4;
    llc4.next_power_of_two().max(256 << 20)
}

/// Default sweep: one point per octave from 1 KiB to `default_top`, plus
/// quarter-octave steps within one octave either side of every cache size,
/// where the curves bend. Each size is rounded to a whole KiB so every
/// kernel's granule divides it and all kernels share rows. ~37 sizes × ~30
/// kernels × 8 calls of ≥ 10 ms keep the full sweep under two minutes; a
/// uniform three points per octave (49 sizes) took 140 s.
pub fn default_sizes(host: &Host) -> Vec<u64> {
    let top = default_top(host);
    let mut v: Vec<u64> = units::geometric(1 << 10, top, 2.0);
    let mut edges: Vec<u64> = host
        .data_caches()
        .map(crate::model::Cache::boundary_bytes)
        .collect();
    edges.dedup();
    for e in edges {
        for k in -4i32..=4 {
            let s = (e as f64 * 2f64.powf(k as f64 / 4.0)).round() as u64;
            if (1 << 10..=top).contains(&s) {
                v.push(s);
            }
        }
    }
    let mut v: Vec<u64> = v
        .into_iter()
        .map(|s| ((s + 512) / 1024).max(1) * 1024)
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The key kernels: read/write/copy at the widest ISA, NT write, rep movsb,
/// libc memcpy.
pub fn key_kernels(host: &Host) -> Vec<&'static Kernel> {
    let widest = kernels::registry()
        .iter()
        .filter(|k| k.name.starts_with("seq_read_") && k.supported(&host.features))
        .map(|k| k.width_bits)
        .max()
        .unwrap_or(64);
    let mut out: Vec<&'static Kernel> = kernels::registry()
        .iter()
        .filter(|k| {
            k.name.starts_with("seq_") && k.width_bits == widest && k.supported(&host.features)
        })
        .filter(|k| !(k.nontemporal && k.op == kernels::Op::Copy))
        .collect();
    out.extend(
        kernels::registry()
            .iter()
            .filter(|k| k.name == "rep_movsb" || k.name == "libc_memcpy"),
    );
    out
}

/// The full sweep's default: every sequential kernel at every width, cached
/// and non-temporal, plus `rep movsb`/`rep stosb` and libc. The other string
/// instructions (`lods*`, `stos*`, `movs*` with and without `rep`) run when
/// named (`--kernel lods,stos,movs,rep_`): 22 more kernels would double the
/// sweep's two minutes for curves that mostly repeat `rep movsb`.
pub fn default_kernels() -> Vec<&'static Kernel> {
    kernels::registry()
        .iter()
        .filter(|k| {
            k.name.starts_with("seq_")
                || k.name.starts_with("libc_")
                || k.name == "rep_movsb"
                || k.name == "rep_stosb"
        })
        .collect()
}

/// Resolve and validate the flags against this machine.
pub fn plan(args: &CacheArgs, host: &Host) -> Result<CachePlan, UserError> {
    let kernels = match &args.kernel {
        Some(spec) => kernels::select(spec).map_err(|m| UserError::flag("--kernel", m))?,
        None if args.quick => key_kernels(host),
        None => default_kernels(),
    };
    let kernels = with_patterns(kernels, args.pattern.as_deref(), args.kernel.is_none())?;
    let sizes = match &args.sizes {
        Some(s) => {
            units::parse_size_list(s).map_err(|e| UserError::flag("--sizes", e.to_string()))?
        }
        None if args.quick => {
            let top = default_top(host) / 2;
            units::geometric(4 << 10, top, 2.0)
        }
        None => default_sizes(host),
    };
    let cpus = super::resolve_cpus(host, args.threads, args.cpus.as_deref())?;
    let max = *sizes.iter().max().expect("non-empty size list");
    super::check_memory((max + (4 << 20)) * cpus.len() as u64, "--sizes")?;
    let default = if args.quick {
        SampleOpts {
            samples: 5,
            min_sample: Duration::from_millis(2),
        }
    } else {
        SampleOpts::default()
    };
    let o = super::sample_opts(&args.sample, default)?;
    // A kind that cannot be had (no hugetlb pages reserved, mlock over the
    // limit) is refused up front, naming the knob, rather than failing
    // inside a worker or falling back to other pages.
    let kind = page_kind(args.memory);
    crate::memory::kind::check_available(kind, max + 4096, cpus.len() as u64)
        .map_err(|m| UserError::flag("--memory", m))?;
    Ok(CachePlan {
        kernels,
        sizes,
        cpus,
        samples: o.samples,
        min_sample_ms: o.min_sample.as_secs_f64() * 1000.0,
        memory: args.memory,
        quick: args.quick,
        first_use: args.first_use,
        pattern: args.pattern.clone(),
    })
}

/// Apply `--pattern` (each kernel with its counterparts in the listed
/// orders, adjacent so the table shows random beside sequential) and keep
/// only what the sweep can run (no chase or register kernels). Without
/// `--pattern`, a default kernel set is the sequential one.
pub fn with_patterns(
    selected: Vec<&'static Kernel>,
    pattern: Option<&str>,
    default_set: bool,
) -> Result<Vec<&'static Kernel>, UserError> {
    let patterns: Vec<kernels::Pattern> = match pattern {
        None if default_set => vec![kernels::Pattern::Seq],
        None => Vec::new(),
        Some(list) => {
            let mut v = Vec::new();
            for p in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                let p = match p {
                    "seq" | "sequential" => kernels::Pattern::Seq,
                    "random" | "rand" => kernels::Pattern::Random,
                    other => {
                        return Err(UserError::flag(
                            "--pattern",
                            format!("unknown pattern '{other}': use seq, random or seq,random"),
                        ))
                    }
                };
                if !v.contains(&p) {
                    v.push(p);
                }
            }
            if v.is_empty() {
                return Err(UserError::flag(
                    "--pattern",
                    "empty list: use seq, random or seq,random",
                ));
            }
            v
        }
    };
    let mut out: Vec<&'static Kernel> = Vec::new();
    for k in selected.into_iter().filter(|k| k.sweepable()) {
        // A kernel without a counterpart in a listed order (rep_movsb, libc,
        // string instructions, NT stores have no random form) is left out
        // of that order.
        let variants: Vec<&'static Kernel> = if patterns.is_empty() {
            vec![k]
        } else {
            patterns
                .iter()
                .filter_map(|&p| {
                    if p == k.pattern {
                        Some(k)
                    } else {
                        k.counterpart(p)
                    }
                })
                .collect()
        };
        for v in variants {
            if !out.iter().any(|o| o.name == v.name) {
                out.push(v);
            }
        }
    }
    if out.is_empty() {
        return Err(UserError::flag(
            "--kernel",
            "no bandwidth kernel left to sweep: chase kernels run with `bwscope latency`, reg_ kernels with `bwscope regs`, and --pattern keeps only kernels with that access order",
        ));
    }
    Ok(out)
}

pub fn page_kind(m: MemoryArg) -> PageKind {
    match m {
        MemoryArg::Thp => PageKind::Thp,
        MemoryArg::Regular => PageKind::Regular,
        MemoryArg::Nohuge => PageKind::NoHuge,
        MemoryArg::Hugetlb2M => PageKind::Hugetlb2M,
        MemoryArg::Hugetlb1G => PageKind::Hugetlb1G,
        MemoryArg::Locked => PageKind::Locked,
    }
}

/// Run the sweep, pushing records into `sink`. Returns true when SIGINT
/// stopped it (every finished record is already in the sink).
pub fn run(
    plan: &CachePlan,
    host: &Host,
    sink: &mut Sink,
    stop: &AtomicBool,
) -> anyhow::Result<bool> {
    let runnable: Vec<&'static Kernel> = plan
        .kernels
        .iter()
        .copied()
        .filter(|k| {
            if let Some(reason) = k.skip_reason(&host.features) {
                let _ = sink.push(Record::skipped("cache", k.name, reason));
                false
            } else {
                true
            }
        })
        .collect();
    if runnable.is_empty() {
        return Ok(false);
    }
    let max = *plan.sizes.iter().max().expect("sizes");
    // Room for a copy's second stream offset (see team::dst_offset).
    let buffer = max as usize + crate::measure::team::BUFFER_SLACK;
    if plan.first_use && super::first_use::run(plan, host, sink, stop)? {
        return Ok(true);
    }
    let team = Team::spawn(&plan.cpus, buffer, page_kind(plan.memory))?;
    let mem = team.memory().first().cloned();
    // Never a silent fallback: hugetlb and locked buffers whose pages are
    // not what was asked for give skipped records (THP keeps its warning).
    let checked = !matches!(plan.memory, MemoryArg::Thp | MemoryArg::Regular);
    if let Some(m) = mem.as_ref().filter(|_| checked) {
        if let Err(reason) = crate::memory::kind::verify(page_kind(plan.memory), m, buffer) {
            for &k in &runnable {
                let why = format!("--memory {}: {}", m.kind, reason);
                sink.push(Record::skipped("cache", k.name, why))?;
            }
            return Ok(false);
        }
    }
    if let Some(m) = &mem {
        if plan.memory == MemoryArg::Thp && max >= 4 << 20 {
            if let Some(f) = m.thp_fraction {
                if f < 0.9 {
                    sink.run_mut()
                        .warnings
                        .push(crate::model::Warning::ThpNotObtained { fraction: f });
                }
            }
        }
    }
    let opts = plan.sample_opts();
    let total = (plan.sizes.len() * runnable.len()) as u64;
    let bar = crate::report::progress::bar(total, sink.stdout_taken());
    // Per kernel: (reps, working set) of its last point, to start the next
    // point's calibration near its answer (see measure::reps_hint).
    let mut hints: std::collections::HashMap<&str, (u64, usize)> = Default::default();
    for (si, &size) in plan.sizes.iter().enumerate() {
        for i in 0..team.threads() {
            let len = (size as usize + 4096).min(buffer);
            team.inspect(i, move |b| b.fill_random_prefix(len, 0xabcd + si as u64));
        }
        for &k in &runnable {
            bar.set_message(format!("{} {}", k.name, units::format_bytes(size)));
            let start = hints
                .get(k.name)
                .map_or(1, |&(reps, ws)| measure::reps_hint(reps, ws, size as usize));
            match measure::measure_case_from(&team, k, size as usize, &opts, stop, start) {
                Err(measure::Interrupted) => {
                    bar.finish_and_clear();
                    return Ok(true);
                }
                Ok(None) => sink.push(Record::skipped(
                    "cache",
                    k.name,
                    format!(
                        "working set {} is smaller than one {}-byte block per stream",
                        units::format_bytes(size),
                        k.granule
                    ),
                ))?,
                Ok(Some(m)) => {
                    hints.insert(k.name, (m.reps, size as usize));
                    let mut r = super::bandwidth_record("cache", k, &m, host, &plan.cpus);
                    r.memory = mem.clone();
                    sink.push(r)?;
                }
            }
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    Ok(false)
}
