//! Shared by the fleet tests: start ranks the way a launcher would (its
//! environment variables), watch rank 0's progress lines, check a fleet
//! file.

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

/// Ranks started as `mpirun` would start them, without `mpirun`: the same
/// binary with `OMPI_COMM_WORLD_*` set. Killed when dropped.
pub struct Ranks {
    pub children: Vec<Child>,
    /// Rank 0's stderr, line by line.
    pub lines: Receiver<String>,
    /// The job name every rank was given (it keys the rendezvous file).
    pub job: String,
}

static JOBS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

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
            job,
        }
    }

    /// Wait for a line of rank 0 containing `text`.
    pub fn wait_for(&self, text: &str, within: Duration) -> String {
        let t0 = Instant::now();
        while t0.elapsed() < within {
            match self.lines.recv_timeout(Duration::from_millis(200)) {
                Ok(l) if l.contains(text) => return l,
                Ok(_) => {}
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(_) => break,
            }
        }
        panic!("rank 0 never said '{text}' within {within:?}");
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
