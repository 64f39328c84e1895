//! `bwscope fleet` arguments.

use clap::{Args, ValueEnum};

use super::{OutputArgs, SampleArgs};

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ScheduleArg {
    /// mpiGraph: N−1 steps, in step d every rank sends to r+d and receives from r−d at once
    Shift,
    /// LinkTest: every pair once, both directions at once, isolated (--pairs-at-once)
    Pairs,
    /// nvloom: each node against --peers random peers, median kept; linear cost
    Sample,
    /// No network phase
    None,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PairsAtOnceArg {
    /// One pair at a time: N(N−1)/2 steps, nothing else on the fabric
    One,
    /// ⌊N/2⌋ disjoint pairs at a time: N−1 steps
    Half,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TurnsArg {
    /// Ranks on different machines measure at once; ranks sharing a machine (kernel) take turns
    Auto,
    /// Every rank at once
    All,
    /// One rank at a time
    One,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ControlArg {
    /// MPI in a build with --features mpi, else TCP
    Auto,
    /// A TCP connection from every rank to rank 0 (tolerates lost ranks)
    Tcp,
    /// MPI point-to-point (needs a build with --features mpi)
    Mpi,
}

#[derive(Args, Debug, Clone)]
#[command(
    after_help = "Launch: mpirun -np N bwscope fleet …  |  srun -N N --ntasks-per-node=1 bwscope fleet …\nResults: --out DIR (default ./bwscope-fleet/<UTC time>): fleet.json (every node's run, the matrices, the verdicts), fleet.csv (src,dst,size,direction,gbps,…), fleet.html, verdicts.txt, drain.txt.\nExit codes: 0 ok, 2 bad input or mixed releases, 3 a node failed its verdict (--fail-if-outlier), 130 interrupted (files keep every finished record)."
)]
pub struct FleetArgs {
    #[command(flatten)]
    pub output: OutputArgs,
    /// Per-node suites, comma-separated
    // `app::command` names the choices (from the suites' descriptors).
    #[arg(
        long,
        value_name = "LIST",
        default_value = "info,cache,latency,threads"
    )]
    pub suites: String,
    /// Who measures at once in the per-node phase
    #[arg(long, value_enum, default_value = "auto")]
    pub turns: TurnsArg,
    #[command(flatten)]
    pub sample: SampleArgs,
    /// Pair schedule of the network phase
    #[arg(long, value_enum, default_value = "shift")]
    pub schedule: ScheduleArg,
    /// pairs: how many pairs at a time
    #[arg(long, value_enum, default_value = "one")]
    pub pairs_at_once: PairsAtOnceArg,
    /// sample: random peers per node
    #[arg(long, value_name = "K", default_value_t = 5)]
    pub peers: u32,
    /// sample: seed of the draw (the same seed draws the same peers)
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
    /// Transports of the network phase, comma-separated: tcp (bwscope's own protocol, as `bwscope net`), mpi (needs --features mpi)
    #[arg(long, value_name = "LIST", default_value = "tcp")]
    pub transport: String,
    /// Message sizes (TCP: bytes per write; MPI: bytes per message): list or range, e.g. 64KiB,1MiB
    #[arg(long, value_name = "SIZES", default_value = "1MiB")]
    pub msg_sizes: String,
    /// Measured seconds of every step at every size
    #[arg(long, value_name = "SECS", default_value_t = 1.0)]
    pub step_time: f64,
    /// TCP: seconds excluded at the start of each test (slow start)
    #[arg(long, value_name = "SECS", default_value_t = 0.2)]
    pub omit: f64,
    /// TCP: connections per flow
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub streams: u32,
    /// MPI: messages in flight per flow
    #[arg(long, value_name = "N", default_value_t = 16)]
    pub window: u32,
    /// TCP port of every rank's transponder, plus its local rank (0: any free port)
    #[arg(long, value_name = "P", default_value_t = 0)]
    pub net_port: u16,
    /// Take each rank's pair-test address from this network, e.g. 10.1.0.0/16 (default: the address it reached rank 0 from)
    #[arg(long, value_name = "CIDR")]
    pub net_subnet: Option<String>,
    /// Rank 0 listens on PORT and the others connect to HOST:PORT, instead of meeting through the rendezvous file; default: $BWSCOPE_COORDINATOR
    #[arg(long, value_name = "HOST:PORT")]
    pub coordinator: Option<String>,
    /// Directory every rank sees, for the rendezvous file (default: the working directory)
    #[arg(long, value_name = "DIR")]
    pub rendezvous: Option<String>,
    /// Token shared by every rank (HMAC challenge on every connection; default: the file $BWSCOPE_TOKEN_FILE names, else a fresh token in the rendezvous file, mode 0600)
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<String>,
    /// How rank 0 talks to the ranks
    #[arg(long, value_enum, default_value = "auto")]
    pub control: ControlArg,
    /// Seconds rank 0 waits for a silent rank beyond a phase's expected length before marking it lost
    #[arg(long, value_name = "SECS", default_value_t = 60.0)]
    pub timeout: f64,
    /// Results folder (default ./bwscope-fleet/<UTC time>)
    #[arg(long, value_name = "DIR")]
    pub out: Option<String>,
    /// Per-node-class bounds (JSON, keyed by CPU model, cores and memory; see docs/fleet.md): a node worse than its class fails even when the whole fleet is slow
    #[arg(long, value_name = "FILE")]
    pub reference: Option<String>,
    /// Write a reference file from this run (bounds at the class median less --outlier-pct)
    #[arg(long, value_name = "FILE")]
    pub write_reference: Option<String>,
    /// Exit with code 3 when a node fails its verdict
    #[arg(long)]
    pub fail_if_outlier: bool,
    /// Robust z-score (median/MAD) a value must reach to be an outlier
    #[arg(long, value_name = "Z", default_value_t = 3.5)]
    pub outlier_z: f64,
    /// Percent worse than the fleet median a value must also be to be an outlier
    #[arg(long, value_name = "PCT", default_value_t = 7.0)]
    pub outlier_pct: f64,
    /// Percent worse than this fleet's median of its recent runs (the history store) a fleet median must be to be a fleet-wide drop
    #[arg(long, value_name = "PCT", default_value_t = 15.0)]
    pub past_pct: f64,
    /// Fixed top of the HTML heatmap's colour scale, GB/s
    #[arg(long, value_name = "GBPS")]
    pub scale_max: Option<f64>,
    /// Print the plan and how long it will take, then exit
    #[arg(long)]
    pub dry_run: bool,
    /// With --dry-run outside a launcher: the fleet size to plan for
    #[arg(long, value_name = "N", requires = "dry_run")]
    pub nodes: Option<u32>,
}
