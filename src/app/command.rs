//! The command line as it is parsed, completed and documented: `cli`'s
//! clap definitions with the choices that live below the command line
//! filled in, so each is declared once: `report --format` from
//! `report::FORMATS`, the output flags (`--json`, `--csv`, …) from
//! `report::OUTPUTS`, `fleet --suites` from the suites' descriptors.

use clap::builder::PossibleValue;
use clap::{ArgMatches, CommandFactory, FromArgMatches};

use crate::cli::Cli;

/// The whole command: what [`parse`] reads, and what `completions` and
/// `man` describe. (Changed in place, so every subcommand and flag keeps
/// its order.)
pub fn command() -> clap::Command {
    with_scoped(with_outputs(Cli::command())).mut_subcommands(|c| match c.get_name() {
        "report" => report(c),
        "fleet" => c.mut_args(|a| match a.get_id().as_str() {
            "suites" => fleet_suites(a),
            _ => a,
        }),
        _ => c,
    })
}

/// Every command with the output arguments (`OutputArgs`, whose flattened
/// fields clap groups under that name) gets a flag per output format,
/// listed beside `--units`; then its subcommands, likewise.
fn with_outputs(c: clap::Command) -> clap::Command {
    let units = c
        .get_groups()
        .any(|g| g.get_id() == "OutputArgs")
        .then(|| c.get_arguments().find(|a| a.get_id() == "units"))
        .flatten()
        .map(|a| a.get_display_order());
    let c = match units {
        Some(order) => c.args(crate::report::OUTPUTS.iter().map(|o| {
            let name = o.flag().trim_start_matches('-');
            clap::Arg::new(name)
                .long(name)
                .value_name("FILE")
                .help(o.help())
                .display_order(order)
        })),
        None => c,
    };
    c.mut_subcommands(with_outputs)
}

/// The commands that measure and keep a history (a path below the top:
/// `net run`).
const MEASURING: &[&str] = &[
    "cache", "memtype", "latency", "regs", "threads", "numa", "transfer", "contend", "fleet",
    "net run", "watch",
];

/// The top level's flags that mean something to some commands only (the
/// survey's at the top): does the command at `path` (`history show`)
/// take the flag `id`? Each is offered on those commands, listed in their
/// `--help`, and nowhere else; given before the command name it is the
/// top level's and still applies ([`from_matches`]).
fn takes(id: &str, path: &str) -> bool {
    let measuring = MEASURING.contains(&path);
    let history = path == "history" || path.starts_with("history ");
    match id {
        // Every DRAM record is judged against it; `info` shows it.
        "dram_peak" => measuring || path == "info",
        // Where runs are recorded, and what `history` reads.
        "history" => measuring || history,
        "no_history" => measuring,
        // A hostname is kept where a run is recorded.
        "history_hostname" => measuring || path == "history import",
        _ => false,
    }
}

/// The ids of the flags [`takes`] scopes.
const SCOPED: &[&str] = &["dram_peak", "history", "no_history", "history_hostname"];

/// Every command that [`takes`] a scoped flag gets it, as the top level
/// declares it.
fn with_scoped(c: clap::Command) -> clap::Command {
    let flags: Vec<clap::Arg> = c
        .get_arguments()
        .filter(|a| SCOPED.contains(&a.get_id().as_str()))
        .cloned()
        .collect();
    fn add(c: clap::Command, path: String, flags: &[clap::Arg]) -> clap::Command {
        let own = flags.iter().filter(|a| takes(a.get_id().as_str(), &path));
        c.args(own.cloned()).mut_subcommands(|s| {
            let sub = format!("{path} {}", s.get_name());
            add(s, sub, flags)
        })
    }
    c.mut_subcommands(|s| {
        let path = s.get_name().to_string();
        add(s, path, &flags)
    })
}

/// The scoped flags' values wherever they were given: the top level's,
/// then each command's below it, the deepest winning.
fn scoped_values(cli: &mut Cli, m: &ArgMatches) {
    let mut level = Some(m);
    while let Some(l) = level {
        let text = |id: &str| l.try_get_one::<String>(id).ok().flatten().cloned();
        let flag = |id: &str| l.try_get_one::<bool>(id).ok().flatten() == Some(&true);
        if let Some(v) = text("dram_peak") {
            cli.dram_peak = Some(v);
        }
        if let Some(v) = text("history") {
            cli.history = Some(v);
        }
        cli.no_history |= flag("no_history");
        cli.history_hostname |= flag("history_hostname");
        level = l.subcommand().map(|(_, sub)| sub);
    }
}

/// `history`'s own flags list runs and check them: with a subcommand
/// (`history --check show`) they would be ignored, so they are refused;
/// a scoped flag (`--history PATH`) may stand on either side of one.
fn history_flags_alone(m: &ArgMatches) -> Result<(), clap::Error> {
    let Some(("history", h)) = m.subcommand() else {
        return Ok(());
    };
    let Some((sub, _)) = h.subcommand() else {
        return Ok(());
    };
    let given = h.ids().map(|id| id.as_str()).find(|id| {
        !SCOPED.contains(id) && h.value_source(id) == Some(clap::parser::ValueSource::CommandLine)
    });
    match given {
        Some(id) => Err(clap::Error::raw(
            clap::error::ErrorKind::ArgumentConflict,
            format!(
                "the subcommand '{sub}' cannot be used with '--{}' (a flag of `bwscope history` itself)\n",
                id.replace('_', "-")
            ),
        )),
        None => Ok(()),
    }
}

/// The files given to the output flags in `m` (one command's own, not
/// its subcommand's), in the order of `report::OUTPUTS`.
fn files(m: &ArgMatches) -> Vec<(&'static str, String)> {
    crate::report::OUTPUTS
        .iter()
        .filter_map(|o| {
            let name = o.flag().trim_start_matches('-');
            let path = m.try_get_one::<String>(name).ok().flatten()?;
            Some((o.flag(), path.clone()))
        })
        .collect()
}

/// The command line in `m` (as [`command`] parsed it) with the output
/// flags' files in the `OutputArgs` of the top level and of the command
/// that measures.
pub fn from_matches(m: &ArgMatches) -> Result<Cli, clap::Error> {
    history_flags_alone(m)?;
    let mut cli = Cli::from_arg_matches(m)?;
    scoped_values(&mut cli, m);
    cli.output.files = files(m);
    let mut leaf = m;
    while let Some((_, sub)) = leaf.subcommand() {
        leaf = sub;
    }
    if let Some(out) = cli.command.as_mut().and_then(|c| c.output_mut()) {
        out.files = files(leaf);
    }
    Ok(cli)
}

/// `report`: the formats after its one line, and as `--format`'s choices.
fn report(c: clap::Command) -> clap::Command {
    let formats = crate::report::FORMATS;
    let others: Vec<&str> = formats[1..].iter().map(|f| f.name()).collect();
    let about = format!(
        "{} (or {})",
        c.get_about().map(|a| a.to_string()).unwrap_or_default(),
        others.join(", ")
    );
    c.about(about).mut_args(|a| match a.get_id().as_str() {
        "format" => a.value_parser(
            formats
                .iter()
                .map(|f| PossibleValue::new(f.name()).help(f.about()))
                .collect::<Vec<_>>(),
        ),
        _ => a,
    })
}

/// `fleet --suites`: the choices after its line, and (`--help`) what
/// each measures.
fn fleet_suites(a: clap::Arg) -> clap::Arg {
    let choices = super::fleet::node::choices();
    let names: Vec<&str> = choices.iter().map(|(n, _)| *n).collect();
    let help = format!(
        "{}: {}, or none",
        a.get_help().map(|h| h.to_string()).unwrap_or_default(),
        names.join(", ")
    );
    let each: Vec<String> = choices
        .iter()
        .map(|(n, about)| format!("  {n}: {about}"))
        .collect();
    let long = format!("{help}\n\n{}", each.join("\n"));
    a.help(help).long_help(long)
}

/// The process's command line, as [`command`] reads it; help, a version
/// or a usage error is printed and the process exits, as `Cli::parse`
/// does.
pub fn parse() -> Cli {
    let m = command().get_matches();
    from_matches(&m).unwrap_or_else(|e| e.format(&mut command()).exit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(format: &str) -> Result<Cli, clap::Error> {
        command()
            .try_get_matches_from(["bwscope", "report", "--format", format, "run.json"])
            .and_then(|m| Cli::from_arg_matches(&m))
    }

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        command()
            .try_get_matches_from(args)
            .and_then(|m| from_matches(&m))
    }

    /// Each output format's flag is on every command that measures and on
    /// the top level, from the one list, and lands in that command's
    /// `OutputArgs`; a command that writes no run has none.
    #[test]
    fn every_output_flag_is_on_every_measuring_command() {
        let outputs = crate::report::OUTPUTS;
        let flagged = |cmd: &[&str]| -> Vec<(&'static str, String)> {
            let mut args = vec!["bwscope"];
            args.extend_from_slice(cmd);
            let paths: Vec<String> = outputs.iter().map(|o| format!("f{}", o.flag())).collect();
            for (o, p) in outputs.iter().zip(&paths) {
                args.extend([o.flag(), p.as_str()]);
            }
            let mut cli = parse(&args).unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
            match cli.command.as_mut() {
                Some(c) => c.output_mut().unwrap().files.clone(),
                None => cli.output.files,
            }
        };
        let want: Vec<(&'static str, String)> = outputs
            .iter()
            .map(|o| (o.flag(), format!("f{}", o.flag())))
            .collect();
        for cmd in [
            &[][..],
            &["cache"],
            &["memtype"],
            &["latency"],
            &["regs"],
            &["threads"],
            &["numa"],
            &["transfer"],
            &["contend"],
            &["fleet"],
            &["net", "run", "localhost"],
        ] {
            assert_eq!(flagged(cmd), want, "{cmd:?}");
        }
        // Given before the subcommand, they are the top level's.
        let cli = parse(&["bwscope", "--csv", "a.csv", "cache", "--json", "b.json"]).unwrap();
        assert_eq!(cli.output.files, vec![("--csv", "a.csv".to_string())]);
        let mut c = cli.command.unwrap();
        assert_eq!(c.output_mut().unwrap().file("--json"), Some("b.json"));
        // Commands that write no run do not take them.
        for cmd in [
            &["report", "r.json"][..],
            &["net", "serve"],
            &["plot", "r.json"],
        ] {
            let mut args = vec!["bwscope"];
            args.extend_from_slice(cmd);
            args.extend(["--csv", "x.csv"]);
            assert!(parse(&args).is_err(), "{cmd:?}");
        }
    }

    /// `--history`, `--dram-peak` and friends are listed and taken only
    /// where they mean something, before or after a subcommand's name,
    /// and `history`'s own flags do not go with its subcommands.
    #[test]
    fn scoped_flags_are_offered_where_they_mean_something() {
        let c = command();
        let help = |path: &[&str]| {
            let mut sub = c.clone();
            for p in path {
                sub = sub.find_subcommand(p).unwrap().clone();
            }
            sub.render_long_help().to_string()
        };
        for path in [&["cache"][..], &["watch"], &["fleet"], &["net", "run"]] {
            let h = help(path);
            for f in [
                "--dram-peak",
                "--history ",
                "--no-history",
                "--history-hostname",
            ] {
                assert!(h.contains(f), "{path:?} lacks {f}");
            }
        }
        for path in [
            &["plot"][..],
            &["report"],
            &["compare"],
            &["kernels"],
            &["net", "serve"],
        ] {
            let h = help(path);
            for f in ["--dram-peak", "--history", "--no-history"] {
                assert!(!h.contains(f), "{path:?} lists {f}");
            }
        }
        let h = help(&["history", "show"]);
        assert!(
            h.contains("--history ") && !h.contains("--dram-peak"),
            "{h}"
        );
        // Before or after a subcommand, or before the command itself.
        for args in [
            &["bwscope", "history", "--history", "h.db", "show"][..],
            &["bwscope", "history", "show", "--history", "h.db"],
            &["bwscope", "--history", "h.db", "history", "show"],
            &["bwscope", "cache", "--history", "h.db"],
        ] {
            let cli = parse(args).unwrap_or_else(|e| panic!("{args:?}: {e}"));
            assert_eq!(cli.history.as_deref(), Some("h.db"), "{args:?}");
        }
        let cli = parse(&["bwscope", "info", "--dram-peak", "1GB/s"]).unwrap();
        assert_eq!(cli.dram_peak.as_deref(), Some("1GB/s"));
        assert!(parse(&["bwscope", "plot", "r.json", "-o", "x.svg", "--history", "h"]).is_err());
        let e = parse(&["bwscope", "history", "--check", "show"]).unwrap_err();
        assert!(e.to_string().contains("'--check'"), "{e}");
    }

    #[test]
    fn the_command_is_well_formed() {
        command().debug_assert();
    }

    #[test]
    fn every_format_of_the_list_parses_and_no_other() {
        for f in crate::report::FORMATS {
            let cli = report(f.name()).unwrap();
            let Some(crate::cli::Command::Report(a)) = cli.command else {
                panic!("not a report")
            };
            assert_eq!(a.format.as_deref(), Some(f.name()));
        }
        let e = report("pdf").unwrap_err().to_string();
        assert!(e.contains("openmetrics"), "{e}");
    }

    #[test]
    fn the_help_names_every_format_and_every_fleet_suite() {
        let mut c = command();
        let report = c.find_subcommand_mut("report").unwrap().render_long_help();
        for f in crate::report::FORMATS {
            assert!(report.to_string().contains(f.name()), "{}", f.name());
        }
        let fleet = c
            .find_subcommand_mut("fleet")
            .unwrap()
            .render_help()
            .to_string();
        for (name, _) in super::super::fleet::node::choices() {
            assert!(fleet.contains(name), "{name} not in {fleet}");
        }
    }
}
