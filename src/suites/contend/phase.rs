//! The coordinator: agents started once, then each phase — its agents
//! (and the probe) prepared, released by one gate, a warm-up, the window
//! on the one clock, stop — and its records.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use super::agents::{Counted, Figure, Gate, Log, Running, Start, Window};
use super::records::{self, PhaseFigures};
use super::{team, ContendPlan, Ctx, Flow};
use crate::measure::{noise, probe};
use crate::model::{AgentKind, Probe, Record, SuiteId};
use crate::os::time::now_ns;

/// The longest wait for a phase's agents to be ready (buffers prepared,
/// a flow connected).
const READY_WITHIN: Duration = Duration::from_secs(60);
/// A CPU-side worker takes the core-share probe twice per slice (so
/// every slice holds a reading), at most once per 10 ms: the sampler's
/// shortest sample, after which the probe costs well under 1 %.
const PROBE_EVERY_LEAST: Duration = Duration::from_millis(10);

pub fn run(plan: &ContendPlan, cx: &mut Ctx) -> anyhow::Result<Flow> {
    for n in &plan.notes {
        cx.note(n);
    }
    // Only device agents are skipped at planning (an API this machine
    // lacks): the others fail the plan with their flag.
    for (name, spec, why) in &plan.skipped {
        let mut r = Record::skipped(SuiteId::Contend, spec, why.clone());
        records::label(&mut r, name, AgentKind::Device, spec);
        cx.push(r)?;
    }
    cx.plan_steps(plan.phases.len() as u64 + 1);
    // Before any agent spins: in a guest, whether a CPU team's
    // neighbouring cpus are one core on the host.
    let shared: Vec<crate::suites::cores::Shared> = plan
        .agents
        .iter()
        .filter(|a| a.kind() == AgentKind::Cpu && a.cpus().len() > 1)
        .flat_map(|a| crate::suites::cores::same_core(cx.host, a.cpus(), cx.stop))
        .collect();
    cx.step("starting the agents");
    let mut running: Vec<Option<Running>> = Vec::new();
    let start = Start {
        host: cx.host,
        memory: plan.memory,
        token: plan.token.clone(),
        run_cpus: plan
            .agents
            .iter()
            .flat_map(|a| a.cpus().iter().copied())
            .chain(plan.bystander.as_ref().map(|p| p.cpu))
            .collect(),
    };
    for a in &plan.agents {
        match a.start(&start) {
            Ok(r) => running.push(Some(r)),
            Err(why) => {
                let mut r = Record::error(
                    SuiteId::Contend,
                    a.spec(),
                    format!("{} could not start: {why}", a.name()),
                );
                records::label(&mut r, a.name(), a.kind(), a.spec());
                cx.push(r)?;
                running.push(None);
            }
        }
    }
    let probe = match &plan.bystander {
        Some(p) => match team::start_bystander(p, &start) {
            Ok(r) => Some(r),
            Err(why) => {
                cx.push(Record::error(
                    SuiteId::Contend,
                    "bystander",
                    format!("the bystander could not start: {why}"),
                ))?;
                None
            }
        },
        None => None,
    };
    let mut alone: Vec<Option<f64>> = vec![None; plan.agents.len()];
    for phase in &plan.phases {
        if cx.stopped() {
            return Ok(Flow::Stopped);
        }
        cx.step(&format!("phase {}", phase.name));
        let members: Vec<usize> = phase
            .agents
            .iter()
            .copied()
            .filter(|&i| running[i].is_some())
            .collect();
        if members.is_empty() && (probe.is_none() || !phase.agents.is_empty()) {
            continue;
        }
        let team: Vec<&Running> = members
            .iter()
            .map(|&i| running[i].as_ref().expect("filtered"))
            .chain(probe.as_ref())
            .collect();
        let Some(w) = one_phase(plan, cx, &team) else {
            return Ok(Flow::Stopped);
        };
        let mut figures = PhaseFigures::of(plan, phase, &members, &w, &alone, probe.is_some());
        if let ([i], [f]) = (&members[..], &figures.agents[..]) {
            if f.valid {
                alone[*i] = Some(f.gbps);
                figures.alone[0] = Some(f.gbps);
            }
        }
        for mut r in records::phase_records(plan, phase, &members, &figures, cx.host) {
            // A CPU team on one core's two threads says so beside its figure.
            if r.detail.get::<crate::model::detail::ContendDetail>()
                .is_some_and(|d| d.agent_kind == Some(AgentKind::Cpu))
            {
                for sh in shared.iter().filter(|sh| sh.pair.iter().all(|c| r.cpus.contains(c))) {
                    r.warnings.push(sh.warning.clone());
                }
            }
            cx.push(r)?;
        }
    }
    Ok(Flow::Done)
}

/// Run one phase; None when a stop request cut it short.
fn one_phase(plan: &ContendPlan, cx: &Ctx, team: &[&Running]) -> Option<Window> {
    let warmup = Duration::from_secs_f64(plan.warmup_seconds);
    let window = Duration::from_secs_f64(plan.window_seconds());
    let every = Duration::from_secs_f64(plan.slice_seconds / 2.0).max(PROBE_EVERY_LEAST);
    let gate = Arc::new(Gate::new(warmup + window, every, cx.probes.clone()));
    let started: Vec<bool> = team.iter().map(|r| r.begin(&gate)).collect();
    let want = started.iter().filter(|s| **s).count();
    let deadline = now_ns() + READY_WITHIN.as_nanos() as u64;
    while gate.ready.load(Ordering::Acquire) < want && now_ns() < deadline && !cx.stopped() {
        std::thread::sleep(Duration::from_micros(200));
    }
    gate.go.store(true, Ordering::Release);
    let cut = !sleep_unless_stopped(cx, warmup);
    let t0 = now_ns();
    // The guest's own load over the window: every record of the phase
    // carries it and is warned of it as every suite's are; the spells
    // judge the probed ones with it.
    let probing = team.iter().any(|r| r.probes);
    let before = noise::snapshot();
    let cut = cut || !sleep_unless_stopped(cx, window);
    let t1 = now_ns();
    let noise = noise::since(before);
    gate.stop.store(true, Ordering::Release);
    let counted = team
        .iter()
        .zip(&started)
        .map(|(r, &s)| {
            if s {
                r.end()
            } else {
                Counted::one(Vec::new(), Some("its thread had ended".into()))
            }
        })
        .collect::<Vec<Counted>>();
    // The memory probe once every agent has stopped: during the window
    // the phase's own agents load the memory on purpose, and the chase
    // would read their load, not the host's (docs/noise.md).
    let probed = probing && counted.iter().any(|c| !c.probes.is_empty());
    let chase_after = probed.then(|| cx.probes.read_memory()).flatten();
    (!cut).then_some(Window {
        counted,
        t0,
        t1,
        chase_after,
        noise,
        baseline: probed.then(|| cx.probes.baseline()),
    })
}

/// Sleep `d` in short steps; false when a stop request came.
fn sleep_unless_stopped(cx: &Ctx, d: Duration) -> bool {
    let end = now_ns() + d.as_nanos() as u64;
    loop {
        if cx.stopped() {
            return false;
        }
        let now = now_ns();
        if now >= end {
            return true;
        }
        std::thread::sleep(Duration::from_nanos((end - now).min(20_000_000)));
    }
}

/// The running total of `log` at `t`, interpolated between its counts;
/// None outside the log.
pub fn at(log: &Log, t: u64) -> Option<f64> {
    let first = log.first()?;
    let last = log.last()?;
    if t < first.0 || t > last.0 {
        return None;
    }
    let i = log.partition_point(|p| p.0 <= t);
    if i == 0 {
        return Some(first.1 as f64);
    }
    let (ta, ba) = log[i - 1];
    match log.get(i) {
        Some(&(tb, bb)) if tb > ta => {
            Some(ba as f64 + (bb as f64 - ba as f64) * (t - ta) as f64 / (tb - ta) as f64)
        }
        _ => Some(ba as f64),
    }
}

/// What `c` moved between `a` and `b` (all its workers), or None where a
/// worker's counts do not cover both.
pub fn between(c: &Counted, a: u64, b: u64) -> Option<f64> {
    if c.logs.is_empty() {
        return None;
    }
    c.logs
        .iter()
        .map(|l| Some(at(l, b)? - at(l, a)?))
        .sum::<Option<f64>>()
}

/// When `c`'s counts start (its latest worker's first count) and end
/// (its earliest worker's last count); None without counts.
pub fn coverage(c: &Counted) -> Option<(u64, u64)> {
    let from = c.logs.iter().map(|l| l.first().map(|p| p.0)).max()??;
    let to = c.logs.iter().map(|l| l.last().map(|p| p.0)).min()??;
    Some((from, to))
}

impl Figure {
    /// An agent's figure over the window: its bytes, rate, slices and
    /// coverage.
    pub fn of(c: &Counted, w: &Window, slices: usize) -> Figure {
        let secs = (w.t1 - w.t0) as f64 / 1e9;
        let cov = coverage(c);
        let covers = cov.is_some_and(|(a, b)| a <= w.t0 && b >= w.t1);
        let moved = if covers { between(c, w.t0, w.t1) } else { None };
        // Counts that span the window are not enough: a flow whose far
        // end stalled (or was stopped) keeps a log from before the window
        // to its close with nothing in between, which read as a valid
        // 0 GB/s and entered the loss column as a real figure.
        let (longest, typical) = silence(c, w.t0, w.t1);
        let stalled = covers
            && (moved.is_some_and(|b| b <= 0.0) || is_stall(longest, typical, w.t1 - w.t0));
        let valid = covers && !stalled;
        let bytes = if valid { moved } else { None };
        let edges: Vec<u64> = (0..=slices)
            .map(|k| w.t0 + (w.t1 - w.t0) * k as u64 / slices as u64)
            .collect();
        let slice_units: Vec<f64> = if valid {
            edges
                .windows(2)
                .filter_map(|e| between(c, e[0], e[1]))
                .collect()
        } else {
            Vec::new()
        };
        let slice_probes = if valid {
            slice_probes(c, &edges, w.chase_after)
        } else {
            Vec::new()
        };
        Figure {
            valid,
            slice_probes,
            units: bytes.unwrap_or(0.0),
            gbps: bytes.map_or(0.0, |b| b / secs / 1e9),
            slice_units,
            slice_seconds: secs / slices as f64,
            window_seconds: secs,
            from: cov.map(|(a, _)| (a as f64 - w.t0 as f64) / 1e9),
            to: cov.map(|(_, b)| (b as f64 - w.t1 as f64) / 1e9),
            ended: c.ended.clone(),
            placed: c.placed,
            stalled: stalled.then_some(longest as f64 / 1e9),
        }
    }
}

/// Per slice (between `edges`), the readings `c`'s workers took in it
/// together (`probe::combine`: the slowest core's share), and on the last
/// slice the memory probe taken right after the window (`chase_after`).
/// Empty for an agent that takes no probes.
fn slice_probes(c: &Counted, edges: &[u64], chase_after: Option<f64>) -> Vec<Option<Probe>> {
    if c.probes.is_empty() {
        return Vec::new();
    }
    let mut v: Vec<Option<Probe>> = edges
        .windows(2)
        .map(|e| {
            let each: Vec<Probe> = c
                .probes
                .iter()
                .filter(|(t, _)| (e[0]..e[1]).contains(t))
                .map(|p| p.1)
                .collect();
            probe::combine(&each)
        })
        .collect();
    if let (Some(last), Some(ns)) = (v.last_mut(), chase_after) {
        last.get_or_insert_with(Probe::default).chase_ns = Some(ns);
    }
    v
}

/// The longest stretch inside `[t0, t1]` in which some worker of `c`
/// moved nothing, ns (between two counts that grew: a flow's watcher
/// logs its total every half millisecond whether it grew or not), and
/// the typical (median) time between its counts that grew. A worker
/// that runs moves something every pass or chunk; one whose far end
/// stalled stops at once.
pub fn silence(c: &Counted, t0: u64, t1: u64) -> (u64, u64) {
    let inside = |a: u64, b: u64| b.min(t1).saturating_sub(a.max(t0));
    let mut longest = 0;
    let mut gaps = Vec::new();
    for log in &c.logs {
        let Some(&(first, mut total)) = log.first() else {
            continue;
        };
        let mut since = first;
        for &(t, n) in &log[1..] {
            if n > total {
                longest = longest.max(inside(since, t));
                gaps.push(t - since);
                since = t;
                total = n;
            }
        }
        if let Some(&(end, _)) = log.last() {
            longest = longest.max(inside(since, end));
        }
    }
    gaps.sort_unstable();
    (longest, gaps.get(gaps.len() / 2).copied().unwrap_or(0))
}

/// Is a silence of `longest` ns a stall, for an agent that typically
/// counts every `typical` ns in a window of `window` ns? Longer than a
/// quarter of the window (never less than 200 ms: a device's copy, or a
/// thread waiting for a cpu on a machine loaded many times over, can take
/// that long), and than four of its own typical intervals (a team whose
/// every pass over a large buffer takes long is slow, not stalled).
fn is_stall(longest: u64, typical: u64, window: u64) -> bool {
    longest > (window / 4).max(200_000_000) && longest > typical.saturating_mul(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_interpolated_between_their_stamps() {
        let log: Log = vec![(100, 0), (200, 1000), (300, 1000), (400, 3000)];
        assert_eq!(at(&log, 150), Some(500.0));
        assert_eq!(at(&log, 250), Some(1000.0));
        assert_eq!(at(&log, 400), Some(3000.0));
        assert_eq!(at(&log, 99), None);
        assert_eq!(at(&log, 401), None);
        let c = Counted {
            logs: vec![log.clone(), log],
            ended: None,
            placed: None,
            probes: Vec::new(),
        };
        assert_eq!(between(&c, 150, 350), Some(2.0 * 1500.0));
        assert_eq!(coverage(&c), Some((100, 400)));
    }

    #[test]
    fn an_agent_that_stops_inside_the_window_is_not_valid() {
        let w = Window {
            counted: Vec::new(),
            t0: 1_000_000_000,
            t1: 2_000_000_000,
            chase_after: None,
            noise: None,
            baseline: None,
        };
        let full = Counted::one(
            vec![(500_000_000, 0), (2_100_000_000, 16_000_000_000)],
            None,
        );
        let f = Figure::of(&full, &w, 4);
        assert!(f.valid);
        assert!((f.gbps - 10.0).abs() < 1e-9, "{}", f.gbps);
        assert_eq!(f.slice_units.len(), 4);
        let short = Counted::one(
            vec![(500_000_000, 0), (1_500_000_000, 10)],
            Some("driver error".into()),
        );
        let f = Figure::of(&short, &w, 4);
        assert!(!f.valid);
        assert_eq!(f.to, Some(-0.5));
        assert_eq!(f.ended.as_deref(), Some("driver error"));
    }

    #[test]
    fn each_slice_carries_the_slowest_reading_in_it_and_the_last_the_chase() {
        let p = |core: f64| Probe {
            core_bytes_per_cycle: Some(core),
            chase_ns: None,
        };
        let mut c = Counted::one(vec![(0, 0), (400, 4000)], None);
        // Two workers' readings: 100-200 holds two, 200-300 none.
        c.probes = vec![(150, p(60.0)), (120, p(31.0)), (350, p(64.0)), (50, p(62.0))];
        let v = slice_probes(&c, &[0, 100, 200, 300, 400], Some(90.0));
        let core: Vec<Option<f64>> = v
            .iter()
            .map(|p| p.and_then(|p| p.core_bytes_per_cycle))
            .collect();
        assert_eq!(core, [Some(62.0), Some(31.0), None, Some(64.0)]);
        assert_eq!(v[3].unwrap().chase_ns, Some(90.0));
        assert!(v[..3].iter().all(|p| p.is_none_or(|p| p.chase_ns.is_none())));
        // An agent without probes (a device, a flow) gets no readings,
        // not even the chase.
        c.probes.clear();
        assert!(slice_probes(&c, &[0, 100, 200], Some(90.0)).is_empty());
    }

    #[test]
    fn an_agent_that_moves_nothing_in_the_window_is_not_valid() {
        let w = Window {
            counted: Vec::new(),
            t0: 1_000_000_000,
            t1: 2_000_000_000,
            chase_after: None,
            noise: None,
            baseline: None,
        };
        // A flow's watcher: a count every 0.5 ms, the total frozen.
        let frozen: Log = (0..=4200).map(|k| (500_000_000 + k * 500_000, 0)).collect();
        let f = Figure::of(&Counted::one(frozen, None), &w, 4);
        assert!(!f.valid && f.stalled.is_some(), "{f:?}");
        // Moving until 1.2 s, then stopped (SIGSTOP of its transponder).
        let stopped: Log = (0..=4200u64)
            .map(|k| {
                let t = 500_000_000 + k * 500_000;
                (t, k.min(1400) * 1000)
            })
            .collect();
        let f = Figure::of(&Counted::one(stopped, None), &w, 4);
        assert!(!f.valid, "{f:?}");
        assert!(f.stalled.is_some_and(|s| (s - 0.8).abs() < 0.01), "{f:?}");
        // Moving throughout: valid.
        let steady: Log = (0..=4200u64)
            .map(|k| (500_000_000 + k * 500_000, k * 1000))
            .collect();
        assert!(Figure::of(&Counted::one(steady, None), &w, 4).valid);
    }
}
