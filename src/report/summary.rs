//! The ten-second reading of a run: one line of headline figures and a few
//! warnings, shared by the survey, the HTML report and Markdown.
//!
//! Every figure is read from records; a suite that did not run simply adds
//! nothing. Headlines use `best` (the estimate of what the path can do;
//! medians swing 2× on shared machines).

use super::metric;
use crate::model::detail::{LatencyDetail, View};
use crate::model::{Curve, Nullable, Op, Pattern, Record, Regime, Run, Status, SuiteId, Warning};

fn ok(run: &Run) -> impl Iterator<Item = &Record> {
    run.records.iter().filter(|r| r.status == Status::Ok)
}

/// How a kernel's access width was chosen, as its record shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Width {
    /// Accesses of a declared width wider than a byte: the loops of word
    /// or vector instructions (SVE's at the vector length, in
    /// `sve_vector_bits`). Not `rep movsb`/`rep stosb` (they declare 8
    /// bits) nor code that picks its own width. A record does not say how
    /// its kernel is written, so the word-wide string instructions
    /// (`lodsq`, `rep stosq`, …), which run only when named with
    /// `--kernel`, are of this width too.
    Loop,
    /// Code that picks its width at run time: no `width_bits` (libc's
    /// `memcpy`).
    Chosen,
}

impl Width {
    /// Does `r`'s kernel have a width of this kind?
    pub fn of(self, r: &Record) -> bool {
        match self {
            Width::Loop => r.width_bits.is_some_and(|w| w > 8) || r.sve_vector_bits.is_some(),
            Width::Chosen => r.width_bits.is_none() && r.sve_vector_bits.is_none(),
        }
    }
}

/// The shape of the records a headline figure is read from: what the
/// kernel did, in which order, with which stores, at which kind of width.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    pub op: Op,
    pub pattern: Pattern,
    pub nontemporal: bool,
    pub width: Width,
}

impl Shape {
    /// A sequential loop of `op` with ordinary (cached) stores.
    pub const fn seq_loop(op: Op) -> Shape {
        Shape {
            op,
            pattern: Pattern::Seq,
            nontemporal: false,
            width: Width::Loop,
        }
    }

    /// The sequential read loops (`seq_read_*`).
    pub const READ: Shape = Shape::seq_loop(Op::Read);
    /// The sequential write loops with cached stores (`seq_write_*`).
    pub const WRITE: Shape = Shape::seq_loop(Op::Write);
    /// The sequential write loops with non-temporal stores.
    pub const NT_WRITE: Shape = Shape {
        op: Op::Write,
        pattern: Pattern::Seq,
        nontemporal: true,
        width: Width::Loop,
    };
    /// libc's `memcpy`: a sequential copy whose width libc picks.
    pub const MEMCPY: Shape = Shape {
        op: Op::Copy,
        pattern: Pattern::Seq,
        nontemporal: false,
        width: Width::Chosen,
    };

    /// Is `r` of this shape?
    pub fn of(&self, r: &Record) -> bool {
        r.op == self.op
            && r.pattern.as_ref() == Some(&self.pattern)
            && r.nontemporal.unwrap_or(false) == self.nontemporal
            && self.width.of(r)
    }
}

/// Best single-thread bandwidth of `shape` in `regime`, from sizes well
/// inside it (`Host::well_inside`, by the measured cache sizes where they
/// differ from CPUID's). DRAM takes the largest size (furthest from the
/// last cache's edge), caches the best.
pub fn single<'a>(run: &'a Run, shape: &Shape, regime: &Regime) -> Option<(f64, &'a Record)> {
    let recs: Vec<&Record> = ok(run)
        .filter(|r| {
            r.suite() == SuiteId::Cache
                && r.threads == 1
                && shape.of(r)
                && r.regime.as_ref() == Some(regime)
                && r.size_bytes
                    .is_some_and(|s| run.host.well_inside(s, regime, 2, Curve::Bandwidth))
        })
        .collect();
    let recs = recs.into_iter();
    if *regime == Regime::Dram {
        let top = recs.clone().filter_map(|r| r.size_bytes).max()?;
        recs.filter(|r| r.size_bytes == Some(top))
            .filter_map(|r| r.gbps.map(|g| (g.best, r)))
            .max_by(|a, b| a.0.total_cmp(&b.0))
    } else {
        recs.filter_map(|r| r.gbps.map(|g| (g.best, r)))
            .max_by(|a, b| a.0.total_cmp(&b.0))
    }
}

/// The fastest single-thread DRAM copy and who did it: every sequential
/// copy the cache suite measured (cached and non-temporal kernels,
/// `rep movsb`, libc's memcpy) at the largest size well inside DRAM, so
/// all compete on the same working set. `libc` is libc's memcpy at that
/// size when another kernel won (the figure a user would otherwise get).
pub struct DramCopy<'a> {
    pub gbps: f64,
    pub winner: &'a Record,
    pub libc: Option<f64>,
    /// The best of bwscope's own kernels when libc's memcpy won.
    pub runner_up: Option<(f64, &'a Record)>,
}

pub fn dram_copy(run: &Run) -> Option<DramCopy<'_>> {
    let recs: Vec<(f64, &Record)> = ok(run)
        .filter(|r| {
            r.suite() == SuiteId::Cache
                && r.threads == 1
                && r.op == Op::Copy
                && r.pattern.as_ref().is_none_or(|p| *p == Pattern::Seq)
                && r.regime == Some(Regime::Dram)
                && r.size_bytes
                    .is_some_and(|s| run.host.well_inside(s, &Regime::Dram, 2, Curve::Bandwidth))
        })
        .filter_map(|r| r.gbps.map(|g| (g.best, r)))
        .collect();
    let top = recs.iter().filter_map(|r| r.1.size_bytes).max()?;
    let is_libc = |r: &Record| Shape::MEMCPY.of(r);
    let best = |libc: Option<bool>| {
        recs.iter()
            .filter(|r| r.1.size_bytes == Some(top))
            .filter(|r| libc.is_none_or(|l| is_libc(r.1) == l))
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .copied()
    };
    let (gbps, winner) = best(None)?;
    let (libc, own) = (best(Some(true)), best(Some(false)));
    Some(DramCopy {
        gbps,
        winner,
        libc: libc.filter(|_| !is_libc(winner)).map(|l| l.0),
        runner_up: own.filter(|_| is_libc(winner)),
    })
}

/// Best all-cores DRAM figure of `op` from any suite that ran more than
/// one thread at a DRAM-sized set.
pub fn all_cores<'a>(run: &'a Run, op: &Op) -> Option<(f64, &'a Record)> {
    ok(run)
        .filter(|r| r.threads > 1 && r.op == *op && r.regime == Some(Regime::Dram))
        .filter(|r| !r.nontemporal.unwrap_or(false))
        .filter_map(|r| r.gbps.map(|g| (g.best, r)))
        .max_by(|a, b| a.0.total_cmp(&b.0))
}

/// " = 62 % of its limit (L2→L1 fill)" for a record whose limit is known.
fn share(r: &Record) -> Option<String> {
    let p = r.percent_of_limit?;
    let b = r.bound_by?;
    Some(format!(" = {p:.0} % of its limit ({})", b.label()))
}

/// DRAM latency: the chase randomised over the whole buffer at the
/// largest size measured, when that size is DRAM's (the window and
/// stride views let the prefetchers help and are not load-to-use
/// latency). A DRAM figure needs a size 4× past the last cache (at 2× a
/// random chase still hits it: 125 instead of 170 ns on a guest with a
/// 10 MiB L3); a sweep that stopped short of it has no DRAM latency,
/// never one named after a level it did not reach.
pub fn dram_latency(run: &Run) -> Option<(f64, &Record)> {
    let recs: Vec<&Record> = ok(run)
        .filter_map(|r| r.detail.get::<LatencyDetail>().map(|d| (r, d)))
        .filter(|(_, d)| d.case_view.unwrap_or(View::Random) == View::Random)
        .map(|(r, _)| r)
        .collect();
    let top = recs.iter().filter_map(|r| r.size_bytes).max()?;
    recs.iter()
        .filter(|r| r.size_bytes == Some(top))
        .filter(|r| {
            r.regime == Some(Regime::Dram)
                && run.host.well_inside(top, &Regime::Dram, 4, Curve::Latency)
        })
        .filter_map(|r| metric::latency(r).map(|m| (m.best, *r)))
        .min_by(|a, b| a.0.total_cmp(&b.0))
}

/// The L1 ceiling a single-thread record is judged by, GB/s: the one the
/// record carries (its kernel's bound at the clock read next to it), else
/// the row's bound at the run's clock; None when the core or the clock is
/// unknown, never a guess.
fn l1_ceiling(run: &Run, r: &Record) -> Option<f64> {
    let b = r.detail.bandwidth().copied().unwrap_or_default();
    match b.ceiling_gbps {
        Nullable::Value(c) => return Some(c),
        Nullable::Null => return None,
        // Written before records carried their ceiling.
        Nullable::Absent => {}
    }
    let hz = b.clock_hz.or(run.host.clock_hz)?;
    run.host.ceiling_at(r.op.as_str(), Some(r.width_bits?), hz)
}

/// The headline figures, e.g. "L1 read 203 GB/s = 98 % of this core's
/// limit", "DRAM read 22.5 GB/s per core, 33 GB/s all cores".
pub fn headline(run: &Run) -> Vec<String> {
    let mut parts = Vec::new();
    for regime in &Regime::ALL {
        let Some((g, r)) = single(run, &Shape::READ, regime) else {
            continue;
        };
        let mut s = format!("{regime} read {}", gbps(g));
        match regime {
            Regime::L1 => {
                match r.limit_gbps.or_else(|| l1_ceiling(run, r)) {
                    Some(c) => {
                        s.push_str(&format!(" = {:.0} % of this core's limit", g / c * 100.0))
                    }
                    None => s.push_str(" (this core's limit is unknown)"),
                }
                s.push_str(&shared_core(r));
            }
            Regime::Dram => {
                s.push_str(" per core");
                if let (Some(p), Some(l)) = (r.percent_of_limit, r.limit_gbps) {
                    s.push_str(&format!(
                        " = {p:.0} % of the {} peak (one core rarely reaches it)",
                        gbps(l)
                    ));
                }
                s.push_str(&moments(r));
                if let Some((a, t)) = all_cores(run, &Op::Read) {
                    s.push_str(&format!(", {} with {} threads", gbps(a), t.threads));
                    if let Some(p) = t.percent_of_limit {
                        s.push_str(&format!(" = {p:.0} %"));
                    }
                    s.push_str(&moments(t));
                }
                if [Some(r), all_cores(run, &Op::Read).map(|a| a.1)]
                    .iter()
                    .flatten()
                    .any(|r| {
                        r.repeats.as_ref().is_some_and(|x| x.contended)
                            || r.warnings
                                .iter()
                                .any(|w| matches!(w, Warning::MemoryContended { .. }))
                    })
                {
                    s.push_str(
                        "; the memory was contended from outside (other guests on the host): these are this moment's figures",
                    );
                }
            }
            _ => {
                s.push_str(&share(r).unwrap_or_default());
                s.push_str(&shared_core(r));
            }
        }
        parts.push(s);
    }
    if let Some((g, _)) = single(run, &Shape::WRITE, &Regime::Dram) {
        parts.push(format!("DRAM write {}", gbps(g)));
    }
    if let Some((g, _)) = single(run, &Shape::NT_WRITE, &Regime::Dram) {
        parts.push(format!("DRAM non-temporal write {}", gbps(g)));
    }
    if let Some(c) = dram_copy(run) {
        let mut s = format!("DRAM copy {} ({}", gbps(c.gbps), c.winner.kernel);
        if let Some(l) = c.libc {
            s.push_str(&format!("; DRAM memcpy {} by libc", gbps(l)));
        }
        if let Some((g, r)) = c.runner_up {
            s.push_str(&format!("; best bwscope kernel {} {}", r.kernel, gbps(g)));
        }
        s.push(')');
        parts.push(s);
    }
    if let Some((ns, _)) = dram_latency(run) {
        parts.push(format!("DRAM latency {ns:.0} ns"));
    }
    parts.extend(core_to_core(run));
    parts
}

/// "core to core (CAS one-way) l3 68 ns, socket d32 140 ns": each class's
/// median of its pairs, nearest first, and which cpus answered as one
/// core where the system calls them two.
fn core_to_core(run: &Run) -> Option<String> {
    use crate::model::detail::{CoresDetail, CoresView, Exchange};
    let classes: Vec<(&Record, String)> = ok(run)
        .filter_map(|r| {
            let d = r.detail.get::<CoresDetail>()?;
            (d.case_view == Some(CoresView::Class) && d.case_exchange == Some(Exchange::Cas))
                .then_some(())?;
            let ns = d.one_way_ns.value()?.median;
            Some((r, format!("{} {ns:.0} ns", d.case_class.as_deref()?)))
        })
        .collect();
    if classes.is_empty() {
        return None;
    }
    let mut s = format!(
        "core to core (CAS one-way) {}",
        classes
            .iter()
            .map(|c| c.1.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let shared: Vec<String> = classes
        .iter()
        .flat_map(|(r, _)| &r.warnings)
        .filter_map(|w| match w {
            Warning::SharesACore { pairs, .. } => Some(
                pairs
                    .iter()
                    .map(|[a, b]| format!("{a}-{b}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
            _ => None,
        })
        .collect();
    if !shared.is_empty() {
        s.push_str(&format!("; cpus {} answer as one core", shared.join(", ")));
    }
    Some(s)
}

/// What a record measured while its core was shared, where the
/// core-share probe found that in enough of its samples: "; 104 GB/s
/// while another tenant shared this core (71 % of the samples)"; the
/// headline figure beside it is the best sample (a clean one where there
/// were any), and says so: "when this core was not shared".
fn shared_core(r: &Record) -> String {
    let Some(Warning::CoreShared {
        fraction, cause, ..
    }) = r
        .warnings
        .iter()
        .find(|w| matches!(w, Warning::CoreShared { .. }))
    else {
        return String::new();
    };
    let Some(sp) = &r.spells else {
        return String::new();
    };
    let shared: Vec<f64> = r
        .samples
        .iter()
        .filter(|s| {
            s.probe.as_ref().is_some_and(|p| {
                crate::stats::spells::core_share(p, &sp.baseline)
                    .is_some_and(|x| x < crate::model::limits::CORE_SHARED)
            })
        })
        .filter(|s| s.seconds > 0.0)
        .map(|s| s.bytes as f64 / s.seconds / 1e9)
        .collect();
    let best_shared = shared.iter().copied().fold(0.0, f64::max);
    let who = match cause {
        crate::model::ShareCause::Invisible => "another tenant shared this core",
        crate::model::ShareCause::GuestLoad => "this machine's own processes shared this core",
        crate::model::ShareCause::Steal => "the hypervisor took this core's time",
    };
    let when = match sp.clean {
        Some(_) => " when this core was not shared",
        None => " (no sample had the core to itself: the machine's figure was not seen)",
    };
    format!(
        "{when}; {} while {who} ({:.0} % of the samples)",
        gbps(best_shared),
        fraction * 100.0
    )
}

/// " (32.1–58.5 GB/s over 3 measurements)" for a record measured at
/// several moments of the run; empty for one measured once.
fn moments(r: &Record) -> String {
    let Some(rep) = r.repeats.as_ref().filter(|x| x.turns.len() > 1) else {
        return String::new();
    };
    let (lo, hi) = rep.range();
    format!(
        " ({}–{} over {} measurements)",
        gbps(lo).trim_end_matches(" GB/s"),
        gbps(hi),
        rep.turns.len()
    )
}

fn gbps(g: f64) -> String {
    if g >= 100.0 {
        format!("{g:.0} GB/s")
    } else {
        format!("{g:.1} GB/s")
    }
}

/// The warnings worth a line in a summary: run-level ones, then one line
/// per kind of record warning with its count.
pub fn warning_lines(run: &Run) -> Vec<String> {
    let mut out: Vec<String> = run
        .warnings
        .iter()
        .map(|w| format!("{} ({})", w, w.hint_for(&run.command)))
        .collect();
    out.extend(super::run_state(run));
    let measured = ok(run).count();
    let count = |f: &dyn Fn(&Warning) -> bool| ok(run).filter(|r| r.warnings.iter().any(f)).count();
    let noisy_load = count(&|w| {
        matches!(
            w,
            Warning::ForeignLoad { .. } | Warning::Steal { .. } | Warning::Descheduled { .. }
        )
    });
    let spread = count(&|w| matches!(w, Warning::HighCv { .. } | Warning::BestMedianSpread { .. }));
    let above = count(&|w| matches!(w, Warning::AboveCeiling { .. }));
    let shared = count(&|w| matches!(w, Warning::CoreShared { .. }));
    let loaded = count(&|w| {
        matches!(
            w,
            Warning::MemoryContended {
                fraction: Some(_),
                ..
            }
        )
    });
    if shared > 0 {
        out.push(format!(
            "core shared: in {shared} of {measured} measurements the core-share probe found this core giving about half its load rate per cycle at its clock (a busy SMT sibling, usually another tenant's); `spells.clean` in the JSON has what the core does alone"
        ));
    }
    if loaded > 0 {
        out.push(format!(
            "memory loaded from outside: in {loaded} of {measured} measurements the idle-latency probe read more than 1.5x this run's quiet reading; their L3 and DRAM figures are this moment's, `spells.clean` the quiet spells'"
        ));
    }
    let as_dram = count(&|w| matches!(w, Warning::ReadsAsDram { .. }));
    if as_dram > 0 {
        out.push(format!(
            "last cache held by others: {as_dram} of {measured} measurements at sizes well inside the last cache read like DRAM (the host's other tenants had the cache); their tables say \"(as DRAM)\" beside the level"
        ));
    }
    if noisy_load > 0 {
        out.push(format!(
            "noisy machine: other processes or the hypervisor were busy during {noisy_load} of {measured} measurements; compare `best`, and re-run on a quiet machine"
        ));
    }
    if spread > 0 {
        out.push(format!(
            "{spread} of {measured} measurements have samples spread more than 5 % (CV) or best > 1.1 × median; trust `best`"
        ));
    }
    if above > 0 {
        out.push(format!(
            "{above} results are above this core's computed limit: the clock estimate or a kernel's byte count is wrong; please report it with the JSON"
        ));
    }
    let skipped = run
        .records
        .iter()
        .filter(|r| r.status == Status::Skipped)
        .count();
    let errors = run
        .records
        .iter()
        .filter(|r| r.status == Status::Error)
        .count();
    if errors > 0 {
        out.push(format!("{errors} cases failed (see their `reason`)"));
    }
    if skipped > 0 {
        out.push(format!(
            "{skipped} cases were skipped on this machine (see their `reason`)"
        ));
    }
    out
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod limit_tests;
