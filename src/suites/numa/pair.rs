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
        let mut cases: Vec<Vec<u32>> = vec![vec![node, node]];
        cases.extend(remotes.iter().map(|&r| vec![node, r]));
        let mut run = PairRun {
            pair,
            mix: m,
            node,
            cpus: cpus[..2].to_vec(),
            reps: None,
            local_median: None,
        };
        for nodes in cases {
            if let Flow::Stopped = run.case(plan, &nodes, &sampler, cx, refusals)? {
                return Ok(Flow::Stopped);
            }
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

/// One pair (writers or readers) over its cases: local/local first, whose
/// passes and median every later case reuses.
struct PairRun {
    pair: &'static str,
    mix: Mix,
    node: u32,
    cpus: Vec<u32>,
    /// Passes per sample, calibrated on local/local: the same work in
    /// every case.
    reps: Option<u64>,
    local_median: Option<f64>,
}

impl PairRun {
    /// The pair with its two workers' memory on `nodes`.
    fn case(
        &mut self,
        plan: &NumaPlan,
        nodes: &[u32],
        sampler: &Sampler,
        cx: &mut Ctx,
        refusals: &mut Refusals,
    ) -> anyhow::Result<Flow> {
        let ws = plan.size as usize;
        let label = format!("{}/{}", nodes[0], nodes[1]);
        let skip = |why: String| {
            let mut r = skipped_cell(self.pair, self.node, nodes[1], why);
            detail_of(&mut r).case_memory_nodes = Some(label.clone());
            r
        };
        let per_node =
            |n: u32| nodes.iter().filter(|&&x| x == n).count() as u64 * (ws + BUFFER_SLACK) as u64;
        let team = match nodes
            .iter()
            .find_map(|&n| numa::check_node_room(n, per_node(n)).err())
        {
            Some(reason) => Err(reason),
            None => {
                let on = format!("nodes {label}");
                cell_team(&self.cpus, ws, plan.memory, nodes, &on, refusals)
            }
        };
        let team = match team {
            Ok(t) => t,
            Err(why) => {
                cx.push(skip(why))?;
                return Ok(Flow::Done);
            }
        };
        let per_thread = vec![self.mix; 2];
        let ks = MixKernels::widest(cx.host);
        let mm = match measure_cell(&team, ks, &per_thread, ws, self.reps, sampler) {
            Some(Ok(mm)) => mm,
            Some(Err(why)) => {
                cx.push(skip(why))?;
                return Ok(Flow::Done);
            }
            None => return Ok(Flow::Stopped),
        };
        self.reps.get_or_insert(mm.m.reps);
        let verified = verify(&team, nodes, ws);
        let observed = team.observed_cpus();
        drop(team);
        let secs: Vec<f64> = mm.m.samples.iter().map(|s| s.seconds).collect();
        let t = stats::summarize(&secs, false).expect("samples");
        let pct = self.local_median.map(|l| (t.median / l - 1.0) * 100.0);
        self.local_median.get_or_insert(t.median);
        let (pair, host) = (self.pair.to_string(), cx.host);
        let mut r = mix_record(pair, &per_thread, &ks, &mm, host, &self.cpus, ws as u64);
        r.memory = None;
        r.placement = Some(placement(self.node, nodes[1], None, Some(mm.m.max_skew())));
        apply_verification(&mut r, &verified, None);
        let d = detail_of(&mut r);
        d.case_scenario = Some("write-pair".into());
        d.case_memory_nodes = Some(label);
        d.memory_nodes = Some(nodes.to_vec());
        d.total_seconds = Some(t);
        d.percent_vs_local = pct.into();
        d.observed_cpus = Some(observed);
        cx.push(r)?;
        Ok(Flow::Done)
    }
}
