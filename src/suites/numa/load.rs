//! Background load and the loaded-latency curve.

use super::*;
use crate::kernels::Kernel;
use crate::measure::kernel::TeamKernel;
use crate::measure::team::BUFFER_SLACK;

use super::cell::*;

/// The loaded-latency curve.
pub(super) fn run_load(plan: &NumaPlan, cx: &mut Ctx) -> anyhow::Result<Flow> {
    let host = cx.host;
    let Mode::Load {
        cpus,
        description,
        delays_ns,
        load_mix,
        probe_cpu,
        probe,
    } = &plan.mode
    else {
        unreachable!("run_load on a load plan")
    };
    let ks = MixKernels::widest(host);
    let ws = plan.size as usize;
    let sampler = cx.sampler(plan.opts());
    let mem = plan.memory_nodes[0];
    let page = plan.memory;
    numa::check_node_room(mem, (ws + BUFFER_SLACK) as u64 * (cpus.len() as u64 + 1))
        .map_err(|m| UserError::flag("--size", m))?;
    let placed = |what: &str| {
        let what = what.to_string();
        move |e: UserError| {
            UserError::flag(
                "--memory-nodes",
                format!("cannot place the {what}'s memory on node {mem}: {e}"),
            )
        }
    };
    let mut load = Load {
        team: Some(
            Team::spawn_bound(cpus, ws, page, Some(&vec![mem; cpus.len()]))
                .map_err(placed("load"))?,
        ),
        ks,
        mix: *load_mix,
    };
    let probe_team = Team::spawn_bound(&[*probe_cpu], ws + BUFFER_SLACK, page, Some(&[mem]))
        .map_err(placed("probe"))?;
    let read = ks.read;
    // None = the unloaded baseline, then each delay.
    let steps: Vec<Option<u64>> = std::iter::once(None)
        .chain(delays_ns.iter().map(|&d| Some(d)))
        .collect();
    cx.plan_steps(steps.len() as u64);
    for step in steps {
        cx.step(&match step {
            None => "unloaded".to_string(),
            Some(d) => format!("delay {} ns", d),
        });
        let running = step.map(|d| load.start(d));
        let measured = probe_once(*probe, &probe_team, read, ws, &sampler, host);
        let injected = running.map(|r| load.stop(r));
        let mut r = match measured {
            Ok(r) => r,
            Err(Failure::Stopped) => return Ok(Flow::Stopped),
            Err(Failure::Failed(e)) => Record::error(SuiteId::Numa, read.name, e),
        };
        r.kernel = format!("loaded_{}", r.kernel);
        let load_desc = match step {
            None => "none".to_string(),
            Some(d) => format!("{} {} delay={}ns/4KiB", description, load_mix.name(), d),
        };
        r.placement = Some(Placement {
            cpu_node: Some(node_of(host, *probe_cpu)),
            memory_node: Some(mem),
            verified_fraction: None,
            load: Some(load_desc),
            start_skew_seconds: None,
        });
        let d = detail_of(&mut r);
        d.case_delay_ns = step.into();
        d.case_load = Some(description.clone());
        d.injected_gbps = injected
            .map(|v| {
                v.iter()
                    .map(|i| i.bytes as f64 / i.seconds.max(1e-9) / 1e9)
                    .sum::<f64>()
            })
            .into();
        d.load_threads = Some(if step.is_some() { cpus.len() as u64 } else { 0 });
        d.load_cpus = Some(cpus.clone());
        d.load_mix = Some(load_mix.name());
        let verified = verify(&probe_team, &[mem], ws);
        apply_verification(&mut r, &verified, None);
        cx.push(r)?;
    }
    Ok(Flow::Done)
}

/// The background load: a team streaming its mix with a delay per 4 KiB,
/// run from a thread of its own while the probe measures.
struct Load {
    /// The team, here while it is not running.
    team: Option<Team>,
    ks: MixKernels,
    mix: Mix,
}

/// A load that is running: its thread hands the team back with what each
/// worker injected.
struct Running {
    stop: Arc<AtomicBool>,
    handle: std::thread::JoinHandle<(Team, Vec<mix::Injected>)>,
}

impl Load {
    /// Start streaming with `delay_ns` per 4 KiB; returns once every worker
    /// runs, and the load has had 20 ms to reach steady state.
    fn start(&mut self, delay_ns: u64) -> Running {
        let team = self.team.take().expect("load team present");
        let workers = team.threads();
        let stop = Arc::new(AtomicBool::new(false));
        let started = Arc::new(AtomicUsize::new(0));
        let (ls, st, ks, m) = (stop.clone(), started.clone(), self.ks, self.mix);
        let handle = std::thread::spawn(move || {
            let inj = team.run_each(move |_, b| {
                // SAFETY: the worker's own buffer.
                unsafe {
                    mix::stream_until(
                        &ks,
                        &m,
                        b.as_mut_ptr(),
                        b.len(),
                        Duration::from_nanos(delay_ns),
                        &ls,
                        &st,
                    )
                }
            });
            (team, inj)
        });
        while started.load(Ordering::Acquire) < workers {
            std::thread::yield_now();
        }
        std::thread::sleep(Duration::from_millis(20));
        Running { stop, handle }
    }

    /// Stop the load; what each worker injected.
    fn stop(&mut self, r: Running) -> Vec<mix::Injected> {
        r.stop.store(true, Ordering::Release);
        let (team, inj) = r.handle.join().expect("load thread");
        self.team = Some(team);
        inj
    }
}

/// One measurement of the probe thread (team of one, memory on the load's
/// node): its chase latency or its read bandwidth.
fn probe_once(
    probe: Probe,
    team: &Team,
    read: &'static Kernel,
    ws: usize,
    sampler: &Sampler<'static>,
    host: &Host,
) -> Result<Record, Failure> {
    let cpus = &team.cpus[..];
    match probe {
        Probe::Latency => {
            let sampler = sampler.clone();
            team.inspect(0, move |b| {
                // SAFETY: the worker's own buffer, alive during the call.
                unsafe { chase_at(b.as_mut_ptr(), ws, 0x10ad, &sampler) }
            })
            .map(|m| latency_record(&m, host, cpus, ws as u64))
        }
        // The load threads load the memory on purpose: no spell probes.
        Probe::Bandwidth => match TeamKernel::private(team, read, ws).map(|w| w.without_probes()) {
            Some(mut w) => sampler.measure(&mut w, None).map(|m| {
                let into = |bandwidth| {
                    NumaDetail {
                        bandwidth,
                        ..NumaDetail::default()
                    }
                    .into()
                };
                crate::suites::record::bandwidth(read, &m, w.pass(), host, cpus, into)
            }),
            None => Ok(Record::skipped(
                SuiteId::Numa,
                read.name,
                "working set too small for the probe kernel",
            )),
        },
    }
}
