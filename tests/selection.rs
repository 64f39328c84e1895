//! The figures a run's summary line and a fleet's verdicts are built on,
//! read from every run file in `tests/fixtures`, are exactly the ones
//! `tests/fixtures/selection.golden` holds: the headline lines (which
//! name the kernel that won the DRAM copy), each node figure with its
//! value, noise and contention, and the DRAM copy's winner, runner-up and
//! libc figure. The golden file was written by the code that picked the
//! records by kernel-name prefix; the code that picks them by the
//! record's shape must pick the same (issue 28). `BLESS=1 cargo test
//! --test selection` writes it again.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use bwscope::model::fleet::FleetRun;
use bwscope::model::Run;
use bwscope::report::fleet::metrics;
use bwscope::report::{json, summary};

fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut v = vec![root.join("cache-quick.json")];
    let mut eras: Vec<PathBuf> = std::fs::read_dir(root.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    eras.sort();
    for era in eras {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&era)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        files.sort();
        v.extend(files);
    }
    v
}

fn describe_run(out: &mut String, run: &Run) {
    for line in summary::headline(run) {
        writeln!(out, "  headline: {line}").unwrap();
    }
    if let Some(c) = summary::dram_copy(run) {
        writeln!(
            out,
            "  dram copy: {:?} by {} at {:?}; libc {:?}; runner-up {:?}",
            c.gbps,
            c.winner.kernel,
            c.winner.size_bytes,
            c.libc,
            c.runner_up.map(|(g, r)| (g, &r.kernel))
        )
        .unwrap();
    }
    for f in metrics::node_figures(run) {
        writeln!(
            out,
            "  figure: {} = {:?} {} (higher better: {}); foreign {:?}, slowdown {:?}, contended {}; {}",
            f.metric,
            f.value,
            f.unit(),
            f.higher_is_better,
            f.foreign_cpus,
            f.noise_slowdown,
            f.contended,
            f.what
        )
        .unwrap();
    }
}

fn selection() -> String {
    let mut out = String::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for path in fixtures() {
        let name = path.strip_prefix(root).unwrap().display().to_string();
        writeln!(out, "{name}").unwrap();
        let bytes = std::fs::read(&path).unwrap();
        if name.ends_with("fleet.json") {
            let fleet: FleetRun = serde_json::from_slice(&bytes).unwrap();
            for node in &fleet.nodes {
                writeln!(out, " rank {}", node.rank).unwrap();
                if let Some(run) = &node.run {
                    describe_run(&mut out, run);
                }
                for f in metrics::net_figures(&fleet, node.rank) {
                    writeln!(
                        out,
                        "  net figure: {} = {:?} {}",
                        f.metric,
                        f.value,
                        f.unit()
                    )
                    .unwrap();
                }
            }
        } else {
            let run = json::parse(&name, &bytes).unwrap();
            describe_run(&mut out, &run);
        }
    }
    out
}

#[test]
fn every_fixture_selects_the_figures_it_always_did() {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/selection.golden");
    let now = selection();
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(&golden, &now).unwrap();
    }
    let want = std::fs::read_to_string(&golden).unwrap();
    // Line by line, so a difference names its fixture.
    for (i, (a, b)) in now.lines().zip(want.lines()).enumerate() {
        assert_eq!(a, b, "line {} of selection.golden", i + 1);
    }
    assert_eq!(now.lines().count(), want.lines().count());
    // The golden file would catch a change: it holds figures of every kind.
    for metric in [
        "l1_read_gbps",
        "dram_read_gbps",
        "dram_write_gbps",
        "dram_memcpy_gbps",
    ] {
        assert!(want.contains(&format!("figure: {metric} = ")), "{metric}");
    }
}
