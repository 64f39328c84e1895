//! The `numa` suite's records: matrix cells (bandwidth per mix, chase
//! latency), the write-pair scenario and the loaded-latency curve. Every
//! one says where its threads and memory were in `placement`; these are
//! the rest.

use serde::{Deserialize, Serialize};

use super::latency::latency_headline;
use super::{case_parts, Bandwidth, CasePart, RecordMetric, Judged, Nullable, SuiteDetail};
use crate::model::headline::Quantity;
use crate::model::{Op, Record, Stats};

/// A `numa` record.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct NumaDetail {
    /// The cell's cpu node (compare key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_cpu_node: Option<u32>,
    /// The cell's memory node (compare key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_memory_node: Option<u32>,
    /// The mix every thread ran (`read`, `3:1`, `1:1nt`, …; compare key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_mix: Option<String>,
    /// The roles kernel name, where threads ran different mixes (compare
    /// key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_roles: Option<String>,
    /// `write-pair` for the write-pair scenario (compare key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_scenario: Option<String>,
    /// The pair's memory nodes, thread 0 / thread 1 (`0/1`; compare key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_memory_nodes: Option<String>,
    /// The delay a load thread waits after every 4 KiB it streams, ns;
    /// null for the unloaded point (compare key).
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub case_delay_ns: Nullable<u64>,
    /// The load as asked (`2@node0`; compare key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_load: Option<String>,
    /// Each thread's mix name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix: Option<Vec<String>>,
    /// The asm kernels the mixes used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernels: Option<Vec<String>>,
    /// The interleave unit of a mix, bytes (65536).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk_bytes: Option<u64>,
    /// ns per dependent load of the chase; `best` is the lowest.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub latency_ns: Nullable<Stats>,
    /// ns per load of each sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ns_samples: Option<Vec<f64>>,
    /// Dependent loads per sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loads_per_sample: Option<u64>,
    /// The fraction of each worker's pages on its intended node after the
    /// measurement (`move_pages`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified_fraction_per_thread: Option<Vec<f64>>,
    /// Why the pages could not be counted (present only then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify_error: Option<String>,
    /// Change of `/proc/vmstat numa_pages_migrated` during the cell; null
    /// where the kernel does not count it (or the case does not read it).
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub numa_pages_migrated: Nullable<u64>,
    /// The cpu each worker reported, in worker order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_cpus: Option<Vec<Option<u32>>>,
    /// The pair's memory nodes, thread 0 then thread 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_nodes: Option<Vec<u32>>,
    /// The pair's fixed-work total time, first start → last end, seconds
    /// (`best` is the lowest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_seconds: Option<Stats>,
    /// Median total time against local/local, percent; null for
    /// local/local itself.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub percent_vs_local: Nullable<f64>,
    /// The load threads' own streaming rate, summed, GB/s; null for the
    /// unloaded point.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub injected_gbps: Nullable<f64>,
    /// Load threads running (0 for the unloaded point).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_threads: Option<u64>,
    /// The cpus of the load threads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_cpus: Option<Vec<u32>>,
    /// The load threads' mix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_mix: Option<String>,
    /// The weighted interleave of the cell: `4:1` (pages on the fast
    /// node : on the slow node), `system` for the kernel's own weights
    /// (compare key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_interleave: Option<String>,
    /// The memory node's kind (`host.tiers`; `numa --tiers`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_kind: Option<String>,
    /// What HMAT claims for this cell (`numa --tiers`): read bandwidth,
    /// GB/s (its MB/s ÷ 1000), on a bandwidth record; read latency, ns, on
    /// a latency record; absent where it claims nothing for the cell's
    /// cpu node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hmat_claim: Option<f64>,
    /// The interleave's nodes, fast then slow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interleave_nodes: Option<Vec<u32>>,
    /// How the pages were spread: `mbind ranges` or
    /// `MPOL_WEIGHTED_INTERLEAVE`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interleave_method: Option<String>,
    /// The fraction of pages meant for the fast node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interleave_expected_fast: Option<f64>,
    /// Pages per node after the measurement (`move_pages`), [node, pages].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interleave_pages: Option<Vec<(u32, u64)>>,
    /// Best GB/s against the fast node alone (`1:0`), percent.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub interleave_gain_percent: Nullable<f64>,
    /// On the sweep's best ratio: the weights a user would write for it
    /// (`echo W > FILE` per node; bwscope never writes them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interleave_weights_to_write: Option<Vec<String>>,
    /// The bandwidth probe of a loaded run (`--probe bandwidth`).
    #[serde(flatten)]
    pub bandwidth: Bandwidth,
}

impl SuiteDetail for NumaDetail {
    fn case(&self) -> Vec<CasePart> {
        case_parts([
            CasePart::of("cpu_node", self.case_cpu_node.as_ref()),
            CasePart::of("memory_node", self.case_memory_node.as_ref()),
            CasePart::of("mix", self.case_mix.as_ref()),
            CasePart::of("roles", self.case_roles.as_ref()),
            CasePart::of("scenario", self.case_scenario.as_ref()),
            CasePart::of("memory_nodes", self.case_memory_nodes.as_ref()),
            CasePart::nullable("delay_ns", &self.case_delay_ns),
            CasePart::of("load", self.case_load.as_ref()),
            CasePart::of("interleave", self.case_interleave.as_ref()),
        ])
    }

    fn metric(&self) -> Option<RecordMetric> {
        latency_headline(&self.latency_ns)
    }

    fn bandwidth(&self) -> Option<&Bandwidth> {
        Some(&self.bandwidth)
    }

    /// Each tier cell of a `numa --tiers` run: read bandwidth and latency
    /// from a cpu node to a memory node, the memory's kind in the name
    /// (`tier_cxl_read_gbps_cpu0_mem2`), so a fleet names the node whose
    /// CXL or HBM tier is slow.
    fn judged<'a>(records: &[&'a Record]) -> Vec<Judged<'a>> {
        let mut out = Vec::new();
        for &record in records {
            let Some(d) = record.detail.get::<NumaDetail>() else {
                continue;
            };
            let (Some(kind), Some(c), Some(m)) =
                (&d.memory_kind, d.case_cpu_node, d.case_memory_node)
            else {
                continue;
            };
            let (name, quantity, value) = match (&record.op, record.gbps, d.latency_ns.value()) {
                (Op::Read, Some(g), _) => ("read", Quantity::Bandwidth, g.best),
                (Op::Latency, _, Some(l)) => ("latency", Quantity::Latency, l.best),
                _ => continue,
            };
            let unit = if quantity == Quantity::Latency {
                "ns"
            } else {
                "gbps"
            };
            out.push(Judged {
                metric: format!("tier_{kind}_{name}_{unit}_cpu{c}_mem{m}"),
                quantity,
                higher_is_better: quantity != Quantity::Latency,
                family: format!("numa_tier_{name}"),
                labels: vec![
                    ("kind", kind.to_string()),
                    ("cpu_node", c.to_string()),
                    ("memory_node", m.to_string()),
                ],
                value,
                what: format!("{kind} memory on node {m} from cpu node {c}"),
                record,
            });
        }
        out
    }
}
