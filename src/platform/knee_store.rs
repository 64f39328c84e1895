//! This host's knee probe, kept between runs so `cache`, `latency` and the
//! rest label regimes by what this process sees without measuring again:
//! `$XDG_CACHE_HOME/bwscope/` (else `~/.cache/bwscope/`), one file per
//! CPU model, CPUID cache geometry, hostname and kernel (a VM moved to
//! another host type, or a new kernel, is probed afresh). Reading or
//! writing it never fails a run: a store that cannot be read is ignored,
//! one that cannot be written is reported by the caller as a warning.
//!
//! The cache folder may be one others can write (a shared scratch, a
//! service account's `HOME=/tmp/x`), so the store is written and read as
//! files others may have planted something at:
//! - written through a temporary file with a random name, created
//!   exclusively without following a link, mode 0600
//!   ([`crate::os::fs::create_temp_beside`]), then renamed over the store;
//! - read with the bounded reader (a regular file only, never waiting, at
//!   most [`MAX_STORE`] bytes, a link at its name refused), and trusted
//!   only when owned by this user or root and writable by nobody else
//!   ([`crate::os::fs::Facts::kept_by_us`], the rendezvous notes' rule).
//!   A store that fails this is treated as absent, with a
//!   `knee_store_ignored` warning naming it ([`ignored`]);
//! - not stored at all in a folder (or a link to one) another user owns.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::model::{Host, KneeProbe, Warning};

/// The most bytes a store may hold: one is about 8 KiB.
pub const MAX_STORE: u64 = 1 << 20;

/// What the file holds: the key it was stored under (checked on reading,
/// so a hash collision or a hand-copied file is ignored) and the probe.
#[derive(Serialize, Deserialize)]
struct Stored {
    key: String,
    probe: KneeProbe,
}

/// The folder probes are kept in (`bwscope/` in the user's cache
/// folder); `None` without one.
pub fn dir() -> Option<PathBuf> {
    Some(crate::os::system::user_cache_dir()?.join("bwscope"))
}

/// What identifies this host's probe: the CPU, CPUID's cache geometry
/// (not the measured sizes), the hostname and the kernel.
pub fn key(host: &Host) -> String {
    let c = &host.cpu;
    let caches: Vec<String> = host
        .caches
        .iter()
        .map(|k| {
            format!(
                "L{} {} {} B line {} shared {}",
                k.level,
                k.kind,
                k.size_bytes,
                k.line_bytes,
                k.shared_cpus.len()
            )
        })
        .collect();
    format!(
        "cpu {} {} family {:#x} model {:#x} stepping {}; caches {}; host {}; kernel {}",
        c.vendor,
        c.model_name,
        c.family,
        c.model,
        c.stepping,
        caches.join(", "),
        host.env.hostname.as_deref().unwrap_or("?"),
        host.env.kernel.as_deref().unwrap_or("?")
    )
}

/// FNV-1a, 64 bit: a file name that stays the same across Rust releases
/// (std's hasher makes no such promise).
fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Where this host's probe is stored.
pub fn path(host: &Host) -> Option<PathBuf> {
    Some(file(&dir()?, host))
}

fn file(dir: &Path, host: &Host) -> PathBuf {
    dir.join(format!("knees-{:016x}.json", fnv1a(&key(host))))
}

/// This host's stored probe, if there is one; `source` names the file.
pub fn load(host: &Host) -> Option<KneeProbe> {
    load_from(&dir()?, host).ok().flatten()
}

/// The stored probe (`Ok(None)`: none, or one stored for another host),
/// or why the file there is not trusted.
fn load_from(dir: &Path, host: &Host) -> Result<Option<KneeProbe>, Warning> {
    use crate::os::input::{read_regular, InputError, Rules};
    let p = file(dir, host);
    let ignored = |reason: String| Warning::KneeStoreIgnored {
        path: p.display().to_string(),
        reason,
    };
    let rules = Rules {
        max: MAX_STORE,
        follow: false,
    };
    let (bytes, facts) = match read_regular(&p, rules) {
        Ok(x) => x,
        Err(InputError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(InputError::Io(e)) if crate::os::fs::is_link_refused(&e) => {
            return Err(ignored(
                "it is a symbolic link, which bwscope never writes there".into(),
            ))
        }
        Err(e) => return Err(ignored(format!("it {e}"))),
    };
    facts.kept_by_us().map_err(ignored)?;
    let stored: Stored = serde_json::from_slice(&bytes)
        .map_err(|e| ignored(format!("it is not a store bwscope wrote ({e})")))?;
    if stored.key != key(host) {
        return Ok(None);
    }
    let mut probe = stored.probe;
    probe.source = format!("stored in {}", p.display());
    Ok(Some(probe))
}

/// Why this process ignored the store it found, if it did (a run-level
/// warning: see the module comment).
pub fn ignored() -> Option<Warning> {
    IGNORED.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

static IGNORED: Mutex<Option<Warning>> = Mutex::new(None);

/// Store `probe` for this host. Returns the path, or why not.
pub fn save(host: &Host, probe: &KneeProbe) -> Result<PathBuf, String> {
    save_to(
        &dir().ok_or(
            "no cache folder: XDG_CACHE_HOME is not an absolute path and HOME is not an existing folder",
        )?,
        host,
        probe,
    )
}

/// Write a temporary file, then rename, so a reader never sees half a
/// file (see the module comment for how the temporary file is made).
fn save_to(dir: &Path, host: &Host, probe: &KneeProbe) -> Result<PathBuf, String> {
    let p = file(dir, host);
    let err = |e: std::io::Error| format!("{}: {e}", p.display());
    std::fs::create_dir_all(dir).map_err(err)?;
    // Another user's folder (or a link they planted for it): they could
    // remove or replace what we store, so nothing is stored there.
    if let Some(owner) = crate::os::fs::owner_at(dir).filter(|o| !o.trusted()) {
        return Err(format!(
            "{}: the folder belongs to {}, not to you ({}) or root",
            dir.display(),
            owner.name,
            crate::os::fs::me()
        ));
    }
    let stored = Stored {
        key: key(host),
        probe: probe.clone(),
    };
    let bytes = serde_json::to_vec_pretty(&stored).map_err(|e| e.to_string())?;
    let (mut f, tmp) = crate::os::fs::create_temp_beside(&p, 0o600).map_err(err)?;
    let written = f
        .write_all(&bytes)
        .and_then(|_| f.sync_all())
        .and_then(|_| {
            drop(f);
            std::fs::rename(&tmp, &p)
        });
    written.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        err(e)
    })?;
    Ok(p)
}

/// Put this host's stored probe, analysed afresh against its CPUID levels
/// (so a probe stored by an older bwscope reads as this one would), on
/// `host`. Returns whether there was one.
pub fn apply_stored(host: &mut Host) -> bool {
    let Some(d) = dir() else {
        return false;
    };
    let found = apply_from(&d, host);
    *IGNORED.lock().unwrap_or_else(|e| e.into_inner()) = found.as_ref().err().cloned();
    found.unwrap_or(false)
}

/// [`apply_stored`] from `dir`: whether a probe was applied, or why the
/// one found was ignored (the process-wide note is `apply_stored`'s, so a
/// test of this never reads what a neighbouring test left there).
fn apply_from(dir: &Path, host: &mut Host) -> Result<bool, Warning> {
    let Some(mut probe) = load_from(dir, host)? else {
        return Ok(false);
    };
    super::knees::analyse(&mut probe, host);
    super::knees::apply(host, probe);
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_and_reads_back_per_host() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("bwscope");
        let mut host = crate::platform::knees::tests::gnr_vm_host();
        host.env.hostname = Some("guest".into());
        let probe = crate::platform::knees::tests::gnr_vm_probe();
        let p = save_to(&dir, &host, &probe).unwrap();
        assert!(p.starts_with(&dir));
        assert_eq!(apply_from(&dir, &mut host), Ok(true));
        let k = host.knees.as_ref().unwrap();
        assert!(k.source.starts_with("stored in "), "{}", k.source);
        assert_eq!(host.caches[2].effective_size_bytes, Some(10 << 20));
        // Another host (here: another kernel) does not see it.
        let mut other = crate::platform::knees::tests::gnr_vm_host();
        other.env.hostname = Some("guest".into());
        other.env.kernel = Some("6.12".into());
        assert_eq!(apply_from(&dir, &mut other), Ok(false));
        assert!(other.knees.is_none());
        // A file that is not ours is ignored, not fatal.
        std::fs::write(&p, b"{not json").unwrap();
        assert!(load_from(&dir, &host).is_err());
        // An unwritable folder is an error to report, not a panic.
        let blocked = tmp.path().join("file");
        std::fs::write(&blocked, b"").unwrap();
        assert!(save_to(&blocked.join("bwscope"), &host, &probe).is_err());
    }

    /// What another user of a shared cache folder can put in our way.
    #[test]
    fn planted_files_neither_redirect_the_write_nor_feed_the_read() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("bwscope");
        std::fs::create_dir(&dir).unwrap();
        let host = crate::platform::knees::tests::gnr_vm_host();
        let probe = crate::platform::knees::tests::gnr_vm_probe();
        let p = file(&dir, &host);
        let victim = tmp.path().join("victim");
        std::fs::write(&victim, b"keep me\n").unwrap();
        // The temporary name the old writer used (`<store>.json.<pid>`).
        let old_tmp = p.with_extension(format!("json.{}", std::process::id()));
        let links = crate::os::system::emulator().is_none();
        if links {
            crate::os::fs::symlink(&victim, &old_tmp).unwrap();
        }
        save_to(&dir, &host, &probe).unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep me\n");
        assert!(load_from(&dir, &host).unwrap().is_some());
        // Nobody else may change it: treated as absent, with a warning
        // naming it.
        crate::os::fs::set_permissions(&p, 0o666).unwrap();
        let w = load_from(&dir, &host).unwrap_err();
        assert!(
            matches!(&w, Warning::KneeStoreIgnored { path, reason }
                if path == &p.display().to_string() && reason.contains("others may change it")),
            "{w:?}"
        );
        assert_eq!(apply_from(&dir, &mut host.clone()), Err(w));
        // A link at its name (to a store of the right shape) is refused.
        if links {
            let real = tmp.path().join("real.json");
            std::fs::rename(&p, &real).unwrap();
            crate::os::fs::set_permissions(&real, 0o600).unwrap();
            crate::os::fs::symlink(&real, &p).unwrap();
            let w = load_from(&dir, &host).unwrap_err().to_string();
            assert!(w.contains("symbolic link"), "{w}");
            std::fs::remove_file(&p).unwrap();
        }
        // A FIFO is refused at once, not waited on.
        if crate::os::fs::make_fifo(&p).is_ok() {
            let t0 = std::time::Instant::now();
            let w = load_from(&dir, &host).unwrap_err().to_string();
            assert!(w.contains("not a regular file"), "{w}");
            assert!(t0.elapsed().as_secs() < 5);
            std::fs::remove_file(&p).unwrap();
        }
        // A sparse giant is refused from its size, not read.
        let f = std::fs::File::create(&p).unwrap();
        f.set_len(1 << 32).unwrap();
        drop(f);
        let w = load_from(&dir, &host).unwrap_err().to_string();
        assert!(w.contains("larger than"), "{w}");
    }
}
