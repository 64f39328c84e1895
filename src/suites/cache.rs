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
use crate::platform::Host;
use crate::report::model::Record;
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
/// so the top of the sweep is unambiguously DRAM.
pub fn default_top(host: &Host) -> u64 {
    let llc4 = host.llc_size().unwrap_or(32 << 20) * 4;
    llc4.next_power_of_two().max(256 << 20)
}

/// Default sweep: 1 KiB to `default_top`, three points per octave
/// (2^(1/3) steps), each rounded to a whole KiB so every kernel's granule
/// divides it and all kernels share rows.
pub fn default_sizes(host: &Host, per_octave: u32, from: u64) -> Vec<u64> {
    let top = default_top(host);
    let factor = 2f64.powf(1.0 / per_octave as f64);
    let mut v: Vec<u64> = units::geometric(from, top, factor)
        .into_iter()
        .map(|s| ((s + 512) / 1024).max(1) * 1024)
        .collect();
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
        .filter(|k| k.name.starts_with("seq_") && k.width_bits == widest && k.supported(&host.features))
        .filter(|k| !(k.nontemporal && k.op == kernels::Op::Copy))
        .collect();
    out.extend(
        kernels::registry()
            .iter()
            .filter(|k| k.name == "rep_movsb" || k.name == "libc_memcpy"),
    );
    out
}

/// Resolve and validate the flags against this machine.
pub fn plan(args: &CacheArgs, host: &Host) -> Result<CachePlan, UserError> {
    let kernels = match &args.kernel {
        Some(spec) => kernels::select(spec).map_err(|m| UserError::flag("--kernel", m))?,
        None if args.quick => key_kernels(host),
        None => kernels::registry().iter().collect(),
    };
    let sizes = match &args.sizes {
        Some(s) => units::parse_size_list(s).map_err(|e| UserError::flag("--sizes", e.to_string()))?,
        None if args.quick => {
            let top = default_top(host) / 2;
            units::geometric(4 << 10, top, 2.0)
        }
        None => default_sizes(host, 3, 1024),
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
    Ok(CachePlan {
        kernels,
        sizes,
        cpus,
        samples: o.samples,
        min_sample_ms: o.min_sample.as_secs_f64() * 1000.0,
        memory: args.memory,
        quick: args.quick,
    })
}

pub fn page_kind(m: MemoryArg) -> PageKind {
    match m {
        MemoryArg::Thp => PageKind::Thp,
        MemoryArg::Regular => PageKind::Regular,
        MemoryArg::Nohuge => PageKind::NoHuge,
    }
}

/// Run the sweep, pushing records into `sink`. Returns true when SIGINT
/// stopped it (every finished record is already in the sink).
pub fn run(plan: &CachePlan, host: &Host, sink: &mut Sink, stop: &AtomicBool) -> anyhow::Result<bool> {
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
    let buffer = max as usize + 4096;
    let team = Team::spawn(&plan.cpus, buffer, page_kind(plan.memory))?;
    let mem = team.memory().first().cloned();
    if let Some(m) = &mem {
        if plan.memory == MemoryArg::Thp && max >= 4 << 20 {
            if let Some(f) = m.thp_fraction {
                if f < 0.9 {
                    sink.run_mut()
                        .warnings
                        .push(crate::report::warnings::Warning::ThpNotObtained { fraction: f });
                }
            }
        }
    }
    let opts = plan.sample_opts();
    let total = (plan.sizes.len() * runnable.len()) as u64;
    let bar = crate::report::progress::bar(total, sink.stdout_taken());
    for (si, &size) in plan.sizes.iter().enumerate() {
        for i in 0..team.threads() {
            let len = (size as usize + 4096).min(buffer);
            team.inspect(i, move |b| b.fill_random_prefix(len, 0xabcd + si as u64));
        }
        for &k in &runnable {
            bar.set_message(format!("{} {}", k.name, units::format_bytes(size)));
            match measure::measure_case(&team, k, size as usize, &opts, stop) {
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
