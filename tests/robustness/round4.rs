//! Round 4 of the bad-input matrix (issue 30): hostile firmware tables,
//! terminal escapes in run files, fleets of impossible sizes and lost
//! rank 0s, an unthrottled server log, a tiny stack, and silent
//! acceptance. One test per item, each named after what it guards.

use std::path::Path;
use std::time::{Duration, Instant};

use super::{stderr_of, usage_error, TINY};
use crate::common::{bwscope, smbios_entry_point};

// ---- item 3: a malformed SMBIOS table ---------------------------------------

fn smbios_dir(dir: &Path, table: &[u8]) {
    std::fs::write(
        dir.join("smbios_entry_point"),
        smbios_entry_point(table.len() as u32, 3, 3),
    )
    .unwrap();
    std::fs::write(dir.join("DMI"), table).unwrap();
}

#[test]
fn a_malformed_smbios_table_is_a_note_never_a_panic() {
    let d = tempfile::tempdir().unwrap();
    // (case, the table, what the note says)
    let mut short_array = vec![16u8, 0x0B, 1, 0];
    short_array.extend([3, 3, 6, 0, 0, 0, 0x80, 0, 0]);
    let cases: [(&str, Vec<u8>, &str); 3] = [
        // A structure whose length byte is 0: the crate sliced 4..2.
        ("8 zero bytes", vec![0u8; 8], "less than its 4-byte header"),
        // A type bwscope does not read, too short for its fields (Group
        // Associations of 4 bytes: the crate indexed past its end).
        (
            "a 4-byte type 14",
            vec![14, 4, 1, 0, 0, 0, 127, 4, 2, 0, 0, 0],
            "",
        ),
        // A memory array shorter than its version's fields.
        ("a short memory array", short_array, "shorter than the 15"),
    ];
    for (name, table, needle) in cases {
        smbios_dir(d.path(), &table);
        for args in [
            vec!["info", "--no-clock", "--json", "-"],
            TINY.iter().copied().chain(["--json", "-"]).collect(),
        ] {
            let o = bwscope()
                .env("BWSCOPE_SMBIOS_DIR", d.path())
                .args(&args)
                .timeout(Duration::from_secs(60))
                .output()
                .unwrap();
            let e = stderr_of(&o);
            assert_eq!(o.status.code(), Some(0), "{name}: {args:?}: {e}");
            assert!(!e.contains("panicked"), "{name}: {e}");
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            let dram = if v["host"].is_null() {
                &v["dram"]
            } else {
                &v["host"]["dram"]
            };
            let note = dram["note"].as_str().unwrap_or_default();
            assert!(dram["peak_gbps"].is_null(), "{name}: {dram}");
            assert!(
                note.starts_with("DRAM peak unknown") && note.contains(needle),
                "{name}: {note}"
            );
        }
    }
}

// ---- item 11: a tiny stack ----------------------------------------------------

/// `bwscope ARGS` under `ulimit SET` (bash's `-s` sets the soft and the
/// hard limit, `-Ss` the soft one only).
fn under_stack_limit(set: &str, args: &str) -> std::process::Output {
    super::with_history(std::process::Command::new("bash"))
        .env("BWSCOPE_HISTORY", crate::common::test_history())
        .args(["-c", &format!("ulimit {set}; exec {} {args}", super::BIN)])
        .output()
        .unwrap()
}

#[test]
fn a_tiny_stack_works_or_is_refused_in_one_line() {
    // A soft limit of 64 KiB under a higher hard one: raised, and it works.
    for args in ["--help", "kernels", "info --no-clock"] {
        let o = under_stack_limit("-Ss 64", args);
        assert_eq!(o.status.code(), Some(0), "{args}: {}", stderr_of(&o));
        assert!(!o.stdout.is_empty(), "{args}");
    }
    // Both limits at 64 KiB: one line naming the limit, exit 2, no signal.
    for args in ["--help", "cache --sizes 16KiB"] {
        let o = under_stack_limit("-s 64", args);
        usage_error(&o, "ulimit -s");
        assert_eq!(stderr_of(&o).lines().count(), 1, "{}", stderr_of(&o));
    }
}

// ---- item 7: terminal escapes and spreadsheet formulas in run files -----------

#[test]
fn escapes_and_formulas_in_a_run_file_never_reach_the_terminal_or_a_sheet() {
    let d = tempfile::tempdir().unwrap();
    let mut run = crate::common::fixture();
    let esc = "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}31m\r";
    run["records"][0]["kernel"] = format!("seq_read_64_scalar{esc}").into();
    run["records"][1]["kernel"] = "=HYPERLINK(\"http://x\",\"y\")".into();
    run["records"][2]["kernel"] = "@SUM(A1)".into();
    run["host"]["cpu"]["model_name"] = format!("CPU{esc}").into();
    run["incomplete_reason"] = format!("disk{esc}").into();
    run["complete"] = false.into();
    let p = crate::common::write(d.path(), "esc.json", &run);
    let plain = |b: &[u8]| !b.iter().any(|&c| c == 0x1b || c == 0x07 || c == b'\r');
    for args in [
        vec!["report", &p, "-f", "table"],
        vec!["report", &p, "-f", "md"],
        vec!["report", &p, "-f", "csv"],
        vec!["compare", &p, &p],
        vec!["plot", &p, "--list"],
    ] {
        let o = bwscope().args(&args).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr_of(&o));
        assert!(
            plain(&o.stdout),
            "{args:?}: {:?}",
            String::from_utf8_lossy(&o.stdout)
        );
        assert!(plain(&o.stderr), "{args:?}: {}", stderr_of(&o));
        assert!(
            !String::from_utf8_lossy(&o.stdout).contains('\u{9b}'),
            "{args:?}"
        );
    }
    // A cell a spreadsheet would take for a formula starts with a quote;
    // numbers (negative ones too) stay numbers.
    let o = bwscope()
        .args(["report", &p, "-f", "csv"])
        .output()
        .unwrap();
    let text = String::from_utf8(o.stdout).unwrap();
    let mut rows = csv::Reader::from_reader(text.as_bytes());
    let kernels: Vec<String> = rows.records().map(|r| r.unwrap()[1].to_string()).collect();
    assert_eq!(kernels[1], "'=HYPERLINK(\"http://x\",\"y\")", "{text}");
    assert_eq!(kernels[2], "'@SUM(A1)", "{text}");
    assert!(!text.contains(",=") && !text.contains(",@"), "{text}");
}

// ---- item 8: fleets of impossible sizes, and rank 0 at a large one ------------

/// Rank `r` of `n` as Open MPI's `mpirun` would start it, in `dir`.
fn ompi_rank(r: u32, n: u64, job: &str, dir: &Path, args: &[&str]) -> std::process::Command {
    let mut c = super::bin_cmd();
    c.arg("fleet")
        .args(["--control", "tcp", "--schedule", "none"])
        .args(args)
        .current_dir(dir)
        .env("OMPI_COMM_WORLD_RANK", r.to_string())
        .env("OMPI_COMM_WORLD_SIZE", n.to_string())
        .env("OMPI_MCA_ess_base_jobid", job)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    c
}

fn job(what: &str) -> String {
    format!("r4-{what}-{}", std::process::id())
}

#[test]
fn a_job_size_no_launcher_could_produce_is_refused() {
    let d = tempfile::tempdir().unwrap();
    for n in [4_294_967_295u64, 1_000_000, 262_145] {
        let t0 = Instant::now();
        let o = ompi_rank(
            0,
            n,
            &job("size"),
            d.path(),
            &["--timeout", "3", "--suites", "info"],
        )
        .output()
        .unwrap();
        usage_error(&o, &format!("OMPI_COMM_WORLD_SIZE={n}"));
        assert!(
            stderr_of(&o).contains("at most 262144"),
            "{}",
            stderr_of(&o)
        );
        assert!(t0.elapsed() < Duration::from_secs(10), "{n}");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0, "{n}");
    }
    let o = bwscope()
        .args(["fleet", "--dry-run", "--nodes", "1000000"])
        .output()
        .unwrap();
    usage_error(&o, "--nodes: 1000000");
}

#[test]
fn rank_0_of_a_large_job_keeps_its_timeout_and_its_first_sigterm() {
    // 30,000 ranks, none of which ever joins: rank 0 waits its --timeout,
    // marks them lost and writes the fleet (it took minutes when every
    // node's label was compared with every other's).
    let d = tempfile::tempdir().unwrap();
    let t0 = Instant::now();
    let mut c = ompi_rank(
        0,
        30_000,
        &job("big"),
        d.path(),
        &["--timeout", "3", "--suites", "info", "--out", "res"],
    )
    .spawn()
    .unwrap();
    while c.try_wait().unwrap().is_none() {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "rank 0 of 30000 still running after 30 s at --timeout 3"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let f: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.path().join("res/fleet.json")).unwrap()).unwrap();
    assert_eq!(f["nodes"].as_array().unwrap().len(), 30_000);
    // The first SIGTERM (what `timeout` and `mpirun` send) ends it in
    // order, at once: every file written, marked interrupted, exit 130.
    let d = tempfile::tempdir().unwrap();
    let c = ompi_rank(
        0,
        30_000,
        &job("term"),
        d.path(),
        &["--timeout", "60", "--suites", "info", "--out", "res"],
    )
    .spawn()
    .unwrap();
    let note = d
        .path()
        .join(format!(".bwscope-fleet-{}.json", job("term")));
    let t0 = Instant::now();
    while !note.exists() {
        assert!(t0.elapsed() < Duration::from_secs(20), "no rendezvous file");
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
    let t0 = Instant::now();
    let o = c.wait_with_output().unwrap();
    assert!(
        t0.elapsed() < Duration::from_secs(15),
        "{:?} after SIGTERM",
        t0.elapsed()
    );
    assert_eq!(o.status.code(), Some(130), "{}", stderr_of(&o));
    let f: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.path().join("res/fleet.json")).unwrap()).unwrap();
    assert_eq!(f["interrupted"], true);
}

// ---- item 9: the ranks of a stopped rank 0 -------------------------------------

/// Send `sig` to the process `pid` (our own child).
fn signal(pid: u32, sig: libc::c_int) {
    // SAFETY: a signal to a child of this test.
    unsafe { libc::kill(pid as i32, sig) };
}

#[test]
fn a_rank_whose_rank_0_is_stopped_ends_after_its_timeout() {
    let d = tempfile::tempdir().unwrap();
    let j = job("stopped");
    let slow = ["--timeout", "5", "--suites", "cache", "--samples", "50"];
    let mut r0 = ompi_rank(0, 2, &j, d.path(), &slow)
        .args(["--out", "res"])
        .spawn()
        .unwrap();
    let note = d.path().join(format!(".bwscope-fleet-{j}.json"));
    let t0 = Instant::now();
    while !note.exists() {
        assert!(t0.elapsed() < Duration::from_secs(20), "no rendezvous file");
        std::thread::sleep(Duration::from_millis(50));
    }
    let r1 = ompi_rank(1, 2, &j, d.path(), &slow).spawn().unwrap();
    // Rank 0 removes its note once every rank has joined: then stop it.
    while note.exists() {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "rank 1 never joined"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    signal(r0.id(), libc::SIGSTOP);
    let t1 = Instant::now();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(r1.wait_with_output().unwrap()));
    let got = rx.recv_timeout(Duration::from_secs(40));
    signal(r0.id(), libc::SIGCONT);
    signal(r0.id(), libc::SIGKILL);
    let _ = r0.wait();
    let o = got.expect("rank 1 still waiting 40 s after rank 0 stopped, at --timeout 5");
    let e = stderr_of(&o);
    assert!(
        t1.elapsed() < Duration::from_secs(25),
        "{:?}: {e}",
        t1.elapsed()
    );
    assert_ne!(o.status.code(), Some(0), "{e}");
    assert!(e.contains("rank 0 has been silent for"), "{e}");
    assert!(!e.contains("panicked"), "{e}");
}

// ---- item 13: refused fleets leave no folder -------------------------------------

#[test]
fn a_refused_fleet_leaves_no_empty_results_folder() {
    // Ranks started with other flags than rank 0.
    let d = tempfile::tempdir().unwrap();
    let j = job("mixed");
    let r1 = ompi_rank(
        1,
        2,
        &j,
        d.path(),
        &["--timeout", "20", "--suites", "cache"],
    )
    .spawn()
    .unwrap();
    let o = ompi_rank(0, 2, &j, d.path(), &["--timeout", "20", "--suites", "none"])
        .args(["--out", "mixed"])
        .output()
        .unwrap();
    let _ = r1.wait_with_output();
    usage_error(&o, "other flags than rank 0");
    assert!(
        !d.path().join("mixed").exists(),
        "an empty --out folder is left"
    );
    // A second rank 0 in the same folder, without a job name.
    let pmi = |out: &str| {
        let mut c = super::bin_cmd();
        c.args(["fleet", "--control", "tcp", "--suites", "none"])
            .args(["--schedule", "none", "--timeout", "8", "--out", out])
            .current_dir(d.path())
            .env("PMI_RANK", "0")
            .env("PMI_SIZE", "2")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
        c
    };
    let mut first = pmi("first").spawn().unwrap();
    let note = d.path().join(".bwscope-fleet-default.json");
    let t0 = Instant::now();
    while !note.exists() {
        assert!(t0.elapsed() < Duration::from_secs(20), "no rendezvous file");
        std::thread::sleep(Duration::from_millis(50));
    }
    let o = pmi("second/nested").output().unwrap();
    let _ = first.kill();
    let _ = first.wait();
    usage_error(&o, "another fleet is starting");
    assert!(
        !d.path().join("second").exists(),
        "an empty --out folder is left"
    );
    // A flag refused after the folder was made (`--openmetrics -` alone
    // is rank 0's stdout since issue 41; beside `--json -` it is refused).
    let o = ompi_rank(
        0,
        1,
        &job("om"),
        d.path(),
        &["--suites", "none", "--out", "om"],
    )
    .args(["--openmetrics", "-", "--json", "-"])
    .output()
    .unwrap();
    usage_error(&o, "--openmetrics");
    assert!(
        !d.path().join("om").exists(),
        "an empty --out folder is left"
    );
}

// ---- item 10: the server's log and its room --------------------------------------

#[test]
fn failed_handshakes_are_logged_a_few_a_second_naming_the_peer() {
    use std::io::Write;
    let srv = super::round3::serve(None, &["--timeout", "3"]);
    let dst: std::net::SocketAddr = format!("127.0.0.1:{}", srv.port).parse().unwrap();
    // Three seconds of connections that send an HTTP request and reset
    // (thousands): each used to be a line, most of them naming the peer `?`.
    let t0 = Instant::now();
    let mut sent = 0;
    while t0.elapsed() < Duration::from_secs(3) {
        let from = std::net::Ipv4Addr::new(127, 0, 2, 1 + (sent % 4) as u8);
        if let Ok(mut s) = super::connect_from(from, dst) {
            let _ = s.write_all(b"GET / HTTP/1.0\r\n\r\n");
            let _ = socket2_linger_zero(&s);
            sent += 1;
        }
    }
    std::thread::sleep(Duration::from_millis(1500));
    let mut lines = Vec::new();
    while let Ok(l) = srv.lines.recv_timeout(Duration::from_millis(500)) {
        lines.push(l);
    }
    assert!(sent > 100, "only {sent} connections");
    assert!(
        lines.len() <= 40,
        "{} lines for {sent} connections",
        lines.len()
    );
    assert!(lines.iter().all(|l| !l.contains(" ?:")), "{lines:?}");
    assert!(
        lines.iter().any(|l| l.contains("more failed handshakes")),
        "{lines:?}"
    );
    // The counts add up to every connection.
    let counted: u64 = lines
        .iter()
        .map(|l| match l.split_once(" more failed handshakes") {
            Some((head, _)) => head.rsplit(' ').next().unwrap().parse().unwrap(),
            None => 1,
        })
        .sum();
    assert_eq!(counted, sent, "{lines:?}");
}

/// Close with a reset (SO_LINGER 0), as a scanner does.
fn socket2_linger_zero(s: &std::net::TcpStream) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let l = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: a valid socket and a linger struct of the size given.
    let r = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&l as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[test]
fn a_server_takes_the_streams_it_says_it_has_room_for() {
    let srv = super::round3::serve(Some(20), &["--timeout", "3"]);
    let room: u32 = srv
        .first
        .split("room for ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{}", srv.first));
    assert!(room >= 1, "{}", srv.first);
    let addr = format!("127.0.0.1:{}", srv.port);
    let streams = room.to_string();
    let o = bwscope()
        .args(["net", "run", &addr, "-m", "stream", "-P", &streams])
        .args(["-t", "0.3", "-O", "0.1", "-s", "64KiB"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}: {}", srv.first, stderr_of(&o));
}

// ---- item 12: compare across machines says so -------------------------------------

#[test]
fn compare_of_runs_from_other_machines_says_so() {
    let d = tempfile::tempdir().unwrap();
    let run = crate::common::fixture();
    let a = crate::common::write(d.path(), "a.json", &run);
    let mut other = run.clone();
    other["host"]["env"]["hostname"] = "node17".into();
    other["host"]["cpu"]["model_name"] = "Intel(R) Xeon(R) Platinum 8480+".into();
    let b = crate::common::write(d.path(), "b.json", &other);
    let mut same_cpu = run.clone();
    same_cpu["host"]["env"]["hostname"] = "node18".into();
    let c = crate::common::write(d.path(), "c.json", &same_cpu);
    for (x, y, needles) in [
        (
            &a,
            &b,
            vec![
                "different machines",
                "host vm",
                "host node17",
                "AMD EPYC",
                "Xeon",
            ],
        ),
        (&a, &c, vec!["different machines", "host node18"]),
    ] {
        for f in ["table", "md"] {
            let o = bwscope()
                .args(["compare", x, y, "--format", f])
                .output()
                .unwrap();
            assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
            let text = String::from_utf8(o.stdout).unwrap();
            for n in &needles {
                assert!(text.contains(n), "{f}: {n:?} not in {text}");
            }
        }
        let o = bwscope()
            .args(["compare", x, y, "--format", "json"])
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert!(
            v["machine_note"]
                .as_str()
                .unwrap()
                .contains("different machines"),
            "{v}"
        );
    }
    // One machine: nothing said.
    let o = bwscope().args(["compare", &a, &a]).output().unwrap();
    assert!(!String::from_utf8_lossy(&o.stdout).contains("different machines"));
}

// ---- item 14: a misspelt BWSCOPE_DISABLE_ISA --------------------------------------

#[test]
fn a_misspelt_disable_isa_feature_is_named_with_the_known_ones() {
    for args in [vec!["info", "--no-clock"], TINY.to_vec(), vec!["kernels"]] {
        let o = bwscope()
            .env("BWSCOPE_DISABLE_ISA", "avx2, avx512")
            .args(&args)
            .output()
            .unwrap();
        usage_error(&o, "BWSCOPE_DISABLE_ISA: 'avx512' is not a feature");
        let e = stderr_of(&o);
        assert!(e.contains("avx512f") && e.contains("dc_zva"), "{e}");
    }
    // Known names, spaces and an empty item are fine.
    let o = bwscope()
        .env("BWSCOPE_DISABLE_ISA", "avx512f, avx2,,sve")
        .args(["info", "--no-clock"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
}

// ---- item 15: impossible records, and cpus that do not exist -------------------------

#[test]
fn records_with_no_threads_or_no_bytes_are_refused_naming_them() {
    let d = tempfile::tempdir().unwrap();
    for (field, value, needle) in [
        ("threads", 0, "threads = 0"),
        ("size_bytes", 0, "size_bytes = 0"),
    ] {
        let mut run = crate::common::fixture();
        run["records"][0][field] = value.into();
        let p = crate::common::write(d.path(), "bad.json", &run);
        for args in [
            vec!["report", p.as_str(), "-f", "table"],
            vec!["plot", p.as_str(), "--list"],
            vec!["compare", p.as_str(), p.as_str()],
        ] {
            let o = bwscope().args(&args).output().unwrap();
            usage_error(&o, needle);
            assert!(stderr_of(&o).contains("record 1"), "{}", stderr_of(&o));
        }
    }
}

#[test]
fn cpus_and_nodes_that_do_not_exist_are_named_not_called_no_list() {
    for (args, needle) in [
        (
            vec!["cache", "--cpus", "0-999999999"],
            "-999999999 are offline",
        ),
        (
            vec!["threads", "--cpus", "0,5000000-5000009"],
            "5000000-5000009",
        ),
        (
            vec!["numa", "--cpu-nodes", "0-999999999"],
            "-999999999 do not exist",
        ),
    ] {
        let o = bwscope().args(&args).output().unwrap();
        usage_error(&o, needle);
        assert!(!stderr_of(&o).contains("is not a"), "{}", stderr_of(&o));
    }
    // A list that is no list is still called one.
    let o = bwscope().args(["cache", "--cpus", "0-x"]).output().unwrap();
    usage_error(&o, "is not a cpu list");
}
