//! One handler per subcommand: resolve options, run, report. `main` calls
//! [`dispatch`] and maps its result to an exit code.

use crate::cli::{
    CacheArgs, Cli, Command, InfoArgs, KernelsArgs, MemtypeArgs, OutputArgs, UnitsArg,
};
use crate::error::{UserError, EXIT_INTERRUPTED, EXIT_OK};
use crate::kernels;
use crate::model::Host;
use crate::model::{Run, Units};
use crate::report::sink::{self, Sink};
use crate::report::table;
use crate::suites;

pub fn dispatch(cli: Cli) -> anyhow::Result<u8> {
    let top = cli.output.clone();
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
    match cli.command {
        None => suites::survey::run(&top, &cli.survey),
        Some(Command::Info(mut a)) => {
            a.json = json_only("info", &top, a.json)?;
            info(&a)
        }
        Some(Command::Kernels(mut a)) => {
            a.json = json_only("kernels", &top, a.json)?;
            list_kernels(&a)
        }
        Some(Command::Cache(a)) => cache(&a, &merge(&top, &a.output)),
        Some(Command::Memtype(a)) => memtype(&a, &merge(&top, &a.output)),
        Some(Command::Latency(a)) => suites::latency::command(&a, &merge(&top, &a.output)),
        Some(Command::Regs(a)) => suites::regs::command(&a, &merge(&top, &a.output)),
        Some(Command::Net(a)) => {
            let out = match &a.command {
                crate::cli::NetCommand::Run(r) => merge(&top, &r.output),
                crate::cli::NetCommand::Serve(_) => no_output("net serve", &top)?,
            };
            suites::net::dispatch(&a, &out)
        }
        Some(Command::Plot(a)) => {
            no_output("plot", &top)?;
            crate::report::commands::plot(&a)
        }
        Some(Command::Report(a)) => {
            no_output("report", &top)?;
            crate::report::commands::report(&a)
        }
        Some(Command::Compare(a)) => {
            no_output("compare", &top)?;
            crate::report::commands::compare(&a)
        }
        Some(Command::Completions(a)) => {
            no_output("completions", &top)?;
            completions(&a)
        }
        Some(Command::Man(a)) => {
            no_output("man", &top)?;
            man(&a)
        }
        Some(Command::Threads(a)) => suites::threads::command(&a, &merge(&top, &a.output)),
        Some(Command::Numa(a)) => suites::numa::command(&a, &merge(&top, &a.output)),
        Some(Command::Transfer(a)) => suites::transfer::command(&a, &merge(&top, &a.output)),
    }
}

/// Output flags given before a measuring subcommand (`bwscope --json F
/// cache`) still apply; the subcommand's own win.
fn merge(top: &OutputArgs, sub: &OutputArgs) -> OutputArgs {
    OutputArgs {
        json: sub.json.clone().or_else(|| top.json.clone()),
        csv: sub.csv.clone().or_else(|| top.csv.clone()),
        units: if sub.units == UnitsArg::default() {
            top.units
        } else {
            sub.units
        },
    }
}

/// The first output flag given before a subcommand that has none.
fn given(top: &OutputArgs) -> Option<&'static str> {
    if top.json.is_some() {
        Some("--json")
    } else if top.csv.is_some() {
        Some("--csv")
    } else if top.units != UnitsArg::default() {
        Some("--units")
    } else {
        None
    }
}

/// Refuse output flags placed before a subcommand that writes no run.
fn no_output(cmd: &str, top: &OutputArgs) -> Result<OutputArgs, UserError> {
    match given(top) {
        Some(flag) => Err(UserError::flag(
            flag,
            format!(
                "`bwscope {cmd}` writes no run, so it takes no {flag}; see `bwscope {cmd} --help`"
            ),
        )),
        None => Ok(OutputArgs::default()),
    }
}

/// `info` and `kernels` take `--json` only.
fn json_only(
    cmd: &str,
    top: &OutputArgs,
    own: Option<String>,
) -> Result<Option<String>, UserError> {
    let rest = OutputArgs {
        json: None,
        ..top.clone()
    };
    no_output(cmd, &rest).map_err(|_| {
        UserError::flag(
            given(&rest).unwrap_or("--csv"),
            format!("`bwscope {cmd}` takes --json only"),
        )
    })?;
    Ok(own.or_else(|| top.json.clone()))
}

/// A completion script for `shell`, generated from the CLI definition.
fn completions(a: &crate::cli::CompletionsArgs) -> anyhow::Result<u8> {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    // Rendered to memory first: clap_complete panics on a failed write.
    let mut buf = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "bwscope", &mut buf);
    crate::util::out::write_bytes(&buf);
    Ok(EXIT_OK)
}

/// The man page(s), generated from the CLI definition.
fn man(a: &crate::cli::ManArgs) -> anyhow::Result<u8> {
    use clap::CommandFactory;
    let cmd = Cli::command();
    match &a.dir {
        Some(dir) => {
            let unwritable = |e: std::io::Error| UserError::Unwritable {
                path: dir.clone(),
                detail: e.to_string(),
            };
            std::fs::create_dir_all(dir).map_err(unwritable)?;
            clap_mangen::generate_to(cmd, dir).map_err(unwritable)?;
            crate::util::out::print(&format!("wrote man pages into {dir}\n"));
        }
        None => {
            let mut buf = Vec::new();
            clap_mangen::Man::new(cmd).render(&mut buf)?;
            crate::util::out::write_bytes(&buf);
        }
    }
    Ok(EXIT_OK)
}

pub fn units(u: UnitsArg) -> Units {
    match u {
        UnitsArg::Gb => Units::GB,
        UnitsArg::Gib => Units::GiB,
    }
}

/// Print `text` to stdout unless JSON/CSV took stdout.
pub fn print_unless_taken(sink: &Sink, text: &str) {
    if !sink.stdout_taken() {
        crate::util::out::print(text);
    }
}

/// Write `bytes` to FILE or stdout for `-`.
pub fn write_output(path: &str, bytes: &[u8]) -> Result<(), UserError> {
    if path == "-" {
        crate::util::out::write_bytes(bytes);
        Ok(())
    } else {
        sink::write_atomic(std::path::Path::new(path), bytes)
    }
}

fn info(a: &InfoArgs) -> anyhow::Result<u8> {
    let host = crate::platform::detect_host(!a.no_clock);
    if let Some(p) = &a.json {
        let mut bytes = serde_json::to_vec_pretty(&host)?;
        bytes.push(b'\n');
        write_output(p, &bytes)?;
        if p == "-" {
            return Ok(EXIT_OK);
        }
    }
    crate::util::out::print(&crate::report::views::info::render(&host));
    Ok(EXIT_OK)
}

fn list_kernels(a: &KernelsArgs) -> anyhow::Result<u8> {
    let f = crate::platform::cpu::detect_features();
    let selected: Vec<&kernels::Kernel> = match &a.filter {
        Some(spec) => kernels::select(spec).map_err(|m| UserError::flag("PREFIX", m))?,
        None => kernels::registry().iter().collect(),
    };
    #[derive(serde::Serialize)]
    struct Row<'a> {
        name: &'a str,
        op: &'a str,
        width_bits: Option<u32>,
        isa: &'a str,
        nontemporal: bool,
        pattern: &'a str,
        streams_read: u32,
        streams_written: u32,
        granule_bytes: usize,
        description: &'a str,
        runs_here: bool,
        skip_reason: Option<String>,
    }
    let rows: Vec<Row> = selected
        .iter()
        .map(|k| Row {
            name: k.name,
            op: k.op.name(),
            width_bits: (k.width_bits > 0).then_some(k.width_bits),
            isa: k.isa.name(),
            nontemporal: k.nontemporal,
            pattern: k.pattern.name(),
            streams_read: k.streams_read(),
            streams_written: k.streams_written(),
            granule_bytes: k.granule,
            description: k.description,
            runs_here: k.supported(&f),
            skip_reason: k.skip_reason(&f),
        })
        .collect();
    if let Some(p) = &a.json {
        let mut bytes = serde_json::to_vec_pretty(&rows)?;
        bytes.push(b'\n');
        write_output(p, &bytes)?;
        if p == "-" {
            return Ok(EXIT_OK);
        }
    }
    let mut grid = vec![vec![
        "kernel".to_string(),
        "op".into(),
        "width".into(),
        "isa".into(),
        "stores".into(),
        "bytes/pass (ws = N)".into(),
        "here".into(),
    ]];
    for r in &rows {
        let bytes = match (r.streams_read, r.streams_written) {
            _ if r.pattern == "reg" => "none (registers; `bwscope regs`)",
            _ if r.pattern == "chase" => "8 B per 64 B line (`bwscope latency`)",
            (1, 0) => "read N",
            (0, 1) => "write N",
            _ => "read N/2 + write N/2",
        };
        grid.push(vec![
            r.name.into(),
            r.op.into(),
            r.width_bits.map_or("-".into(), |w| w.to_string()),
            r.isa.into(),
            if r.nontemporal {
                "nt".into()
            } else {
                "cached".into()
            },
            bytes.into(),
            r.skip_reason
                .as_ref()
                .map_or("yes".into(), |s| format!("skipped: {}", s)),
        ]);
    }
    crate::util::out::print(&table::grid(&grid));
    Ok(EXIT_OK)
}

/// Say before it starts when a plan will take long (stderr).
pub fn announce(e: &suites::estimate::Estimate) {
    if let Some(line) = e.notice() {
        eprintln!("{line}");
    }
}

/// Start a run with host facts and run-level warnings, and a sink.
pub fn start_run(
    command: &str,
    options: serde_json::Value,
    out: &OutputArgs,
    host: Host,
) -> Result<Sink, UserError> {
    let mut run = Run::new(command, options, host, units(out.units));
    run.warnings = suites::host_warnings(&run.host);
    Sink::new(run, out.json.as_deref(), out.csv.as_deref())
}

fn cache(a: &CacheArgs, out: &OutputArgs) -> anyhow::Result<u8> {
    let host = crate::platform::detect_host(true);
    let plan = suites::cache::plan(a, &host)?;
    announce(&suites::estimate::cache(&plan));
    let mut sink = start_run("cache", serde_json::to_value(&plan)?, out, host.clone())?;
    let stop = crate::util::signal::install();
    let interrupted = suites::cache::run(&plan, &host, &mut sink, stop)?;
    let taken = sink.stdout_taken();
    let run = sink.finish(interrupted)?;
    if !taken {
        crate::util::out::print(&crate::report::views::render(&run));
    }
    if interrupted {
        eprintln!("interrupted: {} records kept", run.records.len());
        return Ok(EXIT_INTERRUPTED);
    }
    Ok(EXIT_OK)
}

fn memtype(a: &MemtypeArgs, out: &OutputArgs) -> anyhow::Result<u8> {
    let host = crate::platform::detect_host(true);
    let plan = suites::memtype::plan(a, &host)?;
    let mut sink = start_run("memtype", serde_json::to_value(&plan)?, out, host.clone())?;
    let stop = crate::util::signal::install();
    let interrupted = suites::memtype::run(&plan, &host, &mut sink, stop)?;
    let taken = sink.stdout_taken();
    let run = sink.finish(interrupted)?;
    if !taken {
        crate::util::out::print(&crate::report::views::render(&run));
    }
    if interrupted {
        eprintln!("interrupted: {} records kept", run.records.len());
        return Ok(EXIT_INTERRUPTED);
    }
    Ok(EXIT_OK)
}
