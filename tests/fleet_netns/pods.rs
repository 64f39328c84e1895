//! The fleet as the MPI Operator runs it in Kubernetes pods (issue 41):
//! every rank in a mount namespace of its own with a fresh tmpfs over its
//! working directory (no rendezvous file can be shared), told only where
//! rank 0 listens, through `BWSCOPE_COORDINATOR` as `mpirun -x` forwards it
//! (sshd in a pod does not pass the pod's environment on), by a host name
//! the ranks' resolver learns only after they started (a pod's DNS name
//! appears once the pod runs), with the token from a file named by
//! `BWSCOPE_TOKEN_FILE`, and rank 0's results on its standard output.

use std::io::Write as _;
use std::sync::mpsc::channel;

use super::*;

const PODS: &str = "bwkp";
const POD_NET: &str = "10.251.8";
const COORDINATOR: &str = "bwkp-coordinator:5290";

/// Why a private mount namespace with a tmpfs cannot be made here, if not.
fn mounts_unavailable(dir: &std::path::Path) -> Option<String> {
    let out = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg("mount -t tmpfs bwscope-probe \"$0\"")
        .arg(dir)
        .output()
        .ok()?;
    (!out.status.success()).then(|| {
        format!(
            "cannot mount a tmpfs in a private mount namespace here: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )
    })
}

/// The rsh agent's environment for a rank in its own "pod".
fn pod_env<'a>(
    work: &'a std::path::Path,
    hosts: &'a std::path::Path,
) -> [(&'a str, &'a std::ffi::OsStr); 3] {
    [
        ("NETNS_PREFIX", PODS.as_ref()),
        ("PRIVATE_DIR", work.as_os_str()),
        ("HOSTS_FILE", hosts.as_os_str()),
    ]
}

#[test]
fn ranks_in_private_mounts_meet_at_a_late_resolving_coordinator() {
    if let Some(why) = unavailable() {
        eprintln!("SKIP fleet pods test: {why}");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let work = d.path().join("work");
    std::fs::create_dir(&work).unwrap();
    if let Some(why) = mounts_unavailable(&work) {
        eprintln!("SKIP fleet pods test: {why}");
        return;
    }
    let _one = serial();
    let hosts = match Hosts::up(PODS, POD_NET, 3, &[]) {
        Ok(h) => h,
        Err(e) => {
            eprintln!("SKIP fleet pods test: cannot create namespaces here: {e}");
            return;
        }
    };
    // The ranks' /etc/hosts: this machine's, without the coordinator yet.
    let hosts_file = d.path().join("hosts");
    std::fs::copy("/etc/hosts", &hosts_file).unwrap();
    let token = d.path().join("token");
    std::fs::write(&token, "a secret from a mounted Secret\n").unwrap();
    std::fs::set_permissions(&token, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();

    // Nothing is shared: a file in the working directory is not there for a rank.
    std::fs::write(work.join("shared-probe"), "x").unwrap();
    let seen = Command::new("bash")
        .arg(script())
        .args(["rsh", &format!("{PODS}-1"), "ls -A; echo end"])
        .current_dir(&work)
        .envs(pod_env(&work, &hosts_file))
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&seen.stdout).trim(),
        "end",
        "a rank's working directory is its own: {seen:?}"
    );
    std::fs::remove_file(work.join("shared-probe")).unwrap();

    let hf = Command::new("bash")
        .arg(script())
        .arg("hostfile")
        .env("NETNS_PREFIX", PODS)
        .output()
        .unwrap();
    let hostfile = d.path().join("hostfile");
    std::fs::write(&hostfile, &hf.stdout).unwrap();
    let subnet = format!("{POD_NET}.0/24");
    let agent = format!("bash {} rsh", script().display());
    let coordinator = format!("BWSCOPE_COORDINATOR={COORDINATOR}");
    let token_var = format!("BWSCOPE_TOKEN_FILE={}", token.display());
    #[rustfmt::skip]
    let args = [
        "--hostfile", hostfile.to_str().unwrap(), "-np", "3", "--bind-to", "none",
        "--mca", "plm_rsh_agent", &agent,
        "--mca", "oob_tcp_if_include", &subnet,
        "--mca", "btl", "tcp,self", "--mca", "btl_tcp_if_include", &subnet,
        // Only mpirun's forwarding carries them, as in an MPIJob.
        "-x", &coordinator, "-x", &token_var, "-x", "BWSCOPE_HISTORY",
        exe(), "fleet", "--control", "tcp",
        "--suites", "cache", "--samples", "3", "--min-sample-ms", "5",
        "--step-time", "0.3", "--omit", "0.1", "--timeout", "60", "--json", "-",
    ];
    let mut mpirun = Command::new("mpirun")
        .env("BWSCOPE_HISTORY", crate::common::test_history())
        .args(args)
        .current_dir(&work)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env_remove("BWSCOPE_COORDINATOR")
        .env_remove("BWSCOPE_TOKEN_FILE")
        .envs(pod_env(&work, &hosts_file))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mpirun");
    let mut stdout = mpirun.stdout.take().unwrap();
    let json = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stdout, &mut b);
        b
    });
    // The name resolves once a rank has said it waits for it (or after 20 s).
    let (tx, rx) = channel();
    let err = mpirun.stderr.take().unwrap();
    let lines = std::thread::spawn(move || {
        let mut all = Vec::new();
        for l in BufReader::new(err).lines().map_while(Result::ok) {
            eprintln!("mpirun: {l}");
            if l.contains("still waiting for rank 0") {
                let _ = tx.send(());
            }
            all.push(l);
        }
        all
    });
    let _ = rx.recv_timeout(Duration::from_secs(20));
    let mut h = std::fs::OpenOptions::new()
        .append(true)
        .open(&hosts_file)
        .unwrap();
    // In place: the ranks' /etc/hosts is this file, bound.
    writeln!(h, "{POD_NET}.1 {}", COORDINATOR.split(':').next().unwrap()).unwrap();
    drop(h);
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = mpirun.try_wait().unwrap() {
            break s;
        }
        if t0.elapsed() > Duration::from_secs(180) {
            let _ = mpirun.kill();
            panic!("mpirun did not end");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let said = lines.join().unwrap();
    let stdout = json.join().unwrap();
    assert!(status.success(), "mpirun: {status:?}");
    let waited = said
        .iter()
        .find(|l| l.contains("still waiting for rank 0"))
        .expect("a rank said what it waited for");
    assert!(
        waited.contains(COORDINATOR) && waited.contains("does not resolve yet"),
        "{waited}"
    );
    // Rank 0's results: the fleet's JSON alone on standard output.
    let f: Value = serde_json::from_slice(&stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is the fleet's JSON: {e}\n{}",
            String::from_utf8_lossy(&stdout)
        )
    });
    assert_valid(&f, 3);
    for r in 0..3 {
        assert_eq!(f["nodes"][r]["status"], "ok", "{}", f["nodes"][r]);
        assert_eq!(f["nodes"][r]["hostname"], format!("{PODS}-{r}"));
        assert_eq!(
            f["nodes"][r]["address"].as_str().unwrap().split(':').next(),
            Some(format!("{POD_NET}.{}", r + 1).as_str())
        );
    }
    // Authenticated with the token: no rank warned it was not.
    assert!(
        !said.iter().any(|l| l.contains("not authenticated")),
        "{said:?}"
    );
    drop(hosts);
}
