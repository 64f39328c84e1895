//! `bwscope watch`: a light probe for machines that are checked all the
//! time (systemd, a Kubernetes DaemonSet, cron), see `docs/watch.md`.
//!
//! Each sample is a fixed, small measurement on one core — a DRAM read
//! (the widest sequential read at a DRAM-sized set) and an idle-latency
//! chase at the same size, through the same suites and the same spell
//! probes as every other command, about a second in all — taken every
//! `--every`. Each is judged: `core_shared` or `memory_contended` where the
//! spell probes found the moment's conditions (the sample is kept but
//! left out of the usual figures), `stepped` where the clean figures fell
//! and stayed down, else `ok`; the OpenMetrics file is rewritten
//! atomically after each. Memory stays bounded: the usual figures come
//! from the last [`KEPT`] clean samples, and nothing else accumulates.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::app::runner::Recorder;
use crate::cli::WatchArgs;
use crate::error::{UserError, EXIT_INTERRUPTED, EXIT_OK};
use crate::model::detail::LatencyDetail;
use crate::model::{Host, Run, Units, Warning, WatchSample, WatchState, WatchStatus};
use crate::report::sink::{End, Sink};
use crate::suites::{self, Flow, Sampling, Suite};

/// Clean samples the usual figures rest on: a day at the default 5 min
/// is 288; a thousand bounds memory however long the watch runs.
const KEPT: usize = 1000;
/// A step: the last [`STEP_RUNS`] clean samples all more than
/// [`STEP_DROP`] below the usual figure before them (the history's
/// `--check` rule, on this watch's own samples).
const STEP_RUNS: usize = 3;
const STEP_DROP: f64 = 0.10;
/// Clean samples needed before a step can be called: a usual figure of
/// fewer is not one yet.
const STEP_MIN_USUAL: usize = 10;

/// What one watch sample measures, planned once.
struct Plan {
    host: Host,
    kernel: String,
    size: u64,
    suites: Vec<Box<dyn Suite>>,
}

fn plan(a: &WatchArgs) -> Result<Plan, UserError> {
    let host = crate::platform::detect_host(true);
    let size = match &a.size {
        Some(s) => crate::util::units::parse_size(s)
            .map_err(|e| UserError::flag("--size", e.to_string()))?,
        // Four times the last cache the process reads from, as the sweep
        // reaches DRAM's plateau (README: Sizes).
        None => host
            .llc_size(crate::model::Curve::Bandwidth)
            .map_or(64 << 20, |l| 4 * l)
            .clamp(64 << 20, 512 << 20),
    };
    if !(64 << 10..=crate::util::units::MAX_SIZE).contains(&size) {
        return Err(UserError::flag(
            "--size",
            "use a set of 64 KiB to 1 TiB (default: a DRAM-sized one)",
        ));
    }
    let sampling = Sampling {
        samples: Some(a.samples.unwrap_or(5)),
        min_sample_ms: Some(a.min_sample_ms.unwrap_or(10.0)),
    };
    let kernel = crate::kernels::widest(
        crate::kernels::Op::Read,
        crate::kernels::Pattern::Seq,
        &host.features,
    )
    .ok_or_else(|| UserError::flag("--cpu", "this CPU has no sequential read kernel"))?;
    let cpu = a.cpu.map(|c| c.to_string());
    let cache = suites::cache::plan(
        &suites::cache::CacheOptions {
            kernel: Some(kernel.name.into()),
            sizes: Some(vec![size]),
            cpus: cpu.clone(),
            sampling,
            ..Default::default()
        },
        &host,
    )?;
    let latency = suites::latency::plan(
        &suites::latency::LatencyOptions {
            sizes: Some(vec![size]),
            views: Some(vec![crate::model::detail::View::Random]),
            cpu: a.cpu,
            sampling,
            ..Default::default()
        },
        &host,
    )?;
    Ok(Plan {
        host,
        kernel: kernel.name.into(),
        size,
        suites: vec![Box::new(cache), Box::new(latency)],
    })
}

impl Plan {
    /// One sample: the suites into one quiet run (no files), judged at
    /// its end like every run.
    fn measure(&self, stop: &'static AtomicBool) -> anyhow::Result<Option<Run>> {
        let mut run = Run::new("watch", serde_json::json!({}), self.host.clone(), Units::GB);
        run.warnings = suites::host_warnings(&self.host);
        let mut rec = Recorder::quiet(Sink::new(run, &[])?);
        for suite in &self.suites {
            if stop.load(Ordering::Relaxed)
                || rec.measure_with(&self.host, suite.as_ref(), stop)? == Flow::Stopped
            {
                return Ok(None);
            }
        }
        Ok(Some(rec.finish(End::Complete)?))
    }
}

/// The figures and spells of one sample's run.
fn sample_of(run: &Run) -> WatchSample {
    let ok = || {
        run.records
            .iter()
            .filter(|r| r.status == crate::model::Status::Ok)
    };
    let dram_read_gbps = ok().find_map(|r| r.gbps.map(|g| g.best));
    let latency_ns = ok()
        .filter_map(|r| r.detail.get::<LatencyDetail>())
        .find_map(|d| d.latency_ns.get().map(|s| s.best));
    let spells: Vec<&crate::model::Spells> = ok().filter_map(|r| r.spells.as_ref()).collect();
    let med = |f: &dyn Fn(&crate::model::Spells) -> Option<f64>| {
        crate::stats::median(&spells.iter().filter_map(|s| f(s)).collect::<Vec<_>>())
    };
    let warning = |pick: fn(&Warning) -> bool| {
        ok().flat_map(|r| r.warnings.iter())
            .find(|w| pick(w))
            .cloned()
    };
    let shared = warning(|w| matches!(w, Warning::CoreShared { .. }));
    let contended = warning(|w| {
        matches!(
            w,
            Warning::MemoryContended {
                fraction: Some(_),
                ..
            }
        )
    });
    let (state, evidence) = match (shared, contended) {
        (Some(w), _) => (WatchState::CoreShared, w.to_string()),
        (None, Some(w)) => (WatchState::MemoryContended, w.to_string()),
        (None, None) => (WatchState::Ok, String::new()),
    };
    WatchSample {
        at: crate::model::time::now_rfc3339(),
        unix_seconds: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64()),
        dram_read_gbps,
        latency_ns,
        core_share: med(&|s| s.core_share_median),
        chase_ns: med(&|s| s.chase_ns_median),
        chase_baseline_ns: med(&|s| s.baseline.chase_ns),
        state,
        evidence,
    }
}

/// The clean samples' figures, newest last, at most [`KEPT`].
#[derive(Default)]
struct Usual {
    clean: VecDeque<(Option<f64>, Option<f64>)>,
}

impl Usual {
    fn dram(&self) -> Option<f64> {
        crate::stats::median(&self.clean.iter().filter_map(|c| c.0).collect::<Vec<_>>())
    }

    fn latency(&self) -> Option<f64> {
        crate::stats::median(&self.clean.iter().filter_map(|c| c.1).collect::<Vec<_>>())
    }

    /// Judge a clean sample against the usual figures before it (a step:
    /// it and the [`STEP_RUNS`] − 1 clean ones before it all more than
    /// [`STEP_DROP`] below the usual read), then keep it.
    fn judge_and_keep(&mut self, s: &mut WatchSample) {
        if !s.state.is_clean() {
            return;
        }
        let before = self.clean.len().saturating_sub(STEP_RUNS - 1);
        let usual = crate::stats::median(
            &self
                .clean
                .iter()
                .take(before)
                .filter_map(|c| c.0)
                .collect::<Vec<_>>(),
        );
        let recent = self.clean.iter().skip(before).filter_map(|c| c.0);
        let low = |g: f64| usual.is_some_and(|u| g < u * (1.0 - STEP_DROP));
        if let (Some(u), Some(g)) = (usual, s.dram_read_gbps) {
            let held = recent.clone().count() == STEP_RUNS - 1 && recent.clone().all(low);
            if before >= STEP_MIN_USUAL && low(g) && held {
                s.state = WatchState::Stepped;
                s.evidence = format!(
                    "the DRAM read has been more than {:.0} % below this machine's usual {u:.1} GB/s for {STEP_RUNS} clean samples: {g:.1} GB/s now",
                    STEP_DROP * 100.0
                );
            }
        }
        if self.clean.len() == KEPT {
            self.clean.pop_front();
        }
        self.clean.push_back((s.dram_read_gbps, s.latency_ns));
    }
}

/// One line per sample on stdout.
fn line(s: &WatchSample, u: &Usual) -> String {
    let f = |v: Option<f64>, unit: &str| v.map_or("-".into(), |v| format!("{v:.1} {unit}"));
    let mut l = format!(
        "{}  DRAM read {} (usual {})  latency {} (usual {})  {}",
        s.at,
        f(s.dram_read_gbps, "GB/s"),
        f(u.dram(), "GB/s"),
        f(s.latency_ns, "ns"),
        f(u.latency(), "ns"),
        s.state.as_str()
    );
    if !s.evidence.is_empty() {
        l.push_str(&format!(": {}", s.evidence));
    }
    l
}

/// Sleep until `until`, waking early on a stop request.
fn sleep_until(until: Instant, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        if now >= until {
            return;
        }
        std::thread::sleep((until - now).min(Duration::from_millis(50)));
    }
}

/// How a family list becomes a file's text.
type Grammar = fn(&[crate::report::exposition::Family]) -> String;

/// The metrics files asked for, each with its grammar; not two into one
/// file.
fn metrics_files(a: &WatchArgs) -> Result<Vec<(Grammar, String)>, UserError> {
    use crate::report::exposition::{openmetrics, prometheus};
    if let (Some(p), Some(o)) = (&a.prometheus, &a.openmetrics) {
        if crate::report::outfile::same_file(Path::new(p), Path::new(o)) {
            return Err(UserError::flag(
                "--openmetrics",
                format!("names the same file as --prometheus ({o}); give them different paths"),
            ));
        }
    }
    let mut v: Vec<(Grammar, String)> = Vec::new();
    if let Some(p) = &a.prometheus {
        v.push((prometheus, p.clone()));
    }
    if let Some(p) = &a.openmetrics {
        if let Some(w) = crate::report::sink::unread_by_node_exporter("--openmetrics", p) {
            crate::report::emit("", &w);
        }
        v.push((openmetrics, p.clone()));
    }
    Ok(v)
}

pub fn run(a: &WatchArgs) -> anyhow::Result<u8> {
    let every =
        crate::util::units::parse_duration(&a.every).map_err(|m| UserError::flag("--every", m))?;
    if let Some(n) = a.samples.filter(|n| !(1..=1000).contains(n)) {
        return Err(UserError::flag("--samples", format!("{n}: use 1 to 1000")).into());
    }
    if let Some(ms) = a.min_sample_ms.filter(|m| !(0.01..=10_000.0).contains(m)) {
        return Err(UserError::flag("--min-sample-ms", format!("{ms}: use 0.01 to 10000")).into());
    }
    if a.count == Some(0) {
        return Err(UserError::flag("--count", "0 samples: use 1 or more, or leave it out").into());
    }
    // One watch per output: a second is refused, naming the holder.
    let files = metrics_files(a)?;
    let mut _claims = Vec::new();
    for (_, p) in &files {
        crate::report::outfile::check_writable(Path::new(p))?;
        _claims.push(crate::report::outfile::claim_watch(Path::new(p))?);
    }
    let plan = plan(a)?;
    super::runner::spell_probes_for(&plan.host);
    let stop = crate::os::signal::install();
    let host = plan
        .host
        .env
        .hostname
        .clone()
        .unwrap_or_else(|| "unknown".into());
    // Every sample is a run of the history (`source` local, command
    // `watch`): `bwscope history` shows the series, `--check` its steps.
    let mut history = super::history::Session::open();
    let mut usual = Usual::default();
    let mut taken = 0u64;
    loop {
        let t0 = Instant::now();
        let Some(run) = plan.measure(stop)? else {
            break;
        };
        history.record(&run);
        let mut s = sample_of(&run);
        usual.judge_and_keep(&mut s);
        taken += 1;
        crate::util::out::print(&format!("{}\n", line(&s, &usual)));
        if !files.is_empty() {
            let status = WatchStatus {
                host: host.clone(),
                kernel: plan.kernel.clone(),
                size_bytes: plan.size,
                samples: taken,
                usual_dram_read_gbps: usual.dram(),
                usual_latency_ns: usual.latency(),
                usual_from: usual.clean.len() as u64,
                last: s,
            };
            let families = crate::report::families::watch::families(&status);
            for (grammar, p) in &files {
                let text = grammar(&families);
                crate::report::outfile::write_atomic(Path::new(p), text.as_bytes())?;
            }
        }
        if a.count.is_some_and(|n| taken >= n) {
            break;
        }
        sleep_until(t0 + every, stop);
        if stop.load(Ordering::Relaxed) {
            break;
        }
    }
    if stop.load(Ordering::Relaxed) {
        eprintln!("watch stopped after {taken} samples");
        return Ok(EXIT_INTERRUPTED);
    }
    Ok(EXIT_OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(gbps: f64, state: WatchState) -> WatchSample {
        WatchSample {
            at: String::new(),
            unix_seconds: 0.0,
            dram_read_gbps: Some(gbps),
            latency_ns: Some(100.0),
            core_share: Some(1.0),
            chase_ns: None,
            chase_baseline_ns: None,
            state,
            evidence: String::new(),
        }
    }

    /// 50 samples of a quiet machine's noise raise nothing; a 15 % drop
    /// that holds is called a step on its third clean sample; a spell's
    /// sample is kept out of the usual figures.
    #[test]
    fn a_held_drop_is_a_step_and_noise_or_spells_are_not() {
        let mut u = Usual::default();
        let noise = [35.7, 35.2, 34.9, 35.1, 36.0, 33.9, 35.5, 34.4, 35.8, 35.0];
        for i in 0..50 {
            let mut s = sample(noise[i % noise.len()], WatchState::Ok);
            u.judge_and_keep(&mut s);
            assert_eq!(s.state, WatchState::Ok, "sample {i}");
        }
        let mut spell = sample(10.0, WatchState::MemoryContended);
        u.judge_and_keep(&mut spell);
        assert_eq!(u.clean.len(), 50);
        let states: Vec<WatchState> = (0..4)
            .map(|_| {
                let mut s = sample(30.0, WatchState::Ok);
                u.judge_and_keep(&mut s);
                s.state
            })
            .collect();
        assert_eq!(
            states,
            [
                WatchState::Ok,
                WatchState::Ok,
                WatchState::Stepped,
                WatchState::Stepped
            ]
        );
    }

    #[test]
    fn the_usual_figures_are_bounded() {
        let mut u = Usual::default();
        for i in 0..(KEPT + 500) {
            let mut s = sample(30.0 + (i % 7) as f64, WatchState::Ok);
            u.judge_and_keep(&mut s);
        }
        assert_eq!(u.clean.len(), KEPT);
    }
}
