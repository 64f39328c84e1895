//! Line charts: a metric against working-set size or thread count, one
//! series per kernel and whatever else varies, split per op past
//! [`MAX_SERIES`] lines.

use std::collections::BTreeMap;

use super::marks::{cache_markers, limit_lines};
use super::metric::{self, StatKind};
use super::{Chart, Kind, LineChart, Series, XAxis};
use crate::model::{Curve, Record, Run, SuiteId};

/// More lines than this on one size chart are split per op.
const MAX_SERIES: usize = 10;

/// What tells records of one series apart beyond the kernel name: the
/// axes that vary within the suite and are not the x axis.
fn series_name(r: &Record, vary: &Vary, x: XAxis) -> String {
    let mut name = r.kernel.clone();
    if vary.pattern {
        if let Some(p) = &r.pattern {
            if !r.kernel.starts_with(p.as_str()) {
                name = format!("{p}:{name}");
            }
        }
    }
    if vary.threads && x != XAxis::Threads {
        name.push_str(&format!(" ×{}t", r.threads));
    }
    if vary.size && x != XAxis::Bytes {
        if let Some(s) = r.size_bytes {
            name.push_str(&format!(" {}", crate::util::units::format_bytes(s)));
        }
    }
    if vary.memory {
        if let Some(m) = &r.memory {
            name.push_str(&format!(" [{}]", m.kind));
        }
    }
    for p in r.detail.case() {
        if vary.cases.contains(&p.name) {
            name.push_str(&format!(" {}={}", p.name, p.shown()));
        }
    }
    name
}

#[derive(Default)]
struct Vary {
    pattern: bool,
    threads: bool,
    size: bool,
    memory: bool,
    /// The case parts (`CasePart::name`) that vary.
    cases: Vec<&'static str>,
}

fn vary(recs: &[&Record]) -> Vary {
    let differs = |f: &dyn Fn(&Record) -> String| recs.iter().any(|r| f(r) != f(recs[0]));
    let mut cases: Vec<&'static str> = recs
        .iter()
        .flat_map(|r| r.detail.case())
        .map(|p| p.name)
        .collect();
    cases.sort_unstable();
    cases.dedup();
    let part = |r: &Record, name: &str| {
        r.detail
            .case()
            .into_iter()
            .find(|p| p.name == name)
            .map(|p| p.value.to_string())
            .unwrap_or_default()
    };
    cases.retain(|k| differs(&|r| part(r, k)));
    Vary {
        pattern: differs(&|r| {
            r.pattern
                .as_ref()
                .map(|p| p.to_string())
                .unwrap_or_default()
        }),
        threads: differs(&|r| r.threads.to_string()),
        size: differs(&|r| format!("{:?}", r.size_bytes)),
        memory: differs(&|r| {
            r.memory
                .as_ref()
                .map(|m| m.kind.clone())
                .unwrap_or_default()
        }),
        cases,
    }
}

pub(super) fn line_charts(
    run: &Run,
    suite: SuiteId,
    recs: &[&Record],
    x: XAxis,
    stat: StatKind,
) -> Vec<Chart> {
    let v = line_vary(recs, x);
    let merged = line_groups(recs, &v, x);
    let cpu_memory = !matches!(suite, SuiteId::Net | SuiteId::Transfer);
    let mut units: Vec<&str> = merged.keys().map(|k| k.0).collect();
    units.dedup();
    let mixed_units = units.len() > 1;
    let mut out = Vec::new();
    for ((unit, op), rs) in merged {
        let what = if unit == "ns" { "latency" } else { "bandwidth" };
        let (id, title, x_desc) = line_title(suite, &op, what, x, stat, mixed_units, cpu_memory);
        let markers = if x == XAxis::Bytes && cpu_memory {
            let curve = if unit == "ns" {
                Curve::Latency
            } else {
                Curve::Bandwidth
            };
            cache_markers(run, curve)
        } else {
            Vec::new()
        };
        let limits = if x == XAxis::Bytes && unit != "ns" {
            limit_lines(run, &rs)
        } else {
            Vec::new()
        };
        out.push(Chart {
            id,
            title,
            kind: Kind::Line(LineChart {
                x,
                x_desc: x_desc.into(),
                y_desc: format!("{what}, {unit}"),
                series: line_series(&rs, &v, x, stat),
                markers,
                limits,
            }),
        });
    }
    out
}

/// What names a series of a line chart (see [`vary`]).
fn line_vary(recs: &[&Record], x: XAxis) -> Vary {
    let mut v = vary(recs);
    if x == XAxis::Threads && v.size {
        // A size that follows the thread count (the survey splits 256 MiB
        // over the threads: 256 MiB at 1, 128 MiB each at 2) is one line
        // over thread counts; the size names series only where one thread
        // count has several (issue 29: one single-point series per size).
        v.size = false;
        let key = |r: &Record| (series_name(r, &v, x), r.threads);
        v.size = recs.iter().any(|a| {
            recs.iter()
                .any(|b| key(a) == key(b) && a.size_bytes != b.size_bytes)
        });
    }
    v
}

/// The records of each chart, keyed by (unit, op): split by unit (a suite
/// may mix bandwidth and latency records), then by op when there are too
/// many lines for one picture (op empty when not split).
fn line_groups<'a>(
    recs: &[&'a Record],
    v: &Vary,
    x: XAxis,
) -> BTreeMap<(&'static str, String), Vec<&'a Record>> {
    let mut groups: BTreeMap<(&'static str, String), Vec<&Record>> = BTreeMap::new();
    let mut names = Vec::new();
    for r in recs {
        let m = metric::of(r).expect("filtered");
        let name = series_name(r, v, x);
        if !names.contains(&name) {
            names.push(name);
        }
        groups
            .entry((m.unit, r.op.to_string()))
            .or_default()
            .push(r);
    }
    let split = names.len() > MAX_SERIES;
    let mut merged: BTreeMap<(&'static str, String), Vec<&Record>> = BTreeMap::new();
    for ((unit, op), rs) in groups {
        let key = if split { op } else { String::new() };
        merged.entry((unit, key)).or_default().extend(rs);
    }
    merged
}

/// One series per name, its points sorted along x.
fn line_series(rs: &[&Record], v: &Vary, x: XAxis, stat: StatKind) -> Vec<Series> {
    let mut series: Vec<Series> = Vec::new();
    for r in rs {
        let m = metric::of(r).expect("filtered");
        let xv = match x {
            XAxis::Bytes => r.size_bytes.unwrap_or(1) as f64,
            // (`charts` never asks for records over runs: `trends` draws
            // those from the run's history, not from its records.)
            XAxis::Threads | XAxis::Runs => r.threads as f64,
        };
        let name = series_name(r, v, x);
        let pos = match series.iter().position(|s| s.name == name) {
            Some(p) => p,
            None => {
                series.push(Series {
                    name,
                    points: Vec::new(),
                });
                series.len() - 1
            }
        };
        series[pos].points.push((xv, m.pick(stat)));
    }
    for s in &mut series {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    series
}

/// A line chart's id, title and x-axis description.
fn line_title(
    suite: SuiteId,
    op: &str,
    what: &str,
    x: XAxis,
    stat: StatKind,
    mixed_units: bool,
    cpu_memory: bool,
) -> (String, String, &'static str) {
    let stat_name = match stat {
        StatKind::Best => "best",
        StatKind::Median => "median",
    };
    let (x_desc, against, id_x) = match x {
        XAxis::Bytes => (
            if cpu_memory {
                "working set per thread"
            } else {
                "transfer size"
            },
            "size",
            "size",
        ),
        XAxis::Threads => ("threads", "threads", "threads"),
        // (Records are not charted over runs; see `line_series`.)
        XAxis::Runs => ("run", "runs", "runs"),
    };
    let mut id = format!("{suite}-{id_x}");
    if mixed_units {
        id.push_str(&format!("-{what}"));
    }
    // "latency: latency vs size" says it twice; "cache read: bandwidth …" does not.
    let mut head = if suite.name() == what {
        String::new()
    } else {
        suite.to_string()
    };
    if !op.is_empty() {
        id.push_str(&format!("-{op}"));
        head = format!("{head} {op}").trim().to_string();
    }
    let title = if head.is_empty() {
        format!("{what} vs {against} ({stat_name} of samples)")
    } else {
        format!("{head}: {what} vs {against} ({stat_name} of samples)")
    };
    (id, title, x_desc)
}
