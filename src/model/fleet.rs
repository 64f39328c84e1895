//! A fleet run (`bwscope fleet`): every node's complete [`Run`] in the
//! ordinary schema, the pair matrices of the network phase, the verdicts,
//! and where the wall time went. This is the wire format of `fleet.json`,
//! documented in `docs/fleet.md`.
//!
//! Bump [`FLEET_SCHEMA_VERSION`] on any incompatible change of the fields
//! below; the node runs inside follow [`super::SCHEMA_VERSION`].

use serde::{Deserialize, Serialize};

use super::{Op, Run, Tool, Warning};

/// Version of the fleet layout. Readers refuse newer versions.
pub const FLEET_SCHEMA_VERSION: u32 = 1;

/// The `kind` field that tells a fleet file from a single run.
pub const FLEET_KIND: &str = "bwscope-fleet";

/// A whole fleet run, as rank 0 writes it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FleetRun {
    /// Always [`FLEET_KIND`].
    pub kind: String,
    pub fleet_schema_version: u32,
    /// Schema of the node runs in `nodes[].run`.
    pub schema_version: u32,
    pub tool: Tool,
    /// Rank 0's argv.
    pub command_line: Vec<String>,
    /// The resolved fleet plan every rank followed.
    pub options: serde_json::Value,
    pub launch: Launch,
    /// RFC 3339 UTC.
    pub started_at: String,
    pub finished_at: Option<String>,
    /// False while the run is in progress or when it was interrupted.
    pub complete: bool,
    /// True when Ctrl-C (or SIGTERM) on rank 0 stopped the run early.
    pub interrupted: bool,
    /// One entry per rank, in rank order.
    pub nodes: Vec<FleetNode>,
    /// One matrix per transport of the network phase (empty without one).
    pub network: Vec<NetMatrix>,
    pub verdicts: Option<Verdicts>,
    pub timings: Timings,
    pub warnings: Vec<Warning>,
}

/// How the ranks were started.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Launch {
    /// `openmpi`, `slurm`, `pmi` (MPICH Hydra, Intel MPI), `flux`, `mvapich`.
    pub launcher: String,
    /// `tcp` (rank 0 gathers over TCP) or `mpi`.
    pub control: String,
    pub ranks: u32,
    /// Distinct machines (kernels) among the ranks.
    pub machines: u32,
    /// The job and step as the launcher names them, where it does.
    pub job: Option<String>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum NodeStatus {
    #[default]
    Ok,
    /// The rank died or went silent; `lost_in` names the phase.
    Lost,
    /// The run was interrupted before this node finished.
    Interrupted,
    /// The node's own run failed (`reason`).
    Error,
}

/// One rank.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct FleetNode {
    pub rank: u32,
    /// The name shown everywhere: the host name, or `host:rank` where
    /// several ranks share one.
    pub label: String,
    pub hostname: String,
    /// The kernel the rank ran under (`/proc/sys/kernel/random/boot_id`):
    /// ranks that share it share memory and take turns measuring.
    pub machine: String,
    pub local_rank: Option<u32>,
    /// The address its peers reached it at in the network phase.
    pub address: Option<String>,
    pub status: NodeStatus,
    /// `startup`, `node`, `network` or `finish`, for a lost rank.
    pub lost_in: Option<String>,
    pub reason: Option<String>,
    /// Seconds this rank spent measuring its node.
    pub node_seconds: Option<f64>,
    /// The node's complete run (the ordinary schema); null when lost
    /// before it delivered one. Where the node was measured again
    /// (`turns`), each case holds its best turn's record.
    pub run: Option<Run>,
    /// Every measurement of a node whose memory figures were outliers:
    /// the node phase's (turn 0) and each turn after the network phase,
    /// at different moments, every record as measured (absent when the
    /// node was measured once, and in older files).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub turns: Vec<NodeTurn>,
}

/// One measurement of a node's plan.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct NodeTurn {
    /// 0: the node phase; 1, 2, …: the turns after the network phase.
    pub turn: u32,
    /// When it started, seconds since the fleet started; null where not known.
    pub at_seconds: Option<f64>,
    /// Its records, as measured.
    pub records: Vec<super::Record>,
}

/// How a pair of ranks moves bytes: bwscope's own TCP protocol (as
/// `bwscope net`) or MPI messages. In the JSON: `"tcp"`, `"mpi"`, the
/// model's words ([`Op::Tcp`], [`Op::Mpi`]): a contend net agent's record,
/// one flow of the same TCP protocol, has the op `tcp`, so the word means
/// one thing in a fleet's matrix and in a record. The fleet needs the
/// closed pair (it dispatches on it), so it keeps its own type.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Transport {
    #[default]
    Tcp,
    Mpi,
}

impl From<Transport> for Op {
    fn from(t: Transport) -> Op {
        match t {
            Transport::Tcp => Op::Tcp,
            Transport::Mpi => Op::Mpi,
        }
    }
}

impl Serialize for Transport {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Transport {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Transport, D::Error> {
        let s = String::deserialize(d)?;
        Transport::parse(&s).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown transport `{s}`, expected `{}` or `{}`",
                Transport::Tcp.name(),
                Transport::Mpi.name()
            ))
        })
    }
}

impl Transport {
    /// Its name in the JSON and on the command line: the model's word
    /// (each transport is one it knows; a test checks).
    pub fn name(self) -> &'static str {
        Op::from(self).word().unwrap_or_default()
    }

    /// The transport called `name` (`--transport`), if any.
    pub fn parse(name: &str) -> Option<Transport> {
        [Transport::Tcp, Transport::Mpi]
            .into_iter()
            .find(|t| t.name() == name)
    }
}

impl std::fmt::Display for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The pair measurements of one transport.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct NetMatrix {
    /// `tcp` (bwscope's own protocol, as `bwscope net`) or `mpi`.
    pub transport: Transport,
    /// `shift`, `pairs` or `sample`.
    pub schedule: String,
    /// Message sizes (TCP: bytes per write; MPI: bytes per message).
    pub sizes: Vec<u64>,
    /// Synchronised steps per size.
    pub steps: u32,
    /// The transport's parameters (time per step, omit, window, ...).
    pub parameters: serde_json::Value,
    /// Wall time of this transport's phase, seconds.
    pub seconds: f64,
    /// Every flow that was scheduled, measured or not.
    pub flows: Vec<Flow>,
}

/// One directed flow `src → dst` at one size, in one step.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Flow {
    pub src: u32,
    pub dst: u32,
    pub size_bytes: u64,
    pub step: u32,
    /// Flows that ran at the same time in that step (load on the fabric;
    /// flows a lost rank left out are not counted).
    pub concurrent: u32,
    /// GB/s (10^9 B/s) as the sender saw it.
    pub send_gbps: Option<f64>,
    /// GB/s as the receiver saw it: what arrived (the headline).
    pub recv_gbps: Option<f64>,
    /// Bytes the receiver counted in its measured window.
    pub bytes: Option<u64>,
    /// Why a figure is null (peer lost, unreachable, refused, ...).
    pub reason: Option<String>,
    /// Other processes' load on the measuring rank's machine while the
    /// test ran, CPUs (the noise reading around it: the leader's over TCP,
    /// each end's over MPI, the larger kept); absent in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foreign_cpus: Option<f64>,
    /// The most that load can slow the flow (`model::noise_slowdown` with
    /// the test's streams on that machine's cpus).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_slowdown: Option<f64>,
}

/// Where rank 0's wall time went, seconds.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Timings {
    pub total_seconds: f64,
    /// Start of rank 0 until every rank joined and agreed on versions.
    pub startup_seconds: f64,
    pub node_phase_seconds: f64,
    /// Per round of turns, the longest rank's measuring time, summed.
    pub node_measure_seconds: f64,
    pub network_seconds: f64,
    /// Per step, the longest test's duration, summed.
    pub network_measure_seconds: f64,
    /// 1 − measuring / total: rendezvous, gathers, barriers, writing.
    pub overhead_fraction: f64,
}

/// Verdicts over the fleet, per node and per link.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Verdicts {
    /// A value is a fleet outlier when its robust z-score is at least
    /// `robust_z` and it is at least `pct_worse` percent worse than the
    /// fleet median (both, so neither a tight fleet nor a noisy one alone
    /// makes an outlier).
    pub robust_z: f64,
    pub pct_worse: f64,
    /// Fewest nodes with a figure for a metric to be judged against the fleet.
    pub min_nodes: u32,
    /// Foreign load (CPUs' worth of other processes, as read) from which a
    /// bad figure measured under it may be too noisy to fail a node on
    /// (absent in files written before it existed).
    #[serde(default)]
    pub noisy_cpus: f64,
    /// Nodes whose verdict noise made uncertain: a figure worse than the
    /// fleet or its bound was measured under at least `noisy_cpus` of
    /// foreign load, so the node is UNKNOWN instead of failing.
    #[serde(default)]
    pub uncertain_by_noise: u32,
    /// The reference file given with `--reference`, if any.
    pub reference: Option<String>,
    pub metrics: Vec<MetricSummary>,
    /// One per rank, in rank order.
    pub nodes: Vec<NodeVerdict>,
    /// Flows that are outliers and not explained by a slow node link.
    pub links: Vec<LinkVerdict>,
    /// The fleet's medians against its own recent runs in the history
    /// store; absent without a store or in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub past: Option<super::fleet_past::PastVerdict>,
    /// Findings about the whole fleet (a fleet-wide drop, every node below
    /// its class bound, a node slowest run after run).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<super::fleet_past::Finding>,
}

/// A metric across the fleet.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct MetricSummary {
    pub metric: String,
    pub unit: String,
    pub higher_is_better: bool,
    /// Nodes with a figure.
    pub nodes: u32,
    pub median: f64,
    /// Median absolute deviation of the natural logarithms of the figures
    /// from their median (a relative spread: 0.05 ≈ 5 %).
    pub log_mad: f64,
    /// The spread a robust z is measured in, ln units (1.4826 × log_mad,
    /// or 1.2533 × the mean absolute deviation where that is 0).
    pub log_scale: f64,
    /// False when too few nodes have the metric to judge against the fleet.
    pub judged: bool,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct NodeVerdict {
    pub rank: u32,
    pub label: String,
    pub ok: bool,
    /// The largest robust z in the worse direction over its metrics (how
    /// far it sits from the fleet; the HTML table sorts by it).
    pub distance: f64,
    pub checks: Vec<Check>,
    /// Why the node failed or was not judged without a figure (lost,
    /// error, interrupted).
    pub reason: Option<String>,
    /// Worth taking out of service: a failed check, a missing or smaller
    /// memory tier, or lost. An interrupted or failed run of bwscope
    /// itself is not the node's fault.
    pub drain: bool,
    /// Memory tiers most of the fleet has and this node lacks, or has
    /// less of (`host.tiers`); absent when none, and in older files.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tier_gaps: Vec<TierGap>,
}

/// A memory tier (HBM, CXL, device memory) that most nodes of the fleet
/// have and this node lacks or has less of: "no hbm tier: 4 of 5 nodes
/// have one (64 GiB)".
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TierGap {
    pub kind: super::NodeKind,
    /// This node's memory of that kind, bytes (0: none); null where a
    /// node of that kind did not say its capacity.
    pub capacity_bytes: Option<u64>,
    /// The median of that kind's capacity over the nodes that have it;
    /// null where none said it.
    pub fleet_bytes: Option<u64>,
    /// Nodes that have the kind, of the `nodes` whose tiers are known.
    pub nodes_with: u32,
    pub nodes: u32,
}

/// One metric of one node.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Check {
    pub metric: String,
    pub unit: String,
    pub value: f64,
    /// (ln median − ln value) / log_scale, signed so that positive is
    /// worse than the fleet median.
    pub robust_z: Option<f64>,
    /// Percent worse than the fleet median (negative: better).
    pub pct_worse: Option<f64>,
    /// The class bound from the reference file (a floor for rates, a
    /// ceiling for latencies).
    pub reference: Option<f64>,
    /// Fleet outlier: both the robust z and the percentage crossed.
    pub outlier: bool,
    /// Worse than the reference bound.
    pub below_reference: bool,
    /// The value a healthy node should reach (the tighter of the fleet
    /// threshold and the reference), for the verdict file.
    pub expected: Option<f64>,
    /// Foreign load while the figure was measured: CPUs' worth of other
    /// processes (the record's `noise.foreign_cpus`; for network figures
    /// the median over the node's flows); null without a noise reading.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foreign_cpus: Option<f64>,
    /// The most that load can slow the figure: (1 + the load beyond the
    /// cpus the measurement left free, per thread) × (1 + the load per
    /// thread), a share of the cpus times a share of the memory system.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_slowdown: Option<f64>,
    /// The figure is an outlier or worse than its bound but was measured
    /// under at least `Verdicts::noisy_cpus` of foreign load, which can
    /// slow it that far (`noise_slowdown`): uncertain, so it does not fail
    /// the node.
    #[serde(default)]
    pub noisy: bool,
    /// The record behind the figure moved between measurements at
    /// different moments by more than its node's load explains
    /// (`Record::repeats`): the memory was contended from outside, so a
    /// bad figure is `noisy`, not a failure (absent when false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub contended: bool,
    /// The figure in each of the node's turns (`FleetNode::turns`),
    /// earliest first; absent where it was measured once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub turns: Vec<CheckTurn>,
    /// Bad in some turn but not in every one: a dip the node did not
    /// repeat, reported with `turns`, not a failure (absent when false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub transient: bool,
}

/// A figure in one of its node's turns.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct CheckTurn {
    pub value: f64,
    /// An outlier or worse than the class bound in that turn.
    pub bad: bool,
}

impl Check {
    /// Worse than the fleet or the class bound (noisy or not).
    pub fn bad(&self) -> bool {
        self.outlier || self.below_reference
    }

    /// A failure the node is judged on: bad, not noisy, and bad in every
    /// turn it was measured in.
    pub fn fails(&self) -> bool {
        self.bad() && !self.noisy && !self.transient
    }

    /// Judged at all: against the fleet or a class bound.
    pub fn judged(&self) -> bool {
        self.robust_z.is_some() || self.reference.is_some()
    }
}

/// A flow that is slow or could not be measured.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct LinkVerdict {
    pub transport: Transport,
    pub src: u32,
    pub dst: u32,
    pub size_bytes: u64,
    /// What arrived, GB/s; null when the flow failed (`reason`).
    pub gbps: Option<f64>,
    /// Median over the healthy flows of that transport and size that ran
    /// under the same load (`Flow::concurrent`).
    pub median_gbps: Option<f64>,
    pub robust_z: Option<f64>,
    pub pct_worse: Option<f64>,
    pub reason: Option<String>,
    /// The node whose own link explains it (its in or out figure is an
    /// outlier, or it was lost), or null for a slow path between two
    /// healthy nodes.
    pub explained_by: Option<String>,
    /// Slower than its peers, but measured under foreign load that can
    /// explain it (`Flow::noise_slowdown`): no slow path is claimed.
    #[serde(default)]
    pub noisy: bool,
}

impl LinkVerdict {
    /// A finding about the path itself: slow or failed between two nodes
    /// that do not explain it, and not put down to noise.
    pub fn is_path(&self) -> bool {
        self.explained_by.is_none() && !self.noisy
    }
}

impl FleetRun {
    pub fn node(&self, rank: u32) -> Option<&FleetNode> {
        // Rank 0 lists the nodes by rank, so the node is at its index
        // (callers ask for every node in turn: a search each would be
        // quadratic in the job size); any other order is searched.
        match self.nodes.get(rank as usize) {
            Some(n) if n.rank == rank => Some(n),
            _ => self.nodes.iter().find(|n| n.rank == rank),
        }
    }

    /// The node with this label or host name.
    pub fn find(&self, name: &str) -> Option<&FleetNode> {
        self.nodes
            .iter()
            .find(|n| n.label == name)
            .or_else(|| self.nodes.iter().find(|n| n.hostname == name))
    }

    pub fn label(&self, rank: u32) -> String {
        self.node(rank)
            .map_or_else(|| format!("rank{rank}"), |n| n.label.clone())
    }
}

#[cfg(test)]
impl FleetRun {
    /// A fleet for tests: nodes `n0` … `n{n-1}` without runs and one TCP
    /// shift matrix at 1 MiB whose flow `src → dst` arrived at
    /// `gbps(src, dst)` GB/s (None: not measured, "refused").
    pub(crate) fn test_shift(n: u32, gbps: impl Fn(u32, u32) -> Option<f64>) -> FleetRun {
        let mut flows = Vec::new();
        for d in 1..n {
            for src in 0..n {
                let dst = (src + d) % n;
                let g = gbps(src, dst);
                flows.push(Flow {
                    src,
                    dst,
                    size_bytes: 1 << 20,
                    step: d - 1,
                    concurrent: n,
                    recv_gbps: g,
                    send_gbps: g,
                    reason: g.is_none().then(|| "refused".into()),
                    ..Flow::default()
                });
            }
        }
        FleetRun {
            kind: FLEET_KIND.into(),
            fleet_schema_version: FLEET_SCHEMA_VERSION,
            schema_version: super::SCHEMA_VERSION,
            tool: Tool::this(),
            command_line: Vec::new(),
            options: serde_json::Value::Null,
            launch: Launch::default(),
            started_at: String::new(),
            finished_at: None,
            complete: true,
            interrupted: false,
            nodes: (0..n)
                .map(|r| FleetNode {
                    rank: r,
                    label: format!("n{r}"),
                    hostname: format!("n{r}"),
                    ..FleetNode::default()
                })
                .collect(),
            network: vec![NetMatrix {
                transport: Transport::Tcp,
                schedule: "shift".into(),
                sizes: vec![1 << 20],
                steps: n - 1,
                flows,
                ..NetMatrix::default()
            }],
            verdicts: None,
            timings: Timings::default(),
            warnings: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transports_are_the_models_words_in_the_json() {
        for (t, s) in [(Transport::Tcp, "tcp"), (Transport::Mpi, "mpi")] {
            assert_eq!(t.name(), s);
            assert_eq!(Transport::parse(s), Some(t));
            assert_eq!(serde_json::to_value(t).unwrap(), serde_json::json!(s));
            assert_eq!(serde_json::from_value::<Transport>(s.into()).unwrap(), t);
        }
        let e = serde_json::from_value::<Transport>("udp".into()).unwrap_err();
        assert!(e.to_string().contains("unknown transport `udp`"), "{e}");
    }
}
