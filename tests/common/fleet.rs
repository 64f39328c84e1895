//! Shared by the fleet tests: start ranks the way a launcher would (its
//! environment variables), watch rank 0's progress lines, check a fleet
//! file.

use std::cell::RefCell;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use serde_json::Value;

pub fn exe() -> &'static str {
    env!("CARGO_BIN_EXE_bwscope")
}

/// A short per-node phase and network phase, for tests.
pub const QUICK: &[&str] = &[
    "--suites",
    "cache",
    "--samples",
    "3",
    "--min-sample-ms",
    "2",
    "--step-time",
    "0.3",
    "--omit",
    "0.1",
];

/// How much slower than rank 0's own estimate a fleet may run before a
/// test gives up on it. Generous: CI machines and a developer's 2-vCPU
/// guest run other builds and tests beside these ranks (a load of 5 on two
/// cpus is common), and the estimate assumes a quiet machine.
pub const SLOWER_THAN_PLANNED: f64 = 10.0;

/// What every wait gets on top: starting the ranks, joining, detecting
/// the host, writing the outputs (none of it is in the estimate).
pub const STARTUP: Duration = Duration::from_secs(90);

/// A per-node phase long enough to interrupt in its second round (a few
/// seconds per rank).
pub const INTERRUPTIBLE: &[&str] = &[
    "--suites",
    "cache,latency",
    "--samples",
    "5",
    "--min-sample-ms",
    "20",
];

/// Ranks started as `mpirun` would start them, without `mpirun`: the same
/// binary with `OMPI_COMM_WORLD_*` set. Killed when dropped.
pub struct Ranks {
    pub children: Vec<Child>,
    /// Rank 0's stderr, line by line.
    lines: Receiver<String>,
    /// Every line of rank 0 read so far.
    seen: RefCell<Vec<String>>,
    /// The job name every rank was given (it keys the rendezvous file).
    pub job: String,
    started: Instant,
}

static JOBS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// `expect about 4 s: …` (rank 0's estimate of the whole run) in seconds.
pub fn expected_seconds(line: &str) -> Option<f64> {
    let rest = line.split("expect about ").nth(1)?;
    let mut words = rest.split(|c: char| c == ':' || c.is_whitespace());
    let n: f64 = words.next()?.parse().ok()?;
    let unit = match words.next()? {
        "s" => 1.0,
        "min" => 60.0,
        "h" => 3600.0,
        _ => return None,
    };
    Some(n * unit)
}

impl Ranks {
    /// All `n` ranks of a fleet, started in `dir`.
    pub fn spawn(n: u32, dir: &Path, args: &[&str]) -> Ranks {
        let all: Vec<u32> = (0..n).collect();
        Ranks::spawn_ranks(n, &all, dir, args)
    }

    /// Only `which` of the `n` ranks (the test plays the others).
    pub fn spawn_ranks(n: u32, which: &[u32], dir: &Path, args: &[&str]) -> Ranks {
        let job = format!(
            "test{}-{}",
            std::process::id(),
            JOBS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        let mut children = Vec::new();
        let (tx, lines) = channel();
        for &r in which {
            let mut c = Command::new(exe());
            c.env("BWSCOPE_HISTORY", super::test_history());
            // No MPI here even in an MPI build: the launcher is faked.
            c.arg("fleet")
                .args(args)
                .args(["--control", "tcp"])
                .current_dir(dir)
                .env("OMPI_COMM_WORLD_RANK", r.to_string())
                .env("OMPI_COMM_WORLD_SIZE", n.to_string())
                .env("OMPI_COMM_WORLD_LOCAL_RANK", r.to_string())
                .env("OMPI_MCA_ess_base_jobid", &job)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let mut child = c.spawn().expect("start a rank");
            if r == 0 {
                let err = child.stderr.take().unwrap();
                let tx = tx.clone();
                std::thread::spawn(move || {
                    for l in BufReader::new(err).lines().map_while(Result::ok) {
                        eprintln!("rank0: {l}");
                        let _ = tx.send(l);
                    }
                });
            }
            children.push(child);
        }
        Ranks {
            children,
            lines,
            seen: RefCell::new(Vec::new()),
            job,
            started: Instant::now(),
        }
    }

    /// The next line of rank 0 before `deadline`; None at the deadline or
    /// when rank 0's stderr closed.
    fn next_line(&self, deadline: Instant) -> Option<String> {
        loop {
            let left = deadline.checked_duration_since(Instant::now())?;
            match self
                .lines
                .recv_timeout(left.min(Duration::from_millis(200)))
            {
                Ok(l) => {
                    self.seen.borrow_mut().push(l.clone());
                    return Some(l);
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(_) => return None,
            }
        }
    }

    /// Rank 0's last lines, for a message on giving up.
    fn tail(&self) -> String {
        let seen = self.seen.borrow();
        let from = seen.len().saturating_sub(8);
        if seen.is_empty() {
            "(rank 0 said nothing)".into()
        } else {
            seen[from..].join("\n  ")
        }
    }

    /// Wait for a line of rank 0 containing `text`, at most `within`
    /// (startup waits: nothing of the plan is known yet).
    pub fn wait_for(&self, text: &str, within: Duration) -> String {
        let deadline = Instant::now() + within;
        while let Some(l) = self.next_line(deadline) {
            if l.contains(text) {
                return l;
            }
        }
        panic!(
            "gave up waiting {within:?} for rank 0 to say '{text}'; its last lines:\n  {}",
            self.tail()
        );
    }

    /// Rank 0's estimate of the whole run ("expect about …"), waiting for
    /// it at most [`STARTUP`] after the ranks started.
    pub fn estimate(&self) -> (Duration, String) {
        let known = self
            .seen
            .borrow()
            .iter()
            .find(|l| expected_seconds(l).is_some())
            .cloned();
        let line = known.unwrap_or_else(|| {
            let left = STARTUP.saturating_sub(self.started.elapsed());
            self.wait_for("expect about", left)
        });
        let s = expected_seconds(&line).unwrap_or_else(|| panic!("cannot read '{line}'"));
        (Duration::from_secs_f64(s), line)
    }

    /// How long the whole run may take: [`STARTUP`] plus
    /// [`SLOWER_THAN_PLANNED`] × rank 0's estimate plus `known_waits` (a
    /// `--timeout` the test makes the fleet sit out), counted from start.
    pub fn limit(&self, known_waits: Duration) -> (Duration, String) {
        let (est, line) = self.estimate();
        let limit = STARTUP + est.mul_f64(SLOWER_THAN_PLANNED) + known_waits;
        let why = format!(
            "{STARTUP:?} to start + {SLOWER_THAN_PLANNED} × rank 0's estimate ('{}') + {known_waits:?} of known waits",
            line.trim()
        );
        (limit, why)
    }

    /// Exit codes of every rank, waiting as long as [`Ranks::limit`]
    /// allows; a rank still running then is a failure that says what it
    /// waited for.
    pub fn wait_all(&mut self, known_waits: Duration) -> Vec<i32> {
        let (limit, why) = self.limit(known_waits);
        let codes = self.wait(limit.saturating_sub(self.started.elapsed()));
        if codes.iter().any(Option::is_none) {
            let running: Vec<usize> = (0..codes.len()).filter(|&i| codes[i].is_none()).collect();
            panic!(
                "gave up after {:?} ({why}) waiting for every rank to exit: ranks {running:?} still run (exit codes {codes:?}); rank 0's last lines:\n  {}",
                self.started.elapsed(),
                self.tail()
            );
        }
        codes.into_iter().map(Option::unwrap).collect()
    }

    /// Exit code of rank `i`, waiting as [`Ranks::wait_all`] does.
    pub fn wait_rank(&mut self, i: usize, known_waits: Duration) -> i32 {
        let (limit, why) = self.limit(known_waits);
        let left = limit.saturating_sub(self.started.elapsed());
        self.wait_one(i, left).unwrap_or_else(|| {
            panic!(
                "gave up after {:?} ({why}) waiting for rank {i} to exit; rank 0's last lines:\n  {}",
                self.started.elapsed(),
                self.tail()
            )
        })
    }

    /// Exit codes of every rank, waiting at most `within`.
    pub fn wait(&mut self, within: Duration) -> Vec<Option<i32>> {
        let t0 = Instant::now();
        let mut codes = vec![None; self.children.len()];
        loop {
            for (i, c) in self.children.iter_mut().enumerate() {
                if codes[i].is_none() {
                    if let Ok(Some(s)) = c.try_wait() {
                        codes[i] = Some(s.code().unwrap_or(-1));
                    }
                }
            }
            if codes.iter().all(Option::is_some) || t0.elapsed() > within {
                return codes;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Exit code of one rank, waiting at most `within`.
    pub fn wait_one(&mut self, i: usize, within: Duration) -> Option<i32> {
        let t0 = Instant::now();
        while t0.elapsed() < within {
            if let Ok(Some(s)) = self.children[i].try_wait() {
                return Some(s.code().unwrap_or(-1));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        None
    }

    pub fn pid(&self, rank: usize) -> i32 {
        self.children[rank].id() as i32
    }
}

impl Drop for Ranks {
    fn drop(&mut self) {
        for c in &mut self.children {
            unsafe {
                libc::kill(c.id() as i32, libc::SIGCONT);
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Run a launcher's command line that starts a fleet writing into
/// `dir/res`; check that it succeeded and return the checked fleet file.
pub fn launched(c: &mut Command, dir: &Path, ranks: usize) -> Value {
    let o = c.current_dir(dir).output().expect("start the launcher");
    eprintln!("{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{o:?}");
    let f = load(&dir.join("res/fleet.json"));
    assert_valid(&f, ranks);
    f
}

pub fn load(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// The checks every finished fleet file passes.
pub fn assert_valid(f: &Value, ranks: usize) {
    assert_eq!(f["kind"], "bwscope-fleet");
    assert_eq!(f["fleet_schema_version"], 1);
    let nodes = f["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), ranks);
    for (i, n) in nodes.iter().enumerate() {
        assert_eq!(n["rank"], i as u64);
        assert!(!n["label"].as_str().unwrap().is_empty());
        if n["status"] == "ok" && !n["run"].is_null() {
            assert_eq!(n["run"]["tool"]["name"], "bwscope");
            assert_eq!(n["run"]["schema_version"], f["schema_version"]);
        }
    }
    let v = &f["verdicts"];
    assert_eq!(
        v["nodes"].as_array().unwrap().len(),
        ranks,
        "one verdict per node"
    );
    let t = &f["timings"];
    let total = t["total_seconds"].as_f64().unwrap();
    assert!(total > 0.0);
    assert!(
        t["node_measure_seconds"].as_f64().unwrap()
            + t["network_measure_seconds"].as_f64().unwrap()
            <= total + 0.5
    );
}

/// The flows of the first matrix from `src` to `dst` (by rank).
pub fn flows(f: &Value, src: u64, dst: u64) -> Vec<&Value> {
    f["network"][0]["flows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["src"] == src && x["dst"] == dst)
        .collect()
}

/// Names of the metrics a node failed on.
pub fn failed_metrics(f: &Value, rank: usize) -> Vec<String> {
    f["verdicts"]["nodes"][rank]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["outlier"] == true || c["below_reference"] == true)
        .map(|c| c["metric"].as_str().unwrap().to_string())
        .collect()
}

/// Parse with the reference OpenMetrics parser where it is installed
/// (python3-prometheus-client; CI installs it).
pub fn check_openmetrics(text: &str) {
    let py = "/usr/bin/python3";
    let probe = std::process::Command::new(py)
        .args(["-c", "import prometheus_client"])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!("SKIP OpenMetrics parse: no python3-prometheus-client (apt-get install python3-prometheus-client)");
        return;
    }
    let mut c = std::process::Command::new(py)
        .args([
            "-c",
            "import sys\nfrom prometheus_client.openmetrics.parser import text_string_to_metric_families as p\nfor f in p(sys.stdin.read()): print(f.name, f.type, len(f.samples))",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut c.stdin.take().unwrap(), text.as_bytes()).unwrap();
    let o = c.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("bwscope_bandwidth_bytes_per_second gauge")
            && out.contains("bwscope_run info"),
        "{out}"
    );
}
