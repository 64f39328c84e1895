//! The cache → DRAM sweep: every selected kernel at every working-set size,
//! on a team of pinned threads each owning its buffer.
//!
//! Order: sizes ascending, and at each size the kernels in registry order
//! (reads first), after refilling the working set with random data so
//! reads never see a previous write kernel's constant pattern. Each
//! kernel's calibration starts from its previous size's work per sample.

use std::collections::HashMap;
use std::time::Duration;

pub mod first_use;

use super::estimate::{Estimate, CALIBRATION_SAMPLES};
use super::{Ctx, Descriptor, Flow, Key, Plan, Planned, Sampling};
use crate::error::UserError;
use crate::kernels::{self, Form, Kernel, Op, Pattern};
use crate::measure::kernel::TeamKernel;
use crate::measure::team::{Team, BUFFER_SLACK};
use crate::measure::workers::Workers;
use crate::measure::{Hint, SampleOpts};
use crate::memory::PageKind;
use crate::model::detail::CacheDetail;
use crate::model::{Host, Record, SuiteId, Warning};
use crate::plan::sizes::{default_sizes, key_sizes, names, quick_top};
use crate::util::units;

pub const DESCRIPTOR: Descriptor = Descriptor {
    id: SuiteId::Cache,
    about: "cache → DRAM sweep of the key kernels (read/write/copy at the widest ISA, NT write and copy, rep movsb, libc memcpy), one size per octave",
    reads_clock: true,
    quick: Some(quick),
    key: Some(Key {
        about: "key kernels (read/write/copy at the widest ISA, NT write and copy, rep movsb, memcpy) at half of each cache and at a DRAM-sized set",
        plan: key,
    }),
};

/// What a sweep is asked for; `None` is this machine's default.
#[derive(Debug, Clone, Default)]
pub struct CacheOptions {
    /// Kernel names or prefixes, comma-separated.
    pub kernel: Option<String>,
    /// Per-thread working sets.
    pub sizes: Option<Vec<u64>>,
    pub threads: Option<usize>,
    /// A cpu list (`0,2-3`).
    pub cpus: Option<String>,
    pub quick: bool,
    pub memory: PageKind,
    pub first_use: bool,
    /// `seq`, `random` or both, comma-separated.
    pub pattern: Option<String>,
    pub sampling: Sampling,
}

/// Resolved options of one sweep.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CachePlan {
    #[serde(serialize_with = "names")]
    pub kernels: Vec<&'static Kernel>,
    pub sizes: Vec<u64>,
    pub cpus: Vec<u32>,
    pub samples: usize,
    pub min_sample_ms: f64,
    /// Stop a case early once this many samples agree within 1 % of its
    /// fastest (`measure::SampleOpts::settle`); null with `--samples`.
    pub settle: Option<usize>,
    pub memory: PageKind,
    pub quick: bool,
    /// Record first-use cost per size (`--first-use`), see `suites::first_use`.
    #[serde(default)]
    pub first_use: bool,
    /// `--pattern` as given (null: the kernels as selected).
    pub pattern: Option<String>,
    /// The knee probe's read curve, for the estimate's pass times.
    #[serde(skip)]
    pub read_curve: Vec<crate::model::CurvePoint>,
}

impl CachePlan {
    pub fn sample_opts(&self) -> SampleOpts {
        SampleOpts::new(self.samples, self.min_sample_ms).settling(self.settle)
    }
}

/// The key kernels: read/write/copy at the widest ISA, NT write and NT
/// copy, rep movsb, libc memcpy. The NT copy is here because at DRAM sizes
/// it is the kernel libc's memcpy turns into (glibc above
/// `__x86_shared_non_temporal_threshold`), so the summary's DRAM memcpy
/// line compares like with like and names the faster.
pub fn key_kernels(host: &Host) -> Vec<&'static Kernel> {
    let f = &host.features;
    let widest = kernels::widest(Op::Read, Pattern::Seq, f).map_or(64, |k| k.width_bits);
    let mut out: Vec<&'static Kernel> = kernels::registry()
        .iter()
        .filter(|k| {
            k.form == Form::Loop
                && k.pattern == Pattern::Seq
                && k.width_bits == widest
                && k.supported(f)
        })
        .collect();
    out.extend(
        ["rep_movsb", "libc_memcpy"]
            .into_iter()
            .filter_map(kernels::named),
    );
    out
}

/// The full sweep's default: every sequential kernel at every width, cached
/// and non-temporal, plus `rep movsb`/`rep stosb` (x86-64) or `dc zva`
/// (AArch64) and libc. The other string
/// instructions (`lods*`, `stos*`, `movs*` with and without `rep`) run when
/// named (`--kernel lods,stos,movs,rep_`): 22 more kernels would double the
/// sweep's two minutes for curves that mostly repeat `rep movsb`.
pub fn default_kernels() -> Vec<&'static Kernel> {
    kernels::registry()
        .iter()
        .filter(|k| {
            (k.form == Form::Loop && k.pattern == Pattern::Seq)
                || k.form == Form::Call
                || k.form == Form::Block
                || k.name == "rep_movsb"
                || k.name == "rep_stosb"
        })
        .collect()
}

/// A default sweep's case ends once this many samples agree within 1 % of
/// the fastest: on a quiet machine three do, and the best of seven would
/// be the same figure; a noisy one still gets all seven.
pub const SETTLE: usize = 3;

/// Resolve and validate the options against this machine.
pub fn plan(o: &CacheOptions, host: &Host) -> Result<CachePlan, UserError> {
    let kernels = match &o.kernel {
        Some(spec) => kernels::select(spec).map_err(|m| UserError::flag("--kernel", m))?,
        None if o.quick => key_kernels(host),
        None => default_kernels(),
    };
    let kernels = with_patterns(kernels, o.pattern.as_deref(), o.kernel.is_none())?;
    let sizes = match &o.sizes {
        Some(s) if !s.is_empty() => s.clone(),
        Some(_) => return Err(UserError::flag("--sizes", "the list is empty")),
        None if o.quick => units::geometric(4 << 10, quick_top(host), 2.0),
        None => default_sizes(host),
    };
    let cpus = super::resolve_cpus(host, o.threads, o.cpus.as_deref())?;
    let max = *sizes.iter().max().expect("non-empty size list");
    super::check_memory(
        (max + (4 << 20)) * cpus.len() as u64,
        "--sizes",
        "use smaller --sizes or fewer --threads",
    )?;
    let default = if o.quick {
        SampleOpts {
            samples: 5,
            min_sample: Duration::from_millis(2),
            settle: None,
        }
    } else {
        SampleOpts::default()
    };
    let s = o.sampling.resolve(default.settling(Some(SETTLE)))?;
    // A kind that cannot be had (no hugetlb pages reserved, mlock over the
    // limit) is refused up front, naming the knob, rather than failing
    // inside a worker or falling back to other pages.
    crate::memory::kind::check_available(o.memory, max + 4096, cpus.len() as u64)
        .map_err(|m| UserError::flag("--memory", m))?;
    Ok(CachePlan {
        kernels,
        sizes,
        cpus,
        samples: s.samples,
        min_sample_ms: s.min_sample.as_secs_f64() * 1000.0,
        settle: s.settle,
        memory: o.memory.available(),
        quick: o.quick,
        first_use: o.first_use,
        pattern: o.pattern.clone(),
        read_curve: host
            .knees
            .as_ref()
            .map(|k| k.bandwidth.clone())
            .unwrap_or_default(),
    })
}

/// The survey's sweep: the key kernels of `cache --quick`, 4 KiB to half
/// the default top at two sizes per octave, 7 samples of ≥ 3 ms (about
/// 10 s on a 2-core VM; `--quick` alone takes 2-3 s but finds cache edges
/// only to within an octave).
fn survey_plan(host: &Host) -> Result<CachePlan, UserError> {
    let o = CacheOptions {
        quick: true,
        sampling: Sampling {
            samples: Some(7),
            min_sample_ms: Some(3.0),
        },
        ..CacheOptions::default()
    };
    let mut plan = plan(&o, host)?;
    plan.settle = Some(SETTLE);
    let top = plan.sizes.iter().copied().max().unwrap_or(4 << 10);
    plan.sizes = units::geometric(4 << 10, top, std::f64::consts::SQRT_2)
        .into_iter()
        .map(|s| s.div_ceil(1024) * 1024)
        .collect();
    plan.sizes.dedup();
    Ok(plan)
}

/// The survey's sweep.
fn quick(host: &Host) -> Planned {
    Ok(Box::new(survey_plan(host)?))
}

/// A fleet node's sweep: the key kernels at the key sizes.
fn key(host: &Host, sampling: Sampling) -> Planned {
    let o = CacheOptions {
        sizes: Some(key_sizes(host)),
        quick: true,
        sampling,
        ..CacheOptions::default()
    };
    Ok(Box::new(plan(&o, host)?))
}

/// Apply `--pattern` (each kernel with its counterparts in the listed
/// orders, adjacent so the table shows random beside sequential) and keep
/// only what the sweep can run (no chase or register kernels). Without
/// `--pattern`, a default kernel set is the sequential one.
fn with_patterns(
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
                .filter_map(|p| {
                    if *p == k.pattern {
                        Some(k)
                    } else {
                        k.counterpart(p.clone())
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

/// A sweep: every size × kernel a case, each sample lasting at least
/// `--min-sample-ms` or one pass over the working set at the read rate the
/// knee probe measured near that size, whichever is longer (a 1 GiB pass
/// at DRAM's 15 GB/s is 70 ms, seven times the minimum). Cases settle
/// after `settle` samples on a quiet machine; a noisy one takes all.
fn estimate(p: &CachePlan) -> Estimate {
    let kernels = p.kernels.len() + usize::from(p.first_use);
    let taken = p.settle.unwrap_or(p.samples).min(p.samples);
    let sample_s = |size: u64| {
        let pass = read_rate(&p.read_curve, size).map_or(0.0, |g| size as f64 / (g * 1e9));
        pass.max(p.min_sample_ms / 1000.0)
    };
    let per_kernel: f64 = p
        .sizes
        .iter()
        .map(|&s| (taken as f64 + CALIBRATION_SAMPLES) * sample_s(s))
        .sum();
    let seconds = per_kernel * kernels as f64;
    let passes = if p.read_curve.is_empty() {
        ""
    } else {
        " or one pass at the knee probe's read rate, whichever is longer"
    };
    let settle = match p.settle {
        Some(k) if k < p.samples => {
            format!("{k} samples (up to {} where they disagree)", p.samples)
        }
        _ => format!("{} samples", p.samples),
    };
    let top = p.sizes.iter().max().copied().unwrap_or(0) as f64;
    // Each thread's buffer is faulted in once and refilled at every size.
    Estimate {
        seconds,
        rule: format!(
            "{} sizes × {kernels} kernels × ({settle} + ~{CALIBRATION_SAMPLES} for calibration) × {} ms{passes}",
            p.sizes.len(),
            p.min_sample_ms
        ),
    }
    .faulting(2.0 * top * p.cpus.len() as f64, "buffers")
}

/// Read GB/s at `size` from a probe's read curve: log-log interpolation
/// between its points, its last point's rate beyond them; None without a
/// curve.
pub fn read_rate(curve: &[crate::model::CurvePoint], size: u64) -> Option<f64> {
    let pts: Vec<(f64, f64)> = curve
        .iter()
        .filter(|p| p.size_bytes > 0 && p.value > 0.0 && p.value.is_finite())
        .map(|p| ((p.size_bytes as f64).ln(), p.value.ln()))
        .collect();
    let x = (size.max(1) as f64).ln();
    let (first, last) = (pts.first()?, pts.last()?);
    if x <= first.0 {
        return Some(first.1.exp());
    }
    if x >= last.0 {
        return Some(last.1.exp());
    }
    let i = pts.windows(2).position(|w| x >= w[0].0 && x <= w[1].0)?;
    let (a, b) = (pts[i], pts[i + 1]);
    let t = if b.0 > a.0 {
        (x - a.0) / (b.0 - a.0)
    } else {
        0.0
    };
    Some((a.1 + t * (b.1 - a.1)).exp())
}

impl Plan for CachePlan {
    const ID: SuiteId = SuiteId::Cache;

    fn estimate(&self) -> Estimate {
        estimate(self)
    }

    fn execute(&self, cx: &mut Ctx) -> anyhow::Result<Flow> {
        run(self, cx)
    }
}

/// Run the sweep, pushing records through `cx`.
pub fn run(plan: &CachePlan, cx: &mut Ctx) -> anyhow::Result<Flow> {
    let runnable = cx.runnable(SuiteId::Cache, &plan.kernels)?;
    if runnable.is_empty() {
        return Ok(Flow::Done);
    }
    let max = *plan.sizes.iter().max().expect("sizes");
    // Room for a copy's second stream offset (see team::dst_offset).
    let buffer = max as usize + BUFFER_SLACK;
    if plan.first_use && first_use::run(plan, cx)? == Flow::Stopped {
        return Ok(Flow::Stopped);
    }
    let mut team = Team::spawn(&plan.cpus, buffer, plan.memory)?;
    let mem = team.memory().first().cloned();
    // Never a silent fallback: hugetlb and locked buffers whose pages are
    // not what was asked for give skipped records (THP keeps its warning).
    let checked = !matches!(plan.memory, PageKind::Thp | PageKind::Regular);
    if let Some(m) = mem.as_ref().filter(|_| checked) {
        if let Err(reason) = crate::memory::kind::verify(plan.memory, m, buffer) {
            for &k in &runnable {
                let why = format!("--memory {}: {}", m.kind, reason);
                cx.push(Record::skipped(SuiteId::Cache, k.name, why))?;
            }
            return Ok(Flow::Done);
        }
    }
    if let Some(f) = mem.as_ref().and_then(|m| m.thp_fraction) {
        if plan.memory == PageKind::Thp && max >= 4 << 20 && f < 0.9 {
            cx.run_warning(Warning::ThpNotObtained { fraction: f });
        }
    }
    let sampler = cx.sampler(plan.sample_opts());
    cx.plan_steps((plan.sizes.len() * runnable.len()) as u64);
    let mut hints: HashMap<&str, Hint> = HashMap::new();
    for (si, &size) in plan.sizes.iter().enumerate() {
        team.refill((size as usize + 4096).min(buffer), 0xabcd + si as u64);
        for &k in &runnable {
            cx.step(&format!("{} {}", k.name, units::format_bytes(size)));
            let Some(mut w) = TeamKernel::private(&team, k, size as usize) else {
                cx.push(Record::skipped(
                    SuiteId::Cache,
                    k.name,
                    format!(
                        "working set {} is smaller than one {}-byte block per stream",
                        units::format_bytes(size),
                        k.granule
                    ),
                ))?;
                continue;
            };
            let host = cx.host;
            let measured = sampler.measure(&mut w, hints.get(k.name).copied());
            let flow = cx.finish_case(SuiteId::Cache, k.name, measured, |m| {
                hints.insert(k.name, m.hint());
                let mut r = super::record::bandwidth(k, &m, w.pass(), host, &plan.cpus, |b| {
                    CacheDetail::from(b).into()
                });
                r.memory = mem.clone();
                (r, m.cut_short)
            })?;
            if flow == Flow::Stopped {
                return Ok(Flow::Stopped);
            }
        }
    }
    Ok(Flow::Done)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Cpu, KneeProbe};
    use crate::platform::knees;

    /// `levels` as CPUID describes them, two allowed cpus, and `probe`
    /// analysed and applied as a run would.
    fn host(levels: &[(u8, u64)], probe: Option<KneeProbe>) -> Host {
        let mut h = knees::tests::host_with(levels);
        h.allowed_cpus = vec![0, 1];
        h.cpus = (0..2)
            .map(|id| Cpu {
                id,
                core: id,
                package: 0,
                node: 0,
                siblings: vec![id],
            })
            .collect();
        if let Some(mut p) = probe {
            knees::analyse(&mut p, &h);
            knees::apply(&mut h, p);
        }
        h
    }

    fn full_plan(h: &Host) -> CachePlan {
        plan(&CacheOptions::default(), h).unwrap()
    }

    /// The four-page copies stay out of the full sweep's and the survey's
    /// sets: their 16 KiB granule would skip every L1 point, and the
    /// sweep's two minutes have no room for a shape that matters only at
    /// DRAM. `--kernel pages_` names them; `threads` runs them by default.
    #[test]
    fn the_sweep_sets_hold_no_four_page_kernel() {
        let h = crate::platform::detect_host(false);
        let all = default_kernels().into_iter().chain(key_kernels(&h));
        assert!(all.into_iter().all(|k| k.pattern != Pattern::Pages));
        let named = plan(
            &CacheOptions {
                kernel: Some("pages_".into()),
                ..CacheOptions::default()
            },
            &h,
        );
        #[cfg(target_arch = "x86_64")]
        assert!(named.unwrap().kernels.iter().all(|k| k.pattern == Pattern::Pages));
        #[cfg(not(target_arch = "x86_64"))]
        assert!(named.is_err());
    }

    /// Issue 22: the full default sweep took 361 s (46 sizes up to 2 GiB)
    /// on the Granite Rapids guest. With the read curve's knee its top is
    /// 512 MiB (DRAM's rate from 362 MiB), and cases settle after three
    /// agreeing samples: by its own estimate (samples of ≥ 10 ms or one
    /// pass at the probe's read rate) it fits the two minutes with room
    /// for buffer set-up and slower writes.
    #[test]
    fn the_full_sweep_follows_the_read_curve_and_fits_two_minutes() {
        let gnr = [(1, 48 << 10), (2, 2 << 20), (3, 480 << 20)];
        let mut before = full_plan(&host(&gnr, None));
        assert_eq!(*before.sizes.last().unwrap(), 2 << 30);
        let h = host(&gnr, Some(knees::tests::gnr_issue21_probe()));
        // What the old plan would cost by the same rule: every sample.
        before.settle = None;
        before.read_curve = knees::tests::gnr_issue21_probe().bandwidth;
        let old = super::estimate(&before);
        eprintln!(
            "GNR guest before: {} sizes × {} kernels = {} records; estimate {:.0} s",
            before.sizes.len(),
            before.kernels.len(),
            before.sizes.len() * before.kernels.len(),
            old.seconds
        );
        let p = full_plan(&h);
        assert_eq!(*p.sizes.last().unwrap(), 512 << 20, "{:?}", p.sizes);
        assert_eq!(p.settle, Some(SETTLE));
        let e = super::estimate(&p);
        let all = super::estimate(&CachePlan {
            settle: None,
            ..p.clone()
        });
        eprintln!(
            "GNR guest: {} sizes × {} kernels = {} records; estimate {:.0} s settled, {:.0} s with every sample ({})",
            p.sizes.len(),
            p.kernels.len(),
            p.sizes.len() * p.kernels.len(),
            e.seconds,
            all.seconds,
            e.rule
        );
        assert!(e.seconds <= 80.0, "{e:?}");
        assert!(all.seconds <= 150.0, "{all:?}");
        // Without a probe (or with `--samples`): every sample, CPUID's top.
        let o = CacheOptions {
            sampling: Sampling {
                samples: Some(7),
                min_sample_ms: None,
            },
            ..CacheOptions::default()
        };
        assert_eq!(plan(&o, &h).unwrap().settle, None);
    }

    /// A 32 MiB L3 the read curve agrees with (Zen 3/4/5): the top stays
    /// 256 MiB, and the plan stays within the two minutes too.
    #[test]
    fn a_cache_the_read_curve_agrees_with_keeps_its_sweep() {
        let zen = [(1, 32 << 10), (2, 1 << 20), (3, 32 << 20)];
        let mut probe = KneeProbe {
            latency: Vec::new(),
            bandwidth: [
                (1u64 << 20, 100.0),
                (2 << 20, 99.0),
                (4 << 20, 99.0),
                (8 << 20, 98.0),
                (16 << 20, 90.0),
                (32 << 20, 52.0),
                (64 << 20, 30.0),
                (128 << 20, 29.0),
                (256 << 20, 28.5),
            ]
            .iter()
            .map(|&(s, v)| crate::model::CurvePoint {
                size_bytes: s,
                value: v,
            })
            .collect(),
            ..KneeProbe::default()
        };
        probe.source = "test".into();
        let h = host(&zen, Some(probe));
        assert_eq!(h.llc_size(crate::model::Curve::Bandwidth), Some(32 << 20));
        let p = full_plan(&h);
        assert_eq!(*p.sizes.last().unwrap(), 256 << 20);
        let e = super::estimate(&p);
        eprintln!(
            "Zen guest: {} sizes × {} kernels; estimate {:.0} s ({})",
            p.sizes.len(),
            p.kernels.len(),
            e.seconds,
            e.rule
        );
        assert!(e.seconds <= 80.0, "{e:?}");
    }
}
