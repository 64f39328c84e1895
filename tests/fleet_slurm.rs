//! `srun -n 2 bwscope fleet` on a single-node Slurm started by the test:
//! slurmctld and slurmd from Debian's slurm-wlm (22.05), `auth/none`, its
//! own ports, spool and state in a temporary directory, stopped when the
//! test ends. The default (no MPI) build reads `SLURM_PROCID` and
//! `SLURM_STEP_NUM_TASKS` and meets rank 0 over TCP.
//!
//! Needs root (slurmd runs the tasks) and slurm-wlm; skips with a message
//! otherwise.

// Unix: signals, /proc, namespaces, guests, device nodes or Unix-only
// tools (the Windows build runs tests/windows.rs instead).
#![cfg(unix)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::fleet::{exe, flows, launched, QUICK};

fn unavailable() -> Option<String> {
    if unsafe { libc::geteuid() } != 0 {
        return Some("needs root to run slurmd".into());
    }
    for tool in ["slurmctld", "slurmd", "srun", "sinfo"] {
        if Command::new(tool).arg("-V").output().is_err() {
            return Some(format!("needs `{tool}` (apt-get install slurm-wlm)"));
        }
    }
    None
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// slurmctld + slurmd, stopped on drop.
struct Cluster {
    conf: PathBuf,
    daemons: Vec<Child>,
}

impl Cluster {
    fn start(dir: &Path) -> Result<Cluster, String> {
        let node = Command::new("slurmd")
            .arg("-C")
            .output()
            .map_err(|e| e.to_string())?;
        let node_line = String::from_utf8_lossy(&node.stdout)
            .lines()
            .find(|l| l.starts_with("NodeName="))
            .ok_or("slurmd -C printed no node")?
            .to_string();
        let host = node_line
            .split_whitespace()
            .next()
            .unwrap()
            .trim_start_matches("NodeName=")
            .to_string();
        for d in ["state", "spool"] {
            std::fs::create_dir_all(dir.join(d)).map_err(|e| e.to_string())?;
        }
        let p = |f: &str| dir.join(f).display().to_string();
        let conf = dir.join("slurm.conf");
        std::fs::write(
            &conf,
            format!(
                "ClusterName=bwfleet\nSlurmctldHost={host}\nSlurmctldPort={}\nSlurmdPort={}\n\
SlurmUser=root\nSlurmdUser=root\nAuthType=auth/none\nCredType=cred/none\n\
StateSaveLocation={}\nSlurmdSpoolDir={}\nSlurmctldPidFile={}\nSlurmdPidFile={}\n\
SlurmctldLogFile={}\nSlurmdLogFile={}\nProctrackType=proctrack/pgid\nTaskPlugin=task/none\n\
MpiDefault=none\nSchedulerType=sched/builtin\nSelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\n\
ReturnToService=2\nJobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n\
{node_line} State=UNKNOWN\nPartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n",
                free_port(),
                free_port(),
                p("state"),
                p("spool"),
                p("slurmctld.pid"),
                p("slurmd.pid"),
                p("slurmctld.log"),
                p("slurmd.log"),
            ),
        )
        .map_err(|e| e.to_string())?;
        let mut c = Cluster {
            conf,
            daemons: Vec::new(),
        };
        for d in ["slurmctld", "slurmd"] {
            let child = Command::new(d)
                .args(["-D", "-f"])
                .arg(&c.conf)
                .env("SLURM_CONF", &c.conf)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .map_err(|e| format!("{d}: {e}"))?;
            c.daemons.push(child);
        }
        let t0 = Instant::now();
        loop {
            let s = Command::new("sinfo")
                .args(["-h", "-o", "%t"])
                .env("SLURM_CONF", &c.conf)
                .output();
            if s.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "idle") {
                return Ok(c);
            }
            if t0.elapsed() > Duration::from_secs(30) {
                let log = std::fs::read_to_string(dir.join("slurmctld.log")).unwrap_or_default();
                return Err(format!("the node never became idle; slurmctld.log:\n{log}"));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for c in &mut self.daemons {
            unsafe {
                libc::kill(c.id() as i32, libc::SIGTERM);
            }
        }
        for c in &mut self.daemons {
            let t0 = Instant::now();
            while t0.elapsed() < Duration::from_secs(5) {
                if let Ok(Some(_)) = c.try_wait() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

#[test]
fn srun_two_tasks_through_the_default_build() {
    if let Some(why) = unavailable() {
        eprintln!("SKIP fleet slurm test: {why}");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let cluster = match Cluster::start(&d.path().join("slurm")) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("SKIP fleet slurm test: cannot start a Slurm here: {e}");
            return;
        }
    };
    let mut c = Command::new("srun");
    c.env("BWSCOPE_HISTORY", common::test_history());
    c.args(["-n", "2", "--time", "5", exe(), "fleet"])
        .args(QUICK)
        .args(["--control", "tcp", "--out", "res", "--timeout", "60"])
        .env("SLURM_CONF", &cluster.conf);
    let f = launched(&mut c, d.path(), 2);
    assert_eq!(f["launch"]["launcher"], "slurm");
    assert!(
        f["launch"]["job"].as_str().unwrap().contains('.'),
        "job.step: {}",
        f["launch"]
    );
    for r in 0..2 {
        assert_eq!(f["nodes"][r]["status"], "ok");
        assert_eq!(f["nodes"][r]["local_rank"], r as u64);
    }
    assert!(flows(&f, 1, 0)[0]["recv_gbps"].as_f64().unwrap() > 0.0);
    drop(cluster);
}
