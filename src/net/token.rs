//! `--token-file`: the shared secret of `net serve`, `net run` and a
//! fleet's ranks, read as ssh reads a private key.
//!
//! - a regular file only (a FIFO, `/dev/zero` or a directory is refused
//!   without waiting on it), at most [`MAX_TOKEN_FILE`] bytes: a secret is
//!   a line, and a billion zero bytes is not one;
//! - owned by this user or root, and neither readable nor writable by
//!   group or others (ssh's "UNPROTECTED PRIVATE KEY FILE" rule): a token
//!   others can read authenticates them too;
//! - the secret is the bytes with ASCII whitespace trimmed at both ends
//!   (the newline an editor adds), taken as they are (not re-encoded), and
//!   neither empty nor all zero bytes, at least [`MIN_TOKEN`] bytes long
//!   (a word anyone could guess is no secret), and not a placeholder such
//!   as the one `deploy/kubernetes/fleet-mpijob.yaml` ships (a cluster
//!   applied as shipped would otherwise run on a secret printed in the
//!   repository).

use std::path::Path;

use crate::error::UserError;
use crate::os::input::{read_regular, InputError, Rules};

/// Largest token file read.
pub const MAX_TOKEN_FILE: u64 = 4096;

fn bad(message: String) -> UserError {
    UserError::flag("--token-file", message)
}

/// The shortest secret taken, bytes: 128 bits of random bytes, or 16
/// characters of text (`openssl rand -hex 32` makes 64).
pub const MIN_TOKEN: usize = 16;

/// Words of a placeholder, not a secret (compared without regard to case,
/// `-`, `_` and spaces): the shipped example's and the usual ones.
const PLACEHOLDERS: &[&str] = &["replaceme", "changeme", "placeholder", "yoursecret"];

/// How to make a secret, for every refusal.
const MAKE_ONE: &str = "make one with `openssl rand -hex 32 > FILE` (Kubernetes: `kubectl create secret generic bwscope-fleet-token --from-literal=token=$(openssl rand -hex 32)`)";

/// The secret in a token file's bytes, or why there is none.
pub fn parse(bytes: &[u8]) -> Result<Vec<u8>, String> {
    if bytes.len() as u64 > MAX_TOKEN_FILE {
        return Err(format!(
            "is larger than the {MAX_TOKEN_FILE} bytes a token file may be"
        ));
    }
    let t = bytes.trim_ascii();
    if t.is_empty() {
        return Err("is empty: put a secret in it (e.g. `openssl rand -hex 32 > FILE`)".into());
    }
    if t.iter().all(|&b| b == 0) {
        return Err(
            "holds only zero bytes, which is no secret: put one in it (e.g. `openssl rand -hex 32 > FILE`)"
                .into(),
        );
    }
    let folded: String = t
        .iter()
        .filter(|b| !matches!(b, b'-' | b'_' | b' '))
        .map(|b| b.to_ascii_lowercase() as char)
        .collect();
    if let Some(p) = PLACEHOLDERS.iter().find(|p| folded.contains(*p)) {
        return Err(format!(
            "holds a placeholder (\"{p}\"), not a secret: every copy of the example has it; {MAKE_ONE}"
        ));
    }
    if t.len() < MIN_TOKEN {
        return Err(format!(
            "holds {} bytes, too short to be a secret (at least {MIN_TOKEN}); {MAKE_ONE}",
            t.len()
        ));
    }
    Ok(t.to_vec())
}

/// Read and check `--token-file PATH` (see the module comment).
pub fn read(path: &str) -> Result<Vec<u8>, UserError> {
    let rules = Rules {
        max: MAX_TOKEN_FILE,
        follow: true,
    };
    let (bytes, m) = read_regular(Path::new(path), rules).map_err(|e| match e {
        InputError::TooLarge { max } => bad(format!(
            "{path} is larger than the {max} bytes a token file may be; give a file holding one secret line"
        )),
        InputError::Io(e) => bad(format!("cannot read {path}: {e}")),
        e => bad(format!("{path} {e}; give a file holding one secret line")),
    })?;
    let owner = &m.owner;
    if !owner.trusted() {
        return Err(bad(format!(
            "{path} belongs to {}, not to you ({}) or root: whoever owns it can change the secret; use a token file of your own",
            owner.name,
            crate::os::fs::me()
        )));
    }
    if let Some(mode) = &m.others_may_access {
        return Err(bad(format!(
            "{path} is readable or writable by others ({mode}): anyone who can read it can join; `chmod 600 {path}`"
        )));
    }
    parse(&bytes).map_err(|m| bad(format!("{path} {m}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_trimmed_bytes_never_empty_or_zero() {
        assert_eq!(
            parse(b"  a s3cret of 16 bytes\n").unwrap(),
            b"a s3cret of 16 bytes"
        );
        // Bytes are kept as they are, not re-encoded as UTF-8 would.
        let raw = [0xffu8; 16];
        assert_eq!(parse(&raw).unwrap(), raw);
        let mut other = raw;
        other[0] = 0xfe;
        assert!(parse(&raw).unwrap() != parse(&other).unwrap());
        assert!(parse(b"\n\t ").unwrap_err().contains("empty"));
        assert!(parse(&[0u8; 64]).unwrap_err().contains("zero bytes"));
        assert!(parse(&[b'a'; 4097]).unwrap_err().contains("larger"));
    }

    /// The placeholder `deploy/` ships, the usual ones, and a word are
    /// refused, each saying how to make a secret.
    #[test]
    fn placeholders_and_short_words_are_no_secret() {
        let shipped = include_str!("../../deploy/kubernetes/fleet-mpijob.yaml")
            .lines()
            .find_map(|l| l.trim().strip_prefix("token: "))
            .expect("the example's Secret has a token line");
        for (text, why) in [
            (shipped, "placeholder"),
            ("CHANGE_ME please, a long enough line", "placeholder"),
            ("s3cret", "too short"),
            ("fifteen bytes!!", "too short"),
        ] {
            let e = parse(text.as_bytes()).unwrap_err();
            assert!(
                e.contains(why) && e.contains("openssl rand -hex 32"),
                "{text}: {e}"
            );
        }
        assert!(parse(b"sixteen bytes!!!").is_ok());
        assert!(parse(b"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08").is_ok());
    }

    #[test]
    fn files_are_bounded_and_private() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("tok");
        std::fs::write(&p, "a s3cret of 16 bytes\n").unwrap();
        let path = p.to_str().unwrap();
        for mode in [0o644, 0o640, 0o604, 0o666, 0o620] {
            crate::os::fs::set_permissions(&p, mode).unwrap();
            let e = read(path).unwrap_err().to_string();
            assert!(e.contains("chmod 600"), "{mode:o}: {e}");
        }
        crate::os::fs::set_permissions(&p, 0o600).unwrap();
        assert_eq!(read(path).unwrap(), b"a s3cret of 16 bytes");
        crate::os::fs::set_permissions(&p, 0o400).unwrap();
        assert_eq!(read(path).unwrap(), b"a s3cret of 16 bytes");
        // A sparse gigabyte is refused from its size, not read.
        let big = d.path().join("big");
        drop(std::fs::File::create(&big).unwrap());
        crate::os::fs::set_permissions(&big, 0o600).unwrap();
        let f = std::fs::OpenOptions::new().write(true).open(&big).unwrap();
        f.set_len(1 << 30).unwrap();
        drop(f);
        let e = read(big.to_str().unwrap()).unwrap_err().to_string();
        assert!(e.contains("larger than the 4096 bytes"), "{e}");
        if std::path::Path::new("/dev/zero").exists() {
            let e = read("/dev/zero").unwrap_err().to_string();
            assert!(e.contains("not a regular file"), "{e}");
        }
    }
}
