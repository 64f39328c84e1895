//! Every saved run renders in the terminal exactly as it did: the text
//! of `bwscope report --format table` (the tables printed after a run) and
//! of `info` for each run file this repository keeps, compared with the
//! goldens in `tests/golden/views/` (written by the code before the views
//! returned tables). `BWSCOPE_BLESS=1` rewrites them.

use std::path::{Path, PathBuf};

use bwscope::model::Run;
use bwscope::report::Exporter;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests")
}

/// Every run file: the fixtures (not the fleet document: it is not a
/// run) and the inputs kept for the views no fixture has (contend, numa
/// tiers), named by folder and file.
fn runs() -> Vec<(String, PathBuf)> {
    let mut out = vec![(
        "cache-quick".to_string(),
        root().join("fixtures/cache-quick.json"),
    )];
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root().join("fixtures/runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.push(root().join("golden/inputs"));
    dirs.sort();
    for d in dirs {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .filter(|p| p.file_stem().is_some_and(|s| s != "fleet"))
            .collect();
        files.sort();
        let folder = d.file_name().unwrap().to_string_lossy().into_owned();
        for f in files {
            let stem = f.file_stem().unwrap().to_string_lossy().into_owned();
            out.push((format!("{folder}-{stem}"), f));
        }
    }
    out
}

fn rendered(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let run: Run = serde_json::from_str(&text).unwrap();
    let table = bwscope::report::table::Table.serialize(&run).unwrap();
    format!(
        "{}--- info ---\n{}",
        String::from_utf8(table).unwrap(),
        bwscope::report::views::info::render(&run.host)
    )
}

#[test]
fn every_saved_run_renders_as_before() {
    let bless = std::env::var_os("BWSCOPE_BLESS").is_some();
    let dir = root().join("golden/views");
    let mut differ = Vec::new();
    for (name, path) in runs() {
        let got = rendered(&path);
        let golden = dir.join(format!("{name}.txt"));
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&golden, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&golden)
            .unwrap_or_else(|e| panic!("{}: {e}", golden.display()));
        if got != want {
            differ.push(format!("{name}:\n--- want\n{want}\n--- got\n{got}"));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}
