//! Arguments of the measuring suites: cache, latency, regs, memtype,
//! threads, numa, contend and transfer.

use clap::{Args, ValueEnum};

use super::{MemoryArg, OutputArgs, SampleArgs};

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
    /// Explicit cpus for the threads, e.g. 0,2,4-7 (sets --threads to their count), or kind:ID
    /// for the cpus of one kind of core (ARM; the first --threads of them if given)
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// A fast sweep: key kernels, one size per octave, short samples (≈10 s)
    #[arg(long)]
    pub quick: bool,
    /// Page policy of the buffers
    #[arg(long, value_enum, default_value = "thp")]
    pub memory: MemoryArg,
    /// Also record the cost of first use at each size (mmap + page faults + one write pass), as separate `first-use` records
    #[arg(long)]
    pub first_use: bool,
    /// Access orders to run, comma-separated: seq, random (each kernel with its
    /// counterpart, e.g. seq_read_256_avx2 beside rand_read_256_avx2)
    #[arg(long, value_name = "LIST")]
    pub pattern: Option<String>,
    #[command(flatten)]
    pub sample: SampleArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PagesArg {
    /// MADV_NOHUGEPAGE: 4 KiB pages
    #[value(name = "4k")]
    #[serde(rename = "4k")]
    Small,
    /// MADV_HUGEPAGE: transparent 2 MiB pages where the kernel grants them
    Thp,
    /// MAP_HUGETLB: reserved 2 MiB pages (needs vm.nr_hugepages)
    Hugetlb,
}

#[derive(Args, Debug, Clone)]
pub struct LatencyArgs {
    /// Working-set sizes: list and/or ranges, e.g. 16KiB,8MiB or 4KiB..1GiB:x2 (default 4 KiB to ≥4× L3)
    #[arg(long, short = 's', value_name = "SIZES")]
    pub sizes: Option<String>,
    /// Page policies, comma-separated, e.g. 4k,thp: one set of records per kind; the page size obtained is reported
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "thp",
        value_name = "KINDS"
    )]
    pub pages: Vec<PagesArg>,
    /// Chains to walk, comma-separated: random (whole buffer), window (random within --window), stride (address order every --stride bytes)
    #[arg(long, value_name = "LIST")]
    pub view: Option<String>,
    /// Window of the `window` view: the chain is random inside each window, windows in random order (default 4KiB)
    #[arg(long, value_name = "SIZE")]
    pub window: Option<String>,
    /// Stride in bytes of the `stride` view, a multiple of 8 (giving it alone selects that view)
    #[arg(long, value_name = "BYTES")]
    pub stride: Option<String>,
    /// The cpu to run on (default: the last core, away from cpu 0's interrupts)
    #[arg(long, value_name = "N")]
    pub cpu: Option<u32>,
    /// A fast sweep: one size per octave up to 2× L3, short samples
    #[arg(long)]
    pub quick: bool,
    #[command(flatten)]
    pub sample: SampleArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Args, Debug, Clone)]
pub struct RegsArgs {
    /// Kernels by name or prefix, comma-separated (default: every reg_ kernel)
    #[arg(long, short = 'k', value_name = "NAMES")]
    pub kernel: Option<String>,
    /// The cpu to run on (default: the last core)
    #[arg(long, value_name = "N")]
    pub cpu: Option<u32>,
    #[command(flatten)]
    pub sample: SampleArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Args, Debug, Clone)]
pub struct CoresArgs {
    /// One pair only, holder first (the holder's line is read by the other), e.g. 0,1
    #[arg(long, value_name = "A,B", conflicts_with_all = ["all_pairs", "cpus"])]
    pub pair: Option<String>,
    /// The cpus to pair, a list or `kind:ID` (default: every cpu this process may use)
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Every pair of the cpus (the full matrix, CAS) instead of a few per class and random checks
    #[arg(long)]
    pub all_pairs: bool,
    /// Exchanges, comma-separated: cas (compare-and-swap ping-pong), hit (a clean line read by the other cpu), hitm (a modified one) (default: all three)
    #[arg(long, value_name = "LIST")]
    pub exchange: Option<String>,
    /// Pairs measured per class of pairs (default 3)
    #[arg(long, value_name = "N")]
    pub per_class: Option<usize>,
    /// Seconds the class pairs and the random checks may take together (default: 0.1 s per cpu, 4-60 s); the checks stop when it is spent
    #[arg(long, value_name = "SECONDS")]
    pub budget: Option<f64>,
    /// Threads of the fairness view, all incrementing one line (default: up to 16; 0: none)
    #[arg(long, value_name = "N")]
    pub fairness: Option<usize>,
    /// Seed of the random pair choices (the same seed, the same pairs)
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub sample: SampleArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Args, Debug, Clone)]
pub struct MemtypeArgs {
    /// Kinds to compare, comma-separated: regular,thp,nohuge,hugetlb-2M,hugetlb-1G,locked,device-wc,device-uc,device-fb,device-dumb (default: every anonymous kind plus each --device-mem)
    #[arg(long, value_name = "KINDS")]
    pub kinds: Option<String>,
    /// Bytes copied into the buffer per pass (default 32MiB: the array of doubles of the codedivine.org write-combining test)
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// Timed copy passes after the first one, per kind (default 20)
    #[arg(long, value_name = "N")]
    pub passes: Option<usize>,
    /// Timed read passes over the buffer, per kind (default 5)
    #[arg(long, value_name = "N")]
    pub read_passes: Option<usize>,
    /// Copy kernel (default: the widest cached seq_copy this CPU runs; see `bwscope kernels copy`)
    #[arg(long, short = 'k', value_name = "NAME")]
    pub kernel: Option<String>,
    /// The cpu to run on (default: the last allowed cpu)
    #[arg(long, value_name = "CPU")]
    pub cpu: Option<u32>,
    /// Device memory to include (repeatable): a PCI BAR file .../resourceN (uncached) or .../resourceN_wc (write-combining) of a prefetchable BAR, a framebuffer /dev/fbN (contents overwritten), or /dev/dri/cardN (a fresh DRM dumb buffer is created)
    #[arg(long, value_name = "PATH")]
    pub device_mem: Vec<String>,
    /// Confirm that bwscope may overwrite the memory of the devices named by --device-mem
    #[arg(long)]
    pub allow_device_writes: bool,
    #[command(flatten)]
    pub output: OutputArgs,
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
    /// Kernels by name or prefix (default: read, write, NT write, copy, NT copy and the four-page NT copy `pages_copy_*` at the widest ISA)
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
    /// Explicit cpus in the order threads are added, e.g. 0,2,4-7, or kind:ID for one kind of
    /// core (ARM; ids in `bwscope info`) (overrides --placement)
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
    #[command(flatten)]
    pub output: OutputArgs,
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
    /// Explicit cpus for the threads of a cell, e.g. 0,2, or kind:ID for one kind of core (ARM)
    /// (all must be on the cpu node)
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
    /// Memory tiers: every initiator node × memory node (mixes read,3:1,2:1,1:1 unless --mix, the
    /// chase) beside what ACPI HMAT claims, each cell's loaded-latency curve, and the interleave
    /// sweep from the first initiator's node to each cpu-less node
    #[arg(long, conflicts_with_all = ["load", "scenario", "roles"])]
    pub tiers: bool,
    /// The interleave sweep over two nodes, FAST,SLOW: read bandwidth with pages spread 1:0, 4:1,
    /// 3:1, 2:1, 1:1, 0:1, bandwidth-proportionally and by the kernel's weights (never written)
    #[arg(long, value_name = "FAST,SLOW", conflicts_with_all = ["load", "scenario", "roles"])]
    pub interleave: Option<String>,
    /// Allow more threads than the node has cpus
    #[arg(long)]
    pub oversubscribe: bool,
    /// Page policy of the buffers
    #[arg(long, value_enum, default_value = "thp")]
    pub memory: MemoryArg,
    #[command(flatten)]
    pub sample: SampleArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Args, Debug, Clone)]
pub struct ContendArgs {
    /// A CPU team: N@NODE[:MIX] (N threads on free cpus of NODE, memory bound there) or
    /// cpus:LIST[:MIX]; MIX is read, write, ntwrite, copy or R:W like 3:1 (default read); repeat
    /// for more teams
    #[arg(long, value_name = "SPEC")]
    pub cpu: Vec<String>,
    /// A device copy stream: BACKEND[N]:DIR[:HOSTKIND], e.g. cuda:h2d, cuda1:d2h:pinned-wc,
    /// cuda:sm-h2d, opencl:d2h:host-ptr (DIR: h2d, d2h, bidir, d2d, sm-h2d, sm-d2h, sm-d2d);
    /// repeat for more
    #[arg(long, value_name = "SPEC")]
    pub device: Vec<String>,
    /// A TCP flow: loopback (this process is both ends) or HOST[:PORT][:send|recv] (a `bwscope
    /// net serve` transponder; default recv); repeat for more
    #[arg(long, value_name = "SPEC")]
    pub net: Vec<String>,
    /// A bystander on a free cpu, measured in every phase (and alone, phase `idle`): what the agents do to a latency chase or a read beside them (--probe before 0.2, still accepted)
    #[arg(long, value_enum, alias = "probe")]
    pub bystander: Option<ProbeArg>,
    /// The bystander's cpu (default: the first cpu no agent uses)
    #[arg(long, value_name = "CPU", requires = "bystander", alias = "probe-cpu")]
    pub bystander_cpu: Option<u32>,
    /// Phases, comma-separated: alone, pairs, all, idle (the bystander alone) or agent names joined
    /// by + (cpu0+dev0); default alone,pairs,all (idle first with --bystander)
    #[arg(long, value_name = "LIST")]
    pub phases: Option<String>,
    /// Buffer per CPU thread (default: 4× the last-level cache over the team, at least 32 MiB)
    #[arg(long, short = 's', value_name = "SIZE")]
    pub size: Option<String>,
    /// Bytes per device copy (default 64MiB)
    #[arg(long, value_name = "SIZE")]
    pub device_size: Option<String>,
    /// Page policy of the CPU buffers
    #[arg(long, value_enum, default_value = "thp")]
    pub memory: MemoryArg,
    /// Token for --net transponders started with `bwscope net serve --token-file` (at most
    /// 4 KiB, mode 0600 or 0400)
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<String>,
    /// The window is --samples slices of --min-sample-ms each (default 5 × 200 ms)
    #[command(flatten)]
    pub sample: SampleArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendArg {
    /// CUDA if a driver and device are present, else OpenCL
    Auto,
    /// NVIDIA driver API (libcuda.so, loaded at run time)
    Cuda,
    /// OpenCL ICD (libOpenCL.so.1, loaded at run time)
    Opencl,
}

#[derive(Args, Debug, Clone)]
#[command(
    after_help = "Kinds: cuda: pageable, pinned, pinned-wc, registered, mapped; opencl: host-ptr, alloc-host-ptr, alloc-host-ptr-ro.\nDirections: h2d, d2h, d2d (counts read + write), bidir (both at once on two queues), map (unmap+map of mapped kinds; zero-copy detected).\njielahou's pinned-vs-pageable sweep: --sizes 160MB..3040MB:+160MB"
)]
pub struct TransferArgs {
    /// Which API moves the bytes
    #[arg(long, value_enum, default_value = "auto")]
    pub backend: BackendArg,
    /// Device index in the backend's list (OpenCL: all platforms' devices in order)
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub device: usize,
    /// Host memory kinds, comma-separated (default: every kind of the backend)
    #[arg(long, value_name = "KINDS")]
    pub kinds: Option<String>,
    /// Directions, comma-separated: h2d,d2h,d2d,bidir,map (default: all)
    #[arg(long, value_name = "DIRS")]
    pub directions: Option<String>,
    /// Transfer sizes: list and/or ranges (default 4KiB..1GiB:x4)
    #[arg(long, short = 's', value_name = "SIZES")]
    pub sizes: Option<String>,
    /// Skip the pattern → copy → read back → compare check of every case
    #[arg(long)]
    pub no_verify: bool,
    /// Run the host thread on this NUMA node and bind host buffers to it (default: the device's node)
    #[arg(long, value_name = "NODE")]
    pub host_node: Option<u32>,
    #[command(flatten)]
    pub sample: SampleArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}
