//! Where rank 0 writes: a results folder (`--out DIR`, default
//! `./bwscope-fleet/<UTC time>`) with fleet.json, fleet.csv, fleet.html,
//! verdicts.txt and drain.txt; `--json`/`--csv` move the first two,
//! `--openmetrics` and `--write-reference` add files. The folder is made
//! and tested before anything is measured, after every other check, and
//! removed again (with the parents made for it) when rank 0 ends in an
//! error before writing into it: a refused fleet leaves no empty folder.
//! The default folder is made exclusively (`-2`, `-3`, … when a fleet
//! started in the same second has it), and the folder and every file given
//! by flag are claimed for the run ([`crate::report::outfile::Claim`]).

use std::path::{Path, PathBuf};

use crate::cli::{FleetArgs, OutputArgs};
use crate::error::UserError;
use crate::model::fleet::FleetRun;
use crate::report::fleet::{self as view};
use crate::report::outfile::Folder;
use crate::report::sink::write_atomic;

pub struct Outputs {
    pub dir: PathBuf,
    /// The folder as made, to remove again if nothing is written.
    pub folder: Folder,
    /// None: the fleet JSON goes to stdout at the end (`--json -`).
    json: Option<PathBuf>,
    csv: PathBuf,
    html: PathBuf,
    verdicts: PathBuf,
    drain: PathBuf,
    openmetrics: Option<PathBuf>,
    reference: Option<PathBuf>,
    scale_max: Option<f64>,
    /// The files given by flag, held while rank 0 writes them.
    _claims: Vec<crate::report::outfile::Claim>,
}

/// `./bwscope-fleet/2026-11-21T12-51-11Z`.
pub fn default_dir() -> PathBuf {
    Path::new("bwscope-fleet").join(crate::model::time::now_rfc3339().replace(':', "-"))
}

impl Outputs {
    pub fn prepare(a: &FleetArgs, out: &OutputArgs) -> Result<Outputs, UserError> {
        for (flag, p) in [
            ("--openmetrics", &out.openmetrics),
            ("--write-reference", &a.write_reference),
        ] {
            if p.as_deref() == Some("-") {
                return Err(UserError::flag(
                    flag,
                    "a fleet writes this to a file: give a path",
                ));
            }
        }
        // The files given by flag: writable, and no two the same file.
        crate::report::sink::check_outputs(
            out.json.as_deref(),
            out.csv.as_deref(),
            out.openmetrics.as_deref(),
        )?;
        if let Some(w) = a.write_reference.as_deref() {
            crate::report::outfile::check_writable(Path::new(w))?;
        }
        if out.csv.as_deref() == Some("-") {
            return Err(UserError::flag(
                "--csv",
                "a fleet writes its CSV to a file: give a path (or use the results folder)",
            ));
        }
        // Files given by flag outside the folder: claimed for the run too.
        let mut claims = Vec::new();
        for p in [&out.json, &out.csv, &out.openmetrics, &a.write_reference]
            .into_iter()
            .flatten()
        {
            claims.extend(crate::report::outfile::Claim::output(Path::new(p))?);
        }
        let folder = match &a.out {
            Some(d) => Folder::prepare(Path::new(d), "--out")?,
            // Two fleets started in the same second get a folder each.
            None => Folder::fresh(&default_dir(), "--out")?,
        };
        let dir = folder.path.clone();
        let json = match out.json.as_deref() {
            Some("-") => None,
            Some(p) => Some(PathBuf::from(p)),
            None => Some(dir.join("fleet.json")),
        };
        Ok(Outputs {
            _claims: claims,
            folder,
            json,
            csv: out
                .csv
                .as_ref()
                .map_or_else(|| dir.join("fleet.csv"), PathBuf::from),
            html: dir.join("fleet.html"),
            verdicts: dir.join("verdicts.txt"),
            drain: dir.join("drain.txt"),
            openmetrics: out.openmetrics.as_ref().map(PathBuf::from),
            reference: a.write_reference.as_ref().map(PathBuf::from),
            scale_max: a.scale_max,
            dir,
        })
    }

    /// fleet.json as it stands (rank 0 calls this as results arrive).
    pub fn save_json(&self, f: &FleetRun) -> Result<(), UserError> {
        match &self.json {
            Some(p) => write_atomic(p, &crate::report::json::fleet(f)),
            None => Ok(()),
        }
    }

    /// Every file, and the summary on the terminal.
    pub fn save_all(&self, f: &FleetRun, pct: f64) -> anyhow::Result<()> {
        self.save_json(f)?;
        write_atomic(&self.csv, &crate::report::csv::fleet(f))?;
        write_atomic(&self.html, view::html::render(f, self.scale_max).as_bytes())?;
        write_atomic(&self.verdicts, view::text::verdict_file(f).as_bytes())?;
        write_atomic(&self.drain, view::text::drain_list(f).as_bytes())?;
        if let Some(p) = &self.openmetrics {
            write_atomic(p, crate::report::openmetrics::fleet_text(f).as_bytes())?;
        }
        if let (Some(p), Some(v)) = (&self.reference, &f.verdicts) {
            let r = crate::report::fleet::reference::make(f, v, pct);
            let mut bytes = serde_json::to_vec_pretty(&r)?;
            bytes.push(b'\n');
            write_atomic(p, &bytes)?;
        }
        let summary = view::text::summary(f);
        let wrote = format!(
            "wrote {} (fleet.json, fleet.csv, fleet.html, verdicts.txt, drain.txt)\n",
            self.dir.display()
        );
        match &self.json {
            Some(_) => print!("{summary}{wrote}"),
            None => {
                eprint!("{summary}{wrote}");
                use std::io::Write as _;
                let mut o = std::io::stdout().lock();
                let _ = o.write_all(&crate::report::json::fleet(f));
            }
        }
        Ok(())
    }
}
