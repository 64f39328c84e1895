//! What the CUDA tests share: the stand-in `libcuda.so.1` compiled from
//! `tests/fixtures/standin_libcuda.c` (host memcpy behind the driver API),
//! and the check that bad input is one line and exit 2.

use std::path::{Path, PathBuf};
use std::process::Command as Proc;
use std::sync::{Mutex, OnceLock};

/// Whether a real NVIDIA driver library is installed where the loader
/// finds it whatever `LD_LIBRARY_PATH` says (then "no CUDA here" cannot
/// be arranged).
pub fn real_libcuda_present() -> bool {
    [
        "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
        "/usr/lib64/libcuda.so.1",
        "/usr/lib/libcuda.so.1",
    ]
    .iter()
    .any(|p| Path::new(p).exists())
}

/// The variants built so far, each with its folder (or None: no compiler).
type Built = Mutex<Vec<(String, Option<PathBuf>)>>;

/// Build the stand-in library once per test binary and variant (`""` the
/// full one, `"only-init"` one that has only cuInit): `Some(dir)` holding
/// libcuda.so.1 and libcuda.so, or `None` (printed) without a C compiler.
/// Each test binary builds into its own folder, so two binaries running
/// at once never load a library the other is writing.
pub fn standin(variant: &str) -> Option<PathBuf> {
    static BUILT: OnceLock<Built> = OnceLock::new();
    let built = BUILT.get_or_init(|| Mutex::new(Vec::new()));
    let mut built = built.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, dir)) = built.iter().find(|(v, _)| v == variant) {
        return dir.clone();
    }
    let dir = build(variant);
    built.push((variant.to_string(), dir.clone()));
    dir
}

fn build(variant: &str) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let binary = exe.file_stem()?.to_string_lossy().into_owned();
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("standin-libcuda-{binary}-{variant}"));
    std::fs::create_dir_all(&dir).ok()?;
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/standin_libcuda.c");
    let lib = dir.join("libcuda.so.1");
    let mut cc = Proc::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()));
    cc.args(["-shared", "-fPIC", "-O2", "-Wall", "-o"])
        .arg(&lib)
        .arg(&src);
    if variant == "only-init" {
        cc.arg("-DONLY_INIT");
    }
    match cc.status() {
        Ok(s) if s.success() => {}
        other => {
            eprintln!(
                "SKIP: cannot compile the stand-in libcuda ({other:?}); install a C compiler (cc)"
            );
            return None;
        }
    }
    let link = dir.join("libcuda.so");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink("libcuda.so.1", &link).ok()?;
    Some(dir)
}

/// The command exits 2 with exactly one `error` line, which names `needle`.
pub fn exit2(cmd: &mut assert_cmd::Command, needle: &str) {
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert!(err.contains(needle), "expected '{needle}' in: {err}");
    assert_eq!(
        err.trim()
            .lines()
            .filter(|l| l.starts_with("error"))
            .count(),
        1,
        "one line: {err}"
    );
}
