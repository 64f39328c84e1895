//! The write-pair scenario (AMD's NUMA guide): two writers, then two
//! readers, on node 0 with memory local/local vs local/remote.

use super::*;
use crate::measure::team::BUFFER_SLACK;

use super::cell::*;

/// The write-pair scenario.
pub(super) fn run_pair(
    plan: &NumaPlan,
    cx: &mut Ctx,
    refusals: &mut Refusals,
) -> anyhow::Result<Flow> {
    let host = cx.host;
    let ks = MixKernels::widest(host);
    let ws = plan.size as usize;
    let sampler = cx.sampler(plan.opts());
    let (node, cpus) = plan.cell_cpus[0].clone();
    let remotes: Vec<u32> = plan
        .memory_nodes
        .iter()
        .copied()
        .filter(|&m| m != node)
        .collect();
    for (pair, m) in [("write_pair", Mix::WRITE), ("read_pair", Mix::READ)] {
        if cpus.len() < 2 {
            cx.push(skipped_cell(
                pair,
                node,
                node,
                format!(
                    "needs 2 cpus on node {}; it has {} usable (add --oversubscribe to share one)",
                    node,
                    cpus.len()
                ),
            ))?;
            continue;
        }
        let pair_cpus = cpus[..2].to_vec();
        let mut cases: Vec<Vec<u32>> = vec![vec![node, node]];
        cases.extend(remotes.iter().map(|&r| vec![node, r]));
        let mut reps: Option<u64> = None;
        let mut local_median: Option<f64> = None;
        for nodes in cases {
            let label = format!("{}/{}", nodes[0], nodes[1]);
            let per_node = |n: u32| {
                nodes.iter().filter(|&&x| x == n).count() as u64 * (ws + BUFFER_SLACK) as u64
            };
            if let Some(reason) = nodes
                .iter()
                .find_map(|&n| numa::check_node_room(n, per_node(n)).err())
            {
                let mut r = skipped_cell(pair, node, nodes[1], reason);
                detail_of(&mut r).case_memory_nodes = Some(label);
                cx.push(r)?;
                continue;
            }
            let team =
                match Team::spawn_bound(&pair_cpus, ws + BUFFER_SLACK, plan.memory, Some(&nodes)) {
                    Ok(t) => t,
                    Err(e) => {
                        refusals.first.get_or_insert(e.to_string());
                        let mut r = skipped_cell(
                            pair,
                            node,
                            nodes[1],
                            format!("cannot place memory on nodes {}: {}", label, e),
                        );
                        detail_of(&mut r).case_memory_nodes = Some(label);
                        cx.push(r)?;
                        continue;
                    }
                };
            refusals.any_ok = true;
            let per_thread = vec![m; 2];
            // The same work in every case: passes calibrated on local/local.
            let mm = match measure_mix(&team, ks, &per_thread, ws, reps, &sampler) {
                Ok(Some(mm)) => mm,
                Ok(None) => {
                    let why = format!(
                        "--size {} holds less than one 64 KiB chunk",
                        format_bytes(ws as u64)
                    );
                    cx.push(skipped_cell(pair, node, nodes[1], why))?;
                    continue;
                }
                Err(Failure::Stopped) => return Ok(Flow::Stopped),
                Err(Failure::Failed(e)) => {
                    cx.push(skipped_cell(pair, node, nodes[1], e))?;
                    continue;
                }
            };
            reps.get_or_insert(mm.m.reps);
            let verified = verify(&team, &nodes, ws);
            let observed = team.observed_cpus();
            drop(team);
            let secs: Vec<f64> = mm.m.samples.iter().map(|s| s.seconds).collect();
            let t = stats::summarize(&secs, false).expect("samples");
            let pct = local_median.map(|l| (t.median / l - 1.0) * 100.0);
            local_median.get_or_insert(t.median);
            let mut r = mix_record(
                pair.into(),
                &per_thread,
                &ks,
                &mm,
                host,
                &pair_cpus,
                ws as u64,
            );
            r.memory = None;
            r.placement = Some(placement(node, nodes[1], None, Some(mm.m.max_skew())));
            apply_verification(&mut r, &verified, None);
            let d = detail_of(&mut r);
            d.case_scenario = Some("write-pair".into());
            d.case_memory_nodes = Some(label);
            d.memory_nodes = Some(nodes.clone());
            d.total_seconds = Some(t);
            d.percent_vs_local = pct.into();
            d.observed_cpus = Some(observed);
            cx.push(r)?;
        }
        if remotes.is_empty() {
            let mut r = skipped_cell(
                pair,
                node,
                node,
                "local/remote needs a second NUMA node with memory; this machine has one (only local/local was measured)".into(),
            );
            detail_of(&mut r).case_memory_nodes = Some(format!("{}/remote", node));
            cx.push(r)?;
        }
    }
    Ok(Flow::Done)
}
