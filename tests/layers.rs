//! The layers point one way (docs/architecture.md): this test reads every
//! source file and fails when a lower layer names a higher one, so a
//! shortcut across layers never lands unnoticed.

use std::path::{Path, PathBuf};

/// Each layer's folder and the crate modules it must never name.
const RULES: &[(&str, &[&str])] = &[
    // The leaves: nothing else of the crate.
    (
        "model",
        &[
            "app", "cli", "report", "suites", "measure", "memory", "kernels", "platform",
            "transfer", "net", "util", "error", "stats", "cluster",
        ],
    ),
    // Statistics: a leaf over the model's Stats, for every layer above.
    (
        "stats",
        &[
            "app", "cli", "report", "suites", "measure", "memory", "kernels", "platform",
            "transfer", "net", "util", "error", "cluster",
        ],
    ),
    (
        "util",
        &[
            "app", "cli", "report", "suites", "measure", "memory", "kernels", "platform",
            "transfer", "net",
        ],
    ),
    ("platform", &["app", "cli", "report", "suites", "measure"]),
    ("kernels", &["app", "cli", "report", "suites", "measure"]),
    ("memory", &["app", "cli", "report", "suites", "measure"]),
    ("measure", &["app", "cli", "report", "suites"]),
    ("transfer", &["app", "cli", "report", "suites"]),
    ("net", &["app", "cli", "report", "suites"]),
    // Fleet's transport: ranks, rendezvous, control, pair tests.
    (
        "cluster",
        &[
            "app", "cli", "report", "suites", "measure", "memory", "kernels", "platform",
            "transfer",
        ],
    ),
    // Suites plan and measure; they never print and never see the CLI.
    ("suites", &["app", "cli", "report"]),
    // The report reads the model only (and util to format).
    (
        "report",
        &[
            "app", "cli", "suites", "measure", "memory", "kernels", "platform", "transfer", "net",
        ],
    ),
];

/// Crates of the command line, allowed only in `cli` and `app`.
const CLI_CRATES: &[&str] = &["clap::", "clap_complete::", "clap_mangen::"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The code of a file without its comments (so a doc comment that
/// mentions another layer is not an import).
fn code(text: &str) -> String {
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn no_layer_imports_a_higher_one() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut problems = Vec::new();
    for (layer, forbidden) in RULES {
        let mut files = Vec::new();
        rust_files(&src.join(layer), &mut files);
        assert!(!files.is_empty(), "layer {layer} has no files");
        for f in files {
            let text = code(&std::fs::read_to_string(&f).unwrap());
            for m in *forbidden {
                let needle = format!("crate::{m}::");
                let braced = format!("crate::{{{m}");
                if text.contains(&needle) || text.contains(&braced) {
                    problems.push(format!("{} names crate::{m}", f.display()));
                }
            }
            if !matches!(*layer, "app" | "cli") {
                for c in CLI_CRATES {
                    if text.contains(c) {
                        problems.push(format!(
                            "{} uses {c} (the CLI belongs to cli/app)",
                            f.display()
                        ));
                    }
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "imports that point up the layers:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_checker_sees_an_upward_import() {
    let bad = "use crate::report::sink::Sink; // comment\n";
    let good = "// see crate::report::sink for the writer\nuse crate::model::Run;";
    assert!(code(bad).contains("crate::report::"));
    assert!(!code(good).contains("crate::report::"));
}
