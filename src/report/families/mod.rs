//! The metric families bwscope writes for Prometheus (`--prometheus`,
//! `--openmetrics`, `watch`, `fleet`, `report -f …`), designed once after
//! the Prometheus naming guide (prometheus.io/docs/practices/naming) and
//! node_exporter's practice: base units in the name, one family per
//! quantity, the dimensions as labels, identity in `…_info`, HELP and
//! TYPE on every family, a counter only where something is counted.
//! Every family, its unit, labels and a query are in `docs/metrics.md`.
//!
//! A headline figure ([`metrics::Figure`]) lands in its quantity's family
//! by its unit ([`QUANTITIES`]), labelled with its stable name (`figure`,
//! the figure's name without its unit) and its dimensions ([`dims`]), so
//! a figure a suite adds appears here with no edit.

pub mod fleet;
pub mod watch;

use super::exposition::{Family, Kind};
use super::fleet::metrics::{self, Figure};
use crate::model::Run;

/// A measured quantity: the family its figures land in, the unit the
/// figure states and the factor that turns it into the family's base
/// unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quantity {
    /// The family's name after `bwscope_`, ending in its base unit.
    pub name: &'static str,
    /// The figures' unit (`metrics::Figure::unit`).
    pub from: &'static str,
    pub factor: f64,
    /// HELP: what it is, in the base unit.
    pub help: &'static str,
}

/// Every quantity a headline figure has, by the unit it states.
pub const QUANTITIES: &[Quantity] = &[
    Quantity {
        name: "bandwidth_bytes_per_second",
        from: "GB/s",
        factor: 1e9,
        help: "A headline bandwidth figure, bytes per second (bytes read + written as the kernel declares them; the best of its samples).",
    },
    Quantity {
        name: "latency_seconds",
        from: "ns",
        factor: 1e-9,
        help: "A headline load-to-use latency, seconds per load (random pointer chase; the best of its samples).",
    },
    Quantity {
        name: "clock_hertz",
        from: "GHz",
        factor: 1e9,
        help: "The measured core clock, hertz (a chain of dependent adds; a throttled core shows here).",
    },
    Quantity {
        name: "first_use_seconds_per_byte",
        from: "ms/MiB",
        factor: 1e-3 / 1_048_576.0,
        help: "First use of a kind of memory: mapping it and the first copy into it, seconds per byte.",
    },
];

/// The quantity of a figure stated in `unit`.
pub fn quantity(unit: &str) -> Option<&'static Quantity> {
    QUANTITIES.iter().find(|q| q.from == unit)
}

/// The unit words a figure's name carries (`dram_read_gbps`,
/// `tier_cxl_read_gbps_cpu0_mem2`), left out of the `figure` label so no
/// label names a unit.
const UNIT_WORDS: &[&str] = &["_gbps", "_ns", "_ghz", "_ms_per_mib"];

/// A figure's stable name without its unit: `dram_read_gbps` →
/// `dram_read`, `tier_cxl_read_gbps_cpu0_mem2` → `tier_cxl_read_cpu0_mem2`.
pub fn key(metric: &str) -> String {
    let mut k = metric.to_string();
    for w in UNIT_WORDS {
        if let Some(i) = k.find(w) {
            let end = i + w.len();
            if end == k.len() || k.as_bytes()[end] == b'_' {
                k.replace_range(i..end, "");
                break;
            }
        }
    }
    k
}

/// The dimensions of a figure, from its stable name: the cache level,
/// the operation, the threads, the kind of memory, the NUMA nodes, the
/// transport and direction of a network figure. Every label has a few
/// values at most (no sizes, no free text).
pub fn dims(key: &str) -> Vec<(&'static str, String)> {
    let s = |v: &str| v.to_string();
    let one = |level: &str, op: &str| vec![("level", s(level)), ("op", s(op)), ("threads", s("1"))];
    match key {
        "l1_read" => return one("L1", "read"),
        "l2_read" => return one("L2", "read"),
        "l3_read" => return one("L3", "read"),
        "dram_read" => return one("DRAM", "read"),
        "dram_write" => return one("DRAM", "write"),
        "dram_memcpy" => return one("DRAM", "memcpy"),
        "dram_read_all" => {
            return vec![
                ("level", s("DRAM")),
                ("op", s("read")),
                ("threads", s("all")),
            ]
        }
        "dram_latency" => return vec![("level", s("DRAM"))],
        "clock" => return Vec::new(),
        "contend_all" => return vec![("suite", s("contend")), ("op", s("aggregate"))],
        _ => {}
    }
    let parts: Vec<&str> = key.split('_').collect();
    match parts.as_slice() {
        // memtype_<kind>_copy, memtype_<kind>_first: the kind may hold
        // underscores of its own (hugetlb_2m).
        ["memtype", kind @ .., what] if !kind.is_empty() => {
            let mut d = vec![("suite", s("memtype")), ("kind", kind.join("_"))];
            if *what == "copy" {
                d.push(("op", s("copy")));
            }
            d
        }
        // tier_<kind>_<read|latency>_cpu<C>_mem<M>
        ["tier", kind, what, cpu, mem] => {
            let mut d = vec![("suite", s("numa")), ("kind", s(kind))];
            if *what == "read" {
                d.push(("op", s("read")));
            }
            if let (Some(c), Some(m)) = (cpu.strip_prefix("cpu"), mem.strip_prefix("mem")) {
                d.push(("cpu_node", s(c)));
                d.push(("memory_node", s(m)));
            }
            d
        }
        // <transport>_<out|in>: the fleet's network figures.
        [transport, dir @ ("out" | "in")] => {
            vec![("transport", s(transport)), ("direction", s(dir))]
        }
        _ => Vec::new(),
    }
}

/// Families in the order they were first asked for, each once.
#[derive(Debug, Default)]
pub struct Families(pub Vec<Family>);

impl Families {
    /// The family `bwscope_<name>`, made on first use.
    pub fn get(&mut self, name: &str, kind: Kind, help: &str) -> &mut Family {
        let full = format!("bwscope_{name}");
        let i = match self.0.iter().position(|f| f.name == full) {
            Some(i) => i,
            None => {
                self.0.push(Family::new(full, kind, help));
                self.0.len() - 1
            }
        };
        &mut self.0[i]
    }

    pub fn gauge(&mut self, name: &str, help: &str) -> &mut Family {
        self.get(name, Kind::Gauge, help)
    }

    /// `bwscope_run_info`: which bwscope ran what on which CPU.
    pub fn run_info(&mut self, host: &str, run: &Run) {
        let revision = run.tool.revision.clone().unwrap_or_default();
        self.get("run", Kind::Info, RUN_HELP).push(
            vec![
                ("host", host.into()),
                ("command", run.command.clone()),
                ("version", run.tool.version.clone()),
                ("revision", revision),
                ("cpu", run.host.cpu.model_name.trim().into()),
            ],
            1.0,
        );
    }

    /// Each figure in its quantity's family, with its ceiling and the
    /// share of it reached where the record behind it has one.
    pub fn figures(&mut self, host: &str, command: &str, figs: &[Figure]) {
        for g in figs {
            let Some(q) = quantity(g.unit) else { continue };
            let k = key(&g.metric);
            let mut labels = vec![("host", host.to_string()), ("command", command.to_string())];
            labels.push(("figure", k.clone()));
            labels.extend(dims(&k));
            if let Some(limit) = g.limit_gbps.filter(|l| *l > 0.0) {
                self.gauge("bandwidth_limit_bytes_per_second", LIMIT_HELP)
                    .push(labels.clone(), limit * 1e9);
                self.gauge("bandwidth_limit_ratio", RATIO_HELP)
                    .push(labels.clone(), g.value / limit);
            }
            self.gauge(q.name, q.help).push(labels, g.value * q.factor);
        }
    }
}

const RUN_HELP: &str = "The run behind this file's figures: the command, the bwscope version and commit, the CPU; value 1.";
const LIMIT_HELP: &str = "The physical ceiling of a bandwidth figure's record, bytes per second: L1 load or store ports x width x clock x cores, the L2 or L3 fill rate, or the DRAM channels' peak.";
const RATIO_HELP: &str = "A bandwidth figure as a share of its ceiling (0-1; above 1 means the ceiling was set too low).";

/// The families of one run: its identity and its headline figures.
pub fn run(run: &Run) -> Vec<Family> {
    let host = host_of(run);
    let mut f = Families::default();
    f.run_info(&host, run);
    f.figures(&host, &run.command, &metrics::node_figures(run));
    f.0
}

/// A run's host name, as every family labels it.
pub fn host_of(run: &Run) -> String {
    run.host
        .env
        .hostname
        .clone()
        .unwrap_or_else(|| "unknown".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_drop_the_unit_wherever_it_stands() {
        assert_eq!(key("dram_read_gbps"), "dram_read");
        assert_eq!(key("clock_ghz"), "clock");
        assert_eq!(
            key("tier_cxl_read_gbps_cpu0_mem2"),
            "tier_cxl_read_cpu0_mem2"
        );
        assert_eq!(key("memtype_thp_first_ms_per_mib"), "memtype_thp_first");
        assert_eq!(key("tcp_out_gbps"), "tcp_out");
    }

    #[test]
    fn every_listed_figure_has_a_quantity_and_dimensions() {
        for m in metrics::METRICS {
            let k = key(m);
            assert!(!k.contains("gbps") && !k.ends_with("_ns"), "{m}");
            if k != "clock" {
                assert!(!dims(&k).is_empty(), "{m} has no dimensions");
            }
        }
        let d = dims("memtype_hugetlb_2m_copy");
        assert!(d.contains(&("kind", "hugetlb_2m".into())), "{d:?}");
        let d = dims("tier_cxl_latency_cpu0_mem2");
        assert!(d.contains(&("memory_node", "2".into())) && !d.iter().any(|(k, _)| *k == "op"));
    }

    /// A run's families: the figures in base units, labelled by
    /// dimension, and no label holding a unit.
    #[test]
    fn a_run_lands_in_base_units() {
        let text = include_str!("../../../tests/fixtures/cache-quick.json");
        let mut r: Run = serde_json::from_str(text).unwrap();
        r.host.clock_hz = Some(3e9);
        let fams = run(&r);
        let names: Vec<&str> = fams.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names[0], "bwscope_run");
        assert!(
            names.contains(&"bwscope_bandwidth_bytes_per_second"),
            "{names:?}"
        );
        let clock = fams
            .iter()
            .find(|f| f.name == "bwscope_clock_hertz")
            .unwrap();
        assert_eq!(clock.samples[0].value, 3e9);
        for f in &fams {
            for s in &f.samples {
                for (k, v) in &s.labels {
                    assert!(*k != "unit" && !v.contains("GB/s"), "{}: {k}={v}", f.name);
                }
            }
        }
    }
}
