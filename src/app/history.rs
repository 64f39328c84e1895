//! The run history as the commands use it: every measuring run is judged
//! against its machine's earlier runs before its files are written (the
//! standing goes on the run, so the JSON and the summary carry it) and
//! recorded after. A store that cannot be used costs the run nothing but
//! one `history_ignored` warning.

use std::path::Path;

use crate::cli::Cli;
use crate::error::UserError;
use crate::history::{self, Mode, Place, Provenance, Store};
use crate::model::headline::Figure;
use crate::model::{options, Run, Warning};

/// Where this invocation's history is and what it keeps (`--history`,
/// `--no-history`, `--history-hostname`, `BWSCOPE_HISTORY`): read once
/// by `dispatch` into the run context (`app::Context`), handed to what
/// records or reads runs. Never a process static: a test or a library
/// caller says where its history is by giving a value.
#[derive(Debug, Clone)]
pub struct Settings {
    pub place: Place,
    pub hostname: bool,
}

impl Settings {
    pub fn of(cli: &Cli) -> Settings {
        Settings {
            place: history::place(cli.history.as_deref(), cli.no_history),
            hostname: cli.history_hostname,
        }
    }

    /// No history: nothing recorded, nothing read.
    pub fn off() -> Settings {
        Settings {
            place: Place::Off,
            hostname: false,
        }
    }

    /// The history at `path`.
    pub fn at(path: &std::path::Path) -> Settings {
        Settings {
            place: Place::At(path.to_path_buf()),
            hostname: false,
        }
    }
}

/// The run's headline figures (`report::headline`: the summary's, the
/// fleet's and the metrics files' too).
pub fn figures(run: &Run) -> Vec<Figure> {
    crate::report::headline::figures(run)
}

/// The store for one measuring run: opened (made when absent) before the
/// run's files are finished, so both steps share one connection.
pub struct Session {
    store: Option<Store>,
    warned: bool,
    /// Keep host names (`--history-hostname`).
    hostname: bool,
}

impl Session {
    /// Open the store `settings` name; a failure is said once, on stderr.
    pub fn open(settings: &Settings) -> Session {
        Session::opened(settings, Mode::Create)
    }

    fn opened(settings: &Settings, mode: Mode) -> Session {
        let mut s = Session {
            store: None,
            warned: false,
            hostname: settings.hostname,
        };
        if let Place::At(path) = &settings.place {
            match Store::open(path, mode) {
                Ok(store) => s.store = store,
                Err(w) => s.warn(&w),
            }
        }
        s
    }

    fn warn(&mut self, w: &Warning) {
        if !self.warned {
            crate::report::emit("", w);
            self.warned = true;
        }
        // A store that failed once is not tried again in this run.
        self.store = None;
    }

    /// Put the standing of `run`'s headline figures on it, with the
    /// published floor where the reference table has one.
    pub fn judge(&mut self, run: &mut Run) {
        let Some(store) = &self.store else {
            return;
        };
        // The summary's lines stand for the fixed headlines; what a suite
        // declares of its records is kept in the store and judged by
        // `history --check`, not listed after every run.
        let mut figs = figures(run);
        // A figure of no record (the clock) is no row of the store: it
        // has no history to stand in.
        figs.retain(|f| f.headline.is_some() && f.record.is_some());
        match store.standing(run, &figs) {
            Ok(mut h) => {
                let id = identity(run);
                for s in &mut h.standings {
                    s.expected = history::reference::lookup(&id, &s.name);
                }
                run.history = Some(h);
            }
            Err(w) => self.warn(&w),
        }
    }

    /// A session on the existing store only (nothing made): for reading
    /// a saved run's standing (`compare`).
    pub fn existing(settings: &Settings) -> Session {
        Session::opened(settings, Mode::Existing)
    }

    /// The open store, when there is one.
    pub fn store(&mut self) -> Option<&mut Store> {
        self.store.as_mut()
    }

    /// Say `w` (a store that failed) once, and use the store no more.
    pub fn failed(&mut self, w: &Warning) {
        self.warn(w);
    }

    /// Append the finished `run`.
    pub fn record(&mut self, run: &Run) {
        let how = Provenance {
            source: "local",
            imported_from: None,
            hostname: self.hostname,
            node: None,
        };
        if let Some(store) = &mut self.store {
            if let Err(w) = store.record(run, &figures(run), &how) {
                self.warn(&w);
            }
        }
    }
}

/// Refuse `out`, given to `flag`, when it is the store at `store` or a
/// file SQLite keeps beside it (device and inode, or the path).
pub fn not_the_store(flag: &'static str, out: &str, store: &Path) -> Result<(), UserError> {
    if crate::report::outfile::is_stdout(out) {
        return Ok(());
    }
    let out = Path::new(out);
    match history::files::set(store)
        .iter()
        .find(|f| crate::report::outfile::same_file(out, f))
    {
        Some(f) => Err(UserError::flag(
            flag,
            format!(
                "{} is the history store ({}): writing it would replace the history; give another path, or '-' for stdout",
                out.display(),
                f.display()
            ),
        )),
        None => Ok(()),
    }
}

/// The lines saying where saved `run`'s headline figures sit among its
/// machine's runs in the store (its own record left out); empty when the
/// store holds no earlier run of that machine.
pub fn standing_lines(settings: &Settings, run: &Run) -> Vec<String> {
    let mut run = run.clone();
    Session::existing(settings).judge(&mut run);
    match &run.history {
        Some(h) if h.earlier_runs > 0 => crate::report::standing::lines(&run),
        _ => Vec::new(),
    }
}

/// What the reference table can match this run's machine by: its
/// microarchitecture, the PCI `vendor:device` id of the device a transfer
/// run measured (read from sysfs into `options.pci`), and the Azure VM
/// size where `BWSCOPE_AZURE_VM_SIZE` states it (bwscope asks no metadata
/// service: nothing leaves the machine).
pub fn identity(run: &Run) -> history::reference::Identity {
    let pci = run.options_as::<options::Transfer>().pci;
    history::reference::Identity {
        pci_ids: pci
            .and_then(|p| Some(format!("{}:{}", p.vendor_id?, p.device_id?)))
            .into_iter()
            .collect(),
        vm_size: std::env::var("BWSCOPE_AZURE_VM_SIZE")
            .ok()
            .filter(|v| !v.is_empty()),
        uarch: run
            .host
            .uarch
            .as_ref()
            .and_then(|u| u.row.as_ref())
            .map(|r| r.id.clone()),
    }
}
