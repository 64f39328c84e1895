//! The application: one handler per subcommand, all measuring ones through
//! the same [`runner`]. `main` calls [`dispatch`] and maps its result to an
//! exit code (see `error`).

pub mod args;
pub mod info;
pub mod net;
pub mod reports;
pub mod runner;
pub mod survey;

use crate::cli::{Cli, Command, NetCommand};
use crate::error::UserError;
use crate::suites::{self, Suite};

/// Box a planned suite for the runner.
fn boxed<S: Suite + 'static>(s: S) -> Box<dyn Suite> {
    Box::new(s)
}

pub fn dispatch(cli: Cli) -> anyhow::Result<u8> {
    let out = cli.output.clone();
    if cli.command.is_some() {
        if cli.survey.out.is_some() {
            return Err(UserError::flag(
                "--out",
                "only the survey (bwscope with no subcommand) saves into a folder; use --json/--csv with subcommands",
            )
            .into());
        }
        if cli.survey.no_save {
            return Err(UserError::flag(
                "--no-save",
                "only the survey (bwscope with no subcommand) saves by default",
            )
            .into());
        }
    }
    let Some(command) = cli.command else {
        return survey::run(&out, &cli.survey);
    };
    match command {
        Command::Info(a) => info::info(&a, &out),
        Command::Kernels(a) => info::list_kernels(&a, &out),
        Command::Completions(a) => info::completions(&a),
        Command::Man(a) => info::man(&a),
        Command::Plot(a) => reports::plot(&a),
        Command::Report(a) => reports::report(&a),
        Command::Compare(a) => reports::compare(&a),
        Command::Net(a) => match &a.command {
            NetCommand::Serve(s) => net::serve(s),
            NetCommand::Run(r) => {
                let o = args::net(r)?;
                runner::command("net", &out, false, |_| Ok(boxed(suites::net::plan(&o)?)))
            }
        },
        Command::Cache(a) => {
            let o = args::cache(&a)?;
            runner::command("cache", &out, true, |h| {
                Ok(boxed(suites::cache::plan(&o, h)?))
            })
        }
        Command::Latency(a) => {
            let o = args::latency(&a)?;
            runner::command("latency", &out, true, |h| {
                Ok(boxed(suites::latency::plan(&o, h)?))
            })
        }
        Command::Regs(a) => {
            let o = args::regs(&a);
            runner::command("regs", &out, true, |h| {
                Ok(boxed(suites::regs::plan(&o, h)?))
            })
        }
        Command::Threads(a) => {
            let o = args::threads(&a)?;
            runner::command("threads", &out, true, |h| {
                Ok(boxed(suites::threads::plan(&o, h)?))
            })
        }
        Command::Numa(a) => {
            let o = args::numa(&a)?;
            runner::command("numa", &out, false, |h| {
                Ok(boxed(suites::numa::plan(&o, h)?))
            })
        }
        Command::Memtype(a) => {
            let o = args::memtype(&a)?;
            runner::command("memtype", &out, true, |h| {
                Ok(boxed(suites::memtype::plan(&o, h)?))
            })
        }
        Command::Transfer(a) => {
            let o = args::transfer(&a)?;
            runner::command("transfer", &out, false, |h| {
                Ok(boxed(suites::transfer::plan(&o, h)?))
            })
        }
    }
}

/// Write `bytes` to FILE, or to stdout for `-`.
pub fn write_output(path: &str, bytes: &[u8]) -> Result<(), UserError> {
    if path == "-" {
        use std::io::Write as _;
        let mut o = std::io::stdout().lock();
        let _ = o.write_all(bytes);
        Ok(())
    } else {
        crate::report::sink::write_atomic(std::path::Path::new(path), bytes)
    }
}
