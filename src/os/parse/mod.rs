//! Pure parsers of what a system writes about itself: text from `/proc`
//! and sysfs. They build on every target, so their tests run anywhere on
//! captured text; the calls that fetch the text are in the system's own
//! module.

pub mod smaps;
pub mod sysctl;
pub mod tiers;
pub mod topology;
pub mod winlpi;

/// The value of a `Key: N kB` line (`/proc/meminfo`, `/proc/self/status`),
/// in bytes.
pub fn kb_line(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .find(|l| l.starts_with(key) && l[key.len()..].starts_with(':'))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<u64>().ok())
        .map(|kb| kb * 1024)
}

/// The value of a plain `Key: N` line (a count, such as
/// `HugePages_Free`).
pub fn count_line(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .find(|l| l.starts_with(key) && l[key.len()..].starts_with(':'))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<u64>().ok())
}

/// A node's `Node N Key: V kB` line (sysfs `nodeN/meminfo`), in bytes;
/// `key` includes its colon (`MemFree:`).
pub fn node_meminfo(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .find(|l| l.contains(key))
        .and_then(|l| l.split_whitespace().nth(3))
        .and_then(|v| v.parse::<u64>().ok())
        .map(|kb| kb * 1024)
}

/// The bracketed choice in a sysfs selector such as `always [madvise] never`.
pub fn selected(s: &str) -> Option<String> {
    let a = s.find('[')?;
    let b = s[a..].find(']')? + a;
    Some(s[a + 1..b].to_string())
}

/// `/proc/stat`'s aggregate line: busy (user nice system irq softirq) and
/// steal ticks.
pub fn proc_stat(stat: &str) -> Option<(u64, u64)> {
    let f: Vec<u64> = stat
        .lines()
        .next()?
        .split_whitespace()
        .skip(1)
        .filter_map(|v| v.parse().ok())
        .collect();
    if f.len() < 8 {
        return None;
    }
    Some((f[0] + f[1] + f[2] + f[5] + f[6], f[7]))
}

/// A process's start time (ticks since boot) from its `/proc/PID/stat`.
/// The command name may hold spaces and parentheses: fields start after
/// the last ')'; starttime is field 22, the 20th after it.
pub fn start_time(stat: &str) -> Option<u64> {
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(19)?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selector() {
        assert_eq!(
            selected("always [madvise] never").as_deref(),
            Some("madvise")
        );
        assert_eq!(selected("none"), None);
    }

    #[test]
    fn key_lines() {
        let meminfo = "MemTotal:       24576000 kB\nMemFree: 1 kB\nHugePages_Free:      12\nMemTotalX: 5 kB\n";
        assert_eq!(kb_line(meminfo, "MemTotal"), Some(24576000 * 1024));
        assert_eq!(kb_line(meminfo, "MemFree"), Some(1024));
        assert_eq!(kb_line(meminfo, "Mem"), None);
        assert_eq!(count_line(meminfo, "HugePages_Free"), Some(12));
        let node = "Node 0 MemTotal:       24576000 kB\nNode 0 MemFree:        1000 kB\n";
        assert_eq!(node_meminfo(node, "MemFree:"), Some(1000 * 1024));
    }

    #[test]
    fn stat_lines() {
        let stat = "cpu  100 5 50 1000 3 7 11 13 0 0\ncpu0 1 2 3\n";
        assert_eq!(proc_stat(stat), Some((100 + 5 + 50 + 7 + 11, 13)));
        assert_eq!(proc_stat("cpu 1 2\n"), None);
        let pid = "4242 (a (weird) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 6 0 0 20 0 1 0 987654 1000 10";
        assert_eq!(start_time(pid), Some(987654));
        assert_eq!(start_time("garbage"), None);
    }
}
