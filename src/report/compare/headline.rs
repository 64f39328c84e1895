//! `bwscope compare --headline A.json B.json …`: only the headline
//! figures (`report::headline`, the names the summary, the history and
//! the metrics use), each judged only where both runs took it in a clean
//! spell (`judge::noise::flags` of its record and of the records measured
//! beside it: no spell, no foreign load, no steal, samples that agree),
//! by one threshold. Made for CI on a cloud guest: the
//! figures a user reads, compared only in moments that speak for the
//! machine, so two runs of one build agree and a real drop does not pass.

use std::fmt::Write as _;

use serde::Serialize;

use crate::judge::noise::flags;
use crate::model::headline::{Figure, Headline};
use crate::model::Run;
use crate::report::headline::figures;

/// The threshold when `--fail-if-slower` gives none: a headline figure
/// more than 10 % worse than the baseline's fails.
pub const DEFAULT_PCT: f64 = 10.0;

/// One headline figure of one run against the baseline's.
#[derive(Debug, Clone, Serialize)]
pub struct Judged {
    pub name: String,
    pub unit: &'static str,
    /// The baseline's figure and this run's (absent where a run lacks it).
    pub base: Option<f64>,
    pub value: Option<f64>,
    /// How much worse, % of the baseline (negative: better); absent when
    /// not judged.
    pub worse_pct: Option<f64>,
    #[serde(flatten)]
    pub verdict: HeadlineVerdict,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum HeadlineVerdict {
    /// Within the threshold, or better.
    Ok,
    /// Worse than the baseline by more than the threshold.
    Slower,
    /// One run lacks the figure.
    Missing { run: String },
    /// Taken in noise in one run or both: the moments differ, not
    /// necessarily the machines.
    Noisy { run: String, why: Vec<String> },
}

impl HeadlineVerdict {
    fn words(&self) -> String {
        match self {
            HeadlineVerdict::Ok => "ok".into(),
            HeadlineVerdict::Slower => "SLOWER".into(),
            HeadlineVerdict::Missing { run } => format!("not judged: {run} lacks it"),
            HeadlineVerdict::Noisy { run, why } => {
                format!("not judged: noisy in {run} ({})", why.join(", "))
            }
        }
    }
}

/// Every later run's headline figures against the first run's.
#[derive(Debug, Clone, Serialize)]
pub struct HeadlineComparison {
    pub files: Vec<String>,
    pub threshold_pct: f64,
    /// Per later run (files[1..]), its figures.
    pub runs: Vec<Vec<Judged>>,
}

/// The figures a headline comparison reads: the fixed headlines a run's
/// records allow, but the clock (a frequency, not a path's speed).
fn headline_figures(run: &Run) -> Vec<Figure> {
    figures(run)
        .into_iter()
        .filter(|f| f.headline.is_some_and(|h| h != Headline::Clock))
        .collect()
}

/// Why `f` of `run` was not taken in a clean spell (empty: it was): its
/// record's noise, and that of the records of its suite measured just
/// before and after it. A spell (a tenant on the core's sibling, a
/// neighbour on the memory) lasts longer than one record, and the probes
/// sample it: a lone clean record among shared ones was most likely
/// taken in the spell, unseen (two surveys of one build on a shared
/// guest: the one clean L2 record among ten `core_shared` ones read
/// 10.5 % below the other run's).
fn noise_of(run: &Run, f: &Figure) -> Vec<String> {
    let Some(i) = f.record.filter(|&i| i < run.records.len()) else {
        return Vec::new();
    };
    let suite = run.records[i].suite();
    let mut why: Vec<String> = Vec::new();
    let mut add = |w: String| {
        if !why.contains(&w) {
            why.push(w);
        }
    };
    for w in flags(&run.records[i], run).why {
        add(w.to_string());
    }
    let beside = [i.checked_sub(1), Some(i + 1)]
        .into_iter()
        .flatten()
        .filter_map(|j| run.records.get(j))
        .filter(|r| r.suite() == suite && r.status == crate::model::Status::Ok);
    for r in beside {
        for w in flags(r, run).why {
            add(format!("beside {w}"));
        }
    }
    why
}

pub fn compare(runs: &[(String, Run)], threshold_pct: f64) -> HeadlineComparison {
    let (base_name, base) = (&runs[0].0, &runs[0].1);
    let base_figs = headline_figures(base);
    let rule = |higher_is_better: bool| crate::judge::StepRule {
        held: 1,
        threshold: threshold_pct / 100.0,
        min_usual: 1,
        window: 1,
        higher_is_better,
    };
    let mut out = Vec::new();
    for (name, run) in &runs[1..] {
        let figs = headline_figures(run);
        let mut names: Vec<(Headline, &'static str)> = Vec::new();
        for f in base_figs.iter().chain(&figs) {
            if let Some(h) = f.headline {
                if !names.iter().any(|n| n.0 == h) {
                    names.push((h, f.unit()));
                }
            }
        }
        names.sort_by_key(|n| Headline::ALL.iter().position(|h| *h == n.0));
        let judged = names
            .into_iter()
            .map(|(h, unit)| {
                let a = base_figs.iter().find(|f| f.headline == Some(h));
                let b = figs.iter().find(|f| f.headline == Some(h));
                let (verdict, worse) = match (a, b) {
                    (None, _) => (
                        HeadlineVerdict::Missing {
                            run: base_name.clone(),
                        },
                        None,
                    ),
                    (_, None) => (HeadlineVerdict::Missing { run: name.clone() }, None),
                    (Some(a), Some(b)) => {
                        let (na, nb) = (noise_of(base, a), noise_of(run, b));
                        if !na.is_empty() {
                            (
                                HeadlineVerdict::Noisy {
                                    run: base_name.clone(),
                                    why: na,
                                },
                                None,
                            )
                        } else if !nb.is_empty() {
                            (
                                HeadlineVerdict::Noisy {
                                    run: name.clone(),
                                    why: nb,
                                },
                                None,
                            )
                        } else {
                            let r = rule(a.higher_is_better);
                            let w = r.worse_by(b.value, a.value);
                            let v = if w > r.threshold {
                                HeadlineVerdict::Slower
                            } else {
                                HeadlineVerdict::Ok
                            };
                            (v, Some(w * 100.0))
                        }
                    }
                };
                Judged {
                    name: h.name().to_string(),
                    unit,
                    base: a.map(|f| f.value),
                    value: b.map(|f| f.value),
                    worse_pct: worse,
                    verdict,
                }
            })
            .collect();
        out.push(judged);
    }
    HeadlineComparison {
        files: runs.iter().map(|r| r.0.clone()).collect(),
        threshold_pct,
        runs: out,
    }
}

impl HeadlineComparison {
    /// Figures judged slower, and figures judged at all.
    pub fn counts(&self) -> (usize, usize) {
        let all = self.runs.iter().flatten();
        let slower = all
            .clone()
            .filter(|j| j.verdict == HeadlineVerdict::Slower)
            .count();
        let judged = all.filter(|j| j.worse_pct.is_some()).count();
        (slower, judged)
    }

    pub fn render_table(&self) -> String {
        let mut s = String::new();
        let pct = |v: f64| {
            if (v - v.round()).abs() < 1e-9 {
                format!("{v:.0}")
            } else {
                format!("{v}")
            }
        };
        for (i, judged) in self.runs.iter().enumerate() {
            let _ = writeln!(
                s,
                "headline figures of {} against {} (judged where both runs took them in a clean spell; slower: more than {} % worse)",
                self.files[i + 1],
                self.files[0],
                pct(self.threshold_pct)
            );
            let num = |v: Option<f64>, unit: &str| {
                v.map_or("-".to_string(), |v| {
                    format!("{} {unit}", crate::report::short_num(v))
                })
            };
            // Numbers aligned in a grid; the verdict, words of any length,
            // after it, left-aligned.
            let mut grid = vec![["figure", "baseline", "this run", "change"]
                .map(String::from)
                .to_vec()];
            let mut verdicts = vec!["verdict".to_string()];
            for j in judged {
                grid.push(vec![
                    j.name.clone(),
                    num(j.base, j.unit),
                    num(j.value, j.unit),
                    j.worse_pct.map_or("".into(), |w| format!("{:+.1} %", -w)),
                ]);
                verdicts.push(j.verdict.words());
            }
            for (line, v) in crate::report::grid::grid(&grid).lines().zip(&verdicts) {
                let _ = writeln!(s, "{line}  {v}");
            }
        }
        let (slower, judged) = self.counts();
        let _ = writeln!(
            s,
            "{}",
            if judged == 0 {
                "not judged: no headline figure was taken in a clean spell in both runs".to_string()
            } else if slower == 0 {
                format!(
                    "ok: {judged} headline figure{} judged, none more than {} % worse",
                    if judged == 1 { "" } else { "s" },
                    pct(self.threshold_pct)
                )
            } else {
                format!(
                    "SLOWER: {slower} of {judged} headline figures judged are more than {} % worse",
                    pct(self.threshold_pct)
                )
            }
        );
        s
    }

    pub fn render_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }
}
