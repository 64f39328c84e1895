//! Handlers of the subcommands that read saved runs: `plot`, `report`,
//! `compare`. They never measure; every picture and table comes from the
//! JSON, so it cannot disagree with the data.

use std::path::Path;

use super::write_output;
use crate::cli::{CompareArgs, CompareFormat, PlotArgs, ReportArgs, StatArg};
use crate::error::{UserError, EXIT_OK};
use crate::report::compare::{self, EXIT_SLOWER};
use crate::report::metric::StatKind;
use crate::report::plot::{self, Format};

fn stat(s: StatArg) -> StatKind {
    match s {
        StatArg::Best => StatKind::Best,
        StatArg::Median => StatKind::Median,
    }
}

fn check_side(flag: &'static str, v: u32) -> Result<(), UserError> {
    if !(plot::MIN_SIDE..=plot::MAX_SIDE).contains(&v) {
        return Err(UserError::flag(
            flag,
            format!(
                "{v} pixels is out of range; use {} to {}",
                plot::MIN_SIDE,
                plot::MAX_SIDE
            ),
        ));
    }
    Ok(())
}

/// Refuse an output that is the same file as the input (device and inode,
/// so `./RUN.json`, a hard link or a symlink count too): the report would
/// replace the run it was made from.
/// With `-`, stdin is the input: a shell's `< FILE` redirect makes FILE
/// the input as surely as naming it.
fn not_the_input(out: &str, input: &str) -> Result<(), UserError> {
    let same = match (out, input) {
        ("-", _) => false,
        (_, "-") => crate::report::outfile::is_stdin(Path::new(out)),
        _ => crate::report::outfile::same_file(Path::new(out), Path::new(input)),
    };
    if same {
        return Err(UserError::flag(
            "--output",
            format!(
                "{out} is the file being read ({}); writing it would replace the run: give another path, or '-' for stdout",
                if input == "-" { "stdin" } else { input }
            ),
        ));
    }
    Ok(())
}

/// `out.svg` + chart id → `out-<id>.svg`.
fn sibling(path: &str, id: &str) -> String {
    let p = Path::new(path);
    let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or("chart");
    let ext = p.extension().and_then(|s| s.to_str()).unwrap_or("svg");
    let name = format!("{stem}-{id}.{ext}");
    match p.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(d) => d.join(name).display().to_string(),
        None => name,
    }
}

pub fn plot(a: &PlotArgs) -> anyhow::Result<u8> {
    let run = crate::report::fleet::load_run(&a.run, a.node.as_deref())?;
    let mut charts = plot::charts(&run, stat(a.stat));
    // Then where each headline figure sits in this machine's history.
    charts.extend(plot::trends(&run));
    if let Some(state) = crate::report::run_state(&run) {
        // On the picture itself, where the chart travels without its file.
        let short = if run.interrupted {
            "interrupted run"
        } else {
            "incomplete run"
        };
        for c in &mut charts {
            c.title.push_str(&format!(" [{short}]"));
        }
        eprintln!("note: {}: {state}", a.run);
    }
    if a.list {
        for c in &charts {
            crate::util::out::print(&format!("{:<40} {}\n", c.id, c.title));
        }
        return Ok(EXIT_OK);
    }
    let output = a.output.as_deref().unwrap_or_default();
    let format = Format::from_path(output).ok_or_else(|| {
        UserError::flag("--output", format!("'{output}' must end in .svg or .png"))
    })?;
    check_side("--width", a.width)?;
    check_side("--height", a.height)?;
    if charts.is_empty() {
        return Err(UserError::BadInput {
            path: a.run.clone(),
            problem: "has nothing to chart (no suite with two or more sizes, thread counts or NUMA nodes measured, and no headline figure with earlier runs in its history)"
                .into(),
        }
        .into());
    }
    let chosen: Vec<&plot::Chart> = match &a.chart {
        Some(id) => {
            let c = charts.iter().find(|c| &c.id == id).ok_or_else(|| {
                UserError::flag(
                    "--chart",
                    format!(
                        "no chart '{id}' in this run; available: {}",
                        charts
                            .iter()
                            .map(|c| c.id.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
            })?;
            vec![c]
        }
        None => charts.iter().collect(),
    };
    let paths: Vec<String> = (0..chosen.len())
        .map(|i| match i {
            0 => output.to_string(),
            _ => sibling(output, &chosen[i].id),
        })
        .collect();
    for p in &paths {
        not_the_input(p, &a.run)?;
    }
    for (c, path) in chosen.iter().zip(paths) {
        let bytes = match format {
            Format::Svg => plot::svg(c, a.width, a.height)?.into_bytes(),
            Format::Png => plot::png(c, a.width, a.height)?,
        };
        write_output(&path, &bytes)?;
        if !crate::report::outfile::is_stdout(&path) {
            crate::util::out::print(&format!("wrote {} ({})\n", path, c.title));
        }
    }
    Ok(EXIT_OK)
}

pub fn report(a: &ReportArgs) -> anyhow::Result<u8> {
    use crate::report::fleet::{self as view, Doc};
    let doc = match (view::load(&a.run)?, &a.node) {
        (Doc::Fleet(f), Some(n)) => Doc::Run(Box::new(view::node_run(&f, n, &a.run)?)),
        (Doc::Run(_), Some(_)) => return Err(view::not_a_fleet("--node", &a.run).into()),
        (d, _) => d,
    };
    if matches!(doc, Doc::Run(_)) && a.scale_max.is_some() {
        return Err(match a.node {
            Some(_) => UserError::flag(
                "--scale-max",
                "scales the fleet's network heatmap; one node's report (--node) has none",
            ),
            None => view::not_a_fleet("--scale-max", &a.run),
        }
        .into());
    }
    if let Doc::Run(run) = &doc {
        if let Some(state) = crate::report::run_state(run) {
            eprintln!("note: {}: {state}", a.run);
        }
    }
    let format = match &a.format {
        Some(name) => crate::report::format(name).ok_or_else(|| {
            let names: Vec<&str> = crate::report::FORMATS.iter().map(|f| f.name()).collect();
            UserError::flag(
                "--format",
                format!("unknown format '{name}': use one of {}", names.join(", ")),
            )
        })?,
        None => a
            .output
            .as_deref()
            .and_then(crate::report::format_of_path)
            .unwrap_or(crate::report::FORMATS[0]),
    };
    let out = match (&a.output, format.beside_run()) {
        (Some(o), _) => o.clone(),
        // Read from stdin: there is no "next to the input".
        (None, Some(_)) if a.run == "-" => "-".into(),
        (None, Some(ext)) => Path::new(&a.run).with_extension(ext).display().to_string(),
        (None, None) => "-".into(),
    };
    not_the_input(&out, &a.run)?;
    let bytes = match doc {
        Doc::Fleet(f) => {
            if a.scale_max.is_some_and(|m| !(m.is_finite() && m > 0.0)) {
                return Err(UserError::flag(
                    "--scale-max",
                    "give a positive GB/s figure, e.g. 12.5",
                )
                .into());
            }
            format.fleet(&f, a.scale_max)
        }
        Doc::Run(run) => format.serialize(&run)?,
    };
    write_output(&out, &bytes)?;
    if !crate::report::outfile::is_stdout(&out) {
        crate::util::out::print(&format!("wrote {out}\n"));
    }
    Ok(EXIT_OK)
}

/// `compare` of fleet files: node by node, or with `--node` one node's
/// runs case by case.
fn compare_fleets(a: &CompareArgs) -> anyhow::Result<Option<u8>> {
    use crate::report::fleet::{self as view, Doc};
    let docs: Vec<Doc> = a
        .runs
        .iter()
        .map(|p| view::load(p))
        .collect::<Result<_, _>>()?;
    let fleets = docs.iter().filter(|d| matches!(d, Doc::Fleet(_))).count();
    if fleets == 0 || a.node.is_some() {
        return Ok(None);
    }
    if fleets != docs.len() || docs.len() != 2 {
        return Err(UserError::flag(
            "RUN.json",
            "compare two fleet files with each other, or pick one node of each with --node HOST",
        )
        .into());
    }
    let (Doc::Fleet(x), Doc::Fleet(y)) = (&docs[0], &docs[1]) else {
        unreachable!("both are fleets");
    };
    let c = view::compare::compare((&a.runs[0], x), (&a.runs[1], y), a.fail_if_slower);
    crate::util::out::print(&match a.format {
        CompareFormat::Table => c.render_table(),
        CompareFormat::Markdown => c.render_markdown(),
        CompareFormat::Json => c.render_json(),
    });
    if a.fail_if_slower.is_some() && !c.slower().is_empty() {
        let worst = c.slower()[0];
        eprintln!(
            "error: {} figures of {} of {} nodes got slower by more than {}% (worst: {} {} {:.1}% worse)",
            c.slower().len(),
            c.slower_nodes().len(),
            c.nodes().len(),
            c.threshold_pct,
            worst.node,
            worst.metric,
            worst.worse_pct.unwrap_or(0.0)
        );
        return Ok(Some(EXIT_SLOWER));
    }
    Ok(Some(EXIT_OK))
}

/// `compare --headline`: the headline figures only, each where both runs
/// took it clean, against one threshold.
fn compare_headlines(runs: &[(String, crate::model::Run)], a: &CompareArgs) -> anyhow::Result<u8> {
    use compare::headline::{self, DEFAULT_PCT};
    let c = headline::compare(runs, a.fail_if_slower.unwrap_or(DEFAULT_PCT));
    let text = match a.format {
        CompareFormat::Json => c.render_json(),
        CompareFormat::Table | CompareFormat::Markdown => c.render_table(),
    };
    crate::util::out::print(&text);
    Ok(match c.counts() {
        (_, 0) => crate::error::EXIT_NOT_JUDGED,
        (0, _) => EXIT_OK,
        _ => EXIT_SLOWER,
    })
}

pub fn compare(cx: &super::Context, a: &CompareArgs) -> anyhow::Result<u8> {
    if let Some(p) = a.fail_if_slower {
        if !(p >= 0.0 && p.is_finite()) {
            return Err(UserError::flag(
                "--fail-if-slower",
                "must be a percentage of 0 or more, e.g. 5",
            )
            .into());
        }
    }
    if let Some(code) = compare_fleets(a)? {
        return Ok(code);
    }
    let mut runs = Vec::with_capacity(a.runs.len());
    for p in &a.runs {
        let run = crate::report::fleet::load_run(p, a.node.as_deref())?;
        if let Some(state) = crate::report::run_state(&run) {
            eprintln!("note: {p}: {state}");
        }
        runs.push((p.clone(), run));
    }
    if a.headline {
        return compare_headlines(&runs, a);
    }
    let c = compare::compare(&runs, stat(a.stat))?;
    let text = match a.format {
        CompareFormat::Table => c.render_table(),
        CompareFormat::Markdown => c.render_markdown(),
        CompareFormat::Json => c.render_json(),
    };
    crate::util::out::print(&text);
    // Is the newest run's figure normal for its machine? (The table only:
    // the JSON and Markdown stay what they were.)
    if let (CompareFormat::Table, Some((p, last))) = (a.format, runs.last()) {
        let lines = super::history::standing_lines(&cx.history, last);
        if !lines.is_empty() {
            let mut s = format!("\nhistory of {p}'s machine:\n");
            for l in lines {
                s.push_str(&format!("  {l}\n"));
            }
            crate::util::out::print(&s);
        }
    }
    if let Some(pct) = a.fail_if_slower {
        let slow = c.slower_than(pct);
        if !slow.is_empty() {
            let (row, i, by) = slow
                .iter()
                .max_by(|x, y| x.2.total_cmp(&y.2))
                .expect("non-empty");
            eprintln!(
                "error: {} cases are slower than {}% (worst: {} in {}, {:.1}% slower than {})",
                slow.len(),
                pct,
                row.label,
                c.files[*i],
                by,
                c.files[0]
            );
            return Ok(EXIT_SLOWER);
        }
    }
    Ok(EXIT_OK)
}

#[cfg(test)]
mod tests {
    #[test]
    fn sibling_names() {
        assert_eq!(
            std::path::PathBuf::from(super::sibling("out/a.svg", "latency-size")),
            std::path::Path::new("out").join("a-latency-size.svg")
        );
        assert_eq!(super::sibling("a.png", "x"), "a-x.png");
    }
}
