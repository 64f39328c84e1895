//! The cpu-node × memory-node matrix: bandwidth per mix and chase latency.

use super::*;
use crate::measure::team::BUFFER_SLACK;

use super::cell::*;

/// The matrix.
pub(super) fn run_matrix(
    plan: &NumaPlan,
    cx: &mut Ctx,
    refusals: &mut Refusals,
) -> anyhow::Result<Flow> {
    let Mode::Matrix {
        mixes,
        roles,
        latency,
    } = &plan.mode
    else {
        unreachable!("run_matrix on a matrix plan")
    };
    // One measurement per mix, or one with per-thread roles.
    let sets: Vec<(String, Option<Mix>)> = match roles {
        Some(r) => vec![(mix_kernel_name(r, true), None)],
        None => mixes
            .iter()
            .map(|m| (mix_kernel_name(&[*m], false), Some(*m)))
            .collect(),
    };
    let sampler = cx.sampler(plan.opts());
    cx.plan_steps((plan.cell_cpus.len() * plan.memory_nodes.len()) as u64);
    for (cpu_node, cpus) in &plan.cell_cpus {
        for &mem in &plan.memory_nodes {
            cx.step(&format!("cpu node {} × memory node {}", cpu_node, mem));
            let cell = Cell {
                cpu_node: *cpu_node,
                cpus,
                mem,
            };
            if let Flow::Stopped = cell.bandwidth(plan, &sets, roles, &sampler, cx, refusals)? {
                return Ok(Flow::Stopped);
            }
            if *latency {
                let host = cx.host;
                match latency_cell(plan, host, cpus[0], *cpu_node, mem, &sampler, refusals)? {
                    Some(mut r) => {
                        if plan.tiers.is_some() {
                            super::cell::annotate(&mut r, host);
                        }
                        cx.push(r)?
                    }
                    None => return Ok(Flow::Stopped),
                }
            }
        }
    }
    Ok(Flow::Done)
}

/// One cell of the matrix: threads on `cpus` of `cpu_node`, memory on
/// `mem`.
struct Cell<'a> {
    cpu_node: u32,
    cpus: &'a [u32],
    mem: u32,
}

impl Cell<'_> {
    /// Every mix set of the cell on one team, then where its pages are
    /// after the measurement; a cell that cannot be placed is skipped.
    fn bandwidth(
        &self,
        plan: &NumaPlan,
        sets: &[(String, Option<Mix>)],
        roles: &Option<Vec<Mix>>,
        sampler: &Sampler,
        cx: &mut Ctx,
        refusals: &mut Refusals,
    ) -> anyhow::Result<Flow> {
        let ws = plan.size as usize;
        let migrated_before = numa::pages_migrated();
        let intended = vec![self.mem; self.cpus.len()];
        let need = (ws + BUFFER_SLACK) as u64 * self.cpus.len() as u64;
        let team = numa::check_node_room(self.mem, need).and_then(|()| {
            let label = format!("node {}", self.mem);
            cell_team(self.cpus, ws, plan.memory, &intended, &label, refusals)
        });
        let team = match team {
            Ok(t) => t,
            Err(reason) => {
                for (name, _) in sets {
                    cx.push(skipped_cell(name, self.cpu_node, self.mem, reason.clone()))?;
                }
                return Ok(Flow::Done);
            }
        };
        let observed = team.observed_cpus();
        let mem_info = team.memory().first().cloned();
        let ks = MixKernels::widest(cx.host);
        let mut recs = Vec::new();
        for (name, m) in sets {
            let per_thread: Vec<Mix> = match (m, roles) {
                (Some(m), _) => vec![*m; self.cpus.len()],
                (None, Some(r)) => r.clone(),
                (None, None) => unreachable!("a mix or roles"),
            };
            let mm = match measure_cell(&team, ks, &per_thread, ws, None, sampler) {
                Some(Ok(mm)) => mm,
                Some(Err(why)) => {
                    cx.push(skipped_cell(name, self.cpu_node, self.mem, why))?;
                    continue;
                }
                None => return Ok(Flow::Stopped),
            };
            let mut r = mix_record(
                name.clone(),
                &per_thread,
                &ks,
                &mm,
                cx.host,
                self.cpus,
                ws as u64,
            );
            r.memory = mem_info.clone();
            let skew = (self.cpus.len() > 1).then_some(mm.m.max_skew());
            r.placement = Some(placement(self.cpu_node, self.mem, None, skew));
            let d = detail_of(&mut r);
            d.case_cpu_node = Some(self.cpu_node);
            d.case_memory_node = Some(self.mem);
            match m {
                Some(m) => d.case_mix = Some(m.name()),
                None => d.case_roles = Some(name.clone()),
            }
            d.observed_cpus = Some(observed.clone());
            recs.push(r);
        }
        // Where the pages are after the measurement.
        let verified = verify(&team, &intended, ws);
        let migrated = match (migrated_before, numa::pages_migrated()) {
            (Some(a), Some(b)) => Some(b.saturating_sub(a)),
            _ => None,
        };
        drop(team);
        for mut r in recs {
            apply_verification(&mut r, &verified, migrated);
            if plan.tiers.is_some() {
                super::cell::annotate(&mut r, cx.host);
            }
            cx.push(r)?;
        }
        Ok(Flow::Done)
    }
}

/// One thread's pointer-chase latency with memory on `mem`. `Ok(None)`
/// when interrupted.
pub(super) fn latency_cell(
    plan: &NumaPlan,
    host: &Host,
    cpu: u32,
    cpu_node: u32,
    mem: u32,
    sampler: &Sampler<'static>,
    refusals: &mut Refusals,
) -> anyhow::Result<Option<Record>> {
    let ws = plan.size as usize;
    if let Err(reason) = numa::check_node_room(mem, ws as u64) {
        return Ok(Some(skipped_cell(CHASE_KERNEL, cpu_node, mem, reason)));
    }
    let team = match Team::spawn_bound(&[cpu], ws, plan.memory, Some(&[mem])) {
        Ok(t) => t,
        Err(e) => {
            refusals.first.get_or_insert(e.to_string());
            return Ok(Some(skipped_cell(
                CHASE_KERNEL,
                cpu_node,
                mem,
                format!("cannot place memory on node {}: {}", mem, e),
            )));
        }
    };
    let sampler = sampler.clone();
    let lat = team.inspect(0, move |b| {
        // SAFETY: the worker's own buffer, 2 MiB aligned, alive during the
        // call.
        unsafe { chase_at(b.as_mut_ptr(), ws.min(b.len()), 0xc4a5e, &sampler) }
    });
    let lat = match lat {
        Ok(m) => m,
        Err(Failure::Stopped) => return Ok(None),
        Err(Failure::Failed(e)) => return Ok(Some(skipped_cell(CHASE_KERNEL, cpu_node, mem, e))),
    };
    let verified = verify(&team, &[mem], ws);
    let mut r = latency_record(&lat, host, &[cpu], ws as u64);
    r.memory = team.memory().first().cloned();
    r.placement = Some(placement(cpu_node, mem, None, None));
    let d = detail_of(&mut r);
    d.case_cpu_node = Some(cpu_node);
    d.case_memory_node = Some(mem);
    d.observed_cpus = Some(team.observed_cpus());
    apply_verification(&mut r, &verified, None);
    Ok(Some(r))
}
