//! A fleet judged against its own past (issue 41): three network
//! namespaces, five fleet runs of the same fleet into one history store
//! (in a temporary folder). Three quiet runs make the past; the fourth
//! runs with every node loaded, and its fleet median must come out as a
//! fleet-wide drop although no node stands out from the others; a fifth,
//! quiet again, must clear it.
//!
//! The load is real: two memory hogs (bwscope copying 512 MiB each, the
//! same hogs as the slow-node test) run through the whole fourth run. The
//! namespaces are three "nodes" of one machine, so the hogs load every node
//! alike: like every rank's worker they run on bwscope's default cpu, the
//! last core, so each rank measures with a third of that core and the
//! memory system shared (the fleet's DRAM medians 64-68 % below its quiet
//! runs' on a 2-vCPU Xeon model 207 guest, past `--past-pct 35`). The test
//! asserts which findings come out, never a speed.

use super::*;

const PAST: &str = "bwfp";
const PAST_NET: &str = "10.251.9";

/// Ranks (namespaces) of the fleet. A fleet-wide drop is judged on the
/// fleet's median over any number of nodes (only telling nodes apart
/// needs four); three take turns in 3/5 of the time five took, and this
/// test ran for about 450 s with five on a 2-vCPU Xeon model 207 guest.
const NODES: u32 = 3;

/// One fleet run into `history`, its files in `dir/name`; its fleet.json.
fn fleet_run(dir: &std::path::Path, history: &std::path::Path, name: &str) -> Value {
    let prom = format!("{name}.om");
    let mut args = mpirun_args(&dir.join("hosts"), PAST_NET, NODES);
    args.extend(
        [
            "fleet",
            "--suites",
            "cache",
            // Three samples: beside the hogs every DRAM sample of a rank
            // is descheduled and taken three times over, and the loaded
            // run with five took 425 s of this test's 657 s on a 2-vCPU
            // Xeon model 207 guest. The fleet's median of its nodes'
            // figures is what is judged, not one record's spread.
            "--samples",
            "3",
            "--min-sample-ms",
            "5",
            "--schedule",
            "none",
            "--out",
            name,
            "--openmetrics",
            &prom,
            // The loaded fleet's hogged rank outlasts 60 s on some guests
            // (see the namespaces test's --timeout).
            "--timeout",
            "600",
            // Ranks on two vCPUs beside other work: five quiet runs'
            // fleet DRAM-read medians ranged 11.2-17.5 GB/s on the Zen 4
            // test guest (a fifth quiet run read 20 % below the median of
            // the four before it, the loaded one among them), while the
            // hogs took them to 5-7 GB/s (60-80 % below). 35 % parts the
            // two there; the default, 15 %, is for fleets of real nodes.
            "--past-pct",
            "35",
            // No node is to stand out here (every node is loaded alike, or
            // none is): only a node 90 % below the fleet's median is an
            // outlier, so the spread of ranks on two vCPUs does not send
            // nodes for more turns (each up to a minute beside the hogs)
            // that this test never looks at. (Three nodes are too few to
            // judge outliers at all; this holds if NODES grows.)
            "--outlier-pct",
            "90",
            "--history",
            history.to_str().unwrap(),
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    let out = Command::new("mpirun")
        .env("BWSCOPE_HISTORY", history)
        .args(&args)
        .current_dir(dir)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("NETNS_PREFIX", PAST)
        .output()
        .expect("start mpirun");
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("{name}: {}\n{stderr}", String::from_utf8_lossy(&out.stdout));
    assert!(out.status.success(), "mpirun {name}: {:?}", out.status);
    let f = load(&dir.join(name).join("fleet.json"));
    assert_valid(&f, NODES as usize);
    f
}

/// The metrics of `f`'s findings of `kind`.
fn findings(f: &Value, kind: &str) -> Vec<String> {
    f["verdicts"]["findings"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|x| x["kind"] == kind)
                .map(|x| x["metric"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_loaded_fleet_is_one_fleet_wide_drop_against_its_past_and_a_quiet_run_clears_it() {
    if let Some(why) = unavailable() {
        eprintln!("SKIP fleet past test: {why}");
        return;
    }
    // The judgement reads the stored figures, whatever carried the ranks'
    // messages: CI's second, `--features mpi` pass over these tests would
    // run the same five fleets again (about 2.5 min) for nothing new.
    if cfg!(feature = "mpi") {
        eprintln!("SKIP fleet past test: run by the default build; nothing here depends on MPI");
        return;
    }
    let _one = serial();
    let hosts = match Hosts::up(PAST, PAST_NET, NODES, &[]) {
        Ok(h) => h,
        Err(e) => {
            eprintln!("SKIP fleet past test: cannot create namespaces here: {e}");
            return;
        }
    };
    let d = tempfile::tempdir().unwrap();
    let hf = Command::new("bash")
        .arg(script())
        .arg("hostfile")
        .env("NETNS_PREFIX", PAST)
        .output()
        .unwrap();
    std::fs::write(d.path().join("hosts"), &hf.stdout).unwrap();
    let history = d.path().join("history/h.sqlite3");

    let mut runs = Vec::new();
    for i in 1..=3 {
        let f = fleet_run(d.path(), &history, &format!("quiet{i}"));
        let p = &f["verdicts"]["past"];
        assert_eq!(p["runs"], i - 1, "the earlier runs of this fleet: {p}");
        assert!(
            p["metrics"]
                .as_array()
                .unwrap()
                .iter()
                .all(|m| m["judged"] == false),
            "fewer than 3 earlier runs judge nothing: {p}"
        );
        assert!(findings(&f, "fleet_drop").is_empty());
        runs.push(f);
    }

    let hogs = Hogs::start(2);
    hogs.signal(libc::SIGCONT);
    let loaded = fleet_run(d.path(), &history, "loaded");
    drop(hogs);
    let verdicts = std::fs::read_to_string(d.path().join("loaded/verdicts.txt")).unwrap();
    assert_eq!(
        loaded["verdicts"]["past"]["runs"], 3,
        "{}",
        loaded["verdicts"]["past"]
    );
    let dropped = findings(&loaded, "fleet_drop");
    assert!(
        dropped
            .iter()
            .any(|m| m.starts_with("dram_") || m.starts_with("l3_") || m.starts_with("l2_")),
        "every node ran beside the hogs: a fleet-wide drop of a memory figure\n{verdicts}\n{}",
        loaded["verdicts"]["past"]
    );
    // One finding per metric, not one per node.
    let unique: std::collections::BTreeSet<&String> = dropped.iter().collect();
    assert_eq!(unique.len(), dropped.len(), "{dropped:?}");
    for m in &dropped {
        assert!(
            verdicts.lines().any(|l| l.starts_with(&format!(
                "# fleet fleet_drop: {m}: the fleet's median of {NODES} nodes is "
            ))),
            "{m} in verdicts.txt:\n{verdicts}"
        );
    }
    let html = std::fs::read_to_string(d.path().join("loaded/fleet.html")).unwrap();
    assert!(
        html.contains(&format!("<li>fleet fleet_drop: {}: ", dropped[0])),
        "the drop in fleet.html's verdict"
    );
    let prom = std::fs::read_to_string(d.path().join("loaded.om")).unwrap();
    crate::common::fleet::check_openmetrics(&prom);
    let figure = bwscope::report::families::key(&dropped[0]);
    assert!(
        prom.contains(&format!("bwscope_fleet_drop{{figure=\"{figure}\"}} 1"))
            && prom.contains(&format!(
                "bwscope_fleet_finding{{kind=\"fleet_drop\",figure=\"{figure}\"}} 1"
            )),
        "{prom}"
    );

    let quiet = fleet_run(d.path(), &history, "quiet5");
    assert_eq!(quiet["verdicts"]["past"]["runs"], 4);
    let again = findings(&quiet, "fleet_drop");
    assert!(
        dropped.iter().all(|m| !again.contains(m)),
        "the quiet fifth run clears the drop of {dropped:?}; its drops: {again:?}\n{}",
        quiet["verdicts"]["past"]
    );
    let prom = std::fs::read_to_string(d.path().join("quiet5.om")).unwrap();
    let figure = bwscope::report::families::key(&dropped[0]);
    assert!(
        prom.contains(&format!("bwscope_fleet_drop{{figure=\"{figure}\"}} 0")),
        "{prom}"
    );

    // One fleet: the same identity every time, and every node's run in
    // the store as the fleet's, under its host name's hash.
    runs.push(loaded);
    runs.push(quiet);
    let key = &runs[0]["verdicts"]["past"]["fleet"];
    assert!(key.is_string());
    assert!(runs.iter().all(|f| &f["verdicts"]["past"]["fleet"] == key));
    let db = rusqlite::Connection::open(&history).unwrap();
    let (n, nodes): (i64, i64) = db
        .query_row(
            "SELECT count(*), count(DISTINCT node) FROM runs WHERE source = 'fleet'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((n, nodes), (5 * NODES as i64, NODES as i64));
    let fleet_runs: i64 = db
        .query_row(
            "SELECT count(DISTINCT fleet_run) FROM fleet_figures",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(fleet_runs, 5);
    drop(hosts);
}
