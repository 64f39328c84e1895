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

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::app::runner::Recorder;
use crate::app::Context;
use crate::cli::WatchArgs;
use crate::error::{UserError, EXIT_INTERRUPTED, EXIT_OK};
use crate::judge;
use crate::measure::probe::SpellProbes;
use crate::model::detail::LatencyDetail;
use crate::model::{Host, Record, Run, Units, Warning, WatchSample, WatchState, WatchStatus};
use crate::report::sink::{End, Sink};
use crate::suites::{self, Flow, Sampling, Suite};

mod usual;

use usual::{Judgement, Series};

/// The usual figures rest on at most this many of a case's newest
/// points: a week of samples at `--every 5m` is 2,016.
const WINDOW: usize = 1000;
/// Watch samples of this machine the store keeps by default
/// (`--retain`): two weeks at the default 5 minutes.
pub const RETAIN: u64 = 4032;

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
    let own = |e: UserError| own_flags(e.with_memory_hint("--size", "use a smaller --size"));
    let cache = suites::cache::plan(
        &suites::cache::CacheOptions {
            kernel: Some(kernel.name.into()),
            sizes: Some(vec![size]),
            cpus: cpu.clone(),
            sampling,
            ..Default::default()
        },
        &host,
    )
    .map_err(own)?;
    let latency = suites::latency::plan(
        &suites::latency::LatencyOptions {
            sizes: Some(vec![size]),
            views: Some(vec![crate::model::detail::View::Random]),
            cpu: a.cpu,
            sampling,
            ..Default::default()
        },
        &host,
    )
    .map_err(own)?;
    Ok(Plan {
        host,
        kernel: kernel.name.into(),
        size,
        suites: vec![Box::new(cache), Box::new(latency)],
    })
}

/// An error of the suites' planning, about the flags `watch` gave them:
/// named as watch's own (`--cpu`, `--size`; W2: `watch --cpu 99` was
/// answered about `--cpus`, a flag watch does not have).
fn own_flags(e: UserError) -> UserError {
    match e {
        UserError::BadFlag { flag, message } => UserError::BadFlag {
            flag: match flag {
                "--cpus" => "--cpu",
                "--sizes" => "--size",
                other => other,
            },
            message,
        },
        other => other,
    }
}

impl Plan {
    /// One sample: the suites into one quiet run (no files), judged at
    /// its end like every run.
    /// The spell probes are the watch's, not the sample's: their quiet
    /// baseline grows over the whole series of samples.
    fn measure(
        &self,
        probes: &Arc<SpellProbes>,
        stop: &'static AtomicBool,
    ) -> anyhow::Result<Option<Run>> {
        let mut run = Run::new("watch", serde_json::json!({}), self.host.clone(), Units::GB);
        run.warnings = suites::host_warnings(&self.host);
        let mut rec = Recorder::quiet(Sink::new(run, &[])?, probes.clone());
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

/// The records of one sample's run behind its two figures, each with its
/// case key and its point of the series (clean by the history's rule).
struct Figures<'a> {
    read: Option<(&'a Record, String, judge::Point)>,
    latency: Option<(&'a Record, String, judge::Point)>,
}

fn figures(run: &Run) -> Figures<'_> {
    let ok = || {
        run.records
            .iter()
            .filter(|r| r.status == crate::model::Status::Ok)
    };
    let point = |r: &Record, value: f64| judge::Point {
        value,
        clean: !crate::judge::noise::flags(r, run).noisy,
    };
    Figures {
        read: ok().find_map(|r| r.gbps.map(|g| (r, r.case_key(), point(r, g.best)))),
        latency: ok().find_map(|r| {
            r.detail
                .get::<LatencyDetail>()
                .and_then(|d| d.latency_ns.get())
                .map(|s| (r, r.case_key(), point(r, s.best)))
        }),
    }
}

/// The figures and spells of one sample's run, its state from its spells
/// and noise alone (a step is the series' to say, [`judged`]).
fn sample_of(run: &Run, f: &Figures) -> WatchSample {
    let ok = || {
        run.records
            .iter()
            .filter(|r| r.status == crate::model::Status::Ok)
    };
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
    // Noise the history marks (its `flags` column), when no spell names it.
    let noisy: Vec<&'static str> = [&f.read, &f.latency]
        .into_iter()
        .flatten()
        .flat_map(|(r, _, _)| crate::judge::noise::flags(r, run).why)
        .fold(Vec::new(), |mut v, w| {
            if !v.contains(&w) {
                v.push(w);
            }
            v
        });
    let (state, evidence) = match (shared, contended) {
        (Some(w), _) => (WatchState::CoreShared, w.to_string()),
        (None, Some(w)) => (WatchState::MemoryContended, w.to_string()),
        (None, None) if !noisy.is_empty() => (
            WatchState::Noisy,
            format!(
                "taken in noise ({}): kept, but left out of the usual figures",
                noisy.join(", ")
            ),
        ),
        (None, None) => (WatchState::Ok, String::new()),
    };
    WatchSample {
        at: crate::model::time::now_rfc3339(),
        unix_seconds: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64()),
        dram_read_gbps: f.read.as_ref().map(|x| x.2.value),
        latency_ns: f.latency.as_ref().map(|x| x.2.value),
        core_share: med(&|s| s.core_share_median),
        chase_ns: med(&|s| s.chase_ns_median),
        chase_baseline_ns: med(&|s| s.baseline.chase_ns),
        state,
        evidence,
    }
}

/// The machine's series of the DRAM read and the latency, seeded from the
/// store at the first sample (its case keys are the sample's records').
struct Usual {
    read: Series,
    latency: Series,
    seeded: bool,
    last: (Option<Judgement>, Option<Judgement>),
}

impl Usual {
    fn new(window: usize) -> Usual {
        Usual {
            read: Series::new(usual::rule(window, true)),
            latency: Series::new(usual::rule(window, false)),
            seeded: false,
            last: (None, None),
        }
    }

    /// The store's points of the sample's two cases on this machine, once:
    /// what an earlier watch (or any run of the same cases) left there.
    fn seed(&mut self, store: Option<&mut crate::history::Store>, run: &Run, f: &Figures) {
        if std::mem::replace(&mut self.seeded, true) {
            return;
        }
        let Some(store) = store else {
            return;
        };
        let machine = crate::history::case::machine_key(&run.host);
        for (series, fig) in [(&mut self.read, &f.read), (&mut self.latency, &f.latency)] {
            let Some((_, case, _)) = fig else { continue };
            match store.series(case, Some(&machine)) {
                Ok(pts) => series.seed(pts.iter().map(|p| judge::Point {
                    value: p.value,
                    clean: !p.noisy,
                })),
                Err(w) => crate::report::emit("", &w),
            }
        }
    }

    /// Add the sample's points and judge; a clean sample whose DRAM read
    /// or latency stepped down is `stepped`.
    fn judge_and_keep(&mut self, s: &mut WatchSample, f: &Figures) {
        let read = f.read.as_ref().map(|x| self.read.add(x.2));
        let latency = f.latency.as_ref().map(|x| self.latency.add(x.2));
        if s.state.is_clean() {
            let words = [
                (&read, &self.read, "DRAM read", "GB/s"),
                (&latency, &self.latency, "DRAM latency", "ns"),
            ]
            .into_iter()
            .filter_map(|(j, series, name, unit)| {
                let j = j.as_ref()?;
                let judge::Verdict::Judged { usual, recent, .. } = j.verdict else {
                    return None;
                };
                j.verdict.stepped_down().then(|| {
                    format!(
                        "{name} {recent:.1} {unit} against this machine's usual {usual:.1} {unit}, by the rule: {}",
                        series.rule().describe("sample")
                    )
                })
            })
            .collect::<Vec<_>>();
            if !words.is_empty() {
                s.state = WatchState::Stepped;
                s.evidence = words.join("; ");
            }
        }
        self.last = (read, latency);
    }

    fn dram(&self) -> Option<f64> {
        self.last.0.as_ref().and_then(|j| j.usual)
    }

    fn latency(&self) -> Option<f64> {
        self.last.1.as_ref().and_then(|j| j.usual)
    }

    /// Clean samples the usual DRAM read rests on (before the last one).
    fn from(&self) -> usize {
        self.last.0.as_ref().map_or(0, |j| j.clean_before)
    }
}

/// One line per sample on stdout.
fn line(s: &WatchSample, u: &Usual) -> String {
    let f = |v: Option<f64>, unit: &str| v.map_or("-".into(), |v| format!("{v:.1} {unit}"));
    let mut l = format!(
        "{}  DRAM read {} (usual {} of {} clean)  latency {} (usual {})  {}",
        s.at,
        f(s.dram_read_gbps, "GB/s"),
        f(u.dram(), "GB/s"),
        u.from(),
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

pub fn run(cx: &Context, a: &WatchArgs) -> anyhow::Result<u8> {
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
    let retain = a.retain.unwrap_or(RETAIN);
    if !(1..=10_000_000).contains(&retain) {
        return Err(UserError::flag("--retain", format!("{retain}: use 1 to 10000000")).into());
    }
    // One watch per output: a second is refused, naming the holder.
    let files = metrics_files(a)?;
    let mut _claims = Vec::new();
    for (_, p) in &files {
        crate::report::outfile::check_writable(Path::new(p))?;
        _claims.push(crate::report::outfile::claim_watch(Path::new(p))?);
    }
    let plan = plan(a)?;
    // One set of spell probes for the whole series: its quiet baseline is
    // this watch's, learnt over its samples.
    let probes = SpellProbes::for_host(&plan.host);
    let stop = cx.stop();
    let host = plan
        .host
        .env
        .hostname
        .clone()
        .unwrap_or_else(|| "unknown".into());
    // Every sample is a run of the history (`source` local, command
    // `watch`): `bwscope history` shows the series, `--check` its steps,
    // and the next watch on this machine starts from it. A store that
    // cannot be used is said once; the figures then live in memory.
    let mut history = super::history::Session::open(&cx.history);
    let mut usual = Usual::new(WINDOW.min(retain as usize));
    let mut taken = 0u64;
    loop {
        let t0 = Instant::now();
        let Some(run) = plan.measure(&probes, stop)? else {
            break;
        };
        let figs = figures(&run);
        usual.seed(history.store(), &run, &figs);
        let mut s = sample_of(&run, &figs);
        usual.judge_and_keep(&mut s, &figs);
        history.record(&run);
        retire(&mut history, &run, retain);
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
                usual_from: usual.from() as u64,
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

/// Forget this machine's watch samples beyond the newest `retain`, so a
/// watch every 5 minutes does not grow the store without end.
fn retire(history: &mut super::history::Session, run: &Run, retain: u64) {
    let machine = crate::history::case::machine_key(&run.host);
    if let Some(store) = history.store() {
        if let Err(w) = store.forget_watch_beyond(&machine, retain) {
            history.failed(&w);
        }
    }
}
