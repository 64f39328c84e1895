//! Interleave across tiers: the read bandwidth of a team whose pages are
//! spread over a fast and a slow node in weighted ratios — 1:0, 4:1, 3:1,
//! 2:1, 1:1, 0:1 and the ratio of the two nodes' own bandwidths — and,
//! where the kernel has weighted interleave (Linux 6.9+), the weights in
//! force.
//!
//! The ratios are placed by binding page ranges (`mbind(MPOL_BIND)` on
//! runs of `a` pages to the fast node then `b` to the slow one, the
//! pattern the kernel's weighted interleave makes): its weights are
//! system-wide files, and bwscope never writes them, so the sweep cannot
//! go through them. `move_pages` counts where the pages landed. The best
//! ratio comes with the weights a user would write for it, and its gain
//! over the fast node alone.

use super::cell::*;
use super::*;

/// The swept ratios, pages on the fast node : on the slow one.
pub const RATIOS: &[(u32, u32)] = &[(1, 0), (4, 1), (3, 1), (2, 1), (1, 1), (0, 1)];

/// The kernel's weights range (`weighted_interleave/nodeN`).
const MAX_WEIGHT: u32 = 255;

const KERNEL: &str = "interleave_read";

/// `--interleave FAST,SLOW`: two distinct nodes with memory.
pub(super) fn parse_pair(host: &Host, spec: &str) -> Result<(u32, u32), UserError> {
    let flag = "--interleave";
    let bad = || {
        UserError::flag(
            flag,
            format!("'{spec}' is not two nodes: write FAST,SLOW (e.g. 0,2)"),
        )
    };
    let (a, b) = spec.split_once(',').ok_or_else(bad)?;
    let (a, b): (u32, u32) = (
        a.trim().parse().map_err(|_| bad())?,
        b.trim().parse().map_err(|_| bad())?,
    );
    if a == b {
        return Err(UserError::flag(flag, "the two nodes must differ"));
    }
    for n in [a, b] {
        match host.nodes.iter().find(|x| x.id == n) {
            None => return Err(UserError::flag(flag, format!("node {n} does not exist"))),
            Some(x) if x.memory_bytes == Some(0) => {
                return Err(UserError::flag(flag, format!("node {n} has no memory")))
            }
            _ => {}
        }
    }
    Ok((a, b))
}

/// The ratio of two bandwidths in the kernel's weights (1..=255 each),
/// within 2 % where small weights allow; why not where none can say it.
pub fn proportional(fast_gbps: f64, slow_gbps: f64) -> Result<(u32, u32), String> {
    if !(fast_gbps > 0.0 && slow_gbps > 0.0 && fast_gbps.is_finite() && slow_gbps.is_finite()) {
        return Err(format!(
            "no bandwidth-proportional weights: the nodes read {fast_gbps:.2} and {slow_gbps:.2} GB/s"
        ));
    }
    let r = fast_gbps / slow_gbps;
    let mut best: Option<(u32, u32, f64)> = None;
    for b in 1..=MAX_WEIGHT {
        let a = (r * b as f64).round();
        if a < 1.0 || a > MAX_WEIGHT as f64 {
            continue;
        }
        let err = ((a / b as f64) - r).abs() / r;
        if best.is_none_or(|x| err < x.2) {
            best = Some((a as u32, b, err));
        }
        if err < 0.02 {
            break;
        }
    }
    best.map(|(a, b, _)| (a, b)).ok_or_else(|| {
        format!("the bandwidth ratio {r:.3} cannot be expressed in weights of 1 to {MAX_WEIGHT}")
    })
}

/// Place each worker's buffer in the ratio: runs of `a` pages on `fast`,
/// `b` on `slow`.
fn place(
    team: &Team,
    ws: usize,
    (fast, slow): (u32, u32),
    (a, b): (u32, u32),
) -> Result<(), String> {
    const PAGE: usize = 4096;
    for i in 0..team.threads() {
        team.inspect(i, move |buf| {
            let base = buf.as_mut_ptr();
            let len = ws.min(buf.len()) / PAGE * PAGE;
            let (ra, rb) = (a as usize * PAGE, b as usize * PAGE);
            let mut at = 0;
            while at < len {
                for (run, node) in [(ra, fast), (rb, slow)] {
                    let n = run.min(len - at);
                    if n > 0 {
                        // SAFETY: a page-aligned range of the worker's own
                        // buffer.
                        unsafe { numa::bind_range(base.add(at), n, node)? };
                        at += n;
                    }
                }
            }
            Ok::<(), String>(())
        })?;
    }
    Ok(())
}

/// Spread each worker's buffer with the kernel's weighted interleave.
fn place_system(team: &Team, ws: usize, nodes: [u32; 2]) -> Result<(), String> {
    for i in 0..team.threads() {
        team.inspect(i, move |buf| {
            let len = ws.min(buf.len()) / 4096 * 4096;
            // SAFETY: the worker's own buffer, page aligned.
            unsafe { crate::os::numa::weighted_interleave_range(buf.as_mut_ptr(), len, &nodes) }
        })?;
    }
    Ok(())
}

/// Pages per node over every worker's buffer.
fn count(team: &Team, ws: usize) -> Result<Vec<(u32, u64)>, String> {
    let mut all = std::collections::BTreeMap::<u32, u64>::new();
    for i in 0..team.threads() {
        let c = team.inspect(i, move |b| numa::census(b.as_ptr(), ws.min(b.len())))?;
        for (n, p) in c.per_node {
            *all.entry(n).or_default() += p;
        }
    }
    Ok(all.into_iter().collect())
}

/// One case of the sweep: a ratio (`Some`) or the system's weights.
struct Case {
    label: String,
    ratio: Option<(u32, u32)>,
    expected_fast: f64,
}

/// The sweep on `cpus` (cpu node `cpu_node`) over `fast` and `slow`.
pub(super) fn sweep(
    plan: &NumaPlan,
    cx: &mut Ctx,
    cpu_node: u32,
    cpus: &[u32],
    (fast, slow): (u32, u32),
) -> anyhow::Result<Flow> {
    let host = cx.host;
    let ws = plan.size as usize;
    let nodes = format!("{fast}+{slow}");
    let skip = |label: &str, why: String| {
        let mut r = skipped_cell(KERNEL, cpu_node, fast, why);
        let d = detail_of(&mut r);
        d.case_memory_node = None;
        d.case_memory_nodes = Some(nodes.clone());
        d.case_interleave = Some(label.into());
        d.interleave_nodes = Some(vec![fast, slow]);
        r
    };
    if cpus.is_empty() {
        cx.push(skip(
            "sweep",
            format!("node {cpu_node} has no cpus to run the sweep"),
        ))?;
        return Ok(Flow::Done);
    }
    let need = ws as u64 * cpus.len() as u64;
    for n in [fast, slow] {
        if let Err(why) = numa::check_node_room(n, need) {
            cx.push(skip("sweep", why))?;
            return Ok(Flow::Done);
        }
    }
    let team = match Team::spawn(cpus, ws, PageKind::NoHuge) {
        Ok(t) => t,
        Err(e) => {
            cx.push(skip("sweep", e.to_string()))?;
            return Ok(Flow::Done);
        }
    };
    let mut cases: Vec<Case> = RATIOS
        .iter()
        .map(|&(a, b)| Case {
            label: format!("{a}:{b}"),
            ratio: Some((a, b)),
            expected_fast: a as f64 / (a + b) as f64,
        })
        .collect();
    let mut recs: Vec<Record> = Vec::new();
    cx.plan_steps(cases.len() as u64 + 2);
    let mut i = 0;
    while i < cases.len() {
        let c = &cases[i];
        cx.step(&format!("interleave {} over nodes {nodes}", c.label));
        match measure_case(plan, host, &team, cpu_node, (fast, slow), c, cx)? {
            None => return Ok(Flow::Stopped),
            Some(r) => recs.push(r),
        }
        if i == RATIOS.len() - 1 {
            // After 1:0 and 0:1: the bandwidth-proportional ratio.
            let gbps = |label: &str| {
                recs.iter()
                    .find(|r| detail_case(r) == Some(label))
                    .and_then(|r| r.gbps.as_ref().map(|s| s.best))
                    .unwrap_or(0.0)
            };
            match proportional(gbps("1:0"), gbps("0:1")) {
                Ok((a, b)) if !RATIOS.contains(&(a, b)) => cases.push(Case {
                    label: format!("{a}:{b}"),
                    ratio: Some((a, b)),
                    expected_fast: a as f64 / (a + b) as f64,
                }),
                Ok(_) => {}
                Err(why) => recs.push(skip("proportional", why)),
            }
            match system_case(host, fast, slow) {
                Ok(c) => cases.push(c),
                Err(why) => recs.push(skip("system", why)),
            }
        }
        i += 1;
    }
    drop(team);
    conclude(&mut recs, fast, slow);
    for r in recs {
        cx.push(r)?;
    }
    Ok(Flow::Done)
}

fn detail_case(r: &Record) -> Option<&str> {
    match &r.detail {
        Detail::Numa(d) => d.case_interleave.as_deref(),
        _ => None,
    }
}

/// The kernel's own weights for the two nodes, where it has them.
fn system_case(host: &Host, fast: u32, slow: u32) -> Result<Case, String> {
    let w = host
        .tiers
        .as_ref()
        .and_then(|t| t.interleave_weights.as_ref())
        .ok_or("the kernel has no weighted interleave (Linux 6.9+)")?;
    let of = |n: u32| w.iter().find(|x| x.0 == n).map(|x| x.1);
    let (Some(a), Some(b)) = (of(fast), of(slow)) else {
        return Err(format!(
            "the kernel states no weight for node {fast} or {slow}"
        ));
    };
    if a + b == 0 {
        return Err("the kernel's weights for the two nodes are 0".into());
    }
    Ok(Case {
        label: "system".into(),
        ratio: None,
        expected_fast: a as f64 / (a + b) as f64,
    })
}

/// Place, measure, count. `Ok(None)` when stopped.
fn measure_case(
    plan: &NumaPlan,
    host: &Host,
    team: &Team,
    cpu_node: u32,
    (fast, slow): (u32, u32),
    c: &Case,
    cx: &mut Ctx,
) -> anyhow::Result<Option<Record>> {
    let ws = plan.size as usize;
    let cpus = team.cpus.clone();
    let (method, placed) = match c.ratio {
        Some(r) => ("mbind ranges", place(team, ws, (fast, slow), r)),
        None => (
            "MPOL_WEIGHTED_INTERLEAVE",
            place_system(team, ws, [fast, slow]),
        ),
    };
    let fill = |mut r: Record| {
        r.placement = Some(placement(cpu_node, fast, None, None));
        if let Some(p) = r.placement.as_mut() {
            p.memory_node = None;
        }
        let d = detail_of(&mut r);
        d.case_cpu_node = Some(cpu_node);
        d.case_memory_node = None;
        d.case_memory_nodes = Some(format!("{fast}+{slow}"));
        d.case_interleave = Some(c.label.clone());
        d.interleave_nodes = Some(vec![fast, slow]);
        d.interleave_method = Some(method.into());
        d.interleave_expected_fast = Some(c.expected_fast);
        r
    };
    if let Err(why) = placed {
        return Ok(Some(fill(Record::skipped(SuiteId::Numa, KERNEL, why))));
    }
    let ks = MixKernels::widest(host);
    let mixes = vec![Mix::READ; cpus.len()];
    let sampler = cx.sampler(plan.opts());
    let mm = match measure_cell(team, ks, &mixes, ws, None, &sampler) {
        Some(Ok(mm)) => mm,
        Some(Err(why)) => return Ok(Some(fill(Record::skipped(SuiteId::Numa, KERNEL, why)))),
        None => return Ok(None),
    };
    let mut r = fill(mix_record(
        KERNEL.into(),
        &mixes,
        &ks,
        &mm,
        host,
        &cpus,
        ws as u64,
    ));
    match count(team, ws) {
        Ok(pages) => {
            let total: u64 = pages.iter().map(|p| p.1).sum();
            let on = |n: u32| pages.iter().find(|p| p.0 == n).map_or(0, |p| p.1) as f64;
            let want_fast = c.expected_fast * total as f64;
            let right = on(fast).min(want_fast) + on(slow).min(total as f64 - want_fast);
            if let Some(p) = r.placement.as_mut() {
                p.verified_fraction = Some(if total > 0 { right / total as f64 } else { 0.0 });
            }
            detail_of(&mut r).interleave_pages = Some(pages);
        }
        Err(e) => detail_of(&mut r).verify_error = Some(e),
    }
    Ok(Some(r))
}

/// Gain of every measured case over the fast node alone, and the best
/// case's weights.
fn conclude(recs: &mut [Record], fast: u32, slow: u32) {
    let base = recs
        .iter()
        .find(|r| detail_case(r) == Some("1:0"))
        .and_then(|r| r.gbps.as_ref().map(|s| s.best));
    let mut best: Option<(usize, f64)> = None;
    for (i, r) in recs.iter_mut().enumerate() {
        let Some(g) = r.gbps.as_ref().map(|s| s.best) else {
            continue;
        };
        if best.is_none_or(|b| g > b.1) {
            best = Some((i, g));
        }
        detail_of(r).interleave_gain_percent = base.map(|b| (g / b - 1.0) * 100.0).into();
    }
    let Some((i, _)) = best else { return };
    let label = detail_case(&recs[i]).unwrap_or("").to_string();
    let lines = match label.split_once(':') {
        Some(("0", _)) => vec![format!(
            "the slow node alone is best: bind to node {slow} (no weight can be 0)"
        )],
        Some((_, "0")) => vec![format!(
            "the fast node alone is best: bind to node {fast} (no weight can be 0)"
        )],
        Some((a, b)) => vec![
            format!(
                "echo {a} > {}",
                crate::os::tiers::interleave_weight_file(fast)
            ),
            format!(
                "echo {b} > {}",
                crate::os::tiers::interleave_weight_file(slow)
            ),
        ],
        None => vec!["the kernel's weights in force are best: keep them".into()],
    };
    detail_of(&mut recs[i]).interleave_weights_to_write = Some(lines);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proportional_weights_are_small_and_close() {
        assert_eq!(proportional(60.0, 20.0), Ok((3, 1)));
        assert_eq!(proportional(50.0, 20.0), Ok((5, 2)));
        let (a, b) = proportional(200.0, 60.0).unwrap();
        assert!(
            ((a as f64 / b as f64) - 200.0 / 60.0).abs() < 0.07,
            "{a}:{b}"
        );
        assert!(proportional(10.0, 0.0).is_err());
        assert!(proportional(f64::NAN, 1.0).is_err());
        // 1000:1 is beyond 255:1.
        assert!(proportional(1000.0, 1.0)
            .unwrap_err()
            .contains("cannot be expressed"));
    }

    #[test]
    fn pairs_name_two_nodes_with_memory() {
        use crate::model::Node;
        let node = |id, memory_bytes| Node {
            id,
            cpus: vec![],
            memory_bytes,
            distances: vec![],
        };
        let h = Host {
            nodes: vec![node(0, Some(1 << 30)), node(1, Some(0)), node(2, None)],
            ..Host::default()
        };
        assert_eq!(parse_pair(&h, "0, 2").unwrap(), (0, 2));
        for (spec, says) in [
            ("0,1", "node 1 has no memory"),
            ("0,7", "node 7 does not exist"),
            ("0,0", "must differ"),
            ("0", "not two nodes"),
            ("a,b", "not two nodes"),
        ] {
            let e = parse_pair(&h, spec).unwrap_err().to_string();
            assert!(
                e.starts_with("--interleave:") && e.contains(says),
                "{spec}: {e}"
            );
        }
    }
}
