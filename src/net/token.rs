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
//!   neither empty nor all zero bytes.

use std::path::Path;

use crate::error::UserError;
use crate::os::input::{read_regular, InputError, Rules};

/// Largest token file read.
pub const MAX_TOKEN_FILE: u64 = 4096;

fn bad(message: String) -> UserError {
    UserError::flag("--token-file", message)
}

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
        assert_eq!(parse(b"  s3cret\n").unwrap(), b"s3cret");
        // Bytes are kept as they are, not re-encoded as UTF-8 would.
        assert_eq!(parse(b"\xff\xfe\n").unwrap(), b"\xff\xfe");
        assert!(parse(b"\xff").unwrap() != parse(b"\xfe").unwrap());
        assert!(parse(b"\n\t ").unwrap_err().contains("empty"));
        assert!(parse(&[0u8; 64]).unwrap_err().contains("zero bytes"));
        assert!(parse(&[b'a'; 4097]).unwrap_err().contains("larger"));
    }

    #[test]
    fn files_are_bounded_and_private() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("tok");
        std::fs::write(&p, "s3cret\n").unwrap();
        let path = p.to_str().unwrap();
        for mode in [0o644, 0o640, 0o604, 0o666, 0o620] {
            crate::os::fs::set_permissions(&p, mode).unwrap();
            let e = read(path).unwrap_err().to_string();
            assert!(e.contains("chmod 600"), "{mode:o}: {e}");
        }
        crate::os::fs::set_permissions(&p, 0o600).unwrap();
        assert_eq!(read(path).unwrap(), b"s3cret");
        crate::os::fs::set_permissions(&p, 0o400).unwrap();
        assert_eq!(read(path).unwrap(), b"s3cret");
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
