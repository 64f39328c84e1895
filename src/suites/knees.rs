//! The knee probe: a random pointer chase at 0.75, 1 and 1.25 × 2^k bytes
//! from 3 KiB to well past CPUID's last-level cache, and a single-thread
//! sequential read at each octave, on one pinned cpu, in a few seconds.
//! `platform::knees` finds in those curves where each cache level ends as
//! this process sees it; the result is stored for this host
//! (`platform::knee_store`) and put on the host, so regimes, the default
//! sweep's top and the survey's headlines follow it.
//!
//! The chase is the latency suite's (`latency::measure_case`, random view,
//! THP), the read the cache sweep's (`measure::kernel::TeamKernel`), both
//! through the one sampler.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use crate::kernels::{self, Kernel, Op, Pattern};
use crate::measure::kernel::TeamKernel;
use crate::measure::{self, team::Team, Failure, Hint, SampleOpts, Sampler};
use crate::memory::{Buffer, PageKind};
use crate::model::{CurvePoint, Host, KneeProbe, Record, Warning};
use crate::platform::{knee_store, knees};

use super::latency::{self, Case, LatencyPlan, Pages, View};

/// A stop request ended the probe.
pub struct Interrupted;

/// Samples per point; the best counts (interference only slows a walk).
const SAMPLES: usize = 5;
/// Each sample lasts at least this long: many hops, few preemptions.
const MIN_SAMPLE_MS: f64 = 1.0;
/// The warm-up walk before each point, at most: one full cycle through a
/// chain that fits the caches costs little; at DRAM latency through a
/// CPUID-sized chain it would cost seconds and tell nothing more.
const WARM_NS: f64 = 20e6;
/// Points measured a second time at most (those a later point shows were
/// slowed, see `knees::disturbed`).
const RETRIES: usize = 12;
/// 0.75/1/1.25 × 2^k up to here, one point per octave beyond: knees that
/// far out need no finer grid to move a label (a 2× disagreement).
const FINE_UP_TO: u64 = 256 << 20;

/// What the probe measures, resolved for this host.
#[derive(Debug, Clone, serde::Serialize)]
pub struct KneePlan {
    pub cpu: u32,
    /// Chase working sets, ascending.
    pub sizes: Vec<u64>,
    /// Read working sets (octaves), ascending; empty without a read kernel.
    pub read_sizes: Vec<u64>,
    pub read_kernel: Option<&'static str>,
}

/// The largest working set: 8× CPUID's last-level cache (so a cache that
/// is all there is visible still shows its DRAM plateau), at least 64 MiB,
/// at most 1 GiB and a quarter of the memory available.
pub fn top(host: &Host) -> u64 {
    let llc = knees::cpuid_levels(host).last().map_or(32 << 20, |l| l.1);
    let avail = host.env.mem_available_bytes.unwrap_or(u64::MAX) / 4;
    (llc * 8).clamp(64 << 20, 1 << 30).min(avail) / (2 << 20) * (2 << 20)
}

/// The chase sizes: 0.75/1/1.25 × 2^k from 3 KiB to `FINE_UP_TO`, then
/// octaves, up to `top`.
pub fn sizes(top: u64) -> Vec<u64> {
    let mut v = Vec::new();
    for k in 12..40 {
        let p = 1u64 << k;
        for s in [p / 4 * 3, p, p / 4 * 5] {
            if s <= top && (s <= FINE_UP_TO || s == p) {
                v.push(s);
            }
        }
    }
    v
}

/// The read sizes: octaves from 16 KiB to 1 MiB, where the curve only
/// confirms latency knees, then half octaves (whole KiB) up to `top`,
/// where the read curve's own knee is found: the last cache's plateau and
/// the DRAM plateau need points a step apart, not an octave.
pub fn read_sizes(top: u64) -> Vec<u64> {
    let mut v = crate::util::units::geometric(16 << 10, top.min(1 << 20), 2.0);
    v.extend(
        crate::util::units::geometric(1 << 20, top, std::f64::consts::SQRT_2)
            .into_iter()
            .map(|s| s.div_ceil(1024) * 1024),
    );
    v.sort_unstable();
    v.dedup();
    v
}

pub fn plan(host: &Host) -> Result<KneePlan, crate::error::UserError> {
    if let Some(why) = crate::platform::emulation() {
        return Err(crate::error::UserError::flag(
            "--probe-knees",
            format!("not under an emulator: its latency curve would show the caches of the machine running the emulator, not this core's ({why})"),
        ));
    }
    let cpu = crate::plan::cpus::resolve_cpu(host, None)?;
    let top = top(host);
    let read = kernels::widest(Op::Read, Pattern::Seq, &host.features);
    Ok(KneePlan {
        cpu,
        sizes: sizes(top),
        read_sizes: if read.is_some() {
            read_sizes(top)
        } else {
            Vec::new()
        },
        read_kernel: read.map(|k| k.name),
    })
}

/// Measure, store and put the result on `host`. Returns the run-level
/// warnings it leads to (no clear knee; could not store), or `None` when
/// SIGINT stopped it (the host is then left as it was).
pub fn probe_and_store(
    plan: &KneePlan,
    host: &mut Host,
    stop: &AtomicBool,
) -> anyhow::Result<Option<Vec<Warning>>> {
    let Some(probe) = run(plan, host, stop)? else {
        return Ok(None);
    };
    let mut warnings = Vec::new();
    if probe.knees.is_empty() {
        warnings.push(Warning::Other {
            message: format!(
                "knee probe: {}",
                probe.note.as_deref().unwrap_or("no clear knee")
            ),
            hint: "quiet the machine and run `bwscope info --probe-knees` again".into(),
        });
    }
    if let Err(e) = knee_store::save(host, &probe) {
        warnings.push(Warning::Other {
            message: format!(
                "could not store the knee probe ({e}); the next run measures it again"
            ),
            hint: "set XDG_CACHE_HOME to a writable folder".into(),
        });
    }
    knees::apply(host, probe);
    Ok(Some(warnings))
}

/// Measure both curves and analyse them against `host`'s CPUID levels.
/// `None` when stopped.
pub fn run(plan: &KneePlan, host: &Host, stop: &AtomicBool) -> anyhow::Result<Option<KneeProbe>> {
    let t0 = Instant::now();
    // Measured against CPUID's sizes, whatever an earlier probe said: the
    // latency suite sizes its warm-up by the last-level cache.
    let mut cpuid = host.clone();
    knees::clear(&mut cpuid);
    let cpu = plan.cpu;
    let latency = measure::team::on_cpu(cpu, || chase_curve(plan, &cpuid, stop))
        .map_err(anyhow::Error::msg)??
        .ok();
    let Some(latency) = latency else {
        return Ok(None);
    };
    let Ok(bandwidth) = read_curve(plan, stop)? else {
        return Ok(None);
    };
    let mut probe = KneeProbe {
        measured_at: crate::model::time::now_rfc3339(),
        wall_seconds: t0.elapsed().as_secs_f64(),
        source: "this run".into(),
        cpu,
        method: format!(
            "random pointer chase ({}), THP, best of {SAMPLES} samples of ≥ {MIN_SAMPLE_MS} ms per size, slowed points measured twice; {} at each octave for confirmation",
            measure::chase::kernel().map_or("-", |k| k.name),
            plan.read_kernel.unwrap_or("no read kernel")
        ),
        latency,
        bandwidth,
        knees: Vec::new(),
        bandwidth_knee: None,
        note: None,
    };
    knees::analyse(&mut probe, host);
    Ok(Some(probe))
}

/// The chase at every size, then once more where a point was slowed.
/// Empty when this machine has no chase kernel.
fn chase_curve(
    plan: &KneePlan,
    host: &Host,
    stop: &AtomicBool,
) -> anyhow::Result<Result<Vec<CurvePoint>, Interrupted>> {
    let Some(k) = measure::chase::kernel().filter(|k| k.supported(&host.features)) else {
        return Ok(Ok(Vec::new()));
    };
    let top = plan.sizes.iter().copied().max().unwrap_or(0);
    let mut mem = Buffer::new(top as usize, PageKind::Thp, 0xc4a5e)?;
    let mut lp = LatencyPlan {
        sizes: plan.sizes.clone(),
        views: vec![View::Random],
        window_bytes: 4096,
        stride_bytes: latency::LINE,
        pages: vec![Pages::Thp],
        cpu: plan.cpu,
        samples: SAMPLES,
        min_sample_ms: MIN_SAMPLE_MS,
        quick: true,
        warm_max_reps: None,
    };
    let sampler = Sampler::new(SampleOpts::new(SAMPLES, MIN_SAMPLE_MS), stop);
    let mut pts = Vec::with_capacity(plan.sizes.len());
    let mut last_ns: Option<f64> = None;
    for (i, &size) in plan.sizes.iter().enumerate() {
        // Sized by the previous point's latency: this one's is no lower.
        lp.warm_max_reps = last_ns.map(|ns| (WARM_NS / ns / 16.0).ceil() as u64);
        let ns = match chase_ns(k, &mut mem, &lp, size, host, i as u64, &sampler) {
            Ok(ns) => ns,
            Err(e) => return Ok(Err(e)),
        };
        if let Some(ns) = ns {
            pts.push(CurvePoint {
                size_bytes: size,
                value: ns,
            });
            last_ns = Some(ns);
        }
    }
    for i in knees::disturbed(&pts).into_iter().take(RETRIES) {
        lp.warm_max_reps = Some((WARM_NS / pts[i].value / 16.0).ceil() as u64);
        let size = pts[i].size_bytes;
        match chase_ns(k, &mut mem, &lp, size, host, 0x5eed + i as u64, &sampler) {
            Ok(Some(ns)) => pts[i].value = pts[i].value.min(ns),
            Ok(None) => {}
            Err(e) => return Ok(Err(e)),
        }
    }
    Ok(Ok(pts))
}

/// Best ns per load of a random chase over `size` bytes, through the
/// latency suite's case (same chain, warm-up and sampler).
fn chase_ns(
    k: &'static Kernel,
    mem: &mut Buffer,
    plan: &LatencyPlan,
    size: u64,
    host: &Host,
    seed: u64,
    sampler: &Sampler,
) -> Result<Option<f64>, Interrupted> {
    let case = Case {
        plan,
        view: View::Random,
        size,
        pages: Pages::Thp,
        seed,
    };
    match latency::measure_case(k, mem, &case, host, sampler, None) {
        Ok(m) if m.cut_short => Err(Interrupted),
        Ok(m) => Ok(best_ns(&m.record)),
        Err(Failure::Stopped) => Err(Interrupted),
        // A failed point is a missing point: the detector copes.
        Err(Failure::Failed(_)) => Ok(None),
    }
}

/// A latency record's best ns per load.
fn best_ns(r: &Record) -> Option<f64> {
    r.detail.latency_ns().map(|s| s.best)
}

/// The widest sequential read at each octave on one pinned thread; empty
/// without a read kernel.
fn read_curve(
    plan: &KneePlan,
    stop: &AtomicBool,
) -> anyhow::Result<Result<Vec<CurvePoint>, Interrupted>> {
    let Some(k) = plan
        .read_kernel
        .and_then(|n| crate::kernels::registry().iter().find(|k| k.name == n))
    else {
        return Ok(Ok(Vec::new()));
    };
    let top = plan.read_sizes.iter().copied().max().unwrap_or(0) as usize;
    let team = Team::spawn(
        &[plan.cpu],
        top + measure::team::BUFFER_SLACK,
        PageKind::Thp,
    )?;
    let sampler = Sampler::new(SampleOpts::new(SAMPLES, MIN_SAMPLE_MS), stop);
    let mut pts = Vec::new();
    let mut hint: Option<Hint> = None;
    for &size in &plan.read_sizes {
        let Some(mut w) = TeamKernel::private(&team, k, size as usize) else {
            continue;
        };
        match sampler.measure(&mut w, hint) {
            Ok(m) if m.cut_short => return Ok(Err(Interrupted)),
            Ok(m) => {
                let best = m.rates(1e9).into_iter().fold(0.0, f64::max);
                pts.push(CurvePoint {
                    size_bytes: size,
                    value: best,
                });
                hint = Some(m.hint());
            }
            Err(Failure::Stopped) => return Ok(Err(Interrupted)),
            Err(Failure::Failed(_)) => {}
        }
    }
    Ok(Ok(pts))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_quarter_octaves_then_octaves() {
        let s = sizes(1 << 30);
        assert_eq!(&s[..4], &[3 << 10, 4 << 10, 5 << 10, 6 << 10]);
        assert!(s.windows(2).all(|w| w[0] < w[1]));
        assert!(s.contains(&(192 << 20)) && s.contains(&(256 << 20)));
        assert!(!s.contains(&(320 << 20)) && !s.contains(&(384 << 20)));
        assert!(s.contains(&(512 << 20)) && !s.contains(&(640 << 20)));
        assert_eq!(*s.last().unwrap(), 1 << 30);
    }

    #[test]
    fn reads_are_octaves_then_half_octaves() {
        let s = read_sizes(1 << 30);
        assert_eq!(
            &s[..7],
            &[
                16 << 10,
                32 << 10,
                64 << 10,
                128 << 10,
                256 << 10,
                512 << 10,
                1 << 20
            ]
        );
        assert!(s.contains(&(256 << 20)) && s.iter().any(|&x| x > 181 << 20 && x < 182 << 20));
        assert!(s.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(*s.last().unwrap(), 1 << 30);
        assert_eq!(s.len(), 7 + 20);
    }

    #[test]
    fn top_reaches_past_cpuid_within_memory() {
        let mut h = knees::tests::gnr_vm_host();
        assert_eq!(top(&h), 1 << 30);
        h.env.mem_available_bytes = Some(1 << 30);
        assert_eq!(top(&h), 256 << 20);
        let zen = knees::tests::host_with(&[(1, 32 << 10), (2, 1 << 20), (3, 32 << 20)]);
        assert_eq!(top(&zen), 256 << 20);
    }

    /// Issue 15: a run on a host whose CPUID L3 is 480 MiB and whose
    /// measured L3 ends at 32 MiB labels 64 MiB as DRAM, carries the
    /// warning, and sweeps no further than the measured cache needs.
    #[test]
    fn a_guest_that_sees_32_mib_of_a_480_mib_l3() {
        let mut host = knees::tests::gnr_vm_host();
        host.caches[2].effective_size_bytes = Some(32 << 20);
        host.caches[2].bandwidth_size_bytes = Some(32 << 20);
        // What every command's run starts with (`app::runner`).
        let warnings = super::super::host_warnings(&host);
        assert!(warnings.iter().any(|w| matches!(
            w,
            Warning::CpuidL3NotVisible {
                level: 3,
                cpuid_bytes,
                measured_bytes
            } if *cpuid_bytes == 480 << 20 && *measured_bytes == 32 << 20
        )));
        // A 64 MiB read record is labelled DRAM, a 16 MiB one L3.
        let k = crate::kernels::registry()
            .iter()
            .find(|k| k.name == "seq_read_64_scalar")
            .unwrap();
        let label = |ws: u64| {
            let pass = k.pass_bytes(ws as usize).unwrap();
            let m = measure::Measured {
                reps: 1,
                units_per_sample: pass.read,
                samples: vec![measure::sampler::Timing {
                    reps: 1,
                    units: pass.read,
                    seconds: 0.01,
                    skew: 0.0,
                    per_worker: vec![0.01],
                    device_seconds: None,
                    probe: None,
                }],
                noise: None,
                checksums: Vec::new(),
                cut_short: false,
                clock_hz: None,
                verified: false,
                retaken: None,
                descheduled: None,
                baseline: None,
            };
            super::super::record::bandwidth(k, &m, pass, &host, &[0], |b| {
                crate::model::detail::CacheDetail::from(b).into()
            })
            .regime
        };
        assert_eq!(label(64 << 20), Some(crate::model::Regime::Dram));
        assert_eq!(label(16 << 20), Some(crate::model::Regime::L3));
        assert_eq!(host.caches[2].size_bytes, 480 << 20, "CPUID's size kept");
        // The full sweep stops at 256 MiB, not at 4 × 480 MiB.
        assert_eq!(
            crate::plan::sizes::default_top(&host, crate::model::Curve::Bandwidth),
            256 << 20
        );
        let sizes = crate::plan::sizes::default_sizes(&host);
        assert_eq!(*sizes.last().unwrap(), 256 << 20);
        // Quarter octaves around the measured edge, none around CPUID's.
        assert!(sizes.iter().any(|&s| s > 32 << 20 && s < 64 << 20));
    }
}
