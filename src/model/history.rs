//! Where a run's headline figures sit in this machine's history: what the
//! history store (`history` layer) answered before the run was written,
//! carried on the run so every view reads it as model data (the report
//! never opens the store).

use serde::{Deserialize, Serialize};

/// How many earlier figures a standing carries for its trend.
pub const RECENT: usize = 30;

/// The run's place in its machine's history (`Run::history`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct HistoryContext {
    /// Earlier runs of this machine in the store (any command).
    pub earlier_runs: u32,
    /// One per headline figure of the run.
    pub standings: Vec<Standing>,
}

impl HistoryContext {
    /// The standing of headline figure `name` (`DRAM read`), if any.
    pub fn standing(&self, name: &str) -> Option<&Standing> {
        self.standings.iter().find(|s| s.name == name)
    }
}

/// One headline figure among this machine's earlier runs of the same case.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Standing {
    /// The headline's name, as the summary writes it (`L1 read`, `DRAM
    /// read all cores`, `DRAM latency`).
    pub name: String,
    /// The case in the store (`headline/DRAM read`).
    pub case: String,
    /// This run's figure.
    pub value: f64,
    /// `GB/s` or `ns`.
    pub unit: String,
    /// Earlier figures of the case counted (noisy ones left out).
    pub earlier: u32,
    /// Earlier figures left out because they were taken while the machine
    /// was noisy or contended.
    pub left_out_noisy: u32,
    /// This figure was taken in noise and every earlier one was too: it
    /// is ranked among them (`earlier` counts them), said so. (Read as
    /// false from runs written before it.)
    #[serde(default)]
    pub among_noisy: bool,
    /// The earlier figures counted, oldest first, the last
    /// [`RECENT`] of them: the trend the report draws.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recent: Vec<f64>,
    /// 1 = better than every earlier figure; null with none earlier.
    pub rank: Option<u32>,
    /// Share of the earlier figures this one beats (ties count half), 0 to
    /// 100; null with none earlier.
    pub percentile: Option<f64>,
    /// The shipped reference row that matches this machine, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<Expected>,
}

/// A published figure this case is expected to reach, with where it comes
/// from: never a number bwscope made up.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Expected {
    /// The floor: the figure should be at least this.
    pub floor: f64,
    /// `GB/s`, or `% of limit` (of the record's physical limit).
    pub unit: String,
    /// What the source measures and how it matched this machine.
    pub what: String,
    /// The publication (repository and file, or bwscope's own document).
    pub source: String,
    pub licence: String,
    /// When the source was read (YYYY-MM-DD).
    pub date: String,
}

/// Why the history store was not used (`Warning::HistoryIgnored`'s
/// `cause`): each has its own advice, since what helps one harms another
/// (moving a locked store away splits the history in two).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum StoreProblem {
    /// Another process held it locked past the wait.
    Locked,
    /// Not a regular file: `/dev/null`, a FIFO, a device, a folder.
    NotAFile,
    /// A symbolic link (bwscope never makes one there).
    Link,
    /// On a file system mounted read-only.
    ReadOnlyMount,
    /// This user may not write it or its folder.
    NotWritable,
    /// No room left on its file system (or in the user's quota).
    DiskFull,
    /// A file of its set (`-wal`, `-shm`, `-journal`) bwscope did not
    /// make, or a folder others may write without the sticky bit.
    Planted,
    /// It or its folder belongs to another user, or others may change it.
    NotYours,
    /// Damaged, or not a bwscope store.
    Corrupt,
    /// Written by a newer bwscope.
    Newer,
    /// Its folder does not exist and cannot be made.
    NoFolder,
    /// A setting of the environment is not usable
    /// (`BWSCOPE_HISTORY_TIMEOUT_MS`).
    Setting,
    /// Anything else SQLite failed on.
    #[default]
    Other,
}

impl StoreProblem {
    /// What to do about it, in one clause.
    pub fn advice(self) -> &'static str {
        match self {
            StoreProblem::Locked => {
                "another process holds it (a bwscope run still writing, or a program reading it): wait for it and run again, or wait longer with BWSCOPE_HISTORY_TIMEOUT_MS; do not move the file away while it is in use, which splits the history in two"
            }
            StoreProblem::NotAFile => {
                "--history and BWSCOPE_HISTORY name a store file (a new name makes one); to keep no history, use --no-history or BWSCOPE_HISTORY=off"
            }
            StoreProblem::Link => {
                "name the store by its real path (bwscope follows no link there), or remove the link"
            }
            StoreProblem::ReadOnlyMount => {
                "its file system is mounted read-only: choose a writable place with --history PATH or BWSCOPE_HISTORY, or use --no-history"
            }
            StoreProblem::NotWritable => {
                "this user may not write it: run as its owner, or choose a store of your own with --history PATH (--no-history: none)"
            }
            StoreProblem::DiskFull => {
                "free space on its file system (or raise the quota) and run again; the store keeps what it had"
            }
            StoreProblem::Planted => {
                "bwscope did not make that file: look at it and remove it, and keep the store in a folder only you can write (the default one is)"
            }
            StoreProblem::NotYours => {
                "use a store of your own: the default one, or --history PATH in a folder only you can write"
            }
            StoreProblem::Corrupt => {
                "keep a copy for whoever looks at it, move it away (bwscope starts a new one), and `bwscope history import` the runs you saved"
            }
            StoreProblem::Newer => {
                "use the newer bwscope that wrote it, or choose another store with --history PATH"
            }
            StoreProblem::NoFolder => {
                "create its folder, or choose another place with --history PATH or BWSCOPE_HISTORY (--no-history: none)"
            }
            StoreProblem::Setting => {
                "unset it, or give a whole number of milliseconds in the range it names"
            }
            StoreProblem::Other => {
                "choose another store with --history PATH or BWSCOPE_HISTORY (--no-history: none)"
            }
        }
    }
}
