//! The cores tables: the pairs that stand for their classes (CAS, HIT,
//! HITM one-way, ns and cycles), the classes with their measured figures,
//! the CAS matrix where a run measured most pairs of a few cpus, and the
//! fairness view.

use std::collections::BTreeMap;

use crate::model::detail::{CoresDetail, CoresView, Exchange};
use crate::model::{Record, Run, Stats, Status};
use crate::report::grid::{Block, Table};

type Rec<'a> = (&'a Record, &'a CoresDetail);

/// `best/median` ns.
fn ns(s: Option<Stats>) -> String {
    s.map_or("-".into(), |s| {
        if s.median >= 100.0 {
            format!("{:.0}/{:.0}", s.best, s.median)
        } else {
            format!("{:.1}/{:.1}", s.best, s.median)
        }
    })
}

/// Median cycles.
fn cy(s: Option<Stats>) -> String {
    s.map_or("-".into(), |s| format!("{:.0}", s.median))
}

fn of<'a>(recs: &[&'a Record], view: CoresView) -> Vec<Rec<'a>> {
    recs.iter()
        .filter_map(|r| r.detail.get::<CoresDetail>().map(|d| (*r, d)))
        .filter(|(r, d)| d.case_view == Some(view) && r.status == Status::Ok)
        .collect()
}

/// One row per class pair: its three exchanges side by side.
fn pairs_table(recs: &[&Record]) -> Option<Table> {
    let pairs = of(recs, CoresView::Pair);
    let mut rows: BTreeMap<(usize, [u32; 2]), Vec<String>> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut checks = 0usize;
    for (_, d) in &pairs {
        let (Some(p), Some(class), Some(e)) = (d.case_pair, &d.case_class, d.case_exchange) else {
            continue;
        };
        if d.role.as_deref() != Some("class") {
            checks += usize::from(e == Exchange::Cas);
            continue;
        }
        if !order.contains(class) {
            order.push(class.clone());
        }
        let k = order.iter().position(|c| c == class).unwrap_or(0);
        let row = rows.entry((k, p)).or_insert_with(|| {
            let mut r = vec![format!("{}-{}", p[0], p[1]), class.clone()];
            r.extend(std::iter::repeat_n("-".to_string(), 6));
            r
        });
        let col = 2 + 2 * Exchange::ALL.iter().position(|x| *x == e).unwrap_or(0);
        row[col] = ns(d.one_way_ns.value());
        row[col + 1] = cy(d.cycles.value());
    }
    if rows.is_empty() {
        return None;
    }
    let mut t = Table::new(
        ["pair", "class", "CAS ns", "cyc", "HIT ns", "cyc", "HITM ns", "cyc"]
            .map(String::from)
            .to_vec(),
    )
    .titled("core to core: one cache line handed over, one-way ns best/median, core cycles (median)");
    t.rows = rows.into_values().collect();
    t.notes.push(
        "CAS: compare-and-swap ping-pong, round trip / 2; HIT / HITM: a clean / modified line of the first cpu's read by the second (dependent loads over 256 lines)."
            .into(),
    );
    if checks > 0 {
        t.notes.push(format!(
            "{checks} more pairs measured with CAS to check every cpu against its class: in the JSON, and in the matrix where it is drawn."
        ));
    }
    Some(t.gap())
}

/// One row per class: its pairs' medians together.
fn classes_table(recs: &[&Record]) -> Option<Table> {
    let classes = of(recs, CoresView::Class);
    if classes.is_empty() {
        return None;
    }
    let mut rows: Vec<(String, Vec<String>)> = Vec::new();
    for (_, d) in &classes {
        let (Some(name), Some(e)) = (&d.case_class, d.case_exchange) else {
            continue;
        };
        let at = match rows.iter().position(|(n, _)| n == name) {
            Some(i) => i,
            None => {
                let mut r = vec![
                    name.clone(),
                    d.class_what.clone().unwrap_or_default(),
                    "-".into(),
                    "-".into(),
                ];
                r.extend(std::iter::repeat_n("-".to_string(), 3));
                rows.push((name.clone(), r));
                rows.len() - 1
            }
        };
        let col = 4 + Exchange::ALL.iter().position(|x| *x == e).unwrap_or(0);
        let row = &mut rows[at].1;
        row[col] = d.one_way_ns.value().map_or("-".into(), |s| {
            format!("{:.1} ({:.1}-{:.1})", s.median, s.min, s.max)
        });
        if e == Exchange::Cas {
            row[2] = match (d.pairs_alike, d.pairs) {
                (Some(a), Some(n)) => format!("{a}/{n}"),
                (None, Some(n)) => n.to_string(),
                _ => "-".into(),
            };
            row[3] = d.measured_group.map_or("-".into(), |g| g.to_string());
        }
    }
    let mut t = Table::new(
        [
            "class",
            "what the system states",
            "alike",
            "group",
            "CAS ns",
            "HIT ns",
            "HITM ns",
        ]
        .map(String::from)
        .to_vec(),
    )
    .titled("classes: each one's pairs, median one-way ns (lowest-highest pair)");
    t.rows = rows.into_iter().map(|(_, r)| r).collect();
    t.notes.push(
        "alike: pairs whose CAS falls in the class's latency group, of those measured; group: the latency group (1 = fastest) its median falls in."
            .into(),
    );
    Some(t.gap())
}

/// The CAS matrix (median ns) when a run measured pairs among at most 32
/// cpus and more than the class pairs alone.
fn matrix_table(recs: &[&Record]) -> Option<Table> {
    let cas: Vec<([u32; 2], f64)> = of(recs, CoresView::Pair)
        .into_iter()
        .filter(|(_, d)| d.case_exchange == Some(Exchange::Cas))
        .filter_map(|(_, d)| Some((d.case_pair?, d.one_way_ns.value()?.median)))
        .collect();
    let mut cpus: Vec<u32> = cas.iter().flat_map(|(p, _)| *p).collect();
    cpus.sort_unstable();
    cpus.dedup();
    if cpus.len() < 3 || cpus.len() > 32 || cas.len() < cpus.len() {
        return None;
    }
    let get = |a: u32, b: u32| {
        cas.iter()
            .find(|(p, _)| *p == [a, b] || *p == [b, a])
            .map(|x| x.1)
    };
    let mut head = vec!["cpu".to_string(), String::new()];
    head.extend(cpus.iter().map(|c| c.to_string()));
    let mut t = Table::new(head).titled("CAS one-way ns, median, by pair");
    for &a in &cpus {
        let mut row = vec![a.to_string(), String::new()];
        row.extend(cpus.iter().map(|&b| match get(a, b) {
            Some(v) if v >= 100.0 => format!("{v:.0}"),
            Some(v) => format!("{v:.1}"),
            None => "·".into(),
        }));
        t.rows.push(row);
    }
    Some(t.gap())
}

fn fairness_table(recs: &[&Record]) -> Option<Table> {
    let f = of(recs, CoresView::Fairness);
    let (r, d) = f.first()?;
    let mut t = Table::new(
        ["threads", "cpus", "Mops/s", "fairness", "shares"]
            .map(String::from)
            .to_vec(),
    )
    .titled("fairness: threads incrementing one line; total increments per second best/median, least share / largest");
    let shares = d.shares.as_ref().map_or(String::new(), |s| {
        s.iter()
            .map(|x| format!("{:.0}%", x * 100.0))
            .collect::<Vec<_>>()
            .join(" ")
    });
    t.rows.push(vec![
        r.threads.to_string(),
        crate::util::cpulist::format_cpu_list(&r.cpus),
        d.rate_mops
            .value()
            .map_or("-".into(), |s| format!("{:.1}/{:.1}", s.best, s.median)),
        d.fairness.value().map_or("-".into(), |f| format!("{f:.2}")),
        shares,
    ]);
    t.notes.push(format!(
        "{} on one line until the count reaches the call's target; 1.00 = every thread got the line as often.",
        d.instruction.as_deref().unwrap_or("atomic add")
    ));
    Some(t.gap())
}

/// This suite's view (its records are not bandwidth).
pub const VIEW: super::View = super::View {
    render,
    own_convention: true,
};

pub fn render(_run: &Run, recs: &[&Record]) -> Vec<Block> {
    [
        pairs_table(recs),
        classes_table(recs),
        matrix_table(recs),
        fairness_table(recs),
    ]
    .into_iter()
    .flatten()
    .map(Block::Table)
    .collect()
}
