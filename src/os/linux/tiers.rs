//! The tier facts from the live sysfs and `/proc`: the tree the parser
//! walks is the root file system, read with the bounded reader's rules
//! (small files, never waiting).

use std::path::Path;

use crate::os::parse::tiers::{read, TierFacts, Tree};

struct Root;

impl Tree for Root {
    fn read(&self, path: &str) -> Option<String> {
        // sysfs attributes are a page at most: read with the bounded
        // reader (a regular file, never waited on, at most 64 KiB), not
        // whole (a 2 GB file was read whole).
        crate::os::input::read_small_text(&Path::new("/").join(path))
    }

    fn list(&self, path: &str) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(Path::new("/").join(path))
            .map(|d| {
                d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    }

    fn link(&self, path: &str) -> Option<String> {
        std::fs::read_link(Path::new("/").join(path))
            .ok()?
            .into_os_string()
            .into_string()
            .ok()
    }
}

/// What this system states about its tiers.
pub fn facts() -> Result<TierFacts, String> {
    Ok(read(&Root))
}

/// The file a user writes node `node`'s weighted-interleave weight to
/// (Linux 6.9+). bwscope only names it; it never writes it.
pub fn interleave_weight_file(node: u32) -> String {
    format!("/sys/kernel/mm/mempolicy/weighted_interleave/node{node}")
}
