//! The sysfs readers (`os::parse::tiers`, the PCI `local_cpulist`): a
//! tree of files made from the input (`path\0text\0` pairs; a text that
//! starts with `->` is a link) as the tier reader walks it.
#![no_main]

use std::collections::BTreeMap;

use bwscope::os::parse::tiers::{read, Tree};
use libfuzzer_sys::fuzz_target;

struct Fake(BTreeMap<String, String>);

impl Tree for Fake {
    fn read(&self, path: &str) -> Option<String> {
        self.0.get(path).filter(|t| !t.starts_with("->")).cloned()
    }
    fn list(&self, path: &str) -> Vec<String> {
        let pre = format!("{}/", path.trim_end_matches('/'));
        let mut v: Vec<String> = self
            .0
            .keys()
            .filter_map(|k| k.strip_prefix(&pre))
            .map(|r| r.split('/').next().unwrap_or("").to_string())
            .filter(|n| !n.is_empty())
            .collect();
        v.dedup();
        v
    }
    fn link(&self, path: &str) -> Option<String> {
        self.0.get(path)?.strip_prefix("->").map(str::to_string)
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.split('\0');
    let mut files = BTreeMap::new();
    while let (Some(p), Some(t)) = (parts.next(), parts.next()) {
        // Short names reach the reader's paths: `node0` for
        // `sys/devices/system/node/node0`.
        let path = if p.starts_with("sys/") {
            p.to_string()
        } else {
            format!("sys/devices/system/node/{p}")
        };
        files.insert(path, t.to_string());
    }
    let _ = read(&Fake(files));
    if let Some(list) = bwscope::util::cpulist::parse_cpu_list(&text) {
        assert!(list.len() as u64 <= bwscope::util::cpulist::MAX_CPU_IDS);
    }
});
