//! The application: one handler per subcommand, all measuring ones through
//! the same [`runner`]. `main` calls [`dispatch`] and maps its result to an
//! exit code (see `error`).

pub(crate) mod again;
pub mod args;
pub mod command;
pub mod context;
pub mod fleet;
pub mod history;
pub mod history_cmd;
pub mod info;
pub mod net;
pub mod panic;
pub mod reports;
pub mod runner;
pub mod survey;
pub mod watch;

pub use context::Context;

use crate::cli::{Cli, Command, NetArgs, NetCommand, OutputArgs, UnitsArg};
use crate::error::UserError;
use crate::model::{Host, SuiteId};
use crate::suites::{self, Suite};

/// When this process was started as a worker of a process team (on
/// Windows, `threads --processes` starts its workers as programs of their
/// own), do that work and return its exit code.
pub fn run_if_worker() -> Option<i32> {
    crate::os::team::run_if_worker(crate::measure::procs::worker)
}

pub fn dispatch(cli: Cli) -> anyhow::Result<u8> {
    // `main` caught the stop signals first thing; a command that never
    // polls the flag gives them back (ending on a request already come).
    if !polls_stop(&cli) && crate::os::signal::uninstall().is_some() {
        return Ok(crate::error::EXIT_INTERRUPTED);
    }
    prepare(&cli)?;
    let cx = Context::of(&cli);
    let top = cli.output.clone();
    let Some(command) = cli.command else {
        return survey::run(&cx, &top, &cli.survey);
    };
    match command {
        Command::Info(mut a) => {
            a.json = json_only("info", &top, a.json)?;
            info::info(&a)
        }
        Command::Kernels(mut a) => {
            a.json = json_only("kernels", &top, a.json)?;
            info::list_kernels(&a)
        }
        Command::Completions(a) => {
            no_output("completions", &top)?;
            info::completions(&a)
        }
        Command::Man(a) => {
            no_output("man", &top)?;
            info::man(&a)
        }
        Command::Plot(a) => {
            no_output("plot", &top)?;
            reports::plot(&a)
        }
        Command::Report(a) => {
            no_output("report", &top)?;
            reports::report(&a)
        }
        Command::Compare(a) => {
            no_output("compare", &top)?;
            reports::compare(&cx, &a)
        }
        Command::Watch(a) => {
            no_output("watch", &top)?;
            watch::run(&cx, &a)
        }
        Command::History(a) => {
            no_output("history", &top)?;
            history_cmd::command(&cx, &a)
        }
        Command::Fleet(a) => fleet::command(&cx, &a, &merge(&top, &a.output)),
        Command::Net(a) => net_command(&cx, &a, &top),
        Command::Cache(a) => measure(
            &cx,
            SuiteId::Cache,
            &top,
            &a.output,
            args::cache(&a),
            suites::cache::plan,
        ),
        Command::Latency(a) => measure(
            &cx,
            SuiteId::Latency,
            &top,
            &a.output,
            args::latency(&a),
            suites::latency::plan,
        ),
        Command::Regs(a) => measure(
            &cx,
            SuiteId::Regs,
            &top,
            &a.output,
            Ok(args::regs(&a)),
            suites::regs::plan,
        ),
        Command::Cores(a) => measure(
            &cx,
            SuiteId::Cores,
            &top,
            &a.output,
            args::cores(&a),
            suites::cores::plan,
        ),
        Command::Threads(a) => measure(
            &cx,
            SuiteId::Threads,
            &top,
            &a.output,
            args::threads(&a),
            suites::threads::plan,
        ),
        Command::Numa(a) => measure(
            &cx,
            SuiteId::Numa,
            &top,
            &a.output,
            args::numa(&a),
            suites::numa::plan,
        ),
        Command::Memtype(a) => measure(
            &cx,
            SuiteId::Memtype,
            &top,
            &a.output,
            args::memtype(&a),
            suites::memtype::plan,
        ),
        Command::Transfer(a) => measure(
            &cx,
            SuiteId::Transfer,
            &top,
            &a.output,
            args::transfer(&a),
            suites::transfer::plan,
        ),
        Command::Contend(a) => measure(
            &cx,
            SuiteId::Contend,
            &top,
            &a.output,
            args::contend(&a),
            suites::contend::plan,
        ),
    }
}

/// Does `cli`'s command poll the stop flag (measure, serve, watch), so
/// that a stop signal is its to handle from the start?
fn polls_stop(cli: &Cli) -> bool {
    let Some(command) = &cli.command else {
        return true; // the survey
    };
    // Every command named: a new one must say which it is.
    match command {
        Command::Info(a) => a.probe_knees,
        Command::Kernels(_)
        | Command::Completions(_)
        | Command::Man(_)
        | Command::Plot(_)
        | Command::Report(_)
        | Command::Compare(_)
        | Command::History(_) => false,
        Command::Cache(_)
        | Command::Memtype(_)
        | Command::Latency(_)
        | Command::Regs(_)
        | Command::Cores(_)
        | Command::Net(_)
        | Command::Threads(_)
        | Command::Numa(_)
        | Command::Transfer(_)
        | Command::Contend(_)
        | Command::Fleet(_)
        | Command::Watch(_) => true,
    }
}

/// `net serve` answers tests; `net run` measures like the other suites.
fn net_command(cx: &Context, a: &NetArgs, top: &OutputArgs) -> anyhow::Result<u8> {
    match &a.command {
        NetCommand::Serve(s) => {
            no_output("net serve", top)?;
            net::serve(s)
        }
        NetCommand::Run(r) => measure(cx, SuiteId::Net, top, &r.output, args::net(r), |o, _| {
            suites::net::plan(o)
        }),
    }
}

/// What holds for every command, checked before any runs: the process
/// survives a file-size limit, `BWSCOPE_DISABLE_ISA` and `--dram-peak`
/// parse, and the survey's own flags come without a subcommand.
fn prepare(cli: &Cli) -> Result<(), UserError> {
    crate::os::signal::survive_file_size_limit();
    // No output of any command may replace the history store, or a file
    // SQLite keeps beside it (`report::outfile::keep`).
    if let crate::history::Place::At(p) =
        crate::history::place(cli.history.as_deref(), cli.no_history)
    {
        crate::report::outfile::keep(crate::history::files::set(&p), "the history store");
    }
    crate::platform::cpu::check_disable_isa()
        .map_err(|m| UserError::flag("BWSCOPE_DISABLE_ISA", m))?;
    if let Some(rate) = &cli.dram_peak {
        let gbps =
            crate::util::units::parse_rate(rate).map_err(|m| UserError::flag("--dram-peak", m))?;
        crate::platform::dram::state_peak(gbps);
    }
    if cli.command.is_some() {
        if cli.survey.out.is_some() {
            return Err(UserError::flag(
                "--out",
                "only the survey (bwscope with no subcommand) saves into a folder; use --json/--csv with subcommands",
            )
            );
        }
        if cli.survey.no_save {
            return Err(UserError::flag(
                "--no-save",
                "only the survey (bwscope with no subcommand) saves by default",
            ));
        }
    }
    Ok(())
}

/// A measuring subcommand: the suite `id` with options `o` (its flags,
/// converted), planned for this machine by `plan` and run by the runner.
fn measure<O, S: Suite + 'static>(
    cx: &Context,
    id: SuiteId,
    top: &OutputArgs,
    own: &OutputArgs,
    o: Result<O, UserError>,
    plan: fn(&O, &Host) -> Result<S, UserError>,
) -> anyhow::Result<u8> {
    let out = merge(top, own);
    let o = o?;
    runner::command(cx, id, &out, |h| Ok(Box::new(plan(&o, h)?)))
}

/// Write `bytes` to FILE, or to stdout for `-`.
pub fn write_output(path: &str, bytes: &[u8]) -> Result<(), UserError> {
    if crate::report::outfile::is_stdout(path) {
        crate::util::out::write_bytes(bytes);
        Ok(())
    } else {
        crate::report::sink::write_atomic(std::path::Path::new(path), bytes)
    }
}

/// Output flags given before a measuring subcommand (`bwscope --json F
/// cache`) still apply; the subcommand's own win.
fn merge(top: &OutputArgs, sub: &OutputArgs) -> OutputArgs {
    let mut files = top.files.clone();
    files.retain(|(f, _)| sub.file(f).is_none());
    files.extend(sub.files.iter().cloned());
    OutputArgs {
        files,
        units: if sub.units == UnitsArg::default() {
            top.units
        } else {
            sub.units
        },
    }
}

/// The first output flag given before a subcommand that has none.
fn given(top: &OutputArgs) -> Option<&'static str> {
    match top.files.first() {
        Some((flag, _)) => Some(flag),
        None => (top.units != UnitsArg::default()).then_some("--units"),
    }
}

/// Refuse output flags placed before a subcommand that writes no run.
fn no_output(cmd: &str, top: &OutputArgs) -> Result<(), UserError> {
    match given(top) {
        Some(flag) => Err(UserError::flag(
            flag,
            format!(
                "`bwscope {cmd}` writes no run, so it takes no {flag}; see `bwscope {cmd} --help`"
            ),
        )),
        None => Ok(()),
    }
}

/// `info` and `kernels` take `--json` only.
fn json_only(
    cmd: &str,
    top: &OutputArgs,
    own: Option<String>,
) -> Result<Option<String>, UserError> {
    let mut rest = top.clone();
    rest.files.retain(|(f, _)| *f != "--json");
    no_output(cmd, &rest).map_err(|_| {
        UserError::flag(
            given(&rest).unwrap_or("--csv"),
            format!("`bwscope {cmd}` takes --json only"),
        )
    })?;
    Ok(own.or_else(|| top.file("--json").map(String::from)))
}
