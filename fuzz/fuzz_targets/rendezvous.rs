//! The fleet's rendezvous note as a rank reads it (`cluster::rendezvous`):
//! the bytes written to a file of this user's, mode 0600, then read with
//! the checks a rank applies, its token decoded and its writer asked
//! whether it is still starting; and a job name (from the launcher's
//! environment) made into the note's file name.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

fn dir() -> &'static PathBuf {
    static D: OnceLock<PathBuf> = OnceLock::new();
    D.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("bwscope-fuzz-rdv-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    })
}

fuzz_target!(|data: &[u8]| {
    use bwscope::cluster::rendezvous;
    let job = std::str::from_utf8(&data[..data.len().min(40)]).ok();
    let p = rendezvous::path(dir(), job);
    // A job's note stays in the folder, under a name the system takes.
    assert_eq!(p.parent(), Some(dir().as_path()), "{p:?}");
    assert!(p.file_name().is_some_and(|n| n.len() <= 255), "{p:?}");
    let note = dir().join("note.json");
    let _ = std::fs::remove_file(&note);
    let Ok(f) = bwscope::os::fs::create_new(&note, 0o600) else {
        return;
    };
    use std::io::Write as _;
    let mut f = f;
    if f.write_all(data).is_err() {
        return;
    }
    drop(f);
    for job in [None, Some("job"), job] {
        if let Ok(Some(n)) = rendezvous::read_checked(&note, job) {
            assert_eq!(n.job.as_deref(), job);
            if let Some(t) = &n.token {
                let _ = rendezvous::from_hex(t);
            }
            if let Some(w) = &n.writer {
                let _ = w.still_starting();
            }
        }
    }
    let _ = rendezvous::read(&note);
});
