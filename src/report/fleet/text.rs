//! The fleet in text: the terminal summary, the per-node verdict file
//! (`host OK` / `host FAIL metric value expected`, NHC-style, one line per
//! node) and the drain list (one host per line, for the operator;
//! bwscope never drains anything itself).

use std::fmt::Write as _;

use super::metrics;
use crate::model::fleet::{Check, FleetRun, LinkVerdict, NodeVerdict, TierGap, Verdicts};
use crate::report::grid::grid;
use crate::util::units::format_bytes;

/// A figure with three significant-ish digits: 192, 66.2, 0.376.
pub fn num(x: f64) -> String {
    if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else if x.abs() >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.3}")
    }
}

fn higher_is_better(c: &Check) -> bool {
    c.unit != "ns"
}

/// A figure measured in several turns, in words: `slow in 1 of 4 turns,
/// not repeated: 192, 221, 219, 220 GB/s` (`transient`), or `slow in
/// every one of 4 turns: …`; None where it was measured once.
pub fn turns_note(c: &Check) -> Option<String> {
    if c.turns.len() < 2 {
        return None;
    }
    let list: Vec<String> = c.turns.iter().map(|t| num(t.value)).collect();
    let n = c.turns.len();
    let how = if c.transient {
        let slow = c.turns.iter().filter(|t| t.bad).count();
        format!("slow in {slow} of {n} turns, not repeated")
    } else if c.bad() {
        format!("slow in every one of {n} turns")
    } else {
        format!("measured in {n} turns")
    };
    Some(format!("{how}: {} {}", list.join(", "), c.unit))
}

/// The figures of `n` that dipped in a turn and not in the others, one
/// line each: `l1_read_gbps slow in 1 of 4 turns, not repeated: …`.
pub fn transient(n: &NodeVerdict) -> Vec<String> {
    n.checks
        .iter()
        .filter(|c| c.transient)
        .filter_map(|c| Some(format!("{} {}", c.metric, turns_note(c)?)))
        .collect()
}

/// A tier gap in words: `no hbm tier: 4 of 5 nodes have one (64 GiB)`,
/// `hbm tier 32 GiB: 4 of 5 nodes have one, 64 GiB at the median`.
pub fn tier_gap(g: &TierGap) -> String {
    let kind = g.kind.name();
    let of = format!("{} of {} nodes have one", g.nodes_with, g.nodes);
    match (g.capacity_bytes, g.fleet_bytes) {
        (Some(0), Some(m)) => format!("no {kind} tier: {of} ({})", format_bytes(m)),
        (Some(0), None) => format!("no {kind} tier: {of}"),
        (c, m) => format!(
            "{kind} tier {}: {of}, {} at the median",
            c.map_or("of unknown size".into(), format_bytes),
            m.map_or("-".into(), format_bytes)
        ),
    }
}

/// `dram_read_gbps 4.1 >=9.3` (the expected side is `>=` for rates, `<=`
/// for latencies).
fn failure(c: &Check) -> String {
    let mut s = format!("{} {}", c.metric, num(c.value));
    if let Some(e) = c.expected {
        s.push_str(&format!(
            " {}{}",
            if higher_is_better(c) { ">=" } else { "<=" },
            num(e)
        ));
    }
    s
}

fn failing(n: &NodeVerdict) -> Vec<&Check> {
    let mut v: Vec<&Check> = n.checks.iter().filter(|c| c.fails()).collect();
    v.sort_by(|a, b| {
        b.robust_z
            .unwrap_or(0.0)
            .total_cmp(&a.robust_z.unwrap_or(0.0))
    });
    v
}

/// Why a node fails, in words.
pub fn why(n: &NodeVerdict) -> String {
    let mut parts: Vec<String> = failing(n)
        .iter()
        .map(|c| {
            let mut s = format!("{} {} {}", c.metric, num(c.value), c.unit);
            let mut how = Vec::new();
            if let (true, Some(p)) = (c.outlier, c.pct_worse) {
                how.push(format!(
                    "{p:.0} % worse than the fleet median, robust z {:.1}",
                    c.robust_z.unwrap_or(0.0)
                ));
            }
            if let (true, Some(b)) = (c.below_reference, c.reference) {
                how.push(format!("class bound {}", num(b)));
            }
            if !how.is_empty() {
                s.push_str(&format!(" ({})", how.join("; ")));
            }
            s
        })
        .collect();
    parts.extend(n.tier_gaps.iter().map(tier_gap));
    if let Some(r) = &n.reason {
        parts.push(r.clone());
    }
    parts.join("; ")
}

pub fn link_line(f: &FleetRun, l: &LinkVerdict) -> String {
    let what = match (l.gbps, &l.reason) {
        (Some(g), _) => format!(
            "{} GB/s, {:.0} % below the median of {} GB/s",
            num(g),
            l.pct_worse.unwrap_or(0.0),
            l.median_gbps.map_or("-".into(), num)
        ),
        (None, r) => format!("not measured: {}", r.as_deref().unwrap_or("?")),
    };
    format!(
        "{} → {} ({} {}): {}",
        f.label(l.src),
        f.label(l.dst),
        l.transport,
        format_bytes(l.size_bytes),
        what
    )
}

/// `verdicts.txt`: one line per node, then the slow paths as comments.
/// Every line goes through [`push_line`], so no host name, reason or
/// label (all of which other machines supply) can start a line of its own.
pub fn verdict_file(f: &FleetRun) -> String {
    let Some(v) = &f.verdicts else {
        return "# no verdict: the fleet run did not finish\n".into();
    };
    let mut s = String::new();
    push_line(
        &mut s,
        &format!(
            "# bwscope fleet verdicts: an outlier is >= {} robust z and >= {} % worse than the fleet median{}",
            v.robust_z,
            v.pct_worse,
            v.reference.as_ref().map_or(String::new(), |r| format!("; class bounds from {r}"))
        ),
    );
    if let Some(line) = noise_line(v) {
        push_line(&mut s, &format!("# {line}"));
    }
    for n in &v.nodes {
        let fails = failing(n);
        let verdict = if n.ok {
            "OK".to_string()
        } else if !fails.is_empty() || !n.tier_gaps.is_empty() {
            let mut list: Vec<String> = fails.iter().map(|c| failure(c)).collect();
            list.extend(n.tier_gaps.iter().map(tier_gap));
            format!("FAIL {}", list.join("; "))
        } else if n.drain {
            format!("FAIL {}", n.reason.as_deref().unwrap_or("unknown"))
        } else {
            format!("UNKNOWN {}", n.reason.as_deref().unwrap_or("not judged"))
        };
        push_line(&mut s, &format!("{} {verdict}", n.label));
        for t in transient(n) {
            push_line(
                &mut s,
                &format!("# {}: {t} (a dip not repeated: not a failure)", n.label),
            );
        }
    }
    for l in v.links.iter().filter(|l| l.is_path()) {
        push_line(&mut s, &format!("# path {}", link_line(f, l)));
    }
    for line in fleet_lines(v) {
        push_line(&mut s, &format!("# {line}"));
    }
    s
}

/// The findings about the whole fleet, one line each, `fleet <kind>:
/// message`, and where the fleet was judged against its past, against how
/// many runs.
pub fn fleet_lines(v: &Verdicts) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(p) = &v.past {
        let judged = p.metrics.iter().filter(|m| m.judged).count();
        out.push(if judged == 0 {
            format!(
                "fleet past: {} earlier run{} of this fleet in the history, {} needed to judge its medians",
                p.runs,
                if p.runs == 1 { "" } else { "s" },
                p.min_runs
            )
        } else {
            format!(
                "fleet past: {judged} median{} judged against this fleet's last {} runs (a drop: {})",
                if judged == 1 { "" } else { "s" },
                p.runs,
                super::past::rule(p.pct_worse, true).describe("fleet median")
            )
        });
    }
    for f in &v.findings {
        let kind = f.kind.name();
        out.push(format!("fleet {kind}: {}", f.message));
    }
    out
}

/// Append `text` and a newline to `s`, with any newline, tab, control,
/// bidirectional or invisible character in `text` shown as `�`
/// (`util::text::one_line`): a line-based file stays one line per entry
/// whatever the entry holds.
fn push_line(s: &mut String, text: &str) {
    s.push_str(&crate::util::text::one_line(text));
    s.push('\n');
}

/// How many verdicts noise made uncertain, in words; None when none.
pub fn noise_line(v: &crate::model::fleet::Verdicts) -> Option<String> {
    let n = v.uncertain_by_noise;
    let flows = v.links.iter().filter(|l| l.noisy).count();
    let mut parts = Vec::new();
    if n > 0 {
        parts.push(format!(
            "noise made {n} verdict{} uncertain: a figure worse than the fleet was measured while other processes used {} CPUs or more, enough to explain it (UNKNOWN, not FAIL; re-measure on quiet nodes)",
            if n == 1 { "" } else { "s" },
            v.noisy_cpus
        ));
    }
    if flows > 0 {
        parts.push(format!(
            "{flows} slow flow{} between healthy nodes ran under load that explains {} (no slow path claimed)",
            if flows == 1 { "" } else { "s" },
            if flows == 1 { "it" } else { "them" }
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// `drain.txt`: the host names worth taking out of service, one a line
/// (see [`push_line`]).
pub fn drain_list(f: &FleetRun) -> String {
    let mut hosts: Vec<&str> = f
        .verdicts
        .iter()
        .flat_map(|v| v.nodes.iter().filter(|n| n.drain))
        .filter_map(|n| f.node(n.rank).map(|x| x.hostname.as_str()))
        .collect();
    hosts.dedup();
    // One host per line, whatever the host name holds: another program
    // drains every line of this file.
    let mut s = String::new();
    for h in hosts {
        push_line(&mut s, h);
    }
    s
}

/// The terminal summary: the verdict, one row per node (farthest from the
/// fleet first), the slow paths, where the time went.
pub fn summary(f: &FleetRun) -> String {
    let figs = metrics::fleet_figures(f);
    let defs = metrics::definitions(&figs);
    let mut s = String::new();
    let Some(v) = &f.verdicts else {
        return "no verdict: the fleet run did not finish\n".into();
    };
    let _ = writeln!(
        s,
        "\nbwscope fleet: {} nodes, {}{}",
        f.nodes.len(),
        headline(v),
        if f.interrupted {
            " (interrupted: not every node was measured)"
        } else {
            ""
        }
    );
    s.push_str(&grid(&node_rows(v, &figs, &defs)));
    verdict_lines(&mut s, f, v);
    let t = &f.timings;
    let _ = writeln!(
        s,
        "time: {:.1} s in all; measuring {:.1} s per-node and {:.1} s network; {:.1} % outside the measuring",
        t.total_seconds,
        t.node_measure_seconds,
        t.network_measure_seconds,
        t.overhead_fraction * 100.0
    );
    s
}

/// What the fleet's verdict comes to, in words: how many nodes pass, fail
/// and could not be judged (and why, where no node was judged for one
/// reason: too few nodes, or noise), never a bare "none fails" for a fleet
/// nobody judged.
fn headline(v: &Verdicts) -> String {
    let count = |p: &dyn Fn(&NodeVerdict) -> bool| v.nodes.iter().filter(|n| p(n)).count();
    let (pass, fail) = (count(&|n| n.ok), count(&|n| n.drain));
    let open = v.nodes.len() - pass - fail;
    if pass + fail == 0 && open > 0 {
        let few = v.nodes.iter().all(|n| verdict_word(n) == "not judged");
        return if few {
            format!(
                "not judged (fewer than {} nodes have each figure, so none can be called off; a reference file's class bounds, --reference, judge each node alone)",
                v.min_nodes
            )
        } else {
            "not judged (see each node below)".into()
        };
    }
    let mut parts = vec![format!("{pass} pass")];
    if fail > 0 {
        parts.push(format!("{fail} fail{}", if fail == 1 { "s" } else { "" }));
    }
    if open > 0 {
        parts.push(format!("{open} not judged"));
    }
    parts.join(", ")
}

/// A node's verdict in the summary's table: OK, FAIL, or why it has none
/// (`not judged`: too few nodes have its figures; `noisy`; `UNKNOWN`:
/// interrupted or nothing measured).
fn verdict_word(n: &NodeVerdict) -> &'static str {
    let why = n.reason.as_deref().unwrap_or("");
    if n.ok {
        "OK"
    } else if n.drain {
        "FAIL"
    } else if why.starts_with("not judged") {
        "not judged"
    } else if why.starts_with("noisy") {
        "noisy"
    } else {
        "UNKNOWN"
    }
}

/// The summary's node table: a header, then a row per node, failing ones
/// first and then by distance from the fleet, each figure marked when its
/// check fails (!), was noisy (~) or was not repeated (^).
fn node_rows(
    v: &Verdicts,
    figs: &[(u32, Vec<metrics::Figure>)],
    defs: &[metrics::Figure],
) -> Vec<Vec<String>> {
    let mut rows = vec![{
        let mut h = vec!["node".to_string(), "verdict".into(), "z".into()];
        h.extend(defs.iter().map(|d| format!("{} {}", d.metric, d.unit())));
        h
    }];
    let by_rank = metrics::by_rank(figs);
    let mut order: Vec<&NodeVerdict> = v.nodes.iter().collect();
    order.sort_by(|a, b| {
        (b.drain, b.distance)
            .partial_cmp(&(a.drain, a.distance))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    for n in order {
        let mut row = vec![
            n.label.clone(),
            verdict_word(n).into(),
            format!("{:.1}", n.distance),
        ];
        let mine = by_rank.get(&n.rank).copied().unwrap_or(&[]);
        for d in defs {
            let check = n.checks.iter().find(|c| c.metric == d.metric);
            let mark = match check {
                Some(c) if c.fails() => " !",
                Some(c) if c.noisy => " ~",
                Some(c) if c.transient => " ^",
                _ => "",
            };
            row.push(
                mine.iter()
                    .find(|g| g.metric == d.metric)
                    .map_or("-".into(), |g| format!("{}{mark}", num(g.value))),
            );
        }
        rows.push(row);
    }
    rows
}

/// The lines under the table: why each failing node fails, the nodes
/// noise left unjudged, the figures not repeated, the slow paths.
fn verdict_lines(s: &mut String, f: &FleetRun, v: &Verdicts) {
    for n in v.nodes.iter().filter(|n| n.drain) {
        let _ = writeln!(s, "FAIL {}: {}", n.label, why(n));
    }
    for n in v
        .nodes
        .iter()
        .filter(|n| !n.drain && n.checks.iter().any(|c| c.noisy))
    {
        let _ = writeln!(
            s,
            "UNKNOWN {}: {}",
            n.label,
            n.reason.as_deref().unwrap_or("noisy")
        );
    }
    if let Some(line) = noise_line(v) {
        let _ = writeln!(s, "{line} (~ marks those figures)");
    }
    for n in &v.nodes {
        for t in transient(n) {
            let _ = writeln!(s, "NOT REPEATED {}: {t} (^; a dip, not a failure)", n.label);
        }
    }
    for l in v.links.iter().filter(|l| l.is_path()) {
        let _ = writeln!(s, "path {}", link_line(f, l));
    }
    for line in fleet_lines(v) {
        let _ = writeln!(s, "{line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fleet::verdict::{judge, Settings};

    fn judged(n: u32) -> FleetRun {
        let mut f = FleetRun::test_shift(n, |_, _| Some(1.0));
        let s = Settings {
            z: 3.5,
            pct: 10.0,
            reference: None,
        };
        f.verdicts = Some(judge(&f, &s));
        f
    }

    /// Three nodes cannot say which one is off: the summary says so, in
    /// words, where it used to say "none fails" and mark each node `?`.
    #[test]
    fn a_fleet_too_small_to_judge_says_not_judged_and_why() {
        let s = summary(&judged(3));
        assert!(s.contains("3 nodes, not judged (fewer than 4 nodes"), "{s}");
        assert!(!s.contains("none fails") && !s.contains(" ? "), "{s}");
        assert_eq!(
            s.matches("not judged").count(),
            4,
            "the headline and each node: {s}"
        );
        let s = summary(&judged(5));
        assert!(s.contains("5 nodes, 5 pass"), "{s}");
    }
}
