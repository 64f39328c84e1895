//! The run history as the commands use it: every measuring run is judged
//! against its machine's earlier runs before its files are written (the
//! standing goes on the run, so the JSON and the summary carry it) and
//! recorded after. A store that cannot be used costs the run nothing but
//! one `history_ignored` warning.

use std::sync::OnceLock;

use crate::cli::Cli;
use crate::history::{self, Mode, Place, Provenance, Store};
use crate::model::headline::Figure;
use crate::model::{options, Run, Warning};

/// The history flags of this process (`--history`, `--no-history`,
/// `--history-hostname`), set once by `dispatch`.
#[derive(Debug, Clone)]
pub struct Settings {
    pub place: Place,
    pub hostname: bool,
}

static SETTINGS: OnceLock<Settings> = OnceLock::new();

pub fn configure(cli: &Cli) {
    let _ = SETTINGS.set(Settings {
        place: history::place(cli.history.as_deref(), cli.no_history),
        hostname: cli.history_hostname,
    });
}

/// This process's history flags (`Place::Off` before `configure`).
pub fn settings_place() -> Settings {
    settings()
}

fn settings() -> Settings {
    SETTINGS.get().cloned().unwrap_or(Settings {
        place: Place::Off,
        hostname: false,
    })
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
}

impl Session {
    /// Open this process's store; a failure is said once, on stderr.
    pub fn open() -> Session {
        let mut s = Session {
            store: None,
            warned: false,
        };
        if let Place::At(path) = settings().place {
            match Store::open(&path, Mode::Create) {
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
        figs.retain(|f| f.headline.is_some());
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
    pub fn existing() -> Session {
        let mut s = Session {
            store: None,
            warned: false,
        };
        if let Place::At(path) = settings().place {
            match Store::open(&path, Mode::Existing) {
                Ok(store) => s.store = store,
                Err(w) => s.warn(&w),
            }
        }
        s
    }

    /// Append the finished `run`.
    pub fn record(&mut self, run: &Run) {
        let how = Provenance {
            source: "local",
            imported_from: None,
            hostname: settings().hostname,
            node: None,
        };
        if let Some(store) = &mut self.store {
            if let Err(w) = store.record(run, &figures(run), &how) {
                self.warn(&w);
            }
        }
    }
}

/// The lines saying where saved `run`'s headline figures sit among its
/// machine's runs in the store (its own record left out); empty when the
/// store holds no earlier run of that machine.
pub fn standing_lines(run: &Run) -> Vec<String> {
    let mut run = run.clone();
    Session::existing().judge(&mut run);
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
