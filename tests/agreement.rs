//! One protocol, one answer: the same kernel on the same working set on the
//! same cpu measures the same bandwidth through every suite that can run
//! it — `cache`, `threads` (private buffer, shared buffer, a forked
//! process) and a 1×1 `numa` cell — and the pointer chase gives the same
//! latency through `latency` and the numa latency cell. Every suite
//! samples through `measure::Sampler`, so anything beyond noise here means
//! a suite measures differently from the others.
//!
//! The bound is 10 % between medians. The machine a test runs on is shared
//! (CI runners, a developer's other work), so each suite runs in up to
//! ten alternating rounds and its best median counts: interference only
//! ever slows a run down, and alternating gives every suite the same
//! chance at a quiet moment. Ten, not three: in a KVM guest a 256 KiB
//! read on Zen 4 moves between 97 and 117 GB/s in stretches of seconds
//! at a steady 3.69 GHz clock (a neighbour on the host core's L2), and a
//! CI run once caught `cache` in the slow stretch all three times. A
//! round takes about a second; the test stops at the first round that
//! agrees. The bound itself is never widened.
//!
//! The second test runs the four streaming suites beside a busy loop on
//! another cpu (what a shared CI machine looks like): the process team
//! once read 16-22 % low there, because its parent woke every 50 µs beside
//! its child (see `measure::procs::wait_done`). The third runs them on a
//! machine loaded the way a build loads it — unpinned processes on every
//! cpu, the measuring one included — where a worker is preempted inside
//! many samples: the sampler retakes those (`samples_retaken`), and a
//! record counts only when the samples it kept were clean. A machine so
//! busy that a suite never got a clean sample in ten rounds skips, saying
//! so; it never fails a user's `cargo test` for being busy.

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

/// The median of a record that had clean samples (see [`clean`]).
fn clean_median(r: &Value, key: &str) -> Option<f64> {
    clean(r).then(|| median(r, key))
}

fn median(r: &Value, key: &str) -> f64 {
    let v = if key == "gbps" {
        &r["gbps"]
    } else {
        &r["extra"][key]
    };
    v["median"].as_f64().unwrap()
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

fn spread(values: &[(&str, f64)]) -> f64 {
    let lo = values.iter().map(|v| v.1).fold(f64::MAX, f64::min);
    let hi = values.iter().map(|v| v.1).fold(0.0, f64::max);
    hi / lo - 1.0
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
    let mut best: Vec<(&str, f64)> = cases.iter().map(|c| (c.0, 0.0)).collect();
    let mut best_latency: Vec<(&str, f64)> =
        vec![("latency", f64::MAX), ("numa latency cell", f64::MAX)];
    let mut verdict = String::new();
    let mut bw = Vec::new();
    for round in 0..ROUNDS {
        for (i, (name, args)) in cases.iter().enumerate() {
            let run = json_of(args);
            match *name {
                "latency" => {
                    let r = record(&run, "latency", |_| true);
                    let ns = clean_median(r, "latency_ns").unwrap_or(f64::MAX);
                    best_latency[0].1 = best_latency[0].1.min(ns);
                }
                "numa cell" => {
                    let bw = record(&run, "numa", |r| r["op"] == "read");
                    assert_eq!(bw["threads"], 1);
                    best[i].1 = best[i].1.max(clean_median(bw, "gbps").unwrap_or(0.0));
                    let lat = record(&run, "numa", |r| r["op"] == "latency");
                    let ns = clean_median(lat, "latency_ns").unwrap_or(f64::MAX);
                    best_latency[1].1 = best_latency[1].1.min(ns);
                }
                _ => {
                    let r = record(
                        &run,
                        if *name == "cache" { "cache" } else { "threads" },
                        |r| r["kernel"] == k.as_str(),
                    );
                    assert_eq!(r["threads"], 1);
                    assert_eq!(r["size_bytes"], 256 << 10);
                    best[i].1 = best[i].1.max(clean_median(r, "gbps").unwrap_or(0.0));
                }
            }
        }
        bw = best.iter().filter(|b| b.0 != "latency").copied().collect();
        verdict = format!(
            "round {}: bandwidth medians (GB/s, best of rounds) {:?}, spread {:.1} %; latency medians (ns) {:?}, spread {:.1} %",
            round + 1,
            bw,
            spread(&bw) * 100.0,
            best_latency,
            spread(&best_latency) * 100.0
        );
        eprintln!("{verdict}");
        if spread(&bw) <= BOUND && spread(&best_latency) <= BOUND {
            return;
        }
    }
    let unclean = bw.iter().filter(|b| b.1 == 0.0);
    let unclean: Vec<&str> = unclean
        .chain(best_latency.iter().filter(|b| b.1 == f64::MAX))
        .map(|b| b.0)
        .collect();
    if !unclean.is_empty() {
        eprintln!(
            "SKIP: the machine gave {unclean:?} no clean sample in {ROUNDS} rounds: {verdict}"
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

/// `ok` records of `suite` with `kernel`: size → median GB/s, or None
/// where the record got no clean sample, and the samples it retook.
fn medians_by_size(run: &Value, suite: &str, kernel: &str) -> Vec<(u64, Option<f64>, u64)> {
    run["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["suite"] == suite && r["status"] == "ok" && r["kernel"] == kernel)
        .map(|r| {
            assert_eq!(r["threads"], 1, "{r}");
            (
                r["size_bytes"].as_u64().unwrap(),
                clean(r).then(|| median(r, "gbps")),
                r["samples_retaken"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

/// `cache`, `threads` (private, shared, process) on one cpu at 16 KiB (L1)
/// and 256 KiB (L2) in up to [`ROUNDS`] alternating rounds, each
/// record's median counting only when its samples were clean, until the
/// best medians agree within [`BOUND`]. A machine so busy that a suite
/// never got a clean sample skips, saying so; `beside` names the load.
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
    let mut best = [[0.0f64; 2]; 4];
    let mut retaken = 0;
    let mut verdict = String::new();
    for round in 0..ROUNDS {
        for (i, (_, cmd)) in modes.iter().enumerate() {
            let mut args: Vec<&str> = cmd.to_vec();
            args.extend(["--kernel", &k, "--sizes", sizes, "--cpus", &cpu]);
            let run = json_of(&args);
            let got = medians_by_size(&run, cmd[0], &k);
            assert_eq!(
                got.iter().map(|g| g.0).collect::<Vec<_>>(),
                [16 << 10, 256 << 10],
                "{args:?}: {run}"
            );
            for (j, (_, gbps, retook)) in got.iter().enumerate() {
                best[i][j] = best[i][j].max(gbps.unwrap_or(0.0));
                retaken += retook;
            }
        }
        let per_size: Vec<Vec<(&str, f64)>> = (0..2)
            .map(|j| modes.iter().zip(&best).map(|(m, b)| (m.0, b[j])).collect())
            .collect();
        verdict = format!(
            "round {} {beside} ({retaken} samples retaken): 16 KiB {:?} spread {:.1} %; 256 KiB {:?} spread {:.1} %",
            round + 1,
            per_size[0],
            spread(&per_size[0]) * 100.0,
            per_size[1],
            spread(&per_size[1]) * 100.0
        );
        eprintln!("{verdict}");
        if per_size.iter().flatten().all(|v| v.1 > 0.0)
            && per_size.iter().all(|v| spread(v) <= BOUND)
        {
            return;
        }
    }
    if let Some((m, j)) = (0..4)
        .flat_map(|i| (0..2).map(move |j| (i, j)))
        .find(|&(i, j)| best[i][j] == 0.0)
    {
        eprintln!(
            "SKIP: the machine gave `{}` at {} no clean sample in {ROUNDS} rounds {beside}: {verdict}",
            modes[m].0,
            ["16 KiB", "256 KiB"][j]
        );
        return;
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
