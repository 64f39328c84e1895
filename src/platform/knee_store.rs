//! This host's knee probe, kept between runs so `cache`, `latency` and the
//! rest label regimes by what this process sees without measuring again:
//! `$XDG_CACHE_HOME/bwscope/` (else `~/.cache/bwscope/`), one file per
//! CPU model, CPUID cache geometry, hostname and kernel (a VM moved to
//! another host type, or a new kernel, is probed afresh). Reading or
//! writing it never fails a run: a store that cannot be read is ignored,
//! one that cannot be written is reported by the caller as a warning.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::model::{Host, KneeProbe};

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
    load_from(&dir()?, host)
}

fn load_from(dir: &Path, host: &Host) -> Option<KneeProbe> {
    let p = file(dir, host);
    let stored: Stored = serde_json::from_slice(&std::fs::read(&p).ok()?).ok()?;
    if stored.key != key(host) {
        return None;
    }
    let mut probe = stored.probe;
    probe.source = format!("stored in {}", p.display());
    Some(probe)
}

/// Store `probe` for this host. Returns the path, or why not.
pub fn save(host: &Host, probe: &KneeProbe) -> Result<PathBuf, String> {
    save_to(
        &dir().ok_or("neither XDG_CACHE_HOME nor HOME is set")?,
        host,
        probe,
    )
}

/// Write a temporary file, then rename, so a reader never sees half a file.
fn save_to(dir: &Path, host: &Host, probe: &KneeProbe) -> Result<PathBuf, String> {
    let p = file(dir, host);
    let err = |e: std::io::Error| format!("{}: {e}", p.display());
    std::fs::create_dir_all(dir).map_err(err)?;
    let stored = Stored {
        key: key(host),
        probe: probe.clone(),
    };
    let bytes = serde_json::to_vec_pretty(&stored).map_err(|e| e.to_string())?;
    let tmp = p.with_extension(format!("json.{}", std::process::id()));
    std::fs::write(&tmp, bytes).map_err(err)?;
    std::fs::rename(&tmp, &p).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        err(e)
    })?;
    Ok(p)
}

/// Put this host's stored probe, analysed afresh against its CPUID levels
/// (so a probe stored by an older bwscope reads as this one would), on
/// `host`. Returns whether there was one.
pub fn apply_stored(host: &mut Host) -> bool {
    dir().is_some_and(|d| apply_from(&d, host))
}

fn apply_from(dir: &Path, host: &mut Host) -> bool {
    let Some(mut probe) = load_from(dir, host) else {
        return false;
    };
    super::knees::analyse(&mut probe, host);
    super::knees::apply(host, probe);
    true
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
        assert!(apply_from(&dir, &mut host));
        let k = host.knees.as_ref().unwrap();
        assert!(k.source.starts_with("stored in "), "{}", k.source);
        assert_eq!(host.caches[2].effective_size_bytes, Some(10 << 20));
        // Another host (here: another kernel) does not see it.
        let mut other = crate::platform::knees::tests::gnr_vm_host();
        other.env.hostname = Some("guest".into());
        other.env.kernel = Some("6.12".into());
        assert!(!apply_from(&dir, &mut other));
        assert!(other.knees.is_none());
        // A file that is not ours is ignored, not fatal.
        std::fs::write(&p, b"{not json").unwrap();
        assert!(load_from(&dir, &host).is_none());
        // An unwritable folder is an error to report, not a panic.
        let blocked = tmp.path().join("file");
        std::fs::write(&blocked, b"").unwrap();
        assert!(save_to(&blocked.join("bwscope"), &host, &probe).is_err());
    }
}
