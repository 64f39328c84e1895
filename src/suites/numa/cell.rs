//! What every NUMA cell shares: fixed-work mix measurement, records,
//! placement verification (move_pages census) and refusal bookkeeping.

use super::*;
use crate::measure::team::BUFFER_SLACK;

/// Fraction of all pages of the team's buffers on `intended[i]`, and the
/// fraction per worker ([`Team::placed_on`]).
pub(super) fn verify(team: &Team, intended: &[u32], ws: usize) -> Result<(f64, Vec<f64>), String> {
    team.placed_on(intended, ws)
}

/// A measured mix: the sampler's result and what one pass of each worker
/// reads and writes.
pub(super) struct MixMeasured {
    pub(super) m: Measured,
    pub(super) passes: Vec<(u64, u64)>,
}

/// Measure per-thread `mixes` on `team` for one cell, calibrated or at
/// `fixed` passes per sample (the same work in every case of a
/// comparison): the measurement, `Err` with the reason to skip the cell,
/// or `None` when the run was stopped.
pub(super) fn measure_cell(
    team: &Team,
    ks: MixKernels,
    mixes: &[Mix],
    ws: usize,
    fixed: Option<u64>,
    sampler: &Sampler,
) -> Option<Result<MixMeasured, String>> {
    let Some(mut w) = MixWork::new(team, ks, mixes, ws) else {
        return Some(Err(format!(
            "--size {} holds less than one group of 64 KiB chunks of this mix",
            format_bytes(ws as u64)
        )));
    };
    let passes = (0..mixes.len()).map(|i| w.pass_of(i)).collect();
    let m = match fixed {
        Some(reps) => sampler.measure_fixed(&mut w, reps),
        None => sampler.measure(&mut w, None),
    };
    match m {
        Ok(m) => Some(Ok(MixMeasured { m, passes })),
        Err(Failure::Stopped) => None,
        Err(Failure::Failed(e)) => Some(Err(e)),
    }
}

/// A team on `cpus` whose worker `i` has its memory on `nodes[i]`, or why
/// the memory cannot be placed there (the first refusal is kept for the
/// run's error when no cell could be placed).
pub(super) fn cell_team(
    cpus: &[u32],
    ws: usize,
    page: PageKind,
    nodes: &[u32],
    label: &str,
    refusals: &mut Refusals,
) -> Result<Team, String> {
    match Team::spawn_bound(cpus, ws + BUFFER_SLACK, page, Some(nodes)) {
        Ok(t) => {
            refusals.any_ok = true;
            Ok(t)
        }
        Err(e) => {
            refusals.first.get_or_insert(e.to_string());
            Err(format!("cannot place memory on {label}: {e}"))
        }
    }
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
    let rates = m.m.rates(1e9);
    let (read_per_pass, written_per_pass) = m.passes[0];
    let uniform = mixes.iter().all(|x| *x == mixes[0]);
    let op = if !uniform {
        crate::model::Op::Mix
    } else {
        match (mixes[0].reads, mixes[0].writes) {
            (_, 0) => crate::model::Op::Read,
            (0, _) => crate::model::Op::Write,
            _ => crate::model::Op::Mix,
        }
    };
    let kernels: Vec<String> = {
        let mut v: Vec<&str> = mixes.iter().flat_map(|x| ks.describe(x)).collect();
        v.sort_unstable();
        v.dedup();
        v.into_iter().map(String::from).collect()
    };
    let detail = NumaDetail {
        kernels: Some(kernels),
        mix: Some(mixes.iter().map(|x| x.name().to_string()).collect()),
        chunk_bytes: Some(mix::CHUNK as u64),
        ..NumaDetail::default()
    };
    let mut r = Record {
        kernel,
        op: op.clone(),
        width_bits: Some(ks.read.width_bits),
        nontemporal: Some(mixes.iter().any(|x| x.nt)),
        pattern: Some(crate::model::Pattern::Seq),
        size_bytes: Some(ws),
        threads: cpus.len() as u32,
        cpus: cpus.to_vec(),
        regime: host.regime_of(ws, cpus.len() as u32, Curve::Bandwidth),
        bytes_read_per_pass: uniform.then_some(read_per_pass),
        bytes_written_per_pass: uniform.then_some(written_per_pass),
        payload_bytes_per_pass: uniform.then_some(read_per_pass + written_per_pass),
        reps_per_sample: Some(m.m.reps),
        samples: m.m.model_samples(),
        gbps: stats::summarize(&rates, true),
        payload_gbps: stats::summarize(&rates, true),
        per_thread_gbps: if cpus.len() > 1 {
            m.m.per_worker_best(|i| m.passes[i].0 + m.passes[i].1, 1e9)
        } else {
            Vec::new()
        },
        noise: m.m.noise,
        ..Record::new(detail)
    };
    // A DRAM-sized mix is bound by the memory system's peak (the whole
    // machine's: a per-node figure would need each node's channels).
    r.set_limit(host.limit(&crate::model::LimitCase {
        op,
        width_bits: r.width_bits,
        regime: r.regime.clone().unwrap_or(crate::model::Regime::Dram),
        cores: host.cores_of(cpus),
        hz: host.clock_hz,
        nontemporal: r.nontemporal.unwrap_or(false),
    }));
    r.warnings = spread_warnings(r.gbps.as_ref(), true);
    r.warnings.extend(noise_warnings(&r));
    sampled(&mut r, &m.m);
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
    let mut r = Record::skipped(SuiteId::Numa, kernel, reason);
    r.placement = Some(placement(cpu_node, memory_node, None, None));
    let d = detail_of(&mut r);
    d.case_cpu_node = Some(cpu_node);
    d.case_memory_node = Some(memory_node);
    r
}

/// The numa detail of a record this suite made.
pub(super) fn detail_of(r: &mut Record) -> &mut NumaDetail {
    match &mut r.detail {
        Detail::Numa(d) => d,
        other => unreachable!("a numa record with a {} detail", other.suite()),
    }
}

/// Set on the first refused binding, so a run where nothing could be
/// placed ends with a user error naming the flag.
pub(super) struct Refusals {
    pub(super) any_ok: bool,
    pub(super) first: Option<String>,
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
            detail_of(r).verified_fraction_per_thread = Some(each.clone());
            if *f < 0.999 {
                r.warnings.push(Warning::Other {
                    message: format!("only {:.1} % of the pages are on the intended node after the measurement", f * 100.0),
                    hint: "memory was short on that node or NUMA balancing moved pages; check numastat and kernel.numa_balancing".into(),
                });
            }
        }
        Err(e) => detail_of(r).verify_error = Some(e.clone()),
    }
    detail_of(r).numa_pages_migrated = migrated.into();
}

/// Kernel name of the chase records (kept from the first version, so old
/// runs compare; the chase is the registry's `chase_latency_64_scalar`).
pub const CHASE_KERNEL: &str = "chase_64_scalar";

/// Chase a random single cycle through the first `ws` bytes at `base` on
/// the calling thread, with the same chain, warm-up and sampler as the
/// latency suite.
///
/// # Safety
/// `base..base + ws` must be writable memory the caller owns, 64-byte
/// aligned, for the duration of the call.
pub(super) unsafe fn chase_at(
    base: *mut u8,
    ws: usize,
    seed: u64,
    sampler: &Sampler,
) -> Result<Measured, Failure> {
    let k = crate::measure::chase::kernel()
        .ok_or_else(|| Failure::Failed("no pointer-chase kernel on this architecture".into()))?;
    let lines = ws / crate::measure::chase::LINE;
    let order = crate::kernels::perm::random_cycle(lines, seed);
    let start = crate::measure::chase::write_chain(base, crate::measure::chase::LINE, &order);
    drop(order);
    let warm = (lines as u64)
        .div_ceil(crate::measure::chase::HOPS_PER_REP)
        .min(1 << 12);
    let mut w = crate::measure::chase::Chase::new(k, start, warm);
    sampler.measure(&mut w, None)
}

pub(super) fn latency_record(m: &Measured, host: &Host, cpus: &[u32], ws: u64) -> Record {
    let ns: Vec<f64> = m.rates(1.0).iter().map(|l| 1e9 / l).collect();
    let lat = stats::summarize(&ns, false);
    let detail = NumaDetail {
        latency_ns: lat.into(),
        latency_ns_samples: Some(ns),
        loads_per_sample: Some(m.units_per_sample),
        ..NumaDetail::default()
    };
    let mut r = Record {
        kernel: CHASE_KERNEL.into(),
        op: crate::model::Op::Latency,
        width_bits: Some(64),
        nontemporal: Some(false),
        pattern: Some(crate::model::Pattern::Chase),
        size_bytes: Some(ws),
        threads: cpus.len() as u32,
        cpus: cpus.to_vec(),
        regime: host.chase_regime(ws, lat.map(|s| s.median)),
        noise: m.noise,
        ..Record::new(detail)
    };
    r.warnings = spread_warnings(lat.as_ref(), false);
    r.warnings.extend(noise_warnings(&r));
    sampled(&mut r, m);
    r
}

/// A measured cell more than this much worse than its claim is named.
pub const CLAIM_SHORTFALL: f64 = 0.75;

/// Name the cell's memory kind and set its HMAT claim beside it, with a
/// warning naming both when the cell is more than 25 % worse.
pub(super) fn annotate(r: &mut Record, host: &Host) {
    let Some(p) = &r.placement else { return };
    let (Some(cpu_node), Some(mem)) = (p.cpu_node, p.memory_node) else {
        return;
    };
    let Some(node) = host.tiers.as_ref().and_then(|t| t.node(mem)) else {
        return;
    };
    let claim = node.claim_for(cpu_node).cloned();
    let is_read = r.op == crate::model::Op::Read;
    let best_gbps = r.gbps.as_ref().map(|s| s.best);
    let d = detail_of(r);
    d.memory_kind = Some(node.kind.name().into());
    let best_ns = match &d.latency_ns {
        crate::model::Nullable::Value(s) => Some(s.best),
        _ => None,
    };
    let Some(c) = claim else { return };
    let (measured, claimed, unit, worse) = if is_read {
        let (Some(m), Some(bw)) = (best_gbps, c.read_bandwidth_mbps) else {
            return;
        };
        let claimed = bw as f64 / 1000.0;
        (m, claimed, "GB/s", m < claimed * CLAIM_SHORTFALL)
    } else if let (Some(m), Some(ns)) = (best_ns, c.read_latency_ns) {
        let claimed = ns as f64;
        (m, claimed, "ns", m * CLAIM_SHORTFALL > claimed)
    } else {
        return;
    };
    d.hmat_claim = Some(claimed);
    if worse {
        r.warnings.push(Warning::BelowHmat {
            cpu_node,
            memory_node: mem,
            measured,
            claimed,
            unit: unit.into(),
        });
    }
}
