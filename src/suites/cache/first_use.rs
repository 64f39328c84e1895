//! The cost of first use (`bwscope cache --first-use`): for each size, map a
//! fresh buffer of the sweep's memory kind, then time the mapping, the first
//! write pass (page faults, zeroing, THP/hugetlb allocation, plus the
//! stores) and a second pass (steady state) separately.
//!
//! These are separate records (`op = "first-use"`, `case_first_use`)
//! and never feed the sweep's headline numbers, which are always taken on
//! pre-faulted buffers after a warm-up.

use std::time::Instant;

use crate::kernels::{self, Kernel, KernelArgs, Op, Pattern};
use crate::measure::team;
use crate::memory::{Buffer, PageKind};
use crate::model::detail::{self, CacheDetail};
use crate::model::{Curve, Host, MemoryInfo, Record, Sample, SuiteId};
use crate::stats;
use crate::suites::{Ctx, Flow};

/// Fresh mappings timed per size: first use cannot be repeated on one
/// buffer, so each repetition maps anew.
pub const REPETITIONS: usize = 3;

/// One repetition: seconds of map, first pass, second pass.
#[derive(Debug, Clone, Copy)]
pub struct FirstUse {
    pub map: f64,
    pub first: f64,
    pub second: f64,
}

/// Map `len` bytes of `kind` and time map, first and second write pass
/// with kernel `k` (a write kernel) on the calling thread.
fn time_first_use(
    k: &'static Kernel,
    len: usize,
    kind: PageKind,
) -> Result<(FirstUse, MemoryInfo), crate::error::UserError> {
    let stream = len - len % k.granule;
    let t0 = Instant::now();
    let mut b = Buffer::map(len, kind)?;
    let t1 = Instant::now();
    let args = KernelArgs::new(b.as_ptr(), b.as_mut_ptr(), stream, 1);
    // SAFETY: the buffer holds `stream` bytes, is 2 MiB aligned, and the
    // kernel is supported (chosen by `widest`).
    let c1 = unsafe { (k.func)(&args) };
    let t2 = Instant::now();
    // SAFETY: as above.
    let c2 = unsafe { (k.func)(&args) };
    let t3 = Instant::now();
    std::hint::black_box((c1, c2));
    let info = b.memory_info();
    Ok((
        FirstUse {
            map: (t1 - t0).as_secs_f64(),
            first: (t2 - t1).as_secs_f64(),
            second: (t3 - t2).as_secs_f64(),
        },
        info,
    ))
}

/// Time first use at every size of the plan, on the plan's first cpu.
pub fn run(plan: &super::CachePlan, cx: &mut Ctx) -> anyhow::Result<Flow> {
    let kind = plan.memory;
    let Some(k) = kernels::widest(Op::Write, Pattern::Seq, &cx.host.features) else {
        cx.push(Record::skipped(
            SuiteId::Cache,
            "first_use",
            "no sequential write kernel runs here",
        ))?;
        return Ok(Flow::Done);
    };
    let cpu = plan.cpus[0];
    for &size in &plan.sizes {
        if cx.stopped() {
            return Ok(Flow::Stopped);
        }
        let len = size as usize;
        if len < k.granule {
            continue;
        }
        cx.step(&format!(
            "first use {}",
            crate::util::units::format_bytes(size)
        ));
        let timed = team::on_cpu(cpu, || {
            (0..REPETITIONS)
                .map(|_| time_first_use(k, len, kind))
                .collect::<Result<Vec<_>, _>>()
        })
        .map_err(|e| crate::error::UserError::flag("--cpus", e))?;
        match timed {
            Ok(v) => cx.push(record(k, len - len % k.granule, &v, cx.host, cpu))?,
            Err(e) => cx.push(Record::skipped(
                SuiteId::Cache,
                k.name,
                format!("first use at {}: {}", size, e),
            ))?,
        }
    }
    Ok(Flow::Done)
}

fn record(
    k: &'static Kernel,
    stream: usize,
    reps: &[(FirstUse, MemoryInfo)],
    host: &Host,
    cpu: u32,
) -> Record {
    let bytes = stream as u64;
    let samples: Vec<Sample> = reps
        .iter()
        .map(|(f, _)| Sample {
            seconds: f.map + f.first,
            bytes,
            probe: None,
        })
        .collect();
    let rates: Vec<f64> = samples
        .iter()
        .map(|s| s.bytes as f64 / s.seconds / 1e9)
        .collect();
    let steady: Vec<f64> = reps
        .iter()
        .map(|(f, _)| bytes as f64 / f.second / 1e9)
        .collect();
    let col = |g: fn(&FirstUse) -> f64| Some(reps.iter().map(|(f, _)| g(f)).collect());
    let mib = bytes as f64 / (1u64 << 20) as f64;
    let mut per_mib: Vec<f64> = reps
        .iter()
        .map(|(f, _)| (f.map + f.first) * 1e3 / mib)
        .collect();
    per_mib.sort_by(f64::total_cmp);
    let facts = detail::FirstUse {
        case_first_use: Some(true),
        map_seconds: col(|f| f.map),
        first_pass_seconds: col(|f| f.first),
        second_pass_seconds: col(|f| f.second),
        first_use_ms_per_mib: Some(per_mib[per_mib.len() / 2]),
        steady_gbps: stats::summarize(&steady, true).into(),
    };
    Record {
        kernel: k.name.into(),
        op: crate::model::Op::FirstUse,
        width_bits: Some(k.width_bits),
        nontemporal: Some(false),
        pattern: Some(k.pattern.clone()),
        size_bytes: Some(bytes),
        threads: 1,
        cpus: vec![cpu],
        regime: host.regime_of(bytes, 1, Curve::Bandwidth),
        bytes_read_per_pass: Some(0),
        bytes_written_per_pass: Some(bytes),
        payload_bytes_per_pass: Some(bytes),
        reps_per_sample: Some(1),
        gbps: stats::summarize(&rates, true),
        payload_gbps: stats::summarize(&rates, true),
        samples,
        memory: reps.last().map(|(_, m)| m.clone()),
        ..Record::new(CacheDetail {
            first_use: facts,
            ..CacheDetail::default()
        })
    }
}
