//! The headline figures of a node, as numbers: what fleet verdicts judge,
//! what `compare` of two fleets lines up, what OpenMetrics exports. Read
//! from the records the same way as the summary line
//! ([`crate::report::summary`]): `best` of each case, single-thread cache
//! figures from the cache suite, all-core DRAM from any multi-thread
//! record, latency from the random chase at the largest size.

use crate::model::fleet::{FleetRun, NetMatrix};
pub use crate::model::headline::Figure;
use crate::model::headline::{Headline, Quantity};
use crate::model::Run;
use crate::stats::median;

/// Every metric a node can have besides the fixed headlines
/// ([`Headline::metric`]): contend's aggregate, and the network figures
/// [`net_figures`] gives (a reference file's bounds must be among them).
pub const OTHER_METRICS: &[&str] = &[
    "contend_all_gbps",
    "tcp_out_gbps",
    "tcp_in_gbps",
    "mpi_out_gbps",
    "mpi_in_gbps",
];

/// Every metric a node can have, headlines first.
pub fn metrics() -> Vec<&'static str> {
    Headline::ALL
        .iter()
        .map(|h| h.metric())
        .chain(OTHER_METRICS.iter().copied())
        .collect()
}

/// Is `name` one of [`metrics`]?
pub fn is_metric(name: &str) -> bool {
    Headline::ALL.iter().any(|h| h.metric() == name) || OTHER_METRICS.contains(&name)
}

/// The node figures of one run (those its records allow): the run's
/// headline figures, read once for every consumer
/// ([`crate::report::headline::figures`]).
pub fn node_figures(run: &Run) -> Vec<Figure> {
    crate::report::headline::figures(run)
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
                let mut g = Figure::declared(
                    format!("{}_{dir}_gbps", m.transport),
                    Quantity::Bandwidth,
                    true,
                    "network".into(),
                    vec![
                        ("transport", m.transport.to_string()),
                        ("direction", dir.to_string()),
                    ],
                    format!(
                        "{} bandwidth {what}, median over {} flows of {} B ({} schedule)",
                        m.transport,
                        v.len(),
                        size,
                        m.schedule
                    ),
                    med,
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
    use crate::model::noise_slowdown;

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
        assert!(first.is_some_and(|f| !f.higher_is_better && f.unit() == "ms/MiB"));
    }
}
