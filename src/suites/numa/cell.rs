//! What every NUMA cell shares: fixed-work mix measurement, records,
//! placement verification (move_pages census) and refusal bookkeeping.

use super::*;

/// Fraction of all pages of the team's buffers on `intended[i]`, and the
/// fraction per worker.
pub(super) fn verify(team: &Team, intended: &[u32], ws: usize) -> Result<(f64, Vec<f64>), String> {
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
pub(super) struct MixMeasured {
    pub(super) samples: Vec<Sample>,
    pub(super) per_thread_best: Vec<f64>,
    pub(super) max_skew: f64,
    pub(super) reps: u64,
    pub(super) read_per_pass: u64,
    pub(super) written_per_pass: u64,
    pub(super) noise: Option<crate::model::Noise>,
}

pub(super) fn measure_mix(
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
    let noise = noise::since(before);
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
pub(super) fn mix_record(
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
        if g.cv > crate::model::limits::CV {
            r.warnings.push(Warning::HighCv { cv: g.cv });
        }
    }
    r
}

pub(super) fn mix_kernel_name(mixes: &[Mix], roles: bool) -> String {
    if roles {
        format!(
            "roles_{}",
            mixes.iter().map(|m| m.name()).collect::<Vec<_>>().join("+")
        )
    } else {
        format!("mix_{}", mixes[0].name())
    }
}

pub(super) fn placement(
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
pub(super) fn skipped_cell(
    kernel: &str,
    cpu_node: u32,
    memory_node: u32,
    reason: String,
) -> Record {
    let mut r = Record::skipped("numa", kernel, reason);
    r.placement = Some(placement(cpu_node, memory_node, None, None));
    r.extra.insert("case_cpu_node".into(), cpu_node.into());
    r.extra
        .insert("case_memory_node".into(), memory_node.into());
    r
}

pub(super) fn page_kind(p: &NumaPlan) -> PageKind {
    crate::suites::cache::page_kind(p.memory)
}

/// Set on the first refused binding, so a run where nothing could be
/// placed ends with a user error naming the flag.
pub(super) struct Refusals {
    pub(super) any_ok: bool,
    pub(super) first: Option<String>,
}

pub(super) fn observed_cpus(team: &Team) -> serde_json::Value {
    let v: Vec<Option<u32>> = (0..team.threads())
        .map(|i| team.inspect(i, |_| current_cpu()))
        .collect();
    serde_json::to_value(v).expect("plain")
}

pub(super) fn apply_verification(
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

/// Kernel name of the chase records.
pub const CHASE_KERNEL: &str = "chase_64_scalar";

pub(super) fn latency_record(lat: &chase::Latency, host: &Host, cpus: &[u32], ws: u64) -> Record {
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
