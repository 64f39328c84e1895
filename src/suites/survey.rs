//! The default job (`bwscope` with no subcommand): what this machine is and
//! how fast its caches and DRAM are, in about ten seconds, with a summary a
//! person can read at a glance.

use crate::cli::{CacheArgs, MemoryArg, OutputArgs, SampleArgs};
use crate::commands;
use crate::error::{EXIT_INTERRUPTED, EXIT_OK};
use crate::platform::Host;
use crate::report::model::{Record, Run, Status};
use crate::report::table;

pub fn run(out: &OutputArgs) -> anyhow::Result<u8> {
    let host = Host::detect(true);
    let args = CacheArgs {
        kernel: None,
        sizes: None,
        threads: None,
        cpus: None,
        quick: true,
        memory: MemoryArg::Thp,
        first_use: false,
        pattern: None,
        sample: SampleArgs {
            samples: None,
            min_sample_ms: None,
        },
    };
    let plan = super::cache::plan(&args, &host)?;
    let mut sink = commands::start_run("survey", serde_json::to_value(&plan)?, out, host.clone())?;
    let taken = sink.stdout_taken();
    if !taken {
        print!("{}", commands::render_info(&host));
        println!();
    }
    let stop = crate::util::signal::install();
    let interrupted = super::cache::run(&plan, &host, &mut sink, stop)?;
    let run = sink.finish(interrupted)?;
    if !taken {
        print!("{}", table::render(&run));
        println!("{}", summary(&run));
    }
    Ok(if interrupted {
        EXIT_INTERRUPTED
    } else {
        EXIT_OK
    })
}

fn best_in<'a>(
    run: &'a Run,
    op: &str,
    regime: &str,
    kernel_prefix: &str,
) -> Option<(f64, &'a Record)> {
    let recs = run.records.iter().filter(|r| {
        r.status == Status::Ok
            && r.op == op
            && r.kernel.starts_with(kernel_prefix)
            && !r.nontemporal.unwrap_or(false)
            && r.regime.as_deref() == Some(regime)
    });
    if regime == "DRAM" {
        // The largest size: furthest from the last cache's edge.
        recs.max_by_key(|r| r.size_bytes)
            .and_then(|r| r.gbps.map(|g| (g.best, r)))
    } else {
        recs.filter_map(|r| r.gbps.map(|g| (g.best, r)))
            .max_by(|a, b| a.0.total_cmp(&b.0))
    }
}

/// "L1 read 203 GB/s = 98 % of this core's limit · L2 … · DRAM read …".
pub fn summary(run: &Run) -> String {
    let mut parts = Vec::new();
    for regime in ["L1", "L2", "L3", "DRAM"] {
        if let Some((g, r)) = best_in(run, "read", regime, "seq_read") {
            let limit = r
                .width_bits
                .and_then(|w| run.host.ceiling("read", w))
                .map(|c| format!(" = {:.0} % of this core's limit", g / c * 100.0))
                .filter(|_| regime == "L1")
                .unwrap_or_default();
            parts.push(format!("{} read {:.1} GB/s{}", regime, g, limit));
        }
    }
    if let Some((g, _)) = best_in(run, "write", "DRAM", "seq_write") {
        parts.push(format!("DRAM write {:.1} GB/s", g));
    }
    let nt = run
        .records
        .iter()
        .filter(|r| r.status == Status::Ok && r.nontemporal == Some(true) && r.op == "write")
        .max_by_key(|r| r.size_bytes)
        .and_then(|r| r.gbps.map(|g| g.best));
    if let Some(g) = nt {
        parts.push(format!("DRAM NT write {:.1} GB/s", g));
    }
    if let Some((g, _)) = best_in(run, "copy", "DRAM", "libc_memcpy") {
        parts.push(format!("DRAM memcpy {:.1} GB/s", g));
    }
    format!("summary: {}", parts.join(" · "))
}
