//! One case: warm-up, calibration, samples, byte counting, verification,
//! the zero-copy verdict; and the CPU read/write probe of a host kind.

use super::*;
use crate::measure::sampler::Call;

/// The verification seed of one (kind, size, direction) case.
pub(super) fn seed(ki: usize, size: u64, dir: Route) -> u64 {
    (ki as u64)
        .wrapping_add(1)
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        ^ size.rotate_left(17)
        ^ dir as u64
}

/// Fill `buf` with the pseudo-random pattern of `seed` (its bitwise
/// complement with `invert`): the destination is pre-filled with the
/// complement, so a copy that moves nothing cannot pass.
pub(super) fn fill(buf: &mut [u8], seed: u64, invert: bool) {
    let mut rng = crate::util::rng::XorShift64::new(seed | 1);
    let mask = if invert { u64::MAX } else { 0 };
    for c in buf.chunks_mut(8) {
        let x = (rng.next_u64() ^ mask).to_le_bytes();
        c.copy_from_slice(&x[..c.len()]);
    }
}

/// Compare `got` with the pattern of `seed`, regenerated on the fly (no
/// second buffer: verification at 1 GiB needs one scratch buffer only),
/// and describe the first difference.
pub(super) fn check(got: &[u8], seed: u64) -> Result<(), String> {
    let mut rng = crate::util::rng::XorShift64::new(seed | 1);
    let (mut bad, mut first) = (0usize, None);
    for (i, c) in got.chunks(8).enumerate() {
        let want = rng.next_u64().to_le_bytes();
        for (j, (a, b)) in c.iter().zip(&want).enumerate() {
            if a != b {
                bad += 1;
                first.get_or_insert(i * 8 + j);
            }
        }
    }
    match first {
        None => Ok(()),
        Some(f) => Err(format!(
            "{} of {} bytes differ, first at offset {}",
            bad,
            got.len(),
            f
        )),
    }
}

/// Pattern written, copied, read back, compared. `Ok(Err(msg))` is a
/// mismatch; `Err` a driver failure; `Ok(Ok(None))`: nothing to check.
pub(super) fn verify(
    s: &mut dyn Session,
    dir: Route,
    n: usize,
    seed: u64,
) -> Result<Result<Option<bool>, String>, DriverError> {
    let mut scratch = vec![0u8; n];
    let r = match dir.copy_of() {
        Route::H2d => {
            fill(s.host(0), seed, false);
            fill(&mut scratch, seed, true);
            s.write_device(0, &scratch)?;
            s.run(dir, 1)?;
            s.read_device(0, &mut scratch)?;
            check(&scratch, seed)
        }
        Route::D2h => {
            fill(&mut scratch, seed, false);
            s.write_device(0, &scratch)?;
            fill(s.host(0), seed, true);
            s.run(dir, 1)?;
            check(s.host(0), seed)
        }
        Route::D2d => {
            fill(&mut scratch, seed, false);
            s.write_device(0, &scratch)?;
            fill(&mut scratch, seed, true);
            s.write_device(1, &scratch)?;
            s.run(dir, 1)?;
            s.read_device(1, &mut scratch)?;
            check(&scratch, seed)
        }
        Route::Bidir => {
            let seed2 = seed ^ 0x5555;
            fill(s.host(0), seed, false);
            fill(&mut scratch, seed, true);
            s.write_device(0, &scratch)?;
            fill(&mut scratch, seed2, false);
            s.write_device(1, &scratch)?;
            fill(s.host(1), seed2, true);
            s.run(Route::Bidir, 1)?;
            s.read_device(0, &mut scratch)?;
            check(&scratch, seed)
                .map_err(|m| format!("h2d half: {}", m))
                .and_then(|_| check(s.host(1), seed2).map_err(|m| format!("d2h half: {}", m)))
        }
        Route::H2dSm | Route::D2hSm | Route::D2dSm => unreachable!("copy_of"),
        Route::Map => {
            fill(s.host(0), seed, false);
            fill(&mut scratch, seed, true);
            match s.map_roundtrip(&mut scratch)? {
                None => return Ok(Ok(None)),
                Some(()) => check(&scratch, seed),
            }
        }
    };
    Ok(r.map(|_| Some(true)))
}

/// A transfer session as a workload: `run(reps)` enqueues `reps` copies
/// in `dir` and synchronises; the host clock spans the batch and the
/// device's events are carried along. Every call's timing is kept (the
/// bidirectional record needs each direction's device time), and a driver
/// error is kept for the error record.
pub(super) struct TransferWork<'s> {
    s: &'s mut dyn Session,
    dir: Route,
    units_per_rep: u64,
    pub(super) timed: Vec<Timed>,
    pub(super) error: Option<DriverError>,
}

impl<'s> TransferWork<'s> {
    pub(super) fn new(s: &'s mut dyn Session, dir: Route, units_per_rep: u64) -> Self {
        TransferWork {
            s,
            dir,
            units_per_rep,
            timed: Vec::new(),
            error: None,
        }
    }

    fn call(&mut self, reps: u64) -> Result<Timed, String> {
        let (s, dir) = (&mut *self.s, self.dir);
        transfer::catch(dir.name(), || s.run(dir, reps)).map_err(|e| {
            let msg = e.to_string();
            self.error = Some(e);
            msg
        })
    }
}

impl Workload for TransferWork<'_> {
    fn units_per_rep(&self) -> u64 {
        self.units_per_rep
    }

    /// The first call pays for driver and context set-up: never timed.
    fn warm_up(&mut self) -> Result<(), String> {
        self.call(1).map(|_| ())
    }

    fn run(&mut self, reps: u64) -> Result<Call, String> {
        let start_ns = crate::measure::now_ns();
        let t = self.call(reps)?;
        self.timed.push(t);
        Ok(Call {
            stamps: vec![Stamp {
                start_ns,
                // The session's own host-clock span of the batch.
                end_ns: start_ns + (t.host_s * 1e9) as u64,
                checksum: 0,
                // The host thread waits on the device by design: its time
                // off the cpu says nothing of the copy.
                on_cpu: None,
            }],
            device_seconds: t.device_s,
        })
    }
}

pub(super) fn rates(bytes: u64, secs: impl Iterator<Item = Option<f64>>) -> Option<Vec<f64>> {
    secs.map(|s| s.filter(|s| *s > 0.0).map(|s| bytes as f64 / s / 1e9))
        .collect()
}

/// One transfer case: sampled, counted, verified. `Ok(None)` when a stop
/// request came first; `Err` a driver failure.
#[allow(clippy::too_many_arguments)]
pub(super) fn measure_case(
    env: &Env,
    s: &mut dyn Session,
    kind: HostKind,
    dir: Route,
    size: u64,
    timer: Timer,
    reference_gbps: Option<f64>,
    ki: usize,
) -> Result<Option<Record>, DriverError> {
    let plan = env.plan;
    let host_kind = (!dir.device_only()).then_some(kind);
    let mut r = env.base(
        kernel_name(&plan.backend, dir.name(), host_kind),
        dir.into(),
        host_kind,
        dir.name(),
        size,
    );
    // Bytes per copy under the suite's convention.
    let per_copy = match dir.copy_of() {
        Route::D2d | Route::Bidir => 2 * size,
        _ => size,
    };
    let Some((reps, timed)) = sample_case(env, &mut *s, dir, per_copy, ki)? else {
        return Ok(None);
    };
    let bytes = per_copy * reps;
    let rates = CaseRates::new(&timed, bytes, timer);
    r.reps_per_sample = Some(reps);
    r.payload_bytes_per_pass = Some(size);
    if dir.device_only() {
        r.bytes_read_per_pass = Some(size);
        r.bytes_written_per_pass = Some(size);
    }
    timing_detail(&mut r, dir, size * reps, &timed, &rates);
    let g = stats::summarize(&rates.headline, true);
    // Zero-copy: a map that "moves" bytes faster than any real copy moved
    // nothing. Report the time it takes, never a bandwidth.
    let zero_copy = dir == Route::Map
        && is_zero_copy(plan.device.host_unified, g.map(|g| g.best), reference_gbps);
    if dir == Route::Map {
        let per_map: Vec<f64> = timed.iter().map(|t| t.host_s / reps as f64).collect();
        let d = detail_of(&mut r);
        d.zero_copy = Some(zero_copy);
        d.map_unmap_seconds = stats::summarize(&per_map, false).into();
        d.reference_copy_gbps = reference_gbps.into();
    }
    if zero_copy {
        zero_copy_figures(&mut r, plan, &rates.secs);
    } else {
        copy_figures(&mut r, plan, dir, &rates, bytes, g);
    }
    if let Some(p) = host_kind.map(|_| s.host(0).as_ptr() as usize) {
        r.memory = Some(memory_info(kind, p, size));
        check_placement(&mut r, p, size as usize);
    }
    if plan.verify {
        verify_case(&mut r, s, dir, size, ki)?;
    }
    Ok(Some(r))
}

/// Samples the case with the sampler (starting from the calibration the
/// same kind and direction found at the last size, and leaving its own for
/// the next): the repetitions per sample and each sample's timing. `Ok(None)`
/// when a stop request came first; `Err` the driver's failure.
fn sample_case(
    env: &Env,
    s: &mut dyn Session,
    dir: Route,
    per_copy: u64,
    ki: usize,
) -> Result<Option<(u64, Vec<Timed>)>, DriverError> {
    let mut w = TransferWork::new(s, dir, per_copy);
    let hint = env.hints.borrow().get(&(ki, dir.name())).copied();
    let m = match env.sampler.measure(&mut w, hint) {
        Ok(m) => {
            env.hints.borrow_mut().insert((ki, dir.name()), m.hint());
            m
        }
        Err(Failure::Stopped) => return Ok(None),
        Err(Failure::Failed(msg)) => {
            return Err(w
                .error
                .take()
                .unwrap_or_else(|| DriverError::new(dir.name(), msg)))
        }
    };
    let timed: Vec<Timed> = w.timed[w.timed.len() - m.samples.len()..].to_vec();
    Ok(Some((m.reps, timed)))
}

/// A case's samples by each clock: GB/s by the host clock and by the
/// device's events (None where a sample has no figure), and the headline
/// rates and seconds by the timer used (`--timer`, or the host clock where
/// the device gave no events).
struct CaseRates {
    host: Option<Vec<f64>>,
    event: Option<Vec<f64>>,
    headline: Vec<f64>,
    used: Timer,
    secs: Vec<f64>,
}

impl CaseRates {
    fn new(timed: &[Timed], bytes: u64, timer: Timer) -> Self {
        let host = rates(bytes, timed.iter().map(|t| Some(t.host_s)));
        let event = rates(bytes, timed.iter().map(|t| t.device_s));
        let (headline, used) = match (timer, &event) {
            (Timer::DeviceEvents, Some(ev)) => (ev.clone(), Timer::DeviceEvents),
            _ => (host.clone().unwrap_or_default(), Timer::HostClock),
        };
        let secs: Vec<f64> = timed
            .iter()
            .map(|t| match used {
                Timer::DeviceEvents => t.device_s.unwrap_or(t.host_s),
                Timer::HostClock => t.host_s,
            })
            .collect();
        CaseRates {
            host,
            event,
            headline,
            used,
            secs,
        }
    }
}

/// The record's account of how the case was timed: the timer, the engine,
/// whether the start was blocked, how bytes count, each clock's GB/s, and
/// for the bidirectional case each direction's (`per_dir_bytes` a
/// direction moves per sample).
fn timing_detail(
    r: &mut Record,
    dir: Route,
    per_dir_bytes: u64,
    timed: &[Timed],
    rates: &CaseRates,
) {
    let summary = |v: Option<Vec<f64>>| v.as_deref().and_then(|v| stats::summarize(v, true));
    let d = detail_of(r);
    d.timer = Some(rates.used);
    d.engine = Some(if dir.is_sm() { "sm" } else { "copy-engine" }.into());
    d.start_blocker = Some(!timed.is_empty() && timed.iter().all(|t| t.blocked));
    d.bytes_counted = Some(bytes_counted(dir).into());
    d.host_gbps = summary(rates.host.clone()).into();
    d.event_gbps = summary(rates.event.clone()).into();
    if dir == Route::Bidir {
        let per = |i: usize| rates_of(per_dir_bytes, timed, i);
        d.h2d_gbps = summary(per(0)).into();
        d.d2h_gbps = summary(per(1)).into();
    }
}

/// GB/s of direction `i` of each bidirectional sample.
fn rates_of(bytes: u64, timed: &[Timed], i: usize) -> Option<Vec<f64>> {
    rates(bytes, timed.iter().map(|t| t.per_dir_s.map(|p| p[i])))
}

/// A zero-copy map's samples: its time, with no bytes moved and no
/// bandwidth, and a note saying why.
fn zero_copy_figures(r: &mut Record, plan: &Plan, secs: &[f64]) {
    r.samples = secs
        .iter()
        .map(|&s| Sample {
            seconds: s,
            bytes: 0,
            probe: None,
        })
        .collect();
    detail_of(r).note = Some(
        if plan.device.host_unified == Some(true) {
            "zero-copy: host and device share memory, map/unmap moved no data"
        } else {
            "zero-copy: map/unmap was faster than 3x the best real copy, so it moved no data"
        }
        .into(),
    );
}

/// A copy's samples and bandwidth (`g`, from the headline rates), the
/// payload's share of it, and the warnings on its spread and on a rate
/// above the link.
fn copy_figures(
    r: &mut Record,
    plan: &Plan,
    dir: Route,
    rates: &CaseRates,
    bytes: u64,
    g: Option<Stats>,
) {
    let payload_ratio = if dir.device_only() { 0.5 } else { 1.0 };
    r.samples = rates
        .secs
        .iter()
        .map(|&s| Sample {
            seconds: s,
            bytes,
            probe: None,
        })
        .collect();
    r.gbps = g;
    r.payload_gbps = stats::summarize(
        &rates
            .headline
            .iter()
            .map(|x| x * payload_ratio)
            .collect::<Vec<_>>(),
        true,
    );
    if let Some(g) = &g {
        r.warnings = spread_warnings(g);
        r.warnings.extend(above_link(plan, dir, g));
    }
    // Unified memory (Apple silicon, integrated GPUs, a CPU device): the
    // "device" buffer is in the same DRAM, so the figure is a memory copy.
    let host_device = matches!(
        dir.copy_of(),
        Route::H2d | Route::D2h | Route::Bidir
    );
    if plan.device.host_unified == Some(true) && host_device {
        r.warnings.push(Warning::Other {
            message: "host and device share memory: this copy moved bytes within the same DRAM, not over a link".into(),
            hint: "compare it with a memory copy of the same size (`bwscope cache`)".into(),
        });
    }
}

/// Checks the copy moved the right bytes (when `--verify`): a mismatch
/// makes the record an error with what differed; `Err` a driver failure.
fn verify_case(
    r: &mut Record,
    s: &mut dyn Session,
    dir: Route,
    size: u64,
    ki: usize,
) -> Result<(), DriverError> {
    match transfer::catch("verify", || {
        verify(s, dir, size as usize, seed(ki, size, dir))
    })? {
        Ok(v) => detail_of(r).verified = v.into(),
        Err(msg) => {
            detail_of(r).verified = Nullable::Value(false);
            r.status = Status::Error;
            r.reason = Some(format!("verification failed: {}", msg));
        }
    }
    Ok(())
}

/// How a direction's bytes are counted (`extra.bytes_counted`).
fn bytes_counted(dir: Route) -> &'static str {
    match dir.copy_of() {
        Route::D2d => "read+write",
        Route::Bidir => "both directions",
        _ => "payload",
    }
}

/// A copy across the PCIe link faster than the link's theoretical rate
/// (per direction; a bidirectional copy counts both).
fn above_link(plan: &Plan, dir: Route, g: &Stats) -> Option<Warning> {
    let l = plan.pci.as_ref().and_then(|c| c.theoretical_gbps)?;
    let per_dir_best = if dir == Route::Bidir {
        g.best / 2.0
    } else {
        g.best
    };
    let over_link = matches!(
        dir.copy_of(),
        Route::H2d | Route::D2h | Route::Bidir
    );
    (over_link && per_dir_best > l * limits::OVER_CEILING).then_some(Warning::AboveCeiling {
        gbps: per_dir_best,
        ceiling_gbps: l,
        bound_by: None,
    })
}

/// A map/unmap moved no data when host and device share memory, or when
/// its apparent rate beats 3× the best real copy of the same kind and size
/// (clpeak's rule), or is beyond any link (10 TB/s).
pub(super) fn is_zero_copy(
    host_unified: Option<bool>,
    map_best_gbps: Option<f64>,
    reference_gbps: Option<f64>,
) -> bool {
    host_unified == Some(true)
        || map_best_gbps.is_some_and(|g| {
            g > ZERO_COPY_ABSURD_GBPS || reference_gbps.is_some_and(|rf| g > ZERO_COPY_FACTOR * rf)
        })
}

pub(super) fn spread_warnings(g: &Stats) -> Vec<Warning> {
    let mut w = Vec::new();
    if g.cv > limits::CV {
        w.push(Warning::HighCv { cv: g.cv });
    }
    if g.median > 0.0 && g.best / g.median > limits::BEST_OVER_MEDIAN {
        w.push(Warning::BestMedianSpread {
            ratio: g.best / g.median,
        });
    }
    w
}

pub(super) fn memory_info(kind: HostKind, addr: usize, size: u64) -> MemoryInfo {
    let s = crate::os::mem::page_facts(addr);
    MemoryInfo {
        kind: kind.name().into(),
        page_bytes: s.as_ref().map(|s| s.kernel_page_bytes),
        thp_fraction: s
            .as_ref()
            .map(|s| (s.anon_huge_bytes as f64 / size as f64).min(1.0)),
        locked_fraction: s
            .as_ref()
            .map(|s| (s.locked_bytes as f64 / size as f64).min(1.0)),
    }
}

/// The widest cached (not non-temporal) sequential kernel of `op` that runs
/// here and whose alignment `addr` meets.
pub(super) fn probe_kernel(
    op: Op,
    addr: usize,
    f: &crate::model::Features,
) -> Option<&'static Kernel> {
    kernels::loops(op, kernels::Pattern::Seq, f)
        .filter(|k| !k.nontemporal && addr % k.align.max(1) == 0)
        .max_by_key(|k| k.width_bits)
}

/// CPU read and write bandwidth on one buffer of `kind`.
pub(super) fn cpu_probe(
    env: &Env,
    b: &mut dyn Backend,
    kind: HostKind,
    size: usize,
) -> Vec<Record> {
    let plan = env.plan;
    let name = |op: &str| format!("{}_cpu-{}_{}", plan.backend, op, kind.name());
    let needs = Needs::default();
    let mut session = match transfer::catch("prepare", || b.prepare(kind, size, needs)) {
        Ok(s) => s,
        Err(e) => {
            return [Op::Read, Op::Write]
                .into_iter()
                .map(|op| {
                    let dir = format!("cpu-{op}");
                    env.error(
                        name(op.as_str()),
                        Some(kind),
                        op,
                        &dir,
                        size as u64,
                        &e,
                    )
                })
                .collect()
        }
    };
    let buf = session.host(0);
    let addr = buf.as_mut_ptr();
    let mut out = Vec::new();
    for op in [Op::Read, Op::Write] {
        let dir = format!("cpu-{op}");
        let Some(k) = probe_kernel(op.clone(), addr as usize, &env.features) else {
            out.push(Record::skipped(
                SUITE,
                &name(op.as_str()),
                "no asm kernel fits this buffer's alignment",
            ));
            continue;
        };
        let len = size - size % k.granule;
        let mut r = env.base(name(op.as_str()), op.clone(), Some(kind), &dir, len as u64);
        r.width_bits = Some(k.width_bits);
        r.nontemporal = Some(false);
        r.pattern = Some(crate::model::Pattern::Seq);
        // SAFETY: addr is valid for len bytes (len ≤ the buffer) while the
        // session lives, aligned for k, len is a multiple of its granule,
        // and the ISA is present.
        let mut w = unsafe { Here::new(k, addr, len) };
        let Ok(m) = env.sampler.measure(&mut w, None) else {
            break;
        };
        let g = m.rates(1e9);
        r.samples = m.model_samples();
        r.reps_per_sample = Some(m.reps);
        r.bytes_read_per_pass = Some(if op == Op::Read { len as u64 } else { 0 });
        r.bytes_written_per_pass = Some(if op == Op::Write { len as u64 } else { 0 });
        r.payload_bytes_per_pass = Some(len as u64);
        r.gbps = stats::summarize(&g, true);
        r.payload_gbps = r.gbps;
        r.warnings = r.gbps.as_ref().map(spread_warnings).unwrap_or_default();
        r.memory = Some(memory_info(kind, addr as usize, len as u64));
        check_placement(&mut r, addr as usize, len);
        let d = detail_of(&mut r);
        d.cpu_kernel = Some(k.name.into());
        d.timer = Some(Timer::HostClock);
        out.push(r);
    }
    // The verdict goes on both records: reads far slower than writes mean
    // the CPU sees write-combined / uncached memory.
    let best = |op: crate::model::Op| {
        out.iter()
            .find(|r| r.op == op)
            .and_then(|r| r.gbps)
            .map(|g| g.best)
    };
    if let (Some(rd), Some(wr)) = (best(crate::model::Op::Read), best(crate::model::Op::Write)) {
        let ratio = rd / wr;
        for r in &mut out {
            let d = detail_of(r);
            d.cpu_read_over_write = Some(ratio);
            d.behaves_wc = Some(ratio < WC_READ_OVER_WRITE);
        }
    }
    out
}
