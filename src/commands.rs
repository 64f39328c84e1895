//! One handler per subcommand: resolve options, run, report. `main` calls
//! [`dispatch`] and maps its result to an exit code.

use std::io::Write as _;

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
    match cli.command {
        None => suites::survey::run(&out, &cli.survey),
        Some(Command::Info(a)) => info(&a, &out),
        Some(Command::Kernels(a)) => list_kernels(&a, &out),
        Some(Command::Cache(a)) => cache(&a, &out),
        Some(Command::Memtype(a)) => memtype(&a, &out),
        Some(Command::Latency(a)) => suites::latency::command(&a, &out),
        Some(Command::Regs(a)) => suites::regs::command(&a, &out),
        Some(Command::Net(a)) => suites::net::dispatch(&a, &out),
        Some(Command::Plot(a)) => crate::report::commands::plot(&a),
        Some(Command::Report(a)) => crate::report::commands::report(&a),
        Some(Command::Compare(a)) => crate::report::commands::compare(&a),
        Some(Command::Completions(a)) => completions(&a),
        Some(Command::Man(a)) => man(&a),
        Some(Command::Threads(a)) => suites::threads::command(&a, &out),
        Some(Command::Numa(a)) => suites::numa::command(&a, &out),
        Some(Command::Transfer(a)) => suites::transfer::command(&a, &out),
        Some(Command::Fleet(a)) => crate::app::fleet::command(&a, &out),
    }
}

/// A completion script for `shell`, generated from the CLI definition.
fn completions(a: &crate::cli::CompletionsArgs) -> anyhow::Result<u8> {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    clap_complete::generate(a.shell, &mut cmd, "bwscope", &mut std::io::stdout());
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
            println!("wrote man pages into {dir}");
        }
        None => {
            let mut buf = Vec::new();
            clap_mangen::Man::new(cmd).render(&mut buf)?;
            std::io::stdout().lock().write_all(&buf)?;
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
        let mut o = std::io::stdout().lock();
        let _ = o.write_all(text.as_bytes());
    }
}

/// Write `bytes` to FILE or stdout for `-`.
pub fn write_output(path: &str, bytes: &[u8]) -> Result<(), UserError> {
    if path == "-" {
        let mut o = std::io::stdout().lock();
        let _ = o.write_all(bytes);
        Ok(())
    } else {
        sink::write_atomic(std::path::Path::new(path), bytes)
    }
}

fn info(a: &InfoArgs, out: &OutputArgs) -> anyhow::Result<u8> {
    let host = crate::platform::detect_host(!a.no_clock);
    if let Some(p) = &out.json {
        let mut bytes = serde_json::to_vec_pretty(&host)?;
        bytes.push(b'\n');
        write_output(p, &bytes)?;
        if p == "-" {
            return Ok(EXIT_OK);
        }
    }
    print!("{}", crate::report::views::info::render(&host));
    Ok(EXIT_OK)
}

fn list_kernels(a: &KernelsArgs, out: &OutputArgs) -> anyhow::Result<u8> {
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
    if let Some(p) = &out.json {
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
    print!("{}", table::grid(&grid));
    Ok(EXIT_OK)
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
    Ok(Sink::new(run, out.json.as_deref(), out.csv.as_deref())?
        .with_openmetrics(out.openmetrics.as_deref()))
}

fn cache(a: &CacheArgs, out: &OutputArgs) -> anyhow::Result<u8> {
    let host = crate::platform::detect_host(true);
    let plan = suites::cache::plan(a, &host)?;
    let mut sink = start_run("cache", serde_json::to_value(&plan)?, out, host.clone())?;
    let stop = crate::util::signal::install();
    let interrupted = suites::cache::run(&plan, &host, &mut sink, stop)?;
    let taken = sink.stdout_taken();
    let run = sink.finish(interrupted)?;
    if !taken {
        print!("{}", crate::report::views::render(&run));
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
        print!("{}", crate::report::views::render(&run));
    }
    if interrupted {
        eprintln!("interrupted: {} records kept", run.records.len());
        return Ok(EXIT_INTERRUPTED);
    }
    Ok(EXIT_OK)
}
