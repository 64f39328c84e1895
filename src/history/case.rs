//! What a row of the store is: a record's case key, its noise flags, and
//! the machine a run belongs to.
//!
//! The case key is the record's own (`Record::case_key`: suite, kernel,
//! size, threads, memory kind and the suite's typed case parts), so a case
//! means one thing in a record, in `compare` and in the store. A headline
//! figure of the summary is a case of its own, `headline/<name>`: the
//! survey picks the best size per level, and that size may differ from run
//! to run while the headline stays the same question.

use sha2::{Digest, Sha256};

use crate::model::{Host, Run};

/// The case key of a headline figure (`headline/DRAM read`).
pub fn headline_key(name: &str) -> String {
    format!("headline/{name}")
}

// The noise rule is the judgement room's (`judge::noise`): the store's
// `noisy` and `flags` columns are what it says of each record.
pub use crate::judge::noise::{flags, Flags};

/// SHA-256 of `s`, the first 16 hex digits: stable across releases and
/// platforms, and it does not give the input back.
pub fn short_hash(s: &str) -> String {
    let d = Sha256::digest(s.as_bytes());
    d.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// The host name as the store keeps it by default: hashed, salted with
/// the tool's name so the hash is not a plain SHA-256 of the name.
pub fn hostname_hash(host: &Host) -> Option<String> {
    host.env.hostname.as_deref().map(name_hash)
}

/// A host name's hash as the store keeps it (a fleet node's `node`).
pub fn name_hash(name: &str) -> String {
    short_hash(&format!("bwscope host name\0{name}"))
}

/// Which machine a run belongs to: the CPU (vendor, model name, family,
/// model, stepping), its core count and the host name's hash. The kernel,
/// microcode and DIMMs are kept beside it, not in it: a kernel update is
/// exactly what a step in the history should show, not a new machine.
pub fn machine_key(host: &Host) -> String {
    let c = &host.cpu;
    short_hash(&format!(
        "{}\0{}\0{:#x}\0{:#x}\0{}\0{}\0{}",
        c.vendor,
        c.model_name,
        c.family,
        c.model,
        c.stepping,
        host.physical_cores,
        hostname_hash(host).unwrap_or_default()
    ))
}

/// An id as `Run::new` makes them: 32 hex digits (anything else a file
/// says is not trusted as an identity).
fn is_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

/// A run's identity in the store, the same whether it is recorded as it
/// finishes or imported later from its JSON, so an import is idempotent.
pub fn run_uid(run: &Run) -> String {
    // A run's own id where it has one (every run since the id was added):
    // live and imported alike. Older files: a hash of what they hold.
    if let Some(id) = run.id.as_deref().filter(|id| is_id(id)) {
        return id.to_string();
    }
    let figures: Vec<String> = run
        .records
        .iter()
        .map(|r| format!("{}={:?}", r.case_key(), r.gbps.map(|g| g.best)))
        .collect();
    short_hash(&format!(
        "{}\0{}\0{}\0{}\0{}",
        run.started_at,
        machine_key(&run.host),
        run.command,
        run.tool.version,
        figures.join("\n")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run() -> Run {
        let v: serde_json::Value =
            serde_json::from_str(include_str!("../../tests/fixtures/cache-quick.json")).unwrap();
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn the_host_name_is_kept_only_as_a_hash() {
        let mut run = run();
        run.host.env.hostname = Some("db-17.example.org".into());
        let h = hostname_hash(&run.host).unwrap();
        assert_eq!(h.len(), 16);
        assert!(!h.contains("db-17"));
        let a = machine_key(&run.host);
        run.host.env.hostname = Some("db-18.example.org".into());
        assert_ne!(a, machine_key(&run.host));
        // A new kernel is the same machine.
        let b = machine_key(&run.host);
        run.host.env.kernel = Some("7.0".into());
        assert_eq!(b, machine_key(&run.host));
        assert_eq!(run_uid(&run), run_uid(&run.clone()));
    }
}
