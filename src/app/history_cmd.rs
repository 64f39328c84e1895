//! `bwscope history`: list the runs, show a case's series, `--check` for a
//! step down, import saved runs, forget runs.

use std::path::{Path, PathBuf};

use super::history::{figures, Settings};
use crate::cli::{HistoryAction, HistoryArgs, HistoryForgetArgs, HistoryListArgs, HistoryShowArgs};
use crate::error::{UserError, EXIT_NOT_JUDGED, EXIT_OK};
use crate::history::{Filter, Mode, Place, Point, Provenance, Recorded, Store};
use crate::judge::{self, StepRule, Verdict};
use crate::model::{SuiteId, Warning};
use crate::stats::quantile;

/// `println!` through `util::out::print`: what the store held is shown
/// cleaned, and a reader that closed stdout (`| head`) ends the command
/// quietly instead of panicking.
macro_rules! outln {
    ($($t:tt)*) => {
        crate::util::out::print(&format!("{}\n", format_args!($($t)*)))
    };
}

pub fn command(cx: &super::Context, a: &HistoryArgs) -> anyhow::Result<u8> {
    let Settings { place, hostname } = cx.history.clone();
    let Place::At(path) = place else {
        return Err(UserError::flag(
            "--no-history",
            "there is no history to read (--no-history, BWSCOPE_HISTORY=off, or no data folder: set --history PATH)",
        )
        .into());
    };
    // What is asked is checked before the store is opened: a mistyped
    // flag costs nothing, and no output may replace the store itself.
    let outputs = match &a.action {
        None => vec![("--json", &a.list.json), ("--csv", &a.list.csv)],
        Some(HistoryAction::Show(s)) => vec![("--json", &s.json), ("--csv", &s.csv)],
        _ => Vec::new(),
    };
    for (flag, out) in outputs {
        if let Some(out) = out {
            super::history::not_the_store(flag, out, &path)?;
        }
    }
    let before = match &a.action {
        Some(HistoryAction::Forget(HistoryForgetArgs {
            before: Some(d), ..
        })) => Some(date(d, "--before")?),
        _ => None,
    };
    let mode = match a.action {
        Some(HistoryAction::Import(_)) => Mode::Create,
        _ => Mode::Existing,
    };
    let store = Store::open(&path, mode).map_err(|w| unusable(&w))?;
    let Some(mut store) = store else {
        crate::util::out::print(&format!(
            "no history yet at {} (every measuring run adds itself; `bwscope history import RUN.json` adds saved ones)\n",
            path.display()
        ));
        return Ok(EXIT_OK);
    };
    // Every answer comes from the whole store or none of it.
    store.verify().map_err(|w| unusable(&w))?;
    match &a.action {
        None if a.list.check => check(&store, &a.list),
        None => list(&store, &a.list),
        Some(HistoryAction::Show(s)) => show(&store, s),
        Some(HistoryAction::Import(i)) => import(&mut store, &i.runs, hostname),
        Some(HistoryAction::Forget(f)) => {
            let n = match (f.run, before) {
                (Some(id), _) => usize::from(store.forget_run(id).map_err(|w| unusable(&w))?),
                (None, Some(t)) => store.forget_before(t).map_err(|w| unusable(&w))?,
                (None, None) => 0,
            };
            crate::util::out::print(&format!(
                "forgot {n} run{}\n",
                if n == 1 { "" } else { "s" }
            ));
            Ok(EXIT_OK)
        }
    }
}

/// The store cannot be used: for this command that is the error itself,
/// with its cause's advice.
fn unusable(w: &Warning) -> anyhow::Error {
    match w {
        Warning::HistoryIgnored { path, reason, .. } => UserError::BadInput {
            path: path.clone(),
            problem: format!("{reason}; {}", w.hint()),
        }
        .into(),
        other => anyhow::anyhow!("{other}"),
    }
}

/// A date or time given to `flag`, as an instant (`util::date`).
fn date(s: &str, flag: &'static str) -> Result<crate::util::date::Timestamp, UserError> {
    crate::util::date::parse_instant(s).map_err(|m| UserError::flag(flag, m))
}

/// Commands whose runs are not one suite's: `--suite` takes their names
/// too, matching the runs they made (`--suite watch`: every watch sample).
const COMMANDS: [&str; 3] = ["survey", "watch", "fleet"];

/// `--suite` names a suite bwscope has, or one of [`COMMANDS`] (a store
/// holds no other).
fn suite(s: &Option<String>) -> Result<Option<String>, UserError> {
    match s {
        Some(name) if SuiteId::parse(name).is_none() && !COMMANDS.contains(&name.as_str()) => {
            let names: Vec<&str> = SuiteId::ALL.iter().map(|s| s.name()).collect();
            Err(UserError::flag(
                "--suite",
                format!(
                    "there is no suite {name:?}; the suites are {}, and the runs of {} by their command's name",
                    names.join(", "),
                    COMMANDS.join(", ")
                ),
            ))
        }
        other => Ok(other.clone()),
    }
}

fn list(store: &Store, a: &HistoryListArgs) -> anyhow::Result<u8> {
    let f = Filter {
        machine: a.machine.clone(),
        since: a.since.as_deref().map(|d| date(d, "--since")).transpose()?,
        suite: suite(&a.suite)?,
    };
    let runs = store.runs(&f).map_err(|w| unusable(&w))?;
    if let Some(p) = &a.json {
        super::write_output(p, &serde_json::to_vec_pretty(&runs)?)?;
    }
    if let Some(p) = &a.csv {
        let mut w = csv::Writer::from_writer(Vec::new());
        for r in &runs {
            w.serialize(r)?;
        }
        super::write_output(p, &w.into_inner()?)?;
    }
    if a.json.is_some() || a.csv.is_some() {
        return Ok(EXIT_OK);
    }
    let mut out = format!(
        "{}: {} run{}\n",
        store.path.display(),
        runs.len(),
        if runs.len() == 1 { "" } else { "s" }
    );
    out.push_str(&format!(
        "{:>5}  {:<20}  {:<8}  {:<16}  {:>5}  {:>5}  cpu\n",
        "id", "started (UTC)", "command", "machine", "rows", "noisy"
    ));
    for r in &runs {
        out.push_str(&format!(
            "{:>5}  {:<20}  {:<8}  {:<16}  {:>5}  {:>5}  {}{}\n",
            r.id,
            r.started_at,
            r.command,
            r.machine,
            r.rows,
            r.noisy_rows,
            r.cpu,
            if r.complete { "" } else { " (incomplete)" }
        ));
    }
    if !runs.is_empty() {
        out.push_str("a case's series: `bwscope history show` lists the cases, `bwscope history show CASE` draws one\n");
    }
    crate::util::out::print(&out);
    Ok(EXIT_OK)
}

fn show(store: &Store, a: &HistoryShowArgs) -> anyhow::Result<u8> {
    let Some(case) = &a.case else {
        let cases = store
            .cases(a.machine.as_deref())
            .map_err(|w| unusable(&w))?;
        let text: String = cases
            .iter()
            .map(|c| format!("{:>5} runs  {}\n", c.runs, c.case))
            .collect();
        crate::util::out::print(&text);
        return Ok(EXIT_OK);
    };
    let case = &by_name(case);
    let pts = store
        .series(case, a.machine.as_deref())
        .map_err(|w| unusable(&w))?;
    if pts.is_empty() {
        return Err(UserError::flag(
            "CASE",
            format!(
                "no figures of {case:?} in the history; `bwscope history show` lists the cases"
            ),
        )
        .into());
    }
    if let Some(p) = &a.json {
        super::write_output(p, &serde_json::to_vec_pretty(&pts)?)?;
    }
    if let Some(p) = &a.csv {
        let mut w = csv::Writer::from_writer(Vec::new());
        for r in &pts {
            w.serialize(r)?;
        }
        super::write_output(p, &w.into_inner()?)?;
    }
    if a.json.is_none() && a.csv.is_none() {
        crate::util::out::print(&render_series(case, &pts));
    }
    Ok(EXIT_OK)
}

/// The rule `history --check` judges a headline's runs by (and `history
/// show` marks steps with): the last `held` clean runs all more than
/// `threshold` worse than the median of up to [`USUAL_RUNS`] clean runs
/// before them, at least [`MIN_USUAL_RUNS`] of them.
pub fn rule(threshold_pct: f64, held: usize, higher_is_better: bool) -> StepRule {
    StepRule {
        held,
        threshold: threshold_pct / 100.0,
        min_usual: MIN_USUAL_RUNS,
        window: USUAL_RUNS,
        higher_is_better,
    }
}

/// The usual level rests on the last this many clean runs: about a
/// month of nightly runs, so a change that held that long is the new
/// usual.
pub const USUAL_RUNS: usize = 30;
/// Fewest clean runs for a usual level (with 3, their median is the
/// middle one: one odd run among them does not move it).
pub const MIN_USUAL_RUNS: usize = 3;
/// `history show`'s rule: `--check`'s defaults.
const SHOW_THRESHOLD_PCT: f64 = 10.0;
const SHOW_HELD: usize = 3;

/// A series as the judgement room reads it: noisy runs are not clean.
fn points(pts: &[Point]) -> Vec<judge::Point> {
    pts.iter()
        .map(|p| judge::Point {
            value: p.value,
            clean: !p.noisy,
        })
        .collect()
}

/// A case as given, or a headline figure by the name the summary prints
/// or its metric key, in any case of letters (`DRAM read`,
/// `dram_read_gbps`: `headline/DRAM read`).
fn by_name(case: &str) -> String {
    match crate::model::headline::Headline::find(case) {
        Some(h) => format!("headline/{}", h.name()),
        None => case.to_string(),
    }
}

/// The series as a table, a sparkline, its percentiles and its steps.
fn render_series(case: &str, pts: &[Point]) -> String {
    let unit = &pts[0].unit;
    let higher = pts[0].higher_is_better;
    let marks: Vec<(f64, bool)> = pts.iter().map(|p| (p.value, p.noisy)).collect();
    let r = rule(SHOW_THRESHOLD_PCT, SHOW_HELD, higher);
    let steps = judge::step::steps_along(&points(pts), &r);
    let mut s = format!("{case} ({unit}, {} runs)\n", pts.len());
    for (i, p) in pts.iter().enumerate() {
        let step = steps.iter().find(|st| st.since == i);
        s.push_str(&format!(
            "{:>5}  {}  {:>10}{}{}\n",
            p.run_id,
            p.started_at,
            crate::report::short_num(p.value),
            if p.noisy {
                format!("  noisy: {}", p.flags)
            } else {
                String::new()
            },
            match step {
                Some(st) if st.worse => "  ← step down",
                Some(_) => "  ← step up",
                None => "",
            }
        ));
    }
    let clean: Vec<f64> = pts.iter().filter(|p| !p.noisy).map(|p| p.value).collect();
    s.push_str(&format!("trend   {}\n", sparkline(&marks)));
    if !clean.is_empty() {
        let q = |f: f64| crate::report::short_num(quantile(&clean, f).unwrap_or(f64::NAN));
        s.push_str(&format!(
            "clean   {} of {}: p10 {}  p50 {}  p90 {} {unit}{}\n",
            clean.len(),
            pts.len(),
            q(0.1),
            q(0.5),
            q(0.9),
            if higher { "" } else { " (lower is better)" }
        ));
    }
    s.push_str(&format!(
        "steps   {} (a step: {})\n",
        match steps.len() {
            0 => "none".to_string(),
            1 => "1".to_string(),
            n => n.to_string(),
        },
        r.describe("run")
    ));
    s
}

/// ▁▂▃▄▅▆▇█ over the clean figures' range; a noisy figure is `·`.
pub fn sparkline(pts: &[(f64, bool)]) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let clean = pts.iter().filter(|p| !p.1).map(|p| p.0);
    let lo = clean.clone().fold(f64::INFINITY, f64::min);
    let hi = clean.fold(f64::NEG_INFINITY, f64::max);
    pts.iter()
        .map(|&(v, noisy)| {
            if noisy {
                '·'
            } else if hi > lo {
                BARS[(((v - lo) / (hi - lo)) * 7.0).round().clamp(0.0, 7.0) as usize]
            } else {
                BARS[3]
            }
        })
        .collect()
}

/// One headline case judged by `--check`.
struct Judged {
    case: String,
    verdict: Verdict,
    pts: Vec<Point>,
}

/// `--check`: each headline case of each machine judged by [`rule`]; a
/// step down is a line and exit 1; no case with enough clean runs is
/// "not judged" and exit [`EXIT_NOT_JUDGED`], never "ok".
fn check(store: &Store, a: &HistoryListArgs) -> anyhow::Result<u8> {
    if !(a.threshold > 0.0 && a.threshold < 100.0) {
        return Err(UserError::flag("--threshold", "a percentage between 0 and 100").into());
    }
    if a.min_runs == 0 {
        return Err(UserError::flag("--min-runs", "at least 1").into());
    }
    // Each machine's runs are a series of their own: a step is a change
    // of one machine, never the difference between two.
    let mut machines: Vec<String> = store
        .runs(&Filter {
            machine: a.machine.clone(),
            since: None,
            suite: None,
        })
        .map_err(|w| unusable(&w))?
        .into_iter()
        .map(|r| r.machine)
        .collect();
    machines.sort();
    machines.dedup();
    let mut judged = Vec::new();
    for m in &machines {
        let cases = store.cases(Some(m)).map_err(|w| unusable(&w))?;
        for c in cases.iter().filter(|c| c.case.starts_with("headline/")) {
            let pts = store.series(&c.case, Some(m)).map_err(|w| unusable(&w))?;
            let higher = pts.first().is_none_or(|p| p.higher_is_better);
            let verdict = judge::stepped(&points(&pts), &rule(a.threshold, a.min_runs, higher));
            let name = c.case.trim_start_matches("headline/");
            judged.push(Judged {
                case: if machines.len() > 1 {
                    format!("{name} (machine {m})")
                } else {
                    name.to_string()
                },
                verdict,
                pts,
            });
        }
    }
    let r = rule(a.threshold, a.min_runs, true);
    let (mut down, mut ok, mut clean_runs) = (0, 0, 0);
    let mut short = Vec::new();
    for j in &judged {
        match &j.verdict {
            Verdict::NotEnough { clean, needs } => {
                short.push(format!("{} ({clean} of {needs})", j.case));
            }
            Verdict::Judged {
                usual,
                recent,
                change,
                usual_from,
                stepped,
            } => {
                clean_runs += usual_from + a.min_runs;
                match stepped.filter(|s| s.worse) {
                    Some(s) => {
                        down += 1;
                        let unit = &j.pts[0].unit;
                        outln!(
                            "STEP DOWN {}: {} → {} {unit} ({:.1} % worse) since run {} of {}: the last {} clean runs all more than {} % worse than the median of the {usual_from} clean runs before them",
                            j.case,
                            crate::report::short_num(*usual),
                            crate::report::short_num(*recent),
                            change * 100.0,
                            j.pts[s.since].run_id,
                            j.pts[s.since].started_at,
                            a.min_runs,
                            a.threshold,
                        );
                    }
                    None => ok += 1,
                }
            }
        }
    }
    let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
    let not_judged = if short.is_empty() {
        String::new()
    } else {
        format!("; not judged, too few clean runs: {}", short.join(", "))
    };
    let rule_words = r.describe("run");
    if down == 0 && ok == 0 {
        outln!(
            "not judged: no headline case has enough clean runs (the rule needs {}: {rule_words}){not_judged}",
            r.needs()
        );
        return Ok(EXIT_NOT_JUDGED);
    }
    if down == 0 {
        outln!(
            "ok: {} judged on {} (rule: {rule_words}), none stepped down{not_judged}",
            plural(ok, "headline case"),
            plural(clean_runs, "clean figure"),
        );
        return Ok(EXIT_OK);
    }
    outln!(
        "{} of {} stepped down (rule: {rule_words}){not_judged}",
        down,
        plural(down + ok, "judged headline case"),
    );
    Ok(1)
}

/// The run files under `paths`: files as named, folders searched (two
/// levels: `bwscope-results/<time>/run.json`) for `*.json`.
fn run_files(paths: &[String]) -> Vec<PathBuf> {
    fn walk(d: &Path, depth: u32, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(d) else {
            return;
        };
        let mut entries: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
        entries.sort();
        for p in entries {
            if p.is_dir() && depth > 0 {
                walk(&p, depth - 1, out);
            } else if p.extension().is_some_and(|e| e == "json") && p.is_file() {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    for p in paths {
        let p = Path::new(p);
        if p.is_dir() {
            walk(p, 2, &mut out);
        } else {
            out.push(p.to_path_buf());
        }
    }
    out
}

fn import(store: &mut Store, paths: &[String], hostname: bool) -> anyhow::Result<u8> {
    let (mut added, mut there) = (0, 0);
    for p in run_files(paths) {
        let name = p.display().to_string();
        let run = match crate::report::json::load(&name) {
            Ok(r) => r,
            // A folder may hold other JSON (a fleet file, a reference):
            // named files must be runs, found ones are skipped with a line.
            Err(e) if !paths.iter().any(|x| Path::new(x) == p) => {
                eprintln!("skipped {name}: {e}");
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        let how = Provenance {
            source: "import",
            imported_from: Some(name.clone()),
            hostname,
            node: None,
        };
        match store
            .record(&run, &figures(&run), &how)
            .map_err(|w| unusable(&w))?
        {
            Recorded::Added { .. } => added += 1,
            Recorded::AlreadyThere { .. } => there += 1,
        }
    }
    outln!(
        "imported {added} run{}, {there} already in the history",
        if added == 1 { "" } else { "s" }
    );
    Ok(EXIT_OK)
}
