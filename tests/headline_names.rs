//! One name, one figure: every headline figure of one survey (a real
//! survey's run file, recorded on a 2-vCPU guest) has the same value in
//! the history store's row, in the Prometheus metrics file written from
//! the run, and in the run file's own record of the kernel the store
//! names — the issue behind it had "DRAM memcpy" meaning the fastest copy
//! in one place and libc's memcpy in another.

mod common;

use std::collections::HashMap;
use std::path::Path;

use bwscope::model::headline::{Figure, Headline};
use bwscope::report::families::{family_of, labels_of};

const SURVEY: &str = "tests/fixtures/runs/2026-11-24-54fbad1/survey.json";

/// `family{labels} value` lines of a Prometheus text file, by family and
/// the `figure` label.
fn metrics(text: &str) -> HashMap<(String, String), f64> {
    let mut out = HashMap::new();
    for l in text.lines().filter(|l| !l.starts_with('#')) {
        let Some((name, rest)) = l.split_once('{') else {
            continue;
        };
        let Some(fig) = rest
            .split("figure=\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
        else {
            continue;
        };
        let v: f64 = l.rsplit(' ').next().unwrap().parse().unwrap();
        out.insert((name.to_string(), fig.to_string()), v);
    }
    out
}

/// The `best` of the run file's records of `kernel`, in the figure's unit
/// (GB/s, or ns for a latency).
fn bests_of(run: &serde_json::Value, kernel: &str) -> Vec<f64> {
    common::records(run)
        .iter()
        .filter(|r| r["kernel"] == kernel && r["status"] == "ok")
        .filter_map(|r| {
            r["gbps"]["best"]
                .as_f64()
                .or_else(|| r["detail"]["latency_ns"]["best"].as_f64())
        })
        .collect()
}

#[test]
fn every_headline_name_is_one_figure_in_the_run_the_store_and_the_metrics() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("h.sqlite3");
    let prom = d.path().join("run.prom");
    let survey = Path::new(env!("CARGO_MANIFEST_DIR")).join(SURVEY);
    let ok = |args: &[&std::ffi::OsStr]| {
        let o = common::bwscope().args(args).output().unwrap();
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    };
    ok(&[
        "history".as_ref(),
        "import".as_ref(),
        survey.as_os_str(),
        "--history".as_ref(),
        store.as_os_str(),
    ]);
    ok(&[
        "report".as_ref(),
        survey.as_os_str(),
        "-f".as_ref(),
        "prometheus".as_ref(),
        "-o".as_ref(),
        prom.as_os_str(),
    ]);
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&survey).unwrap()).unwrap();
    let metrics = metrics(&std::fs::read_to_string(&prom).unwrap());
    let db = rusqlite::Connection::open(&store).unwrap();
    let rows: Vec<(String, String, f64)> = db
        .prepare(
            "SELECT c.key, c.kernel, w.best FROM rows w JOIN cases c ON c.id = w.case_id
             WHERE c.key LIKE 'headline/%'",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    // The survey's headlines, both copies among them under their own names.
    for want in ["L1 read", "DRAM read", "DRAM copy", "DRAM memcpy"] {
        assert!(
            names.contains(&format!("headline/{want}").as_str()),
            "{names:?}"
        );
    }
    for (key, kernel, best) in &rows {
        let name = key.trim_start_matches("headline/");
        // The fixed headlines; a suite's declared figures (memtype_…)
        // keep their metric key as their name.
        let Some(h) = Headline::find(name) else {
            assert!(name.starts_with("memtype_"), "{name}: not a headline name");
            continue;
        };
        let fig = Figure::of(h, 0.0);
        let label = labels_of(&fig)
            .into_iter()
            .find(|l| l.0 == "figure")
            .map(|l| l.1)
            .unwrap();
        let m = metrics
            .get(&(format!("bwscope_{}", family_of(&fig)), label.clone()))
            .unwrap_or_else(|| panic!("{name}: no {label} in the metrics file"));
        let in_metrics = m / h.quantity().to_base(1.0);
        assert!(
            (in_metrics - best).abs() <= 1e-9 * best.abs(),
            "{name}: the store says {best}, the metrics file {in_metrics}"
        );
        let bests = bests_of(&run, kernel);
        assert!(
            bests.iter().any(|b| (b - best).abs() <= 1e-12 * best.abs()),
            "{name}: {best} is no record of {kernel} in the run ({bests:?})"
        );
        if h == Headline::DramMemcpy {
            assert!(kernel.contains("memcpy"), "DRAM memcpy is libc's: {kernel}");
        }
    }
}
