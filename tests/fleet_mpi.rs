//! `bwscope fleet` under real launchers on one machine: Open MPI's
//! `mpirun --oversubscribe` (TCP on loopback, as root where CI runs) and
//! MPICH's Hydra `mpiexec`. The default build reads the launcher's
//! environment and meets rank 0 over TCP; a build with `--features mpi`
//! also runs its MPI control and MPI pair tests. Skips with a message
//! where a launcher is missing (apt-get install openmpi-bin mpich).

// Unix: signals, /proc, namespaces, guests, device nodes or Unix-only
// tools (the Windows build runs tests/windows.rs instead).
#![cfg(unix)]

mod common;

use std::process::Command;

use common::fleet::{exe, flows, launched, QUICK};

fn found(cmd: &str) -> bool {
    Command::new(cmd)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn open_mpi() -> bool {
    Command::new("mpirun")
        .arg("--version")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("Open MPI"))
}

/// `mpirun -np n bwscope fleet QUICK extra…` in `dir`.
fn mpirun(n: u32, extra: &[&str]) -> Command {
    let mut c = mpirun_fleet(n);
    c.args(QUICK).args(extra);
    c
}

/// `mpirun -np n bwscope fleet` over TCP on loopback, as root where CI runs.
fn mpirun_fleet(n: u32) -> Command {
    let np = n.to_string();
    let mut c = Command::new("mpirun");
    c.env("BWSCOPE_HISTORY", common::test_history());
    c.args([
        "--oversubscribe",
        "--mca",
        "btl",
        "tcp,self",
        "--mca",
        "btl_tcp_if_include",
        "lo",
    ])
    .args([
        "--mca",
        "oob_tcp_if_include",
        "lo",
        "-np",
        &np,
        exe(),
        "fleet",
    ])
    .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
    .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    c
}

#[test]
fn open_mpi_oversubscribed_over_tcp() {
    if !open_mpi() {
        eprintln!("SKIP open_mpi_oversubscribed_over_tcp: no Open MPI mpirun (apt-get install openmpi-bin)");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let f = launched(
        &mut mpirun(3, &["--control", "tcp", "--out", "res", "--timeout", "60"]),
        d.path(),
        3,
    );
    assert_eq!(f["launch"]["launcher"], "openmpi");
    assert_eq!(f["launch"]["control"], "tcp");
    assert!(f["launch"]["job"].is_string(), "Open MPI names the job");
    for r in 0..3 {
        assert_eq!(f["nodes"][r]["status"], "ok");
        assert_eq!(f["nodes"][r]["local_rank"], r as u64);
    }
    assert!(flows(&f, 2, 0)[0]["recv_gbps"].as_f64().unwrap() > 0.0);
}

#[test]
fn mpich_hydra_through_pmi() {
    if !found("mpiexec.hydra") {
        eprintln!("SKIP mpich_hydra_through_pmi: no mpiexec.hydra (apt-get install mpich)");
        return;
    }
    if cfg!(feature = "mpi") && open_mpi() {
        eprintln!("SKIP mpich_hydra_through_pmi: this build links Open MPI, Hydra cannot start it");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let mut c = Command::new("mpiexec.hydra");
    c.env("BWSCOPE_HISTORY", common::test_history());
    c.args(["-n", "2", exe(), "fleet"])
        .args(QUICK)
        .args(["--out", "res", "--timeout", "60"]);
    let f = launched(&mut c, d.path(), 2);
    assert_eq!(f["launch"]["launcher"], "pmi");
    assert!(flows(&f, 0, 1)[0]["recv_gbps"].as_f64().unwrap() > 0.0);
}

/// Ctrl-C to the launcher while rank 0 measures its second round: the
/// ranks stop, every file is written with `interrupted: true`, and the
/// launcher exits as docs/fleet.md says: 130 from MPICH's Hydra, 1 from
/// Open MPI's `mpirun` (which aborts a job it is asked to stop with its
/// own code, whatever the ranks return).
fn interrupted_by_the_launcher(mut c: Command, expected: &[i32]) {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let d = tempfile::tempdir().unwrap();
    let mut child = c
        .args(common::fleet::INTERRUPTIBLE)
        .args(["--out", "res", "--timeout", "60"])
        .current_dir(d.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the launcher");
    let err = child.stderr.take().unwrap();
    let mut lines = BufReader::new(err).lines().map_while(Result::ok);
    let mut seen = Vec::new();
    for l in lines.by_ref() {
        eprintln!("launcher: {l}");
        let go = l.contains("round 2 of");
        seen.push(l);
        if go {
            break;
        }
    }
    assert!(
        seen.iter().any(|l| l.contains("round 2 of")),
        "the fleet never reached its second round: {seen:?}"
    );
    std::thread::sleep(std::time::Duration::from_millis(500));
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    for l in lines {
        eprintln!("launcher: {l}");
    }
    let status = child.wait().unwrap();
    assert!(
        status.code().is_some_and(|c| expected.contains(&c)),
        "{status:?}, expected one of {expected:?}"
    );
    let f = common::fleet::load(&d.path().join("res/fleet.json"));
    assert_eq!(
        (f["interrupted"].as_bool(), f["complete"].as_bool()),
        (Some(true), Some(false))
    );
    assert!(d.path().join("res/verdicts.txt").exists());
}

#[test]
fn ctrl_c_to_open_mpi_mpirun_is_its_abort_code_1() {
    if !open_mpi() {
        eprintln!("SKIP ctrl_c_to_open_mpi_mpirun_is_its_abort_code_1: no Open MPI mpirun (apt-get install openmpi-bin)");
        return;
    }
    let mut c = mpirun_fleet(3);
    c.args(["--control", "tcp"]);
    interrupted_by_the_launcher(c, &[1]);
}

#[test]
fn ctrl_c_to_mpich_hydra_is_130() {
    if !found("mpiexec.hydra") {
        eprintln!("SKIP ctrl_c_to_mpich_hydra_is_130: no mpiexec.hydra (apt-get install mpich)");
        return;
    }
    if cfg!(feature = "mpi") && open_mpi() {
        eprintln!(
            "SKIP ctrl_c_to_mpich_hydra_is_130: this build links Open MPI, Hydra cannot start it"
        );
        return;
    }
    let mut c = Command::new("mpiexec.hydra");
    c.env("BWSCOPE_HISTORY", common::test_history());
    c.args(["-n", "2", exe(), "fleet"]);
    // Hydra reports its ranks' 130, except when it tears its proxies down
    // before they have reported: then it exits 0 (seen in 2 of 3 runs on a
    // loaded 2-cpu machine, with both ranks exiting 130 and fleet.json
    // interrupted). What bwscope controls is checked either way: the files
    // say interrupted, and no code but 130 or Hydra's 0 comes back.
    interrupted_by_the_launcher(c, &[130, 0]);
}

/// The MPI build: MPI carries the control, and measures pairs with MPI
/// point-to-point next to bwscope's TCP protocol.
#[cfg(feature = "mpi")]
#[test]
fn mpi_control_and_mpi_pair_tests() {
    if !open_mpi() {
        eprintln!("SKIP mpi_control_and_mpi_pair_tests: no Open MPI mpirun");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let mut c = mpirun(
        3,
        &[
            "--transport",
            "tcp,mpi",
            "--msg-sizes",
            "64KiB,1MiB",
            "--out",
            "res",
            "--timeout",
            "60",
        ],
    );
    let f = launched(&mut c, d.path(), 3);
    assert_eq!(f["launch"]["control"], "mpi");
    let m: Vec<&str> = f["network"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["transport"].as_str().unwrap())
        .collect();
    assert_eq!(m, vec!["tcp", "mpi"]);
    let mpi = &f["network"][1];
    let flows = mpi["flows"].as_array().unwrap();
    assert_eq!(flows.len(), 2 * 6, "two sizes × six ordered pairs");
    for x in flows {
        // Each end reports its own view; rank 0 joins them.
        assert!(x["send_gbps"].as_f64().unwrap() > 0.0, "{x}");
        assert!(x["recv_gbps"].as_f64().unwrap() > 0.0, "{x}");
        assert!(
            x["bytes"].as_u64().unwrap() >= 16 * x["size_bytes"].as_u64().unwrap(),
            "a measured window at least: {x}"
        );
    }
    let checks = f["verdicts"]["metrics"].as_array().unwrap();
    assert!(checks.iter().any(|c| c["metric"] == "mpi_out_gbps"));
}
