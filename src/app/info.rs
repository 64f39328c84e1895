//! Commands that describe rather than measure: `info`, `kernels`, and the
//! shell completions and man pages generated from the CLI definition.

use super::write_output;
use crate::cli::{InfoArgs, KernelsArgs};
use crate::error::{UserError, EXIT_OK};
use crate::kernels;
use crate::report::grid;

pub fn info(a: &InfoArgs) -> anyhow::Result<u8> {
    let mut host = crate::platform::detect_host(!a.no_clock);
    if let Some(w) = crate::platform::knee_store::ignored() {
        crate::report::emit("", &w);
    }
    if a.probe_knees {
        let plan = crate::suites::knees::plan(&host)?;
        let stop = crate::os::signal::install();
        match crate::suites::knees::probe_and_store(&plan, &mut host, stop)? {
            None => return Ok(crate::error::EXIT_INTERRUPTED),
            Some(warnings) => {
                for w in warnings {
                    crate::report::emit("", &w);
                }
            }
        }
    }
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

pub fn list_kernels(a: &KernelsArgs) -> anyhow::Result<u8> {
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
            op: k.op.as_str(),
            width_bits: (k.width_bits > 0).then_some(k.width_bits),
            isa: k.isa.name(),
            nontemporal: k.nontemporal,
            pattern: k.pattern.as_str(),
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
    crate::util::out::print(&grid::grid(&grid));
    Ok(EXIT_OK)
}

/// A completion script for `shell`, generated from the CLI definition.
pub fn completions(a: &crate::cli::CompletionsArgs) -> anyhow::Result<u8> {
    let mut cmd = super::command::command();
    // Rendered to memory first: clap_complete panics on a failed write.
    let mut buf = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "bwscope", &mut buf);
    crate::util::out::write_bytes(&buf);
    Ok(EXIT_OK)
}

/// The man page(s), generated from the CLI definition.
pub fn man(a: &crate::cli::ManArgs) -> anyhow::Result<u8> {
    let cmd = super::command::command();
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
