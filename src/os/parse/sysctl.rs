//! What macOS states about its processor and memory through `sysctl`:
//! the performance levels (a kind of core each: Apple silicon has a
//! performance and an efficiency level, Intel Macs one), their caches,
//! the page size and the memory size, as a plain [`MacHardware`].
//!
//! Pure: the live reader (`os/macos`, `sysctlbyname`) and the recorded
//! `sysctl -a` dumps of the tests (`tests/fixtures/sysctl/`) answer the
//! same [`Sysctl`] questions, so the layout logic is tested on Linux.
//!
//! Keys (Apple, "Determining system capabilities", the `sysctlbyname`
//! documentation): `hw.nperflevels`, `hw.perflevelN.{physicalcpu,
//! logicalcpu,l1dcachesize,l1icachesize,l2cachesize,cpusperl2,l3cachesize,
//! cpusperl3,name}`, lower N meaning faster cores; `hw.cachelinesize`,
//! `hw.pagesize`, `hw.memsize`, `machdep.cpu.brand_string`. The plain
//! `hw.l1dcachesize` and `hw.l2cachesize` are the *least* performant
//! level's (same page), so they are read only where no level is stated
//! (Intel Macs before macOS 12). There `hw.cacheconfig` says how many
//! logical cpus share each level (index 0: memory, 1: L1, 2: L2, 3: L3)
//! and `hw.cachesize`'s first entry is the memory size (apache/arrow
//! PR #7408 shows both on an Intel Mac).

use std::collections::HashMap;

/// Answers to `sysctl` questions: a live system or a recorded dump.
pub trait Sysctl {
    /// The value of `key` as `sysctl` prints it; None when absent.
    fn text(&self, key: &str) -> Option<String>;

    /// The value of `key` as a number.
    fn int(&self, key: &str) -> Option<u64> {
        self.text(key)?.trim().parse().ok()
    }
}

/// A recorded `sysctl -a` (or `sysctl hw machdep`): `key: value` lines;
/// lines starting with `#` are the recorder's notes (sources).
#[derive(Debug, Default, Clone)]
pub struct Dump(HashMap<String, String>);

impl Dump {
    pub fn parse(text: &str) -> Dump {
        Dump(
            text.lines()
                .filter(|l| !l.trim_start().starts_with('#'))
                .filter_map(|l| l.split_once(": ").or_else(|| l.split_once(':')))
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .collect(),
        )
    }
}

impl Sysctl for Dump {
    fn text(&self, key: &str) -> Option<String> {
        self.0.get(key).cloned()
    }
}

/// One performance level: one kind of core and the caches it sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PerfLevel {
    /// `hw.perflevelN.name` (`Performance`, `Efficiency`); `perflevelN`
    /// where the system does not name it (macOS 11).
    pub name: String,
    pub physical_cpus: u32,
    pub logical_cpus: u32,
    pub l1d_bytes: Option<u64>,
    pub l1i_bytes: Option<u64>,
    pub l2_bytes: Option<u64>,
    /// Logical cpus sharing one L2 (an L2 per cluster on Apple silicon).
    pub cpus_per_l2: u32,
    pub l3_bytes: Option<u64>,
    pub cpus_per_l3: u32,
}

/// The machine as `sysctl` states it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MacHardware {
    pub brand: Option<String>,
    pub memory_bytes: Option<u64>,
    pub page_bytes: Option<u64>,
    pub line_bytes: Option<u32>,
    /// Fastest first (`hw.perflevel0`).
    pub levels: Vec<PerfLevel>,
    /// `hw.optional.arm64`: Apple silicon (also under Rosetta).
    pub arm64: bool,
}

/// One cache as a cpu sees it (the model's `Cache` is built from it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheFact {
    pub level: u8,
    pub kind: &'static str,
    pub size_bytes: u64,
    pub shared_cpus: Vec<u32>,
}

/// `hw.cacheconfig`'s entry `i` (logical cpus sharing that level).
fn cacheconfig(s: &impl Sysctl, i: usize) -> Option<u32> {
    let v: u32 = s
        .text("hw.cacheconfig")?
        .split_whitespace()
        .nth(i)?
        .parse()
        .ok()?;
    (v > 0).then_some(v)
}

fn level(s: &impl Sysctl, n: u32) -> Option<PerfLevel> {
    let k = |f: &str| format!("hw.perflevel{n}.{f}");
    let logical = s.int(&k("logicalcpu"))? as u32;
    Some(PerfLevel {
        name: s
            .text(&k("name"))
            .unwrap_or_else(|| format!("perflevel{n}")),
        physical_cpus: s.int(&k("physicalcpu")).map_or(logical, |v| v as u32),
        logical_cpus: logical,
        l1d_bytes: s.int(&k("l1dcachesize")),
        l1i_bytes: s.int(&k("l1icachesize")),
        l2_bytes: s.int(&k("l2cachesize")),
        cpus_per_l2: s
            .int(&k("cpusperl2"))
            .map(|v| v as u32)
            .or_else(|| cacheconfig(s, 2))
            .unwrap_or(1),
        l3_bytes: s.int(&k("l3cachesize")).filter(|&b| b > 0),
        cpus_per_l3: s
            .int(&k("cpusperl3"))
            .map(|v| v as u32)
            .or_else(|| cacheconfig(s, 3))
            .unwrap_or(logical),
    })
}

/// A size of the one level: `hw.perflevel0.KEY` where stated (macOS 12
/// states the sizes of an Intel Mac's level without its cpu counts), else
/// the plain `hw.KEY`.
fn plain(s: &impl Sysctl, key: &str) -> Option<u64> {
    s.int(&format!("hw.perflevel0.{key}"))
        .or_else(|| s.int(&format!("hw.{key}")))
}

/// One level from the plain keys, where no level is stated (Intel Macs
/// before macOS 12): every cpu is of one kind.
fn single_level(s: &impl Sysctl) -> Option<PerfLevel> {
    let logical = s
        .int("hw.logicalcpu")
        .or_else(|| cacheconfig(s, 0).map(u64::from))? as u32;
    let smt = cacheconfig(s, 1).unwrap_or(1);
    Some(PerfLevel {
        name: "perflevel0".into(),
        physical_cpus: s.int("hw.physicalcpu").map_or(logical / smt, |v| v as u32),
        logical_cpus: logical,
        l1d_bytes: plain(s, "l1dcachesize"),
        l1i_bytes: plain(s, "l1icachesize"),
        l2_bytes: plain(s, "l2cachesize"),
        cpus_per_l2: cacheconfig(s, 2).unwrap_or(1),
        l3_bytes: plain(s, "l3cachesize").filter(|&b| b > 0),
        cpus_per_l3: cacheconfig(s, 3).unwrap_or(logical),
    })
}

/// Read the machine's facts from `s`.
pub fn read(s: &impl Sysctl) -> MacHardware {
    let stated = s.int("hw.nperflevels").unwrap_or(0) as u32;
    let mut levels: Vec<PerfLevel> = (0..stated).filter_map(|n| level(s, n)).collect();
    if levels.is_empty() {
        // A dump may hold the level keys without hw.nperflevels.
        levels = (0..4).map_while(|n| level(s, n)).collect();
    }
    if levels.is_empty() {
        levels.extend(single_level(s));
    }
    let memory_bytes = s.int("hw.memsize").or_else(|| {
        // Intel Macs: hw.cachesize starts with the memory size. (Apple
        // silicon prints a truncated value there, so it is never used
        // where hw.memsize exists.)
        s.text("hw.cachesize")?
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    });
    MacHardware {
        brand: s.text("machdep.cpu.brand_string"),
        memory_bytes,
        page_bytes: s.int("hw.pagesize"),
        line_bytes: s.int("hw.cachelinesize").map(|v| v as u32),
        levels,
        arm64: s.int("hw.optional.arm64") == Some(1),
    }
}

impl MacHardware {
    /// Logical cpus in all.
    pub fn cpu_count(&self) -> u32 {
        self.levels
            .iter()
            .map(|l| l.logical_cpus)
            .sum::<u32>()
            .max(1)
    }

    /// The cpu numbers bwscope gives level `n`: macOS names no cpu of a
    /// level (no call says which logical cpu is which), so bwscope counts
    /// the fastest level's first, level after level.
    pub fn cpus_of(&self, n: usize) -> std::ops::Range<u32> {
        let start: u32 = self.levels[..n].iter().map(|l| l.logical_cpus).sum();
        start..start + self.levels[n].logical_cpus
    }

    /// The level (index) of cpu `cpu`.
    pub fn level_of(&self, cpu: u32) -> Option<usize> {
        (0..self.levels.len()).find(|&n| self.cpus_of(n).contains(&cpu))
    }

    /// The logical cpus of `cpu`'s core (SMT siblings, Intel): cores take
    /// consecutive numbers, an assumption the system cannot confirm.
    pub fn siblings(&self, cpu: u32) -> Vec<u32> {
        self.group(cpu, |l| (l.logical_cpus / l.physical_cpus.max(1)).max(1))
    }

    /// The cpus of `cpu`'s level that share a cache shared by `per` of
    /// them (the `per` consecutive cpus holding `cpu`).
    fn group(&self, cpu: u32, per: impl Fn(&PerfLevel) -> u32) -> Vec<u32> {
        let Some(n) = self.level_of(cpu) else {
            return vec![cpu];
        };
        let r = self.cpus_of(n);
        let per = per(&self.levels[n]).clamp(1, r.len() as u32);
        let first = r.start + (cpu - r.start) / per * per;
        (first..(first + per).min(r.end)).collect()
    }

    /// The caches `cpu` sees, L1 data first.
    pub fn caches(&self, cpu: u32) -> Vec<CacheFact> {
        let Some(n) = self.level_of(cpu) else {
            return Vec::new();
        };
        let l = &self.levels[n];
        let smt = |l: &PerfLevel| (l.logical_cpus / l.physical_cpus.max(1)).max(1);
        let mut out = Vec::new();
        let mut push = |level, kind, size: Option<u64>, shared| {
            if let Some(size_bytes) = size.filter(|&b| b > 0) {
                out.push(CacheFact {
                    level,
                    kind,
                    size_bytes,
                    shared_cpus: shared,
                });
            }
        };
        push(1, "data", l.l1d_bytes, self.group(cpu, smt));
        push(1, "instruction", l.l1i_bytes, self.group(cpu, smt));
        push(2, "unified", l.l2_bytes, self.group(cpu, |l| l.cpus_per_l2));
        push(3, "unified", l.l3_bytes, self.group(cpu, |l| l.cpus_per_l3));
        out
    }
}

#[cfg(test)]
#[path = "sysctl_tests.rs"]
mod tests;
