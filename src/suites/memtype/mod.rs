//! `bwscope memtype`: the experiment of the codedivine.org post "Testing
//! write bandwidth to regular, write-combined and uncached memory" (2013)
//! for every memory kind available here.
//!
//! For each kind: map a buffer (timed: *setup*), copy a fixed-size regular
//! source array into it once (timed: *first pass*, which pays the page
//! faults, zeroing and huge-page allocation), then copy again `passes`
//! times (steady state), read the buffer `read_passes` times (WC and UC
//! memory read very slowly: that is how the memory type shows in
//! behaviour), and check that the buffer holds exactly what was copied.
//! `regular` always runs first; every other kind gets its **break-even
//! pass count** against it.
//!
//! The copy and read are the registry's asm kernels called directly with
//! two buffers (the source is always regular memory), on one pinned cpu.
//!
//! **Write-combined and uncached plain RAM (`wc`, `uc`).** That post's test is a
//! Windows program: `VirtualAlloc` with `PAGE_READWRITE | PAGE_WRITECOMBINE`
//! or `PAGE_NOCACHE` gives any user such memory on ordinary RAM (Linux
//! only over a device: `--device-mem`). Its author measured, copying
//! ~32 MB of doubles on an AMD A10 laptop: regular 3.8 GB/s, write-combined
//! 5.7 GB/s, uncached 0.33 GB/s per later pass, the first pass apart. What
//! a user should expect on real hardware: WC streaming writes at or above
//! regular (whole lines leave the write-combining buffers, no
//! read-for-ownership), WC and UC *reads* an order of magnitude or more
//! slower (nothing is cached), UC writes far slower still (one bus
//! transaction per store). Each record names the protection asked for and
//! what `VirtualQuery` reports (`protection_asked`, `protection_got`); wine
//! accepts `PAGE_WRITECOMBINE` and drops it, which the record's warning
//! says. Nothing here has been timed on Windows hardware yet.

mod plan;
mod timing;

pub use plan::plan;

use super::estimate::{Estimate, FAULT_BPS};
use super::{Ctx, Descriptor, Flow, Key, Plan, Planned, Sampling};
use crate::error::UserError;
use crate::kernels::Kernel;
use crate::measure::team;
use crate::memory::{kind, Buffer, PageKind};
use crate::model::detail::{BreakEven, MemtypeDetail};
use crate::model::{Curve, Host, Nullable, SuiteId};
use crate::model::{MemoryInfo, Record, Sample};
use crate::os::device::DeviceSpec;
use crate::stats;
use timing::{measure, Outcome, Timed};

/// What a memtype run is asked for; `None` is the default.
#[derive(Debug, Clone, Default)]
pub struct MemtypeOptions {
    /// Kind names (anonymous kinds and device kinds); default: every
    /// anonymous kind plus the devices named.
    pub kinds: Option<Vec<String>>,
    /// Bytes copied per pass.
    pub size: Option<u64>,
    pub passes: Option<usize>,
    pub read_passes: Option<usize>,
    /// The copy kernel's name.
    pub kernel: Option<String>,
    pub cpu: Option<u32>,
    /// Device memory to map (PCI BAR resource files, DRM nodes, fbdev).
    pub device_mem: Vec<String>,
    pub allow_device_writes: bool,
}

/// What a case maps.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(untagged)]
pub enum Target {
    Anon(PageKind),
    /// Plain RAM with a caching type of its own (`wc`, `uc`): Windows
    /// gives it to any user (`VirtualAlloc` with `PAGE_WRITECOMBINE` or
    /// `PAGE_NOCACHE`), the codedivine.org post's experiment.
    Ram(RamKind),
    Device(DeviceSpec),
}

/// The caching kinds of plain RAM.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RamKind {
    Wc,
    Uc,
}

impl RamKind {
    pub const ALL: [RamKind; 2] = [RamKind::Wc, RamKind::Uc];

    pub fn name(self) -> &'static str {
        match self {
            RamKind::Wc => "wc",
            RamKind::Uc => "uc",
        }
    }

    pub fn caching(self) -> crate::os::mem::Caching {
        match self {
            RamKind::Wc => crate::os::mem::Caching::WriteCombining,
            RamKind::Uc => crate::os::mem::Caching::Uncached,
        }
    }
}

impl Target {
    pub fn label(&self) -> &str {
        match self {
            Target::Anon(k) => k.name(),
            Target::Ram(k) => k.name(),
            Target::Device(d) => d.kind,
        }
    }
}

/// One kind to measure; `explicit` when the user named it (then an
/// unavailable kind is an input error, not a skipped record).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Case {
    pub target: Target,
    pub explicit: bool,
}

/// Resolved options.
#[derive(Debug, Clone, serde::Serialize)]
pub struct MemtypePlan {
    /// Bytes copied per pass.
    pub size: usize,
    pub passes: usize,
    pub read_passes: usize,
    #[serde(serialize_with = "name")]
    pub copy: &'static Kernel,
    #[serde(serialize_with = "name")]
    pub read: &'static Kernel,
    pub cpu: u32,
    pub cases: Vec<Case>,
}

fn name<S: serde::Serializer>(k: &&'static Kernel, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(k.name)
}

/// Passes after which `kind`'s total time (first + (n-1)·mean) is no longer
/// above regular's and stays so; `None` = never (its steady passes are not
/// faster, and its first pass is slower).
pub fn break_even(first: f64, mean: f64, reg_first: f64, reg_mean: f64) -> Option<u64> {
    let d_first = first - reg_first;
    let d_mean = mean - reg_mean;
    if d_first <= 0.0 && d_mean <= 0.0 {
        return Some(1);
    }
    if d_mean >= 0.0 {
        return None;
    }
    // first + (n-1)·mean ≤ reg_first + (n-1)·reg_mean  ⇔  n-1 ≥ d_first / -d_mean
    Some(1 + (d_first / -d_mean).ceil() as u64)
}

pub const DESCRIPTOR: Descriptor = Descriptor {
    id: SuiteId::Memtype,
    about: "memory kinds available here: first-use cost, copy and read bandwidth, break-even",
    reads_clock: true,
    quick: Some(quick),
    key: Some(Key {
        about: "the memory kinds available: first-use cost, copy and read bandwidth",
        plan: key,
    }),
};

/// A fleet node's run: the survey's (memtype times passes, not samples).
fn key(host: &Host, _: Sampling) -> Planned {
    quick(host)
}

/// The survey's run: every anonymous kind, 10 copy passes and 3 reads.
fn quick(host: &Host) -> Planned {
    let o = MemtypeOptions {
        passes: Some(10),
        read_passes: Some(3),
        ..MemtypeOptions::default()
    };
    Ok(Box::new(plan(&o, host)?))
}

/// How long the plan will take (see `suites::estimate` for the rule).
fn estimate(p: &MemtypePlan) -> Estimate {
    // Untimed by a sampler: every pass copies (or reads) the buffer once,
    // the first one faulting it in; count them all at the fault rate (the
    // slowest kinds, uncached device memory, are slower still).
    let passes = (p.passes + p.read_passes + 2) as f64;
    Estimate {
        seconds: p.cases.len() as f64 * passes * p.size as f64 * 2.0 / FAULT_BPS,
        rule: format!(
            "{} kinds × ({} copy + {} read passes + 2) × 2 × {} B at {} GB/s",
            p.cases.len(),
            p.passes,
            p.read_passes,
            p.size,
            FAULT_BPS / 1e9
        ),
    }
}

impl Plan for MemtypePlan {
    const ID: SuiteId = SuiteId::Memtype;

    fn estimate(&self) -> Estimate {
        estimate(self)
    }

    fn execute(&self, cx: &mut Ctx) -> anyhow::Result<Flow> {
        team::on_cpu(self.cpu, || run(self, cx)).map_err(|e| UserError::flag("--cpu", e))?
    }
}

/// Run every case on the calling (pinned) thread, pushing a record each.
fn run(plan: &MemtypePlan, cx: &mut Ctx) -> anyhow::Result<Flow> {
    let src = Buffer::new(plan.size, PageKind::Regular, 0x5eed)?;
    let mut baseline: Option<(f64, f64)> = None;
    cx.plan_steps(plan.cases.len() as u64);
    for case in &plan.cases {
        if cx.stopped() {
            return Ok(Flow::Stopped);
        }
        let label = case.target.label().to_string();
        cx.step(&label);
        if let Target::Anon(k) = case.target {
            if let Err(reason) = kind::check_available(k, plan.size as u64, 1) {
                cx.push(skipped(plan, &label, reason))?;
                continue;
            }
        }
        let rec = match measure(plan, case, &src) {
            Outcome::Done(t) => record(plan, case, &t, cx.host, &mut baseline),
            Outcome::Skipped(reason) => skipped(plan, &label, reason),
            Outcome::Failed(msg) => {
                let mut r = Record::error(SuiteId::Memtype, plan.copy.name, msg);
                r.memory = Some(MemoryInfo {
                    kind: label,
                    ..MemoryInfo::default()
                });
                r
            }
        };
        cx.push(rec)?;
    }
    Ok(Flow::Done)
}

fn skipped(plan: &MemtypePlan, label: &str, reason: String) -> Record {
    let mut r = Record::skipped(SuiteId::Memtype, plan.copy.name, reason);
    r.memory = Some(MemoryInfo {
        kind: label.into(),
        ..MemoryInfo::default()
    });
    r
}

fn record(
    plan: &MemtypePlan,
    case: &Case,
    t: &Timed,
    host: &Host,
    baseline: &mut Option<(f64, f64)>,
) -> Record {
    let n = plan.size as u64;
    let k = plan.copy;
    let samples: Vec<Sample> = t
        .passes
        .iter()
        .map(|&s| Sample {
            seconds: s,
            bytes: 2 * n,
            probe: None,
        })
        .collect();
    let rates: Vec<f64> = t.passes.iter().map(|s| 2.0 * n as f64 / s / 1e9).collect();
    let payload: Vec<f64> = t.passes.iter().map(|s| n as f64 / s / 1e9).collect();
    let reads: Vec<f64> = t.reads.iter().map(|s| n as f64 / s / 1e9).collect();
    let mean = t.passes.iter().sum::<f64>() / t.passes.len() as f64;
    let best = t.passes.iter().copied().fold(f64::INFINITY, f64::min);
    let total = t.setup + t.first;
    let (break_even, break_even_passes, ahead_for_passes) =
        against_baseline(&case.target, total, mean, baseline);
    let mut detail = MemtypeDetail {
        buffer_bytes: Some(n),
        setup_seconds: Some(t.setup),
        first_pass_seconds: Some(t.first),
        first_total_seconds: Some(total),
        first_total_ms_per_mib: Some(total * 1e3 / (n as f64 / (1u64 << 20) as f64)),
        first_pass_payload_gbps: Some(n as f64 / t.first / 1e9),
        pass_mean_seconds: Some(mean),
        pass_best_seconds: Some(best),
        steady_mean_payload_gbps: Some(n as f64 / mean / 1e9),
        read_kernel: Some(plan.read.name.into()),
        read_gbps: stats::summarize(&reads, true).into(),
        verified: Some(t.verified.clone()),
        data_verified: Some(true),
        break_even: Some(break_even),
        break_even_passes,
        ahead_for_passes,
        ..MemtypeDetail::default()
    };
    target_detail(&mut detail, &case.target, t);
    let mut r = Record {
        kernel: k.name.into(),
        op: crate::model::Op::Copy,
        width_bits: (k.width_bits > 0).then_some(k.width_bits),
        nontemporal: Some(k.nontemporal),
        pattern: Some(k.pattern.clone()),
        size_bytes: Some(2 * n),
        threads: 1,
        cpus: vec![plan.cpu],
        regime: host.regime_of(2 * n, 1, Curve::Bandwidth),
        bytes_read_per_pass: Some(n),
        bytes_written_per_pass: Some(n),
        payload_bytes_per_pass: Some(n),
        reps_per_sample: Some(1),
        samples,
        gbps: stats::summarize(&rates, true),
        payload_gbps: stats::summarize(&payload, true),
        memory: Some(t.info.clone()),
        ..Record::new(detail)
    };
    super::record::label(&mut r, k, host);
    // Device mappings (WC/UC BARs, framebuffers) are not the DRAM path.
    if !t.info.kind.starts_with("device") {
        r.set_limit(super::record::limit(&r, k, host));
    }
    r.warnings
        .extend(super::record::bandwidth_warnings(&r, k, host));
    r.warnings.extend(protection_warning(&case.target, t));
    r
}

/// A kind's break-even against regular pages (`total` its set-up and
/// first pass, `mean` its steady pass, seconds): regular pages are the
/// baseline the later kinds are judged by, so they set `baseline`.
fn against_baseline(
    target: &Target,
    total: f64,
    mean: f64,
    baseline: &mut Option<(f64, f64)>,
) -> (BreakEven, Nullable<u64>, Option<u64>) {
    match (target, *baseline) {
        (Target::Anon(PageKind::Regular), _) => {
            *baseline = Some((total, mean));
            (BreakEven::Baseline, Nullable::Null, None)
        }
        (_, Some((rf, rm))) => {
            let be = break_even(total, mean, rf, rm);
            // Ahead at first, behind in the long run.
            let ahead =
                (total < rf && mean > rm).then(|| 1 + ((rf - total) / (mean - rm)).floor() as u64);
            let verdict = if be.is_some() {
                BreakEven::Passes
            } else {
                BreakEven::Never
            };
            (verdict, be.into(), ahead)
        }
        (_, None) => (BreakEven::NoBaseline, Nullable::Null, None),
    }
}

/// What the detail says of the memory itself: the caching type asked
/// and got (RAM), the device, its range and its PAT types (device).
fn target_detail(detail: &mut MemtypeDetail, target: &Target, t: &Timed) {
    if let Target::Ram(k) = target {
        detail.protection_asked = Some(k.caching().protection().into());
        detail.protection_got = t.protection.clone().into();
    }
    if let Target::Device(d) = target {
        detail.case_device = Some(d.path.clone());
        detail.device_what = Some(d.what.clone());
        detail.phys_start = Some(d.phys_start);
        match &t.pat {
            Some(Ok(types)) => {
                detail.pat_type = (types.len() == 1).then(|| types[0].clone()).into();
                detail.pat_types = Some(types.clone());
            }
            Some(Err(why)) => {
                detail.pat_type = Nullable::Null;
                detail.pat_note = Some(why.clone());
            }
            None => {}
        }
    }
}

/// RAM of a caching type the system did not apply measures other memory.
fn protection_warning(target: &Target, t: &Timed) -> Option<crate::model::Warning> {
    let Target::Ram(kind) = target else {
        return None;
    };
    let asked = kind.caching().protection();
    (t.protection.as_deref() != Some(asked)).then(|| crate::model::Warning::Other {
        message: format!(
            "{} asked for {asked} but the system reports {}: it did not apply that caching type, so this record measures other memory",
            kind.name(),
            t.protection.as_deref().unwrap_or("nothing")
        ),
        hint: "wine accepts PAGE_WRITECOMBINE and drops it: run on Windows to measure write-combined memory".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn break_even_cases() {
        // codedivine.org's laptop: regular 22 ms first, 32 MB / 3.8 GB/s per pass; WC 81 ms
        // first, 32 MB / 5.7 GB/s: ~20 passes.
        let (rf, rm) = (0.022, 0.032 / 3.8);
        let (wf, wm) = (0.081, 0.032 / 5.7);
        let n = break_even(wf, wm, rf, rm).unwrap();
        assert!((20..=23).contains(&n), "{n}");
        // Slower to set up and slower per pass: never.
        assert_eq!(break_even(0.164, 0.032 / 0.33, rf, rm), None);
        // Faster on both: from the first pass.
        assert_eq!(break_even(0.01, 0.001, rf, rm), Some(1));
        // Exactly equal passes but slower first: never.
        assert_eq!(break_even(0.03, rm, rf, rm), None);
    }
}
