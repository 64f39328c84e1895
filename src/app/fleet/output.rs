//! Where rank 0 writes: a results folder (`--out DIR`, default
//! `./bwscope-fleet/<UTC time>`) with fleet.json, fleet.csv, fleet.html,
//! verdicts.txt and drain.txt; `--json`/`--csv` move the first two, every
//! other output flag (`--openmetrics`, …: `report::OUTPUTS`) and
//! `--write-reference` add files; one of the formats may go to stdout
//! instead (`--json -`, `--openmetrics -`). The folder is made
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
use crate::report::outfile::is_stdout;
use crate::report::outfile::Folder;
use crate::report::sink::write_atomic;
use crate::report::Output;

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
    /// The other outputs given by flag, each the fleet in its format
    /// (None: to stdout at the end).
    extra: Vec<(&'static dyn Output, Option<PathBuf>)>,
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
        // The other formats may go to stdout (`--openmetrics -`; not two
        // at once, `sink::check` says): a pod keeps no folder, but its
        // launcher's log and a pipe keep stdout. The reference is read
        // back by later runs, so it is a file.
        if a.write_reference.as_deref() == Some("-") {
            return Err(UserError::flag(
                "--write-reference",
                "a fleet writes this to a file: give a path",
            ));
        }
        // The files given by flag: writable, and no two the same file.
        let outputs = crate::report::sink::outputs(&out.files)?;
        crate::report::sink::check(&outputs)?;
        if let Some(w) = a.write_reference.as_deref() {
            crate::report::outfile::check_writable(Path::new(w))?;
        }
        if out.file("--csv") == Some("-") {
            return Err(UserError::flag(
                "--csv",
                "a fleet writes its CSV to a file: give a path (or use the results folder)",
            ));
        }
        // Files given by flag outside the folder: claimed for the run too.
        let mut claims = Vec::new();
        let given = outputs.iter().map(|(_, p)| *p);
        for p in given.chain(a.write_reference.as_deref()) {
            claims.extend(crate::report::outfile::Claim::output(Path::new(p))?);
        }
        let folder = match &a.out {
            Some(d) => Folder::prepare(Path::new(d), "--out")?,
            // Two fleets started in the same second get a folder each.
            None => Folder::fresh(&default_dir(), "--out")?,
        };
        let dir = folder.path.clone();
        let json = match out.file("--json") {
            Some("-") => None,
            Some(p) => Some(PathBuf::from(p)),
            None => Some(dir.join("fleet.json")),
        };
        Ok(Outputs {
            _claims: claims,
            folder,
            json,
            csv: out
                .file("--csv")
                .map_or_else(|| dir.join("fleet.csv"), PathBuf::from),
            html: dir.join("fleet.html"),
            verdicts: dir.join("verdicts.txt"),
            drain: dir.join("drain.txt"),
            extra: outputs
                .iter()
                .filter(|(o, _)| !matches!(o.flag(), "--json" | "--csv"))
                .map(|&(o, p)| (o, Some(PathBuf::from(p)).filter(|_| !is_stdout(p))))
                .collect(),
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
        // What goes to stdout: the JSON (`--json -`) or one other format.
        let mut stdout = self.json.is_none().then(|| crate::report::json::fleet(f));
        for (o, p) in &self.extra {
            let bytes = o.fleet(f, self.scale_max);
            match p {
                Some(p) => write_atomic(p, &bytes)?,
                None => stdout = Some(bytes),
            }
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
        match stdout {
            None => print!("{summary}{wrote}"),
            Some(bytes) => {
                // stdout holds the document alone, so it parses.
                eprint!("{summary}{wrote}");
                use std::io::Write as _;
                let mut o = std::io::stdout().lock();
                let _ = o.write_all(&bytes);
                let _ = o.flush();
            }
        }
        Ok(())
    }
}
