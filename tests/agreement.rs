//! One protocol, one answer: the same kernel on the same working set on the
//! same cpu measures the same bandwidth through every suite that can run
//! it — `cache`, `threads` (private buffer, shared buffer, a forked
//! process) and a 1×1 `numa` cell — and the pointer chase gives the same
//! latency through `latency` and the numa latency cell. Every suite
//! samples through `measure::Sampler`, so anything beyond noise here means
//! a suite measures differently from the others.
//!
//! The bound is 10 % between the median ratios of the suites' best
//! samples, compared through the same spells.
//! The machine a test runs on is shared — CI runners, a developer's other
//! work, and in a cloud guest other tenants who share the host core's SMT
//! sibling (halving L1 throughput at an unchanged clock) and its memory,
//! for spells of seconds to minutes that nothing in the guest shows. A
//! figure taken now and one taken a minute later compare two spells, not
//! two suites (issue 39: on a Zen 3 guest the best medians of ten rounds
//! still disagreed by 15.6 %, each suite's best from another spell). So
//! the suites run in alternating rounds, each round's figures are divided
//! by the first suite's of the same round (seconds apart: mostly one
//! spell), and the median over rounds of each suite's ratio counts. Each
//! record stands for its best sample (the fastest read, the shortest
//! chase): a neighbour only ever slows a sample, and on a 2-vCPU Xeon
//! model 207 guest whose core a tenant shared in most samples the suites'
//! medians swung 116-146 GB/s within one round, from one second to the
//! next, and parted by 12-16 % over ten rounds in two of three runs (the
//! numa cell low in one, the process team high in the other), where the
//! spells' clean medians could not be had for every case. So a round's
//! bandwidth figures count only where the run's own spell probes found
//! every suite's core unshared and its memory uncontended beside all of
//! its samples (one spell for all); a host where that never happens in
//! [`MIN_ROUNDS`] of [`ROUNDS`] rounds skips, saying so. At least
//! [`MIN_ROUNDS`] rounds (a median of one or two ratios is one spell's
//! luck), at most [`ROUNDS`]; the test stops at the first round after
//! that where they agree. The bound itself is never widened.
//!
//! The second test runs the four streaming suites beside a busy loop on
//! another cpu (what a shared CI machine looks like): the process team
//! once read 16-22 % low there, because its parent woke every 50 µs beside
//! its child (see `measure::procs::wait_done`). The third runs them on a
//! machine loaded the way a build loads it — unpinned processes on every
//! cpu, the measuring one included — where a worker is preempted inside
//! many samples: the sampler retakes those (`samples_retaken`), and a
//! record counts only when the samples it kept were clean. These two
//! compare each record's best sample too, as the first does: the median
//! of a record's seven samples is the spell's, and beside two unpinned
//! build-like processes on CI's 2-vCPU guest the cache suite's 16 KiB
//! median read 276-325 GB/s in five of ten rounds where the thread
//! suites' read 307-370 seconds later (the median ratios parted by
//! 11.1 %); compared by their bests, three runs on a 2-vCPU Xeon model
//! 207 guest beside the same load agreed within 2.1 % by the third
//! round. A suite that measures differently — the process team's parent
//! waking beside its child — slows every sample, its best included. A
//! machine so busy that a suite never got a clean sample in ten rounds
//! skips, saying so; it never fails a user's `cargo test` for being busy.

mod common;

use serde_json::Value;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The tests share the measuring cpu: they take turns.
static CPU_IN_USE: Mutex<()> = Mutex::new(());

/// Working set per thread: 256 KiB is inside L2 on every x86 core bwscope
/// meets (Zen 3: 512 KiB, Zen 4: 1 MiB, Intel since Skylake-SP: ≥ 1 MiB)
/// and private to the core, so neighbours' cache traffic cannot move it.
const WS: &str = "256KiB";
const BOUND: f64 = 0.10;
const ROUNDS: usize = 10;
const MIN_ROUNDS: usize = 3;

/// Each case's figure in each round, and the median over rounds of its
/// ratio to the first case's figure in the same round.
struct Rounds {
    names: Vec<String>,
    rounds: Vec<Vec<Option<f64>>>,
    /// Only rounds whose every case was measured in a clean spell count
    /// (see [`Rounds::one_spell`]).
    one_spell: bool,
}

impl Rounds {
    fn new(names: &[&str]) -> Rounds {
        Rounds {
            names: names.iter().map(|n| n.to_string()).collect(),
            rounds: Vec::new(),
            one_spell: false,
        }
    }

    /// Rounds that count only where every case's figure comes from a
    /// clean spell (its `clean` part is Some); the others are kept as
    /// rounds with no figures.
    fn one_spell(names: &[&str]) -> Rounds {
        Rounds {
            one_spell: true,
            ..Rounds::new(names)
        }
    }

    /// One round's figures, a (plain, clean) figure per case: the clean
    /// ones where every case has one (the same spell for all), else the
    /// plain ones. None: the case had no clean sample at all this round.
    fn push(&mut self, figures: Vec<Option<(f64, Option<f64>)>>) {
        let all_clean = figures.iter().all(|f| f.is_some_and(|f| f.1.is_some()));
        if self.one_spell && !all_clean {
            self.rounds.push(vec![None; figures.len()]);
            return;
        }
        self.rounds.push(
            figures
                .into_iter()
                .map(|f| f.map(|(plain, clean)| if all_clean { clean.unwrap() } else { plain }))
                .collect(),
        );
    }

    /// Each case's median ratio to the first case over the rounds where
    /// both have a figure (the first case's is 1); None where none.
    fn ratios(&self) -> Vec<(String, Option<f64>)> {
        (0..self.names.len())
            .map(|i| {
                let r: Vec<f64> = self
                    .rounds
                    .iter()
                    .filter_map(|round| Some(round[i]? / round[0]?))
                    .filter(|x| *x > 0.0)
                    .collect();
                (self.names[i].clone(), bwscope::stats::median(&r))
            })
            .collect()
    }

    /// How far apart the median ratios are (max / min - 1); None while a
    /// case has none.
    fn spread(&self) -> Option<f64> {
        let r: Option<Vec<f64>> = self.ratios().into_iter().map(|x| x.1).collect();
        let r = r?;
        let lo = r.iter().copied().fold(f64::MAX, f64::min);
        let hi = r.iter().copied().fold(0.0, f64::max);
        Some(hi / lo - 1.0)
    }

    /// The cases that never had a figure.
    fn missing(&self) -> Vec<String> {
        self.ratios()
            .into_iter()
            .filter(|x| x.1.is_none())
            .map(|x| x.0)
            .collect()
    }

    /// Rounds that compare the cases: all of them, or with
    /// [`Rounds::one_spell`] those in one clean spell.
    fn compared(&self) -> usize {
        if self.one_spell {
            self.rounds
                .iter()
                .filter(|r| r.iter().all(Option::is_some))
                .count()
        } else {
            self.rounds.len()
        }
    }

    fn agree(&self) -> bool {
        self.compared() >= MIN_ROUNDS && self.spread().is_some_and(|s| s <= BOUND)
    }

    fn describe(&self) -> String {
        let last = self.rounds.last().cloned().unwrap_or_default();
        format!(
            "median ratios to {} over {} rounds {:?}, spread {}; this round's figures {:?}",
            self.names[0],
            self.compared(),
            self.ratios()
                .iter()
                .map(|(n, r)| format!("{n} {}", r.map_or("-".into(), |r| format!("{r:.3}"))))
                .collect::<Vec<_>>(),
            self.spread()
                .map_or("-".into(), |s| format!("{:.1} %", s * 100.0)),
            last.iter()
                .map(|f| f.map_or("-".into(), |f| format!("{f:.1}")))
                .collect::<Vec<_>>()
        )
    }
}

fn json_of(args: &[&str]) -> Value {
    let out = common::bwscope()
        .args(args)
        .arg("--json")
        .arg("-")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "bwscope {:?} failed: {}",
        args,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The one ok record of `suite` in `run` matching `pred`.
fn record<'a>(run: &'a Value, suite: &str, pred: impl Fn(&Value) -> bool) -> &'a Value {
    let recs: Vec<&Value> = run["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["suite"] == suite && r["status"] == "ok" && pred(r))
        .collect();
    assert_eq!(recs.len(), 1, "{suite}: {run}");
    recs[0]
}

/// The best sample of a record that had clean samples (see [`clean`]),
/// the same for every suite: what the first test compares; Some again
/// where the run's own probes found the core not shared and the memory
/// not contended beside any of its samples ([`whole_spell_clean`]).
fn clean_best(r: &Value, key: &str) -> Option<(f64, Option<f64>)> {
    clean(r).then(|| {
        let best = stat(r, key, "best");
        (best, whole_spell_clean(r).then_some(best))
    })
}

/// Whether the spell probes beside a record's samples never found its
/// core shared or its memory contended (a record with no probes, as
/// under an emulator, has nothing against it). Stricter than the
/// per-sample `spells.clean`: on a 2-vCPU Xeon model 207 guest a record
/// with one probe of seven clean kept a best of 124 GB/s at 256 KiB where
/// unshared records read 148-151, and a tenant on the core's sibling
/// moved the suites' per-round ratios by ±12 % over ten rounds.
fn whole_spell_clean(r: &Value) -> bool {
    let s = &r["spells"];
    s.is_null()
        || (s["core_shared"].as_u64() == Some(0) && s["memory_contended"].as_u64() == Some(0))
}

/// One statistic (`best`, `median`, …) of a record's `gbps` or of an extra
/// figure such as `latency_ns`.
fn stat(r: &Value, key: &str, which: &str) -> f64 {
    let v = if key == "gbps" {
        &r["gbps"]
    } else {
        &r["extra"][key]
    };
    v[which].as_f64().unwrap()
}

/// The widest sequential read kernel this CPU runs (what a numa cell uses).
fn widest_read() -> String {
    let ks = json_of(&["kernels", "seq_read_"]);
    ks.as_array()
        .unwrap()
        .iter()
        .filter(|k| k["runs_here"] == true && k["nontemporal"] == false)
        .max_by_key(|k| k["width_bits"].as_u64().unwrap())
        .unwrap()["name"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The cpu every suite runs on: the last allowed one (away from cpu 0's
/// interrupts, and the cache suite's own default).
fn cpu() -> String {
    bwscope::platform::topology::allowed_cpus()
        .last()
        .unwrap()
        .to_string()
}

#[test]
fn every_suite_measures_the_same_bandwidth_and_latency() {
    let _turn = CPU_IN_USE.lock().unwrap_or_else(|e| e.into_inner());
    let k = widest_read();
    let cpu = cpu();
    let cases: Vec<(&str, Vec<&str>)> = vec![
        (
            "cache",
            vec!["cache", "--kernel", &k, "--sizes", WS, "--cpus", &cpu],
        ),
        (
            "threads private",
            vec!["threads", "--kernel", &k, "--sizes", WS, "--cpus", &cpu],
        ),
        (
            "threads shared",
            vec![
                "threads", "--kernel", &k, "--sizes", WS, "--cpus", &cpu, "--shared",
            ],
        ),
        (
            "threads process",
            vec![
                "threads",
                "--kernel",
                &k,
                "--sizes",
                WS,
                "--cpus",
                &cpu,
                "--processes",
            ],
        ),
        ("numa cell", vec!["numa", "--size", WS, "--cpus", &cpu]),
        (
            "latency",
            vec!["latency", "--sizes", WS, "--view", "random", "--cpu", &cpu],
        ),
    ];
    let bw_names: Vec<&str> = cases
        .iter()
        .map(|c| c.0)
        .filter(|n| *n != "latency")
        .collect();
    let mut bw = Rounds::one_spell(&bw_names);
    let mut lat = Rounds::new(&["latency", "numa latency cell"]);
    let mut verdict = String::new();
    for round in 0..ROUNDS {
        let mut figures = Vec::new();
        let mut latencies = vec![None, None];
        for (name, args) in &cases {
            let run = json_of(args);
            match *name {
                "latency" => {
                    let r = record(&run, "latency", |_| true);
                    latencies[0] = clean_best(r, "latency_ns");
                }
                "numa cell" => {
                    let bw = record(&run, "numa", |r| r["op"] == "read");
                    assert_eq!(bw["threads"], 1);
                    figures.push(clean_best(bw, "gbps"));
                    let l = record(&run, "numa", |r| r["op"] == "latency");
                    latencies[1] = clean_best(l, "latency_ns");
                }
                _ => {
                    let r = record(
                        &run,
                        if *name == "cache" { "cache" } else { "threads" },
                        |r| r["kernel"] == k.as_str(),
                    );
                    assert_eq!(r["threads"], 1);
                    assert_eq!(r["size_bytes"], 256 << 10);
                    figures.push(clean_best(r, "gbps"));
                }
            }
        }
        bw.push(figures);
        lat.push(latencies);
        verdict = format!(
            "round {}: bandwidth (GB/s) {}; latency (ns) {}",
            round + 1,
            bw.describe(),
            lat.describe()
        );
        eprintln!("{verdict}");
        if bw.agree() && lat.agree() {
            return;
        }
    }
    // The latency figures are judged whatever the bandwidth rounds were:
    // a chase is bound by latency, which a tenant on the core's sibling
    // hardly moves.
    if !lat.agree() {
        if let Some(m) = lat.missing().first() {
            eprintln!("SKIP: the machine gave `{m}` no clean sample in {ROUNDS} rounds: {verdict}");
            return;
        }
        panic!(
            "latencies disagree by more than {} %: {verdict}",
            BOUND * 100.0
        );
    }
    if bw.compared() < MIN_ROUNDS {
        eprintln!(
            "SKIP the bandwidth comparison (the latencies agree): in {} of {ROUNDS} rounds the run's own probes found the core shared or the memory contended beside some suite's samples (another tenant on this host): {verdict}",
            ROUNDS - bw.compared()
        );
        return;
    }
    panic!(
        "suites disagree by more than {} %: {verdict}",
        BOUND * 100.0
    );
}

/// A loop spinning on `cpu` until dropped, and never longer than `limit`
/// (a test that panics or hangs cannot leave it running).
struct BusyLoop {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl BusyLoop {
    fn start(cpu: u32, limit: Duration) -> BusyLoop {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            bwscope::measure::team::pin_current(cpu).expect("pin the busy loop");
            let end = Instant::now() + limit;
            let mut x = 0u64;
            while !flag.load(Ordering::Relaxed) && Instant::now() < end {
                for _ in 0..10_000 {
                    x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                }
            }
        });
        BusyLoop {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for BusyLoop {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Whether a record had clean samples: none of those it kept was taken
/// while a worker was descheduled (then it measured a time share of the
/// cpu, and the sampler says so).
fn clean(r: &Value) -> bool {
    r["samples_descheduled"].as_u64().unwrap_or(0) == 0
}

/// `ok` records of `suite` with `kernel`: size → their best GB/s (see
/// [`clean_best`]), or None where the record got no clean sample, and
/// the samples it retook.
type BySize = Vec<(u64, Option<(f64, Option<f64>)>, u64)>;

fn bests_by_size(run: &Value, suite: &str, kernel: &str) -> BySize {
    run["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["suite"] == suite && r["status"] == "ok" && r["kernel"] == kernel)
        .map(|r| {
            assert_eq!(r["threads"], 1, "{r}");
            (
                r["size_bytes"].as_u64().unwrap(),
                clean_best(r, "gbps"),
                r["samples_retaken"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

/// `cache`, `threads` (private, shared, process) on one cpu at 16 KiB (L1)
/// and 256 KiB (L2) in [`MIN_ROUNDS`] to [`ROUNDS`] alternating rounds,
/// each record's best sample counting only when its samples were clean,
/// until each suite's median ratio to `cache` in the same round agrees
/// within [`BOUND`]. A machine so busy that a suite never got a clean sample
/// skips, saying so; `beside` names the load.
fn streaming_suites_agree(beside: &str) {
    let k = widest_read();
    let cpu = cpu();
    let sizes = "16KiB,256KiB";
    let modes: [(&str, &[&str]); 4] = [
        ("cache", &["cache"]),
        ("threads private", &["threads"]),
        ("threads shared", &["threads", "--shared"]),
        ("threads process", &["threads", "--processes"]),
    ];
    let names: Vec<&str> = modes.iter().map(|m| m.0).collect();
    let mut per_size = [Rounds::new(&names), Rounds::new(&names)];
    let mut retaken = 0;
    let mut verdict = String::new();
    for round in 0..ROUNDS {
        let mut figures = [Vec::new(), Vec::new()];
        for (_, cmd) in &modes {
            let mut args: Vec<&str> = cmd.to_vec();
            args.extend(["--kernel", &k, "--sizes", sizes, "--cpus", &cpu]);
            let run = json_of(&args);
            let got = bests_by_size(&run, cmd[0], &k);
            assert_eq!(
                got.iter().map(|g| g.0).collect::<Vec<_>>(),
                [16 << 10, 256 << 10],
                "{args:?}: {run}"
            );
            for (j, (_, gbps, retook)) in got.into_iter().enumerate() {
                figures[j].push(gbps);
                retaken += retook;
            }
        }
        for (r, f) in per_size.iter_mut().zip(figures) {
            r.push(f);
        }
        verdict = format!(
            "round {} {beside} ({retaken} samples retaken): 16 KiB {}; 256 KiB {}",
            round + 1,
            per_size[0].describe(),
            per_size[1].describe()
        );
        eprintln!("{verdict}");
        if per_size.iter().all(Rounds::agree) {
            return;
        }
    }
    for (r, size) in per_size.iter().zip(["16 KiB", "256 KiB"]) {
        if let Some(m) = r.missing().first() {
            eprintln!(
                "SKIP: the machine gave `{m}` at {size} no clean sample in {ROUNDS} rounds {beside}: {verdict}"
            );
            return;
        }
    }
    panic!(
        "suites disagree by more than {} %: {verdict}",
        BOUND * 100.0
    );
}

#[test]
fn streaming_suites_agree_beside_a_busy_cpu() {
    let allowed = bwscope::platform::topology::allowed_cpus();
    if allowed.len() < 2 {
        eprintln!(
            "SKIP streaming_suites_agree_beside_a_busy_cpu: one allowed cpu, no other to load"
        );
        return;
    }
    let _turn = CPU_IN_USE.lock().unwrap_or_else(|e| e.into_inner());
    let cpu = cpu();
    // The busy loop outlives no test: ten rounds of four short runs take
    // well under a minute each; five minutes bounds a stuck test.
    let busy_cpu = *allowed.iter().find(|c| c.to_string() != cpu).unwrap();
    let _busy = BusyLoop::start(busy_cpu, Duration::from_secs(300));
    streaming_suites_agree(&format!("with cpu {busy_cpu} busy"));
}

/// Unpinned processes that load every cpu the way a build does (issue
/// 29: with `cargo build` beside it, `threads --processes` read 128
/// against 205 GB/s for the others at 16 KiB): each alternates a shell
/// loop that forks a short process every turn with a `dd` that streams
/// 4 MiB blocks through the kernel (its caches, and the scheduler's
/// choice of cpu, move under the measurement). Killed when dropped; each
/// also ends by itself after `limit`.
struct Build {
    shells: Vec<std::process::Child>,
}

impl Build {
    fn start(n: usize, limit: Duration) -> Build {
        let script = format!(
            "end=$(( $(date +%s) + {} )); \
             while [ $(date +%s) -lt $end ]; do \
               dd if=/dev/zero of=/dev/null bs=4M count=32 2>/dev/null; \
               i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; \
             done",
            limit.as_secs()
        );
        let shells = (0..n)
            .map(|_| {
                std::process::Command::new("sh")
                    .args(["-c", &script])
                    .stdin(std::process::Stdio::null())
                    .spawn()
                    .expect("start sh")
            })
            .collect();
        Build { shells }
    }
}

impl Drop for Build {
    fn drop(&mut self) {
        for c in &mut self.shells {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

#[test]
fn streaming_suites_agree_on_a_machine_loaded_like_a_build() {
    let _turn = CPU_IN_USE.lock().unwrap_or_else(|e| e.into_inner());
    // As many loaders as cpus, none pinned: every cpu, the measuring one
    // included, runs one some of the time.
    let n = bwscope::platform::topology::allowed_cpus().len();
    let _build = Build::start(n, Duration::from_secs(300));
    streaming_suites_agree(&format!("beside {n} unpinned build-like processes"));
}
