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
    with_outputs(Cli::command()).mut_subcommands(|c| match c.get_name() {
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
    let mut cli = Cli::from_arg_matches(m)?;
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
