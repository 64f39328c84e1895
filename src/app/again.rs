//! The survey's DRAM figures measured once more at its end (issue 29,
//! item 7). On a shared host the memory itself is contended from outside:
//! a 2-vCPU Zen 4 guest's two-thread DRAM read gave 32.1, 35.7, 34.5, 34.0,
//! 34.1 and 58.5 GB/s in six rounds a minute apart, and nothing inside the
//! guest showed why (`noise` read no foreign load). One number is then a
//! moment, not the machine. So the headline DRAM reads — one thread (the
//! cache sweep's) and all cores (the threads suite's) — are measured again
//! after everything else, the single-thread one also read from the knee
//! probe's curve at the start, and each record carries its turns
//! (`Record::repeats`): their spread, and whether they moved by more than
//! the machine's own load explains (`Repeats::contended`, a
//! `memory_contended` warning).

use crate::model::{Op, Record, Regime, Repeats, Run, Turn};
use crate::report::sink::Sink;
use crate::report::summary;
use crate::suites::cache::{self, CacheOptions};
use crate::suites::Flow;

use std::sync::Arc;

use super::runner::Recorder;
use crate::measure::probe::SpellProbes;

/// The headline DRAM read records of `run`: one thread, all cores.
fn headlines(run: &Run) -> Vec<String> {
    [
        summary::single(run, &summary::Shape::READ, &Regime::Dram),
        summary::all_cores(run, &Op::Read),
    ]
    .into_iter()
    .flatten()
    .map(|(_, r)| r.case_key())
    .collect()
}

/// Measure `r`'s case again on `host`: the cache sweep's case alone, or
/// the threads suite's survey plan (both thread counts, one pass).
fn again(r: &Record, run: &Run, probes: &Arc<SpellProbes>) -> anyhow::Result<Vec<Record>> {
    let host = &run.host;
    let suite = match r.suite() {
        crate::model::SuiteId::Cache => {
            let memory = r
                .memory
                .as_ref()
                .and_then(|m| crate::memory::PageKind::parse(&m.kind))
                .unwrap_or_default();
            let cpus = r.cpus.iter().map(u32::to_string).collect::<Vec<_>>();
            let o = CacheOptions {
                kernel: Some(r.kernel.clone()),
                sizes: r.size_bytes.map(|s| vec![s]),
                cpus: Some(cpus.join(",")),
                memory,
                ..CacheOptions::default()
            };
            Box::new(cache::plan(&o, host)?) as Box<dyn crate::suites::Suite>
        }
        id => match crate::suites::descriptor(id).quick {
            Some(quick) => quick(host)?,
            None => return Ok(Vec::new()),
        },
    };
    let fresh = Run::new(
        "survey",
        serde_json::json!({}),
        host.clone(),
        run.display_units,
    );
    let mut rec = Recorder::quiet(Sink::new(fresh, &[])?, probes.clone());
    match rec.measure(host, suite.as_ref())? {
        Flow::Done => Ok(rec.sink.run().records.clone()),
        Flow::Stopped => Ok(Vec::new()),
    }
}

/// The knee probe's read at `r`'s size, when it ran `r`'s kernel on one
/// thread (the run's first moment).
fn from_knees(r: &Record, run: &Run) -> Option<Turn> {
    let p = run.host.knees.as_ref()?;
    let read =
        p.method.contains(&r.kernel) && r.threads == 1 && r.suite() == crate::model::SuiteId::Cache;
    let point = p
        .bandwidth
        .iter()
        .find(|c| Some(c.size_bytes) == r.size_bytes)
        .filter(|_| read)?;
    Some(Turn {
        at: "knees".into(),
        gbps: point.value,
        foreign_cpus: None,
    })
}

/// One turn of `x`: its best GB/s and its foreign load.
pub(crate) fn turn(at: &str, x: &Record) -> Option<Turn> {
    x.gbps.map(|g| Turn {
        at: at.into(),
        gbps: g.best,
        foreign_cpus: x.noise.map(|n| n.foreign_cpus),
    })
}

/// Measure the headline DRAM reads once more and put every such record's
/// turns on it (with a warning where the memory was contended from
/// outside); a stop request ends it with what was done. `probes`: the
/// run's spell probes.
pub fn dram_reads(run: &mut Run, probes: &Arc<SpellProbes>) -> anyhow::Result<Flow> {
    let online = run.host.cpus.len();
    for key in headlines(run) {
        let Some(r) = run.records.iter().find(|r| r.case_key() == key) else {
            continue;
        };
        let fresh = again(r, run, probes)?;
        let Some(new) = fresh.iter().find(|n| n.case_key() == key) else {
            return Ok(Flow::Stopped);
        };
        let turns: Vec<Turn> = from_knees(r, run)
            .into_iter()
            .chain(turn("record", r))
            .chain(turn("again", new))
            .collect();
        let repeats = Repeats::of(turns, r.threads, online);
        let r = run
            .records
            .iter_mut()
            .find(|r| r.case_key() == key)
            .expect("found above");
        r.warnings.extend(repeats.warning());
        r.repeats = Some(repeats);
    }
    Ok(Flow::Done)
}
