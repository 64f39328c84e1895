//! "Stepped": the one rule.
//!
//! A series of one figure, oldest first, each point clean or not (taken
//! in noise, on a shared core, beside a memory loaded from outside: the
//! history's `Flags`, the spell probes' states). Noisy points are left out
//! before anything is judged, so they can neither start a step nor hide
//! one. Of the clean points:
//!
//! - the **held** points are the last [`StepRule::held`] of them (the new
//!   level, if there is one);
//! - the **usual** level is the median of at most [`StepRule::window`]
//!   clean points before them (the median, so one odd point among them
//!   moves nothing), and needs at least [`StepRule::min_usual`] of them;
//! - the figure **stepped** when every held point is worse than the usual
//!   level by more than [`StepRule::threshold`] (or every one better: a
//!   step up, which callers may show but do not alert on);
//! - a step that has held longer is the same step: it reaches back (at
//!   most [`StepRule::window`] points) to the first clean point from
//!   which every point is past the threshold against the level before
//!   it, so a check run weeks after a drop still sees it against the
//!   level before the drop, until the new level has been the usual one
//!   for a whole window.
//!
//! The three callers choose the parameters for their data: the history
//! judges runs (`--min-runs` held, `--threshold`), watch judges samples
//! (three held samples, 10 %, ten samples for a usual level), a fleet
//! judges its median now against its last runs' medians (one held point,
//! `--past-pct`, three earlier runs). Change-point searches (PELT, as in
//! Hunter/Otava) find where a level changed anywhere in a long series;
//! this rule asks the one question an alert needs — is the recent level
//! worse than the usual one, and has it held — and answers it the same
//! way for a series of 4 points and of 4,000.

use crate::stats::median;

/// One point of a series: its value and whether it was taken clean.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub value: f64,
    pub clean: bool,
}

impl Point {
    pub fn clean(value: f64) -> Point {
        Point { value, clean: true }
    }

    pub fn noisy(value: f64) -> Point {
        Point {
            value,
            clean: false,
        }
    }
}

/// The rule's parameters, which each caller chooses and says.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepRule {
    /// Clean points at the new level that must all be past the threshold.
    pub held: usize,
    /// How far from the usual level a held point must be, as a fraction
    /// of it (0.10: 10 %).
    pub threshold: f64,
    /// Fewest clean points before the held ones for a usual level.
    pub min_usual: usize,
    /// The usual level is the median of at most this many clean points
    /// before the held ones, the most recent.
    pub window: usize,
    /// Higher values are better (bandwidth), or lower (latency).
    pub higher_is_better: bool,
}

impl StepRule {
    /// Clean points the rule needs to judge at all.
    pub fn needs(&self) -> usize {
        self.min_usual + self.held
    }

    /// The parameters in words, for a caller's output, `point` naming
    /// one point of the series in the singular: "the last 3 clean runs
    /// all more than 10 % worse than the median of up to 30 clean runs
    /// before them (at least 3)". "Worse", not "below": one wording for a
    /// bandwidth and a latency.
    pub fn describe(&self, point: &str) -> String {
        let t = pct(self.threshold);
        let (w, m) = (self.window, self.min_usual);
        if self.held == 1 {
            format!("the last clean {point} more than {t} % worse than the median of up to {w} clean {point}s before it (at least {m})")
        } else {
            format!(
                "the last {} clean {point}s all more than {t} % worse than the median of up to {w} clean {point}s before them (at least {m})",
                self.held
            )
        }
    }

    /// How much worse `value` is than `usual`, as a fraction of it
    /// (negative: better).
    pub fn worse_by(&self, value: f64, usual: f64) -> f64 {
        let d = (usual - value) / usual.abs();
        if self.higher_is_better {
            d
        } else {
            -d
        }
    }
}

/// A fraction as a percentage in words: `10`, `12.5`.
fn pct(f: f64) -> String {
    let p = f * 100.0;
    if (p - p.round()).abs() < 1e-6 {
        format!("{p:.0}")
    } else {
        format!("{p:.1}")
    }
}

/// What the rule says of a series.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Too few clean points: `clean` of the `needs` the rule asks for.
    NotEnough { clean: usize, needs: usize },
    /// Judged: the usual level, the held points' median, and how much
    /// worse it is (a fraction; negative: better). `stepped`: every held
    /// point past the threshold on the same side, `worse` saying which.
    Judged {
        usual: f64,
        recent: f64,
        change: f64,
        /// The clean points the usual level rests on.
        usual_from: usize,
        stepped: Option<Step>,
    },
}

/// A step the rule found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    /// Worse (the callers' alert) or better.
    pub worse: bool,
    /// The index, in the whole series, of the first held point.
    pub since: usize,
}

impl Verdict {
    /// A step down: what `history --check`, watch and a fleet alert on.
    pub fn stepped_down(&self) -> bool {
        matches!(
            self,
            Verdict::Judged {
                stepped: Some(Step { worse: true, .. }),
                ..
            }
        )
    }

    /// The usual level, where there was one to judge by.
    pub fn usual(&self) -> Option<f64> {
        match self {
            Verdict::Judged { usual, .. } => Some(*usual),
            Verdict::NotEnough { .. } => None,
        }
    }
}

/// The rule ([module docs](self)) applied to `series` (oldest first).
/// Non-finite values count as noisy: nothing can be judged by them.
pub fn stepped(series: &[Point], rule: &StepRule) -> Verdict {
    let clean: Vec<(usize, f64)> = series
        .iter()
        .enumerate()
        .filter(|(_, p)| p.clean && p.value.is_finite())
        .map(|(i, p)| (i, p.value))
        .collect();
    let held = rule.held.max(1);
    let min_usual = rule.min_usual.max(1);
    let needs = min_usual + held;
    if clean.len() < needs {
        return Verdict::NotEnough {
            clean: clean.len(),
            needs,
        };
    }
    let values = |v: &[(usize, f64)]| v.iter().map(|p| p.1).collect::<Vec<f64>>();
    // The usual level before clean point `k`: the median of at most
    // `window` clean points before it.
    let usual_before = |k: usize| {
        let base = &clean[k.saturating_sub(rule.window.max(1))..k];
        (median(&values(base)).unwrap_or(f64::NAN), base.len())
    };
    // Every clean point from `k` on past the threshold, on the `worse`
    // side, against the usual level before `k`.
    let past = |k: usize, worse: bool| {
        let (usual, _) = usual_before(k);
        // A usual level of 0 (or one that is not a number) judges
        // nothing: every change is infinitely large against it.
        usual.is_normal()
            && clean[k..].iter().all(|p| {
                let w = rule.worse_by(p.1, usual);
                if worse {
                    w > rule.threshold
                } else {
                    -w > rule.threshold
                }
            })
    };
    let last = clean.len() - held;
    // Where the step began: the earliest clean point, at most `window`
    // points back, from which every clean point is past the threshold
    // against the level before it. A step that has held longer than
    // `held` points is the same step, judged against the level before it
    // began, so a check run weeks after a drop still sees it — until the
    // new level has been the usual one for a whole window.
    let first = last.saturating_sub(rule.window.max(1) - 1).max(min_usual);
    let found = [true, false]
        .into_iter()
        .find_map(|worse| (first..=last).find(|&k| past(k, worse)).map(|k| (k, worse)));
    let from = found.map_or(last, |f| f.0);
    let (usual, usual_from) = usual_before(from);
    let recent = median(&values(&clean[from..])).unwrap_or(f64::NAN);
    Verdict::Judged {
        usual,
        recent,
        change: rule.worse_by(recent, usual),
        usual_from,
        stepped: found.map(|(k, worse)| Step {
            worse,
            since: clean[k].0,
        }),
    }
}

/// Where in `series` the rule first finds each step, walking it point by
/// point as a watch or a nightly check would have: the index of each
/// step's first held point and whether it was worse. `history show` marks
/// these, so a step shown is a step `--check` raised or would have.
pub fn steps_along(series: &[Point], rule: &StepRule) -> Vec<Step> {
    let mut out: Vec<Step> = Vec::new();
    let mut open: Option<bool> = None;
    for end in 1..=series.len() {
        if !series[end - 1].clean {
            continue;
        }
        match stepped(&series[..end], rule) {
            Verdict::Judged {
                stepped: Some(s), ..
            } => {
                if open != Some(s.worse) && out.last().is_none_or(|l| l.since < s.since) {
                    out.push(s);
                }
                open = Some(s.worse);
            }
            _ => open = None,
        }
    }
    out
}

#[cfg(test)]
mod tests;
