//! The command line as it is parsed, completed and documented: `cli`'s
//! clap definitions with the choices that live below the command line
//! filled in, so each is declared once: `report --format` from
//! `report::FORMATS`, `fleet --suites` from the suites' descriptors.

use clap::builder::PossibleValue;
use clap::{CommandFactory, FromArgMatches};

use crate::cli::Cli;

/// The whole command: what [`parse`] reads, and what `completions` and
/// `man` describe. (Changed in place, so every subcommand and flag keeps
/// its order.)
pub fn command() -> clap::Command {
    Cli::command().mut_subcommands(|c| match c.get_name() {
        "report" => report(c),
        "fleet" => c.mut_args(|a| match a.get_id().as_str() {
            "suites" => fleet_suites(a),
            _ => a,
        }),
        _ => c,
    })
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
    let mut m = command().get_matches();
    Cli::from_arg_matches_mut(&mut m).unwrap_or_else(|e| e.format(&mut command()).exit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(format: &str) -> Result<Cli, clap::Error> {
        command()
            .try_get_matches_from(["bwscope", "report", "--format", format, "run.json"])
            .and_then(|m| Cli::from_arg_matches(&m))
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
