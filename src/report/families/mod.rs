//! The metric families bwscope writes for Prometheus (`--prometheus`,
//! `--openmetrics`, `watch`, `fleet`, `report -f …`), designed once after
//! the Prometheus naming guide (prometheus.io/docs/practices/naming) and
//! node_exporter's practice: base units in the name, one family per
//! quantity, the dimensions as labels, identity in `…_info`, HELP and
//! TYPE on every family, a counter only where something is counted.
//! Every family, its unit, labels and a query are in `docs/metrics.md`.
//!
//! A headline figure ([`Figure`]) lands in the family its descriptor
//! names (`model::headline`: `Figure::family`, `Figure::quantity`,
//! `Figure::labels`), `bwscope_<family>_<base unit>`, in the base unit,
//! labelled with its dimensions and its stable name (`figure`: its metric
//! key without the unit), so a headline or a suite's figure added there
//! appears here with no edit.

pub mod fleet;
pub mod watch;

use super::exposition::{Family, Kind};
use super::fleet::metrics;
use crate::model::headline::{Figure, Quantity};
use crate::model::Run;

/// The family a figure lands in, after `bwscope_`: its family and its
/// quantity's base unit (`bandwidth_bytes_per_second`).
pub fn family_of(f: &Figure) -> String {
    format!("{}_{}", f.family, f.quantity.base_unit())
}

/// The HELP of a figure family: the same for every figure in it (readers
/// such as node_exporter merge a family's files and want one help).
pub fn help_of(f: &Figure) -> String {
    // A family whose figures are not a sample's best says what they are.
    if let Some((_, unit)) = OWN_UNITS.iter().find(|(family, _)| *family == f.family) {
        return format!(
            "bwscope's {} figures, in {unit}; the label figure names each (docs/metrics.md).",
            f.family.replace('_', " ")
        );
    }
    let unit = match f.quantity {
        Quantity::Bandwidth => {
            "bytes per second (bytes read + written as the kernel declares them; the best of its samples)"
        }
        Quantity::Latency => "seconds per load (the best of its samples)",
        Quantity::Clock => "hertz",
        Quantity::CostPerMib => "seconds per byte (mapping the memory and its first pass)",
    };
    format!(
        "bwscope's {} figures, in {unit}; the label figure names each (docs/metrics.md).",
        f.family.replace('_', " ")
    )
}

/// Families whose unit phrase is their own: the cores suite's classes are
/// each the median of their fastest pair's samples (`CoresDetail::judged`).
const OWN_UNITS: &[(&str, &str)] = &[(
    "core_to_core",
    "seconds per one-way transfer of a cache line between two cpus of the class (its fastest pair's median)",
)];

/// The unit words a figure's metric key carries (`dram_read_gbps`,
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

/// A figure's labels after `host` and `command`: its name, then its
/// dimensions.
pub fn labels_of(f: &Figure) -> Vec<(&'static str, String)> {
    let mut l = vec![("figure", key(&f.metric))];
    l.extend(f.labels.iter().cloned());
    l
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

    /// Each figure of `run` (or of a fleet's network) in its family, with
    /// the ceiling of the record behind it and the share of it reached
    /// where that record has one.
    pub fn figures(&mut self, host: &str, command: &str, run: Option<&Run>, figs: &[Figure]) {
        for g in figs {
            let mut labels = vec![("host", host.to_string()), ("command", command.to_string())];
            labels.extend(labels_of(g));
            let limit = g
                .record
                .zip(run)
                .and_then(|(i, r)| r.records.get(i))
                .and_then(|r| r.limit_gbps)
                .filter(|l| *l > 0.0 && g.quantity == Quantity::Bandwidth);
            if let Some(limit) = limit {
                self.gauge("bandwidth_limit_bytes_per_second", LIMIT_HELP)
                    .push(labels.clone(), limit * 1e9);
                self.gauge("bandwidth_limit_ratio", RATIO_HELP)
                    .push(labels.clone(), g.value / limit);
            }
            self.gauge(&family_of(g), &help_of(g))
                .push(labels, g.quantity.to_base(g.value));
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
    f.figures(&host, &run.command, Some(run), &metrics::node_figures(run));
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
    use crate::model::headline::Headline;

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

    /// Every fixed headline lands in a family named for its quantity's
    /// base unit, no two alike in it, none labelled with a unit.
    #[test]
    fn every_headline_has_a_family_in_base_units() {
        let mut seen = Vec::new();
        for h in Headline::ALL {
            let f = Figure::of(h, 1.0);
            let name = family_of(&f);
            assert!(name.ends_with(h.quantity().base_unit()), "{name}");
            let l = labels_of(&f);
            assert!(
                !l.iter().any(|(k, v)| *k == "unit" || v.contains('/')),
                "{l:?}"
            );
            assert!(!seen.contains(&(name.clone(), l.clone())), "{h:?}");
            seen.push((name, l));
        }
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
