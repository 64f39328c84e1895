//! `bwscope compare A.json B.json [C.json …]`: the same cases across runs.
//!
//! Records are matched by [`Record::case_key`] (suite, kernel, size,
//! threads, memory kind and the suite's case parts, `Detail::case`). The
//! first run is the
//! baseline; every later run gets the change of the chosen statistic in %
//! and a verdict:
//! - `same`: the figure is identical;
//! - `noise`: the change is smaller than the spread the runs themselves
//!   show. A run's spread is |best − median| / median: how far its typical
//!   sample sits from its best. Unlike [min, max] it is not widened by one
//!   preempted sample, which on a shared machine every case has;
//! - `faster` / `slower`: the ranges do not overlap (for latency, lower is
//!   faster).
//!
//! `--fail-if-slower PCT` fails when any case is `slower` by more than PCT.
//!
//! Runs from different machines (another host name or CPU model) are
//! compared all the same, but every format says so first: the change then
//! measures the machines as much as the change made between the runs.

pub mod headline;

use std::collections::HashMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::metric::{self, Metric, StatKind};
use crate::error::UserError;
use crate::model::{Record, Run};
use crate::util::units::format_bytes;

/// The footer's statement of the rule [`verdict`] applies (and
/// `docs/reports.md` states): one sentence for table and Markdown.
pub const NOISE_RULE: &str = "noise = the change is within the larger of the two runs' own spread, |best − median| / median; Δ % is against the baseline.";

/// Exit code when `--fail-if-slower` finds a regression (distinct from bad
/// input, 2, so CI can tell "slower" from "misused").
pub const EXIT_SLOWER: u8 = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Same,
    Noise,
    Faster,
    Slower,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Same => "same",
            Verdict::Noise => "noise",
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
        }
    }
}

/// One run's figure for one case.
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    pub best: f64,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Change of the chosen statistic against the baseline, % (null for
    /// the baseline itself).
    pub change_pct: Option<f64>,
    pub verdict: Option<Verdict>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub case_key: String,
    pub label: String,
    pub unit: &'static str,
    pub higher_is_better: bool,
    /// One entry per run, in argument order; null where the run lacks it.
    pub runs: Vec<Option<Cell>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub files: Vec<String>,
    /// Per run: how it ended when it did not end normally (see
    /// [`super::run_state`]); null for a finished run.
    pub states: Vec<Option<String>>,
    pub stat: StatKind,
    pub rows: Vec<Row>,
    /// Per run: cases with a figure that no other run has.
    pub unmatched: Vec<usize>,
    /// Per run: the machine it ran on (`host NAME, CPU MODEL`).
    pub machines: Vec<String>,
    /// What differs between the runs' machines, as one sentence; null when
    /// every run is of one host and one CPU model.
    pub machine_note: Option<String>,
    /// Which runs had cases taken on a shared core or beside a memory
    /// loaded from outside (the spell probes' warnings), as one sentence;
    /// absent when none had.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spell_note: Option<String>,
}

/// Which runs had cases measured in a shared-core or contended-memory
/// spell: such a case compares moments, not machines.
fn spell_note(runs: &[(String, Run)]) -> Option<String> {
    use crate::model::Warning;
    let each: Vec<String> = runs
        .iter()
        .enumerate()
        .filter_map(|(i, (_, r))| {
            let count = |f: &dyn Fn(&Warning) -> bool| {
                r.records
                    .iter()
                    .filter(|x| x.warnings.iter().any(f))
                    .count()
            };
            let shared = count(&|w| matches!(w, Warning::CoreShared { .. }));
            let loaded = count(&|w| {
                matches!(
                    w,
                    Warning::MemoryContended {
                        fraction: Some(_),
                        ..
                    }
                )
            });
            let mut parts = Vec::new();
            if shared > 0 {
                parts.push(format!("{shared} cases on a shared core"));
            }
            if loaded > 0 {
                parts.push(format!("{loaded} beside a memory loaded from outside"));
            }
            (!parts.is_empty()).then(|| format!("{} {}", run_letter(i), parts.join(", ")))
        })
        .collect();
    (!each.is_empty()).then(|| {
        format!(
            "⚠ spells: {}; those cases compare this moment's figures, not the machines' (each record's `spells.clean` has its clean samples' figure)",
            each.join("; ")
        )
    })
}

/// `host NAME, CPU MODEL` of a run.
fn machine(run: &Run) -> String {
    format!(
        "host {}, {}",
        run.host.env.hostname.as_deref().unwrap_or("unknown"),
        run.host.cpu.model_name.trim()
    )
}

/// Which of host name and CPU model differ between the runs, with each
/// run's machine; None when none does.
fn machine_note(runs: &[(String, Run)]) -> Option<String> {
    let differs = |f: &dyn Fn(&Run) -> String| runs.iter().any(|(_, r)| f(r) != f(&runs[0].1));
    let what: Vec<&str> = [
        (
            differs(&|r: &Run| r.host.env.hostname.clone().unwrap_or_default()),
            "host names",
        ),
        (
            differs(&|r: &Run| r.host.cpu.model_name.trim().to_string()),
            "CPU models",
        ),
    ]
    .into_iter()
    .filter_map(|(d, w)| d.then_some(w))
    .collect();
    if what.is_empty() {
        return None;
    }
    let each: Vec<String> = runs
        .iter()
        .enumerate()
        .map(|(i, (_, r))| format!("{} on {}", run_letter(i), machine(r)))
        .collect();
    Some(format!(
        "⚠ these runs come from different machines ({} differ: {}): a change measures the machines as much as what changed between the runs",
        what.join(" and "),
        each.join("; ")
    ))
}

/// A readable case name: `cache seq_read_256_avx2 16 KiB ×1`.
pub fn label(r: &Record) -> String {
    let mut s = format!("{} {}", r.suite(), r.kernel);
    if let Some(b) = r.size_bytes {
        s.push_str(&format!(" {}", format_bytes(b)));
    }
    s.push_str(&format!(" ×{}", r.threads));
    if let Some(m) = &r.memory {
        if m.kind != "thp" {
            s.push_str(&format!(" [{}]", m.kind));
        }
    }
    for p in r.detail.case() {
        s.push_str(&format!(" {}={}", p.name, p.shown()));
    }
    s
}

/// |best − median| / median; 0 where only one figure is known.
pub fn spread(m: &Metric) -> f64 {
    if m.median != 0.0 {
        ((m.best - m.median) / m.median).abs()
    } else {
        0.0
    }
}

fn verdict(base: &Metric, m: &Metric, stat: StatKind) -> (f64, Verdict) {
    let (a, b) = (base.pick(stat), m.pick(stat));
    let change = if a != 0.0 { (b - a) / a * 100.0 } else { 0.0 };
    let v = if a == b {
        Verdict::Same
    } else if change.abs() <= 100.0 * spread(base).max(spread(m)) {
        Verdict::Noise
    } else if (b > a) == base.higher_is_better {
        Verdict::Faster
    } else {
        Verdict::Slower
    };
    (change, v)
}

/// Match the runs' records and compute changes against the first run.
pub fn compare(runs: &[(String, Run)], stat: StatKind) -> Result<Comparison, UserError> {
    let maps: Vec<HashMap<String, (&Record, Metric)>> = runs
        .iter()
        .map(|(_, run)| {
            let mut m = HashMap::new();
            for r in &run.records {
                if let Some(x) = metric::of(r) {
                    m.entry(r.case_key()).or_insert((r, x));
                }
            }
            m
        })
        .collect();
    for (i, (path, _)) in runs.iter().enumerate() {
        if maps[i].is_empty() {
            return Err(UserError::BadInput {
                path: path.clone(),
                problem: "has no measured record to compare".into(),
            });
        }
    }
    for (i, (path, _)) in runs.iter().enumerate().skip(1) {
        if !maps[i].keys().any(|k| maps[0].contains_key(k)) {
            return Err(UserError::BadInput {
                path: path.clone(),
                problem: format!(
                    "shares no case with {} (cases match on suite, kernel, size, threads and memory kind); compare runs of the same suite and sizes",
                    runs[0].0
                ),
            });
        }
    }
    // Row order: the baseline's record order, then cases only later runs have.
    let mut keys: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (_, run) in runs {
        for r in &run.records {
            let k = r.case_key();
            if metric::of(r).is_some() && seen.insert(k.clone()) {
                keys.push(k);
            }
        }
    }
    let mut rows = Vec::new();
    let mut unmatched = vec![0usize; runs.len()];
    for k in keys {
        let present: Vec<usize> = (0..runs.len())
            .filter(|&i| maps[i].contains_key(&k))
            .collect();
        if present.len() == 1 {
            unmatched[present[0]] += 1;
            continue;
        }
        let (first_rec, first_m) = maps[present[0]][&k];
        let base = maps[0].get(&k).map(|x| x.1);
        let cells = (0..runs.len())
            .map(|i| {
                maps[i].get(&k).map(|&(_, m)| {
                    let (change_pct, verdict) = match (i, base) {
                        (0, _) | (_, None) => (None, None),
                        (_, Some(b)) => {
                            let (c, v) = verdict(&b, &m, stat);
                            (Some(c), Some(v))
                        }
                    };
                    Cell {
                        best: m.best,
                        median: m.median,
                        min: m.min,
                        max: m.max,
                        change_pct,
                        verdict,
                    }
                })
            })
            .collect();
        rows.push(Row {
            case_key: k.clone(),
            label: label(first_rec),
            unit: first_m.unit,
            higher_is_better: first_m.higher_is_better,
            runs: cells,
        });
    }
    Ok(Comparison {
        files: runs.iter().map(|(p, _)| p.clone()).collect(),
        states: runs.iter().map(|(_, r)| super::run_state(r)).collect(),
        stat,
        rows,
        unmatched,
        machines: runs.iter().map(|(_, r)| machine(r)).collect(),
        machine_note: machine_note(runs),
        spell_note: spell_note(runs),
    })
}

impl Comparison {
    /// Cases slower than `pct` % against the baseline (not noise).
    pub fn slower_than(&self, pct: f64) -> Vec<(&Row, usize, f64)> {
        let mut v = Vec::new();
        for row in &self.rows {
            for (i, c) in row.runs.iter().enumerate() {
                if let Some(Cell {
                    change_pct: Some(ch),
                    verdict: Some(Verdict::Slower),
                    ..
                }) = c
                {
                    let slowdown = if row.higher_is_better { -ch } else { *ch };
                    if slowdown > pct {
                        v.push((row, i, slowdown));
                    }
                }
            }
        }
        v
    }

    fn counts(&self) -> [usize; 4] {
        let mut n = [0; 4];
        for row in &self.rows {
            for c in row.runs.iter().flatten() {
                if let Some(v) = c.verdict {
                    n[v as usize] += 1;
                }
            }
        }
        n
    }

    /// One line: how many cases moved which way.
    fn summary_line(&self) -> String {
        let [same, noise, faster, slower] = self.counts();
        let mut s = format!(
            "{} cases in common: {} slower, {} faster, {} within noise, {} identical ({} of samples)",
            self.rows.len(),
            slower,
            faster,
            noise,
            same,
            match self.stat {
                StatKind::Best => "best",
                StatKind::Median => "median",
            }
        );
        for (i, n) in self.unmatched.iter().enumerate() {
            if *n > 0 {
                let _ = write!(s, "; {} cases only in {}", n, self.files[i]);
            }
        }
        s
    }

    fn grid(&self) -> Vec<Vec<String>> {
        let short: Vec<String> = (0..self.files.len()).map(run_letter).collect();
        let mut head = vec!["case".to_string(), "unit".to_string()];
        for (i, l) in short.iter().enumerate() {
            head.push(format!("{l} best"));
            head.push(format!("{l} median"));
            if i > 0 {
                head.push(format!("{l} Δ %"));
                head.push(format!("{l} verdict"));
            }
        }
        let mut rows = vec![head];
        for r in &self.rows {
            let mut line = vec![r.label.clone(), r.unit.to_string()];
            for (i, c) in r.runs.iter().enumerate() {
                match c {
                    Some(c) => {
                        line.push(crate::report::short_num(c.best));
                        line.push(crate::report::short_num(c.median));
                        if i > 0 {
                            line.push(c.change_pct.map_or("-".into(), |p| format!("{p:+.1}")));
                            line.push(c.verdict.map_or("-".into(), |v| v.name().to_string()));
                        }
                    }
                    None => {
                        line.push("-".into());
                        line.push("-".into());
                        if i > 0 {
                            line.push("-".into());
                            line.push("-".into());
                        }
                    }
                }
            }
            rows.push(line);
        }
        rows
    }

    fn legend(&self) -> String {
        self.files
            .iter()
            .enumerate()
            .map(|(i, f)| {
                format!(
                    "{} = {}{}{}",
                    run_letter(i),
                    f,
                    if i == 0 { " (baseline)" } else { "" },
                    self.states[i]
                        .as_ref()
                        .map_or(String::new(), |st| format!(" [⚠ {st}]"))
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub fn render_table(&self) -> String {
        let mut s = format!("{}\n", self.legend());
        for n in self.machine_note.iter().chain(&self.spell_note) {
            let _ = writeln!(s, "{n}");
        }
        s.push_str(&super::grid::grid(&self.grid()));
        let _ = writeln!(s, "{}", self.summary_line());
        s.push_str(NOISE_RULE);
        s.push('\n');
        s
    }

    pub fn render_markdown(&self) -> String {
        let mut s = format!("**Runs:** {}\n\n", self.legend());
        for n in self.machine_note.iter().chain(&self.spell_note) {
            let _ = writeln!(s, "{}\n", super::markdown::cell(n));
        }
        s.push_str(&super::markdown::table(&self.grid()));
        let _ = writeln!(
            s,
            "\n{}\n\n{}",
            self.summary_line(),
            NOISE_RULE.replacen("noise", "_noise_", 1)
        );
        s
    }

    pub fn render_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }
}

fn run_letter(i: usize) -> String {
    if i < 26 {
        ((b'A' + i as u8) as char).to_string()
    } else {
        format!("R{}", i + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Stats, Status};

    fn rec(kernel: &str, best: f64, min: f64) -> Record {
        Record {
            kernel: kernel.into(),
            op: "read".into(),
            size_bytes: Some(16384),
            threads: 1,
            status: Status::Ok,
            gbps: Some(Stats {
                best,
                median: (best + min) / 2.0,
                min,
                max: best,
                mean: (best + min) / 2.0,
                cv: 0.01,
                n: 5,
            }),
            ..Record::new(crate::model::SuiteId::Cache)
        }
    }

    fn run(recs: Vec<Record>) -> Run {
        let mut r = Run::new(
            "cache",
            serde_json::json!({}),
            crate::model::Host::default(),
            Default::default(),
        );
        r.records = recs;
        r
    }

    #[test]
    fn verdicts() {
        let a = run(vec![
            rec("a", 100.0, 95.0),
            rec("b", 100.0, 95.0),
            rec("c", 100.0, 95.0),
            rec("d", 50.0, 49.0),
        ]);
        let b = run(vec![
            rec("a", 100.0, 95.0),
            rec("b", 97.0, 90.0),
            rec("c", 80.0, 70.0),
            rec("d", 60.0, 58.0),
        ]);
        let c = compare(
            &[("a.json".into(), a), ("b.json".into(), b)],
            StatKind::Best,
        )
        .unwrap();
        let v: Vec<Verdict> = c
            .rows
            .iter()
            .map(|r| r.runs[1].as_ref().unwrap().verdict.unwrap())
            .collect();
        assert_eq!(
            v,
            vec![
                Verdict::Same,
                Verdict::Noise,
                Verdict::Slower,
                Verdict::Faster
            ]
        );
        assert!((c.rows[2].runs[1].as_ref().unwrap().change_pct.unwrap() + 20.0).abs() < 1e-9);
        assert_eq!(c.slower_than(10.0).len(), 1);
        assert_eq!(c.slower_than(25.0).len(), 0);
    }

    #[test]
    fn no_shared_case_names_the_file() {
        let a = run(vec![rec("a", 1.0, 1.0)]);
        let b = run(vec![rec("z", 1.0, 1.0)]);
        let e = compare(
            &[("a.json".into(), a), ("b.json".into(), b)],
            StatKind::Best,
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("b.json: shares no case with a.json"),
            "{e}"
        );
    }
}
