//! The headline figures of a node, as numbers: what fleet verdicts judge,
//! what `compare` of two fleets lines up, what OpenMetrics exports. Read
//! from the records the same way as the summary line
//! ([`crate::report::summary`]): `best` of each case, single-thread cache
//! figures from the cache suite, all-core DRAM from any multi-thread
//! record, latency from the random chase at the largest size.

use crate::model::fleet::{FleetRun, NetMatrix};
use crate::model::{noise_slowdown, Op, Record, Regime, Run, Status, SuiteId};
use crate::report::summary::{self, Shape};
use crate::stats::median;

/// One figure of one node.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub metric: String,
    pub unit: &'static str,
    pub higher_is_better: bool,
    pub value: f64,
    /// One line on what it is, for HELP texts and tables.
    pub what: String,
    /// Foreign load while the record behind it was measured (CPUs' worth
    /// of other processes); None without a noise reading (the clock, flows
    /// from older files).
    pub foreign_cpus: Option<f64>,
    /// The most that load can slow the figure down (≥ 1; see
    /// [`noise_slowdown`]); None without a noise reading.
    pub noise_slowdown: Option<f64>,
    /// The record behind it moved between measurements at different
    /// moments by more than its node's load explains
    /// (`Repeats::contended`): the memory was contended from outside.
    pub contended: bool,
    /// The physical ceiling of the record behind it, GB/s
    /// (`Record::limit_gbps`); None where none is known or it is no
    /// bandwidth.
    pub limit_gbps: Option<f64>,
}

fn figure(metric: &str, unit: &'static str, higher: bool, value: f64, what: &str) -> Figure {
    Figure {
        metric: metric.into(),
        unit,
        higher_is_better: higher,
        value,
        what: what.into(),
        foreign_cpus: None,
        noise_slowdown: None,
        contended: false,
        limit_gbps: None,
    }
}

impl Figure {
    /// The same figure, carrying the noise of the record it came from
    /// (measured on `run`'s host).
    fn noise_of(mut self, r: &Record, run: &Run) -> Figure {
        // The reading itself, not what stands out of its resolution: a
        // verdict gives a figure the benefit of the doubt (a short window
        // resolves 2 CPUs and could otherwise hide a busy machine).
        self.foreign_cpus = r.noise.map(|n| n.foreign_cpus);
        self.noise_slowdown = self
            .foreign_cpus
            .map(|f| noise_slowdown(f, r.threads, run.host.cpus.len()));
        self.contended = r.repeats.as_ref().is_some_and(|x| x.contended);
        self.limit_gbps = r.limit_gbps.filter(|_| self.unit == "GB/s");
        self
    }
}

/// Every metric a node can have: the names [`node_figures`] and
/// [`net_figures`] give (a reference file's bounds must be among them).
pub const METRICS: &[&str] = &[
    "clock_ghz",
    "l1_read_gbps",
    "l2_read_gbps",
    "l3_read_gbps",
    "dram_read_gbps",
    "dram_write_gbps",
    "dram_memcpy_gbps",
    "dram_read_all_gbps",
    "dram_latency_ns",
    "contend_all_gbps",
    "tcp_out_gbps",
    "tcp_in_gbps",
    "mpi_out_gbps",
    "mpi_in_gbps",
];

/// Is `name` one of [`METRICS`]?
pub fn is_metric(name: &str) -> bool {
    METRICS.contains(&name)
}

/// The node figures of one run (those its records allow).
pub fn node_figures(run: &Run) -> Vec<Figure> {
    let mut out = Vec::new();
    if let Some(hz) = run.host.clock_hz {
        out.push(figure(
            "clock_ghz",
            "GHz",
            true,
            hz / 1e9,
            "measured core clock (a throttled CPU shows here)",
        ));
    }
    for (regime, name) in Regime::ALL.iter().zip([
        "l1_read_gbps",
        "l2_read_gbps",
        "l3_read_gbps",
        "dram_read_gbps",
    ]) {
        if let Some((g, r)) = summary::single(run, &Shape::READ, regime) {
            out.push(
                figure(
                    name,
                    "GB/s",
                    true,
                    g,
                    &format!("{regime} read bandwidth of one core"),
                )
                .noise_of(r, run),
            );
        }
    }
    if let Some((g, r)) = summary::single(run, &Shape::WRITE, &Regime::Dram) {
        out.push(
            figure(
                "dram_write_gbps",
                "GB/s",
                true,
                g,
                "DRAM write bandwidth of one core",
            )
            .noise_of(r, run),
        );
    }
    if let Some((g, r)) = summary::single(run, &Shape::MEMCPY, &Regime::Dram) {
        out.push(
            figure(
                "dram_memcpy_gbps",
                "GB/s",
                true,
                g,
                "DRAM memcpy bandwidth of one core (bytes read + written)",
            )
            .noise_of(r, run),
        );
    }
    if let Some((g, r)) = summary::all_cores(run, &Op::Read) {
        out.push(
            figure(
                "dram_read_all_gbps",
                "GB/s",
                true,
                g,
                &format!("DRAM read bandwidth of all cores ({} threads)", r.threads),
            )
            .noise_of(r, run),
        );
    }
    if let Some((ns, r)) = summary::dram_latency(run) {
        out.push(
            figure(
                "dram_latency_ns",
                "ns",
                false,
                ns,
                "load-to-use latency at the largest size (random chase)",
            )
            .noise_of(r, run),
        );
    }
    out.extend(declared_figures(run));
    out
}

/// What each suite declares a fleet judges of its records
/// ([`SuiteDetail::judged`](crate::model::SuiteDetail::judged)): numa's
/// tier cells, memtype's kinds, contend's aggregate.
fn declared_figures(run: &Run) -> Vec<Figure> {
    let mut out = Vec::new();
    for &suite in SuiteId::ALL {
        let records: Vec<&Record> = run
            .records
            .iter()
            .filter(|r| r.status == Status::Ok && r.suite() == suite)
            .collect();
        for j in suite.judged(&records) {
            out.push(
                figure(&j.metric, j.unit, j.higher_is_better, j.value, &j.what)
                    .noise_of(j.record, run),
            );
        }
    }
    out
}

/// The size a node's network figures are read at: the largest one.
pub fn headline_size(m: &NetMatrix) -> Option<u64> {
    m.sizes.iter().max().copied()
}

/// `<transport>_out_gbps` / `<transport>_in_gbps` of `rank`: the median of
/// what arrived (receiver's view) over its flows at the largest size, so
/// one slow peer does not decide a node's figure.
pub fn net_figures(fleet: &FleetRun, rank: u32) -> Vec<Figure> {
    let mut out = Vec::new();
    for m in &fleet.network {
        let Some(size) = headline_size(m) else {
            continue;
        };
        let at = |f: &&crate::model::fleet::Flow| f.size_bytes == size;
        let measured = |mine: &dyn Fn(&crate::model::fleet::Flow) -> bool| {
            m.flows
                .iter()
                .filter(at)
                .filter(|f| mine(f) && f.recv_gbps.is_some())
                .collect::<Vec<_>>()
        };
        let outs = measured(&|f| f.src == rank);
        let ins = measured(&|f| f.dst == rank);
        for (dir, v, what) in [
            ("out", outs, "sent to its peers"),
            ("in", ins, "received from its peers"),
        ] {
            let of = |g: fn(&crate::model::fleet::Flow) -> Option<f64>| {
                median(&v.iter().filter_map(|f| g(f)).collect::<Vec<_>>())
            };
            if let Some(med) = of(|f| f.recv_gbps) {
                let mut g = figure(
                    &format!("{}_{dir}_gbps", m.transport),
                    "GB/s",
                    true,
                    med,
                    &format!(
                        "{} bandwidth {what}, median over {} flows of {} B ({} schedule)",
                        m.transport,
                        v.len(),
                        size,
                        m.schedule
                    ),
                );
                // The typical load its flows ran under, as for the rate.
                g.foreign_cpus = of(|f| f.foreign_cpus);
                g.noise_slowdown = of(|f| f.noise_slowdown);
                out.push(g);
            }
        }
    }
    out
}

/// Every figure of every node, in rank order.
pub fn fleet_figures(fleet: &FleetRun) -> Vec<(u32, Vec<Figure>)> {
    fleet
        .nodes
        .iter()
        .map(|n| {
            let mut v = n.run.as_ref().map(node_figures).unwrap_or_default();
            v.extend(net_figures(fleet, n.rank));
            (n.rank, v)
        })
        .collect()
}

/// [`fleet_figures`] by rank: each node's figures found at once, so
/// tables over many thousand nodes stay linear.
pub fn by_rank(figs: &[(u32, Vec<Figure>)]) -> std::collections::HashMap<u32, &[Figure]> {
    figs.iter().map(|(r, v)| (*r, v.as_slice())).collect()
}

/// Each metric once, in the order it first appears (a figure stands for
/// its definition: name, unit, direction, what it is).
pub fn definitions(figs: &[(u32, Vec<Figure>)]) -> Vec<Figure> {
    let mut defs: Vec<Figure> = Vec::new();
    for g in figs.iter().flat_map(|(_, v)| v) {
        if !defs.iter().any(|d| d.metric == g.metric) {
            defs.push(g.clone());
        }
    }
    defs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn foreign_load_slows_by_cpu_share_and_memory_share() {
        // 2 cpus, 1 thread: 0.5 CPU fits on the free cpu, shares memory.
        assert_eq!(noise_slowdown(0.5, 1, 2), 1.5);
        // 1.9 CPUs: 0.9 time-shares our cpu as well.
        assert!((noise_slowdown(1.9, 1, 2) - 1.9 * 2.9).abs() < 1e-12);
        // Quiet: no slowdown; all cpus ours: every foreign cycle is theirs.
        assert_eq!(noise_slowdown(0.0, 2, 2), 1.0);
        assert_eq!(noise_slowdown(1.0, 2, 2), 1.5 * 1.5);
    }

    #[test]
    fn every_figure_is_a_listed_metric() {
        let text = include_str!("../../../tests/fixtures/cache-quick.json");
        let mut run: Run = serde_json::from_str(text).unwrap();
        run.host.clock_hz = Some(3e9);
        let figs = node_figures(&run);
        assert!(figs.len() >= 3, "{figs:?}");
        for g in figs {
            assert!(is_metric(&g.metric), "{} is missing from METRICS", g.metric);
        }
    }

    /// Issue 28: memtype ran on every fleet node and was never judged; it
    /// declares its figures now, one pair per kind that ran.
    #[test]
    fn memtype_declares_a_figure_pair_per_kind() {
        let text = include_str!("../../../tests/fixtures/runs/2026-11-24-54fbad1/memtype.json");
        let run: Run = serde_json::from_str(text).unwrap();
        let figs = node_figures(&run);
        let names: Vec<&str> = figs.iter().map(|f| f.metric.as_str()).collect();
        for m in [
            "memtype_regular_copy_gbps",
            "memtype_thp_first_ms_per_mib",
            "memtype_hugetlb_2m_copy_gbps",
        ] {
            assert!(names.contains(&m), "{m} not in {names:?}");
        }
        // hugetlb-1G was skipped there: nothing of it is judged.
        assert!(!names.iter().any(|n| n.contains("1g")), "{names:?}");
        let first = figs
            .iter()
            .find(|f| f.metric == "memtype_thp_first_ms_per_mib");
        assert!(first.is_some_and(|f| !f.higher_is_better && f.unit == "ms/MiB"));
    }
}
