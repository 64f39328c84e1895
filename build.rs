//! The commit bwscope is built from, for `--version`, the JSON's
//! `tool.revision` and the history's `revision` column.
//!
//! From `git` when the source is a checkout (a clone, a worktree), else
//! from `BWSCOPE_REVISION` (a container build whose context has no `.git`
//! passes it in), else none: a build from a tarball is not an error, it
//! just says no revision. Nothing here can fail the build.

use std::path::Path;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()?;
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !s.is_empty()).then_some(s)
}

/// A revision as given: hex digits, dots, dashes and plus signs only, at
/// most 64 of them (it ends up in a label value and a SQL column; a
/// stray quote or newline from the environment must not).
fn clean(s: &str) -> Option<String> {
    let s = s.trim();
    let ok = !s.is_empty()
        && s.len() <= 64
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+' | '_'));
    ok.then(|| s.to_string())
}

fn main() {
    println!("cargo:rerun-if-env-changed=BWSCOPE_REVISION");
    let from_git = git(&["rev-parse", "--short=12", "HEAD"]);
    if from_git.is_some() {
        // Build again when HEAD moves: a commit, a checkout, a merge
        // (the branch's ref file, or packed-refs after a gc).
        for p in ["HEAD", "packed-refs"] {
            if let Some(path) = git(&["rev-parse", "--git-path", p]) {
                rerun(&path);
            }
        }
        if let Some(r) = git(&["symbolic-ref", "-q", "HEAD"]) {
            if let Some(path) = git(&["rev-parse", "--git-path", &r]) {
                rerun(&path);
            }
        }
    }
    // What the builder says wins (a container build names the commit its
    // context came from), then the checkout's own.
    let revision = std::env::var("BWSCOPE_REVISION")
        .ok()
        .as_deref()
        .and_then(clean)
        .or_else(|| from_git.as_deref().and_then(clean));
    let version = env!("CARGO_PKG_VERSION");
    match revision {
        Some(r) => {
            println!("cargo:rustc-env=BWSCOPE_REVISION={r}");
            println!("cargo:rustc-env=BWSCOPE_VERSION_LINE={version} (commit {r})");
        }
        None => println!(
            "cargo:rustc-env=BWSCOPE_VERSION_LINE={version} (commit unknown: built outside a git checkout, without BWSCOPE_REVISION)"
        ),
    }
}

fn rerun(path: &str) {
    let p = Path::new(path);
    let p = if p.is_relative() {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
    } else {
        p.to_path_buf()
    };
    if p.exists() {
        println!("cargo:rerun-if-changed={}", p.display());
    }
}
