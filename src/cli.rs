//! Command-line definitions: one struct per subcommand, shared argument
//! groups flattened in. Validation that needs the machine (cpus, memory)
//! happens when options are resolved, in the suites.

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Parser, Debug)]
#[command(
    name = "bwscope",
    version,
    about = "Measures how fast bytes move: caches, DRAM, cores, memory types, accelerators, network",
    long_about = "Measures how fast bytes move on this machine.\n\nWith no subcommand, surveys the machine: info, a quick cache→DRAM sweep of the key kernels, and a short summary.\n\nBandwidth is in GB/s = 10^9 bytes/s unless --units GiB. Bytes counted = bytes read + bytes written by the kernel, from its declaration (a copy over an N-byte working set counts N).",
    after_help = "Exit codes: 0 ok, 1 internal error, 2 bad input (the message names the flag), 130 interrupted (files keep every finished record)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Output options, accepted before or after the subcommand.
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Print the machine: CPU, ISA features, caches, topology, measured clock, L1 ceilings
    Info(InfoArgs),
    /// List every kernel with its descriptor and whether it runs here
    Kernels(KernelsArgs),
    /// Sweep working-set sizes from L1 to DRAM for read/write/copy kernels
    Cache(CacheArgs),
    /// Thread scaling: aggregate and per-thread bandwidth for 1..N pinned threads
    Threads(ThreadsArgs),
    /// NUMA: cpu-node × memory-node matrix, read/write mixes, write-pair scenario, loaded latency
    Numa(NumaArgs),
}

#[derive(Args, Debug, Clone)]
pub struct InfoArgs {
    /// Skip measuring the core clock (saves ~0.2 s; ceilings are then unknown)
    #[arg(long)]
    pub no_clock: bool,
}

#[derive(Args, Debug, Clone)]
pub struct KernelsArgs {
    /// Only kernels whose names start with one of these (comma-separated)
    #[arg(value_name = "PREFIX")]
    pub filter: Option<String>,
}

/// Where results go and in which units.
#[derive(Args, Debug, Clone)]
pub struct OutputArgs {
    /// Write the run as JSON to FILE as records complete ('-' = stdout, nothing else printed there)
    #[arg(long, value_name = "FILE", global = true)]
    pub json: Option<String>,
    /// Write one CSV row per record to FILE as records complete ('-' = stdout)
    #[arg(long, value_name = "FILE", global = true)]
    pub csv: Option<String>,
    /// Units for tables: GB = 10^9 B/s, GiB = 2^30 B/s (JSON always stores GB/s)
    #[arg(long, value_enum, default_value = "GB", global = true)]
    pub units: UnitsArg,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnitsArg {
    #[value(name = "GB")]
    Gb,
    #[value(name = "GiB")]
    Gib,
}

/// How samples are taken.
#[derive(Args, Debug, Clone)]
pub struct SampleArgs {
    /// Timed samples per case (after calibration and warm-up)
    #[arg(long, value_name = "N")]
    pub samples: Option<usize>,
    /// Minimum duration of one sample in milliseconds; repetitions are calibrated to reach it
    #[arg(long, value_name = "MS")]
    pub min_sample_ms: Option<f64>,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum MemoryArg {
    /// MADV_HUGEPAGE: transparent huge pages (default)
    Thp,
    /// Plain anonymous mmap with the kernel's default policy
    Regular,
    /// MADV_NOHUGEPAGE: 4 KiB pages
    Nohuge,
}

#[derive(Args, Debug, Clone)]
pub struct CacheArgs {
    /// Kernels by name or prefix, comma-separated (default: every kernel; see `bwscope kernels`)
    #[arg(long, short = 'k', value_name = "NAMES")]
    pub kernel: Option<String>,
    /// Working-set sizes per thread: list and/or ranges, e.g. 16KiB,8MiB or 1KiB..1GiB:x2
    #[arg(long, short = 's', value_name = "SIZES")]
    pub sizes: Option<String>,
    /// Pinned threads, each on its own first-touched buffer (default 1)
    #[arg(long, short = 't', value_name = "N")]
    pub threads: Option<usize>,
    /// Explicit cpus for the threads, e.g. 0,2,4-7 (sets --threads to their count)
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// A fast sweep: key kernels, one size per octave, short samples (≈10 s)
    #[arg(long)]
    pub quick: bool,
    /// Page policy of the buffers
    #[arg(long, value_enum, default_value = "thp")]
    pub memory: MemoryArg,
    #[command(flatten)]
    pub sample: SampleArgs,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PlacementArg {
    /// Fill one node (package) core by core before the next; SMT siblings next to each other
    Compact,
    /// Round-robin over nodes (packages), then cores; SMT siblings last
    Scatter,
}

#[derive(Args, Debug, Clone)]
pub struct ThreadsArgs {
    /// Kernels by name or prefix (default: read, write, NT write and copy at the widest ISA)
    #[arg(long, short = 'k', value_name = "NAMES")]
    pub kernel: Option<String>,
    /// Total working sets of all threads together, split evenly between them (likwid -w S0:1GB:N
    /// convention); default: a DRAM-sized point and an L3-sized point
    #[arg(long, short = 's', value_name = "SIZES")]
    pub sizes: Option<String>,
    /// Largest thread count of the curve (default: one per physical core; all cpus with --smt)
    #[arg(long, short = 't', value_name = "N")]
    pub threads: Option<usize>,
    /// Thread counts to measure, e.g. 1,2,4 (default: every count 1..N up to 16, then doublings)
    #[arg(long, value_name = "LIST")]
    pub counts: Option<String>,
    /// Explicit cpus in the order threads are added, e.g. 0,2,4-7 (overrides --placement)
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Order in which cores receive threads
    #[arg(long, value_enum, default_value = "compact")]
    pub placement: PlacementArg,
    /// Include SMT siblings (by default one thread per physical core)
    #[arg(long)]
    pub smt: bool,
    /// One buffer, first-touched by the main thread, split in contiguous chunks (default: each
    /// thread first-touches its own buffer)
    #[arg(long)]
    pub shared: bool,
    /// Allow more threads than cpus (threads then share cpus round-robin)
    #[arg(long)]
    pub oversubscribe: bool,
    /// Run each worker as a separate process (fork), synchronised by a barrier in shared memory:
    /// the "one instance per core" way
    #[arg(long, conflicts_with = "shared")]
    pub processes: bool,
    /// Page policy of the buffers
    #[arg(long, value_enum, default_value = "thp")]
    pub memory: MemoryArg,
    #[command(flatten)]
    pub sample: SampleArgs,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScenarioArg {
    /// Two write-only threads on node 0, memory local/local vs local/remote, then the same with
    /// two read-only threads: total time and percent difference
    WritePair,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ProbeArg {
    /// Pointer-chase latency (ns per dependent load): the loaded-latency curve
    Latency,
    /// Read bandwidth of the probe thread
    Bandwidth,
}

#[derive(Args, Debug, Clone)]
pub struct NumaArgs {
    /// Nodes whose cpus run the threads (matrix rows), e.g. 0,1 (default: every node with cpus)
    #[arg(long, value_name = "LIST")]
    pub cpu_nodes: Option<String>,
    /// Nodes the memory is bound to with mbind(MPOL_BIND) (matrix columns; default: every node
    /// with memory)
    #[arg(long, value_name = "LIST")]
    pub memory_nodes: Option<String>,
    /// Threads per cell (default: one per physical core of the cpu node)
    #[arg(long, short = 't', value_name = "N")]
    pub threads: Option<usize>,
    /// Explicit cpus for the threads of a cell, e.g. 0,2 (all must be on the cpu node)
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Working set per thread (default: 4× the last-level cache (at least 256 MiB) split over the
    /// cell's threads, at least 64 MiB each)
    #[arg(long, short = 's', value_name = "SIZE")]
    pub size: Option<String>,
    /// Traffic mixes, reads:writes, comma-separated: read, write, ntwrite, or R:W like 3:1 with
    /// an optional nt suffix (1:1nt); 'mlc' = read,3:1,2:1,1:1,write (default: read)
    #[arg(long, value_name = "LIST")]
    pub mix: Option<String>,
    /// Per-thread roles instead of one mix for all, e.g. read,write or read,ntwrite (thread i gets
    /// role i; any mix syntax works)
    #[arg(long, value_name = "LIST", conflicts_with = "mix")]
    pub roles: Option<String>,
    /// Skip the latency matrix (pointer chase, one thread per cell)
    #[arg(long)]
    pub no_latency: bool,
    /// A ready-made experiment instead of the matrix
    #[arg(long, value_enum, conflicts_with_all = ["load"])]
    pub scenario: Option<ScenarioArg>,
    /// Background load: N@NODE (N threads on that node's cpus) or cpus:LIST; with it the command
    /// measures the loaded-latency curve (probe vs injected bandwidth)
    #[arg(long, value_name = "SPEC")]
    pub load: Option<String>,
    /// Delay after every 4 KiB a load thread streams, in ns: the injection steps (default:
    /// 0,100,200,500,1000,2000,5000,20000)
    #[arg(long, value_name = "LIST", requires = "load")]
    pub delays: Option<String>,
    /// Traffic of the load threads (mix syntax; default read)
    #[arg(long, value_name = "MIX", requires = "load")]
    pub load_mix: Option<String>,
    /// What the probe thread measures under load
    #[arg(long, value_enum, default_value = "latency")]
    pub probe: ProbeArg,
    /// The probe thread's cpu (default: the first cpu of the memory node's cpus not used by the load)
    #[arg(long, value_name = "CPU", requires = "load")]
    pub probe_cpu: Option<u32>,
    /// Allow more threads than the node has cpus
    #[arg(long)]
    pub oversubscribe: bool,
    /// Page policy of the buffers
    #[arg(long, value_enum, default_value = "thp")]
    pub memory: MemoryArg,
    #[command(flatten)]
    pub sample: SampleArgs,
}
