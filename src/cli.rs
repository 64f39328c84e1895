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
    /// Host ↔ accelerator copies (CUDA or OpenCL): pageable, pinned, write-combined, mapped
    Transfer(TransferArgs),
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
    after_help = "Kinds: cuda: pageable, pinned, pinned-wc, registered, mapped; opencl: host-ptr, alloc-host-ptr, alloc-host-ptr-ro.\nDirections: h2d, d2h, d2d (counts read + write), bidir (both at once on two queues), map (unmap+map of mapped kinds; zero-copy detected).\nThe seed's sweep: --sizes 160MB..3040MB:+160MB"
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
}
