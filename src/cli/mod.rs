//! Command-line definitions: one struct per subcommand, shared argument
//! groups flattened in. Validation that needs the machine (cpus, memory)
//! happens when options are resolved, in the suites.

use clap::{Args, Parser, Subcommand, ValueEnum};

mod fleet;
mod history;
mod net;
mod suites;
mod watch;
pub use fleet::*;
pub use history::*;
pub use net::*;
pub use suites::*;
pub use watch::*;

#[derive(Parser, Debug)]
#[command(
    name = "bwscope",
    version = crate::model::VERSION_LINE,
    about = "Measures how fast bytes move: caches, DRAM, cores, memory types, accelerators, network",
    long_about = "Measures how fast bytes move on this machine.\n\nWith no subcommand, surveys the machine (about 15-30 s on a 2-core VM): info, a cache→DRAM sweep of the key kernels, and a short summary; saves run.json and report.html into ./bwscope-results/<UTC time> (--out DIR, --no-save).\n\nBandwidth is in GB/s = 10^9 bytes/s unless --units GiB. Bytes counted = bytes read + bytes written by the kernel, from its declaration (a copy over an N-byte working set counts N).",
    after_help = "Exit codes: 0 ok, 1 internal error (or `history --check` found a step down), 2 bad input (the message names the flag), 3 compare found a regression, 128+signal when stopped by SIGINT (130), SIGTERM (143) or SIGHUP (129), 141 when stdout closed mid-run (files keep every finished record)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Output options of the survey. The measuring subcommands take the same
    /// flags after their name (given here, before one, they still apply);
    /// the others do not offer them.
    #[command(flatten)]
    pub output: OutputArgs,

    /// Options of the default survey (no subcommand).
    #[command(flatten)]
    pub survey: SurveyArgs,

    // The four below are the survey's here; `app::command` offers each
    // also on the commands where it means something (and only there), and
    // fills these fields from wherever on the line it was given.
    /// The memory system's theoretical peak, e.g. 409.6GB/s (channels × MT/s × 8 B), where SMBIOS cannot tell it (a VM, no root); every DRAM record is judged against it
    #[arg(long, value_name = "RATE")]
    pub dram_peak: Option<String>,

    /// The run history to append to and read (default: bwscope/history.sqlite3 in the user's data folder; BWSCOPE_HISTORY sets it too)
    #[arg(long, value_name = "PATH")]
    pub history: Option<String>,

    /// Neither record this run in the history nor read it
    #[arg(long, conflicts_with = "history")]
    pub no_history: bool,

    /// Keep the host name itself in the history (by default only a hash of it)
    #[arg(long)]
    pub history_hostname: bool,
}

/// Where the default survey keeps its results.
#[derive(Args, Debug, Clone, Default)]
pub struct SurveyArgs {
    /// Survey only: save run.json and report.html into DIR (default ./bwscope-results/<UTC time>)
    #[arg(long, value_name = "DIR")]
    pub out: Option<String>,
    /// Survey only: save nothing (print the summary only)
    #[arg(long, conflicts_with = "out")]
    pub no_save: bool,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Print the machine: CPU, ISA features, caches, topology, measured clock, L1 ceilings
    Info(InfoArgs),
    /// List every kernel with its descriptor and whether it runs here
    Kernels(KernelsArgs),
    /// Sweep working-set sizes from L1 to DRAM for read/write/copy kernels
    Cache(CacheArgs),
    /// Compare memory kinds (pages, locking, WC/UC device mappings): first-use cost, copy and read bandwidth, break-even
    Memtype(MemtypeArgs),
    /// Load-to-use latency by pointer chase, from L1 to DRAM
    Latency(LatencyArgs),
    /// Register and stack transfer rates (reg→reg, push/pop, GPR↔vector)
    Regs(RegsArgs),
    /// Core to core: a cache line handed between cpus (CAS, HIT, HITM one-way latency) for pairs of every class the system states, held against it; N threads on one line
    Cores(CoresArgs),
    /// Network bandwidth over TCP: `net serve` on one machine (the transponder), `net run HOST` on the other (the leader)
    Net(NetArgs),
    /// Thread scaling: aggregate and per-thread bandwidth for 1..N pinned threads
    Threads(ThreadsArgs),
    /// NUMA: cpu-node × memory-node matrix, read/write mixes, write-pair scenario, loaded latency
    Numa(NumaArgs),
    /// Host ↔ accelerator copies (CUDA or OpenCL): pageable, pinned, write-combined, mapped
    Transfer(TransferArgs),
    /// Many agents at once (CPU teams, device copies, TCP flows, a probe): each one's share of the memory system, alone, in pairs and all together
    Contend(ContendArgs),
    /// A cluster under mpirun or srun: every node's memory, the pair network matrix, and which node or link is slow
    Fleet(FleetArgs),
    /// Draw a saved run as SVG or PNG: bandwidth vs size, latency, thread scaling, NUMA matrix
    Plot(PlotArgs),
    /// Render a saved run as a self-contained HTML report
    // (`app::command` appends the other formats, from `report::FORMATS`.)
    Report(ReportArgs),
    /// Compare saved runs case by case: change in %, noise, regressions
    Compare(CompareArgs),
    /// Keep watch: a light probe (a DRAM read and an idle-latency chase on one core, about a second) every --every, each sample judged against this machine's usual figures and the spell probes, for node_exporter, systemd and DaemonSets
    Watch(WatchArgs),
    /// The local run history: runs, a case's series with its percentiles and steps, --check for a step down, import, forget
    History(HistoryArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    Completions(CompletionsArgs),
    /// Print the man page (roff), or write one page per subcommand into a directory
    Man(ManArgs),
}

impl Command {
    /// The output arguments of a command that measures (`net run`'s are
    /// one level down); None for the others.
    pub fn output_mut(&mut self) -> Option<&mut OutputArgs> {
        match self {
            Command::Cache(a) => Some(&mut a.output),
            Command::Memtype(a) => Some(&mut a.output),
            Command::Latency(a) => Some(&mut a.output),
            Command::Regs(a) => Some(&mut a.output),
            Command::Cores(a) => Some(&mut a.output),
            Command::Net(a) => match &mut a.command {
                net::NetCommand::Run(r) => Some(&mut r.output),
                net::NetCommand::Serve(_) => None,
            },
            Command::Threads(a) => Some(&mut a.output),
            Command::Numa(a) => Some(&mut a.output),
            Command::Transfer(a) => Some(&mut a.output),
            Command::Contend(a) => Some(&mut a.output),
            Command::Fleet(a) => Some(&mut a.output),
            Command::Info(_)
            | Command::Kernels(_)
            | Command::Plot(_)
            | Command::Report(_)
            | Command::Compare(_)
            | Command::Watch(_)
            | Command::History(_)
            | Command::Completions(_)
            | Command::Man(_) => None,
        }
    }
}

#[derive(Args, Debug, Clone)]
pub struct PlotArgs {
    /// A run saved with --json (or by the survey)
    #[arg(value_name = "RUN.json")]
    pub run: String,
    /// Output file, .svg or .png; with several charts the others go next to it as NAME-<chart>.EXT
    #[arg(
        long,
        short = 'o',
        value_name = "FILE",
        required_unless_present = "list"
    )]
    pub output: Option<String>,
    /// Picture width in pixels
    #[arg(long, default_value_t = 1280, value_name = "PX")]
    pub width: u32,
    /// Picture height in pixels
    #[arg(long, default_value_t = 720, value_name = "PX")]
    pub height: u32,
    /// Only this chart (ids are listed by --list)
    #[arg(long, value_name = "ID")]
    pub chart: Option<String>,
    /// List the charts this run supports and exit
    #[arg(long)]
    pub list: bool,
    /// Which statistic of the samples to plot
    #[arg(long, value_enum, default_value = "best")]
    pub stat: StatArg,
    /// With a fleet run: plot this node's run (host name or label)
    #[arg(long, value_name = "HOST")]
    pub node: Option<String>,
}

/// Which summary statistic a chart or comparison uses.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatArg {
    /// Best sample (max GB/s, min ns): the estimate of what the path can do
    Best,
    /// Median sample: what a typical run sees
    Median,
}

#[derive(Args, Debug, Clone)]
pub struct ReportArgs {
    /// A run saved with --json (or by the survey), '-' for stdin; a run cut short loads too and is marked
    #[arg(value_name = "RUN.json")]
    pub run: String,
    /// Output file ('-' = stdout); default: RUN.html next to the input for html, stdout otherwise
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<String>,
    /// Output format (default: from the -o extension, else html)
    // Its choices, one per row of `report::FORMATS`, are filled in by
    // `app::command`.
    #[arg(long, short = 'f', value_name = "FORMAT")]
    pub format: Option<String>,
    /// With a fleet run: render this node's run (host name or label) instead of the fleet
    #[arg(long, value_name = "HOST")]
    pub node: Option<String>,
    /// With a fleet run: fix the top of the heatmap's colour scale, GB/s, so two reports compare by eye
    #[arg(long, value_name = "GBPS")]
    pub scale_max: Option<f64>,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareFormat {
    Table,
    #[value(name = "md")]
    Markdown,
    Json,
}

#[derive(Args, Debug, Clone)]
#[command(
    after_help = "Exit codes: 0 compared, 2 bad input, 3 a case is slower than --fail-if-slower."
)]
pub struct CompareArgs {
    /// Runs to compare; the first is the baseline
    #[arg(value_name = "RUN.json", num_args = 2.., required = true)]
    pub runs: Vec<String>,
    /// Exit with code 3 when a case is slower than the baseline by more than PCT % (and not within noise)
    #[arg(long, value_name = "PCT")]
    pub fail_if_slower: Option<f64>,
    /// Judge only the headline figures (the summary's: L1 read … DRAM latency), each only where both runs took it clean (no spell, no noise); exit 3 when one is more than --fail-if-slower PCT % worse (default 10), 4 when none could be judged. For CI on a shared or cloud machine
    #[arg(long)]
    pub headline: bool,
    /// Output format
    #[arg(long, value_enum, default_value = "table")]
    pub format: CompareFormat,
    /// Which statistic of the samples to compare
    #[arg(long, value_enum, default_value = "best")]
    pub stat: StatArg,
    /// With fleet runs: compare this node's runs case by case (default: the fleets node by node)
    #[arg(long, value_name = "HOST")]
    pub node: Option<String>,
}

#[derive(Args, Debug, Clone)]
pub struct CompletionsArgs {
    /// The shell to complete for
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Args, Debug, Clone)]
pub struct ManArgs {
    /// Write bwscope.1 and one page per subcommand into DIR instead of printing bwscope.1
    #[arg(long, value_name = "DIR")]
    pub dir: Option<String>,
}

#[derive(Args, Debug, Clone)]
pub struct InfoArgs {
    /// Skip measuring the core clock (saves ~0.2 s; ceilings are then unknown)
    #[arg(long)]
    pub no_clock: bool,
    /// Write the host facts as JSON to FILE ('-' = stdout, nothing else printed there)
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// Measure where each cache level ends as this process sees it (a few
    /// seconds) and store it for later runs of this host
    #[arg(long)]
    pub probe_knees: bool,
}

#[derive(Args, Debug, Clone)]
pub struct KernelsArgs {
    /// Only kernels whose names start with one of these (comma-separated)
    #[arg(value_name = "PREFIX")]
    pub filter: Option<String>,
    /// Write the list as JSON to FILE ('-' = stdout, nothing else printed there)
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
}

/// Where results go and in which units: flattened into every command that
/// measures (and the survey), and only there.
#[derive(Args, Debug, Clone, Default)]
pub struct OutputArgs {
    /// The files given to the output formats' flags, `(flag, path)`, in the
    /// order of the formats' list. The flags are not declared here: each
    /// format's file holds its flag and help, and the app adds them to
    /// every command that has these arguments (`app::command`), so a new
    /// format is not a new field.
    #[arg(skip)]
    pub files: Vec<(&'static str, String)>,
    /// Units for tables: GB = 10^9 B/s, GiB = 2^30 B/s (JSON always stores GB/s)
    #[arg(long, value_enum, default_value = "GB")]
    pub units: UnitsArg,
}

impl OutputArgs {
    /// The file given to `flag` (`--json`).
    pub fn file(&self, flag: &str) -> Option<&str> {
        self.files
            .iter()
            .find(|(f, _)| *f == flag)
            .map(|(_, p)| p.as_str())
    }

    /// Give `flag` the file `path`, replacing what it had.
    pub fn set_file(&mut self, flag: &'static str, path: String) {
        self.files.retain(|(f, _)| *f != flag);
        self.files.push((flag, path));
    }
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UnitsArg {
    #[default]
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
    /// MADV_HUGEPAGE: transparent huge pages (default; plain pages where the system has none, as
    /// on Windows)
    Thp,
    /// Plain anonymous mmap with the kernel's default policy
    Regular,
    /// MADV_NOHUGEPAGE: 4 KiB pages
    Nohuge,
    /// MAP_HUGETLB 2 MiB pages from the reserved pool (vm.nr_hugepages)
    #[value(name = "hugetlb-2M", alias = "hugetlb-2m")]
    #[serde(rename = "hugetlb-2M")]
    Hugetlb2M,
    /// MAP_HUGETLB 1 GiB pages from the reserved pool (hugepages-1048576kB/nr_hugepages)
    #[value(name = "hugetlb-1G", alias = "hugetlb-1g")]
    #[serde(rename = "hugetlb-1G")]
    Hugetlb1G,
    /// mlock'ed anonymous memory (limited by RLIMIT_MEMLOCK without CAP_IPC_LOCK)
    #[value(name = "locked")]
    #[serde(rename = "locked")]
    Locked,
}
