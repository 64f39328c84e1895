//! The buffer `GetLogicalProcessorInformationEx(RelationAll)` fills: one
//! variable-size record per processor core, package, cache, NUMA node and
//! the list of processor groups, read by byte offsets (the layout of
//! `SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX` in the Windows SDK's
//! `winnt.h`; the Windows build checks these offsets against windows-sys's
//! structs). Pure, so any build tests it on captured buffers.
//!
//! Cpus are numbered globally: group 0's active processors first, then
//! group 1's, and so on — the order `GetActiveProcessorCount` counts them.

/// `LOGICAL_PROCESSOR_RELATIONSHIP` values.
const CORE: u32 = 0;
const NUMA_NODE: u32 = 1;
const CACHE: u32 = 2;
const PACKAGE: u32 = 3;
const GROUP: u32 = 4;
const NUMA_NODE_EX: u32 = 6;

/// Offsets of the fields read, from the start of a record.
pub mod offset {
    /// Processor (core, package): `GroupCount` then `GroupMask[]`.
    pub const PROCESSOR_FLAGS: usize = 8;
    pub const PROCESSOR_GROUP_COUNT: usize = 30;
    pub const PROCESSOR_GROUP_MASK: usize = 32;
    /// NUMA node: `NodeNumber`, `GroupCount`, `GroupMask[]`.
    pub const NODE_NUMBER: usize = 8;
    pub const NODE_GROUP_COUNT: usize = 30;
    pub const NODE_GROUP_MASK: usize = 32;
    /// Cache: `Level`, `Associativity`, `LineSize`, `CacheSize`, `Type`,
    /// `GroupCount`, `GroupMask[]`.
    pub const CACHE_LEVEL: usize = 8;
    pub const CACHE_LINE: usize = 10;
    pub const CACHE_SIZE: usize = 12;
    pub const CACHE_TYPE: usize = 16;
    pub const CACHE_GROUP_COUNT: usize = 38;
    pub const CACHE_GROUP_MASK: usize = 40;
    /// Group: `ActiveGroupCount`, then `GroupInfo[]` of 48 bytes whose
    /// `ActiveProcessorCount` is byte 1 and `ActiveProcessorMask` byte 40.
    pub const GROUP_ACTIVE_COUNT: usize = 10;
    pub const GROUP_INFO: usize = 32;
    pub const GROUP_INFO_SIZE: usize = 48;
    pub const GROUP_INFO_ACTIVE: usize = 1;
    pub const GROUP_INFO_MASK: usize = 40;
    /// `GROUP_AFFINITY`: `Mask` (8 bytes), `Group` (2), reserved (6).
    pub const AFFINITY_SIZE: usize = 16;
}

/// A cache as the system lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LpiCache {
    pub level: u8,
    /// `unified`, `instruction`, `data` or `trace`.
    pub kind: &'static str,
    pub size_bytes: u64,
    pub line_bytes: u32,
    pub cpus: Vec<u32>,
}

/// What the buffer says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lpi {
    /// Active processors of each group, in group order.
    pub group_sizes: Vec<u32>,
    /// Each core's cpus, in the order listed; and whether it runs more
    /// than one thread (the record's SMT flag).
    pub cores: Vec<Vec<u32>>,
    pub packages: Vec<Vec<u32>>,
    /// (node number, cpus).
    pub nodes: Vec<(u32, Vec<u32>)>,
    pub caches: Vec<LpiCache>,
}

fn u8_at(b: &[u8], at: usize) -> Option<u8> {
    b.get(at).copied()
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

impl Lpi {
    /// The global number of bit `bit` of group `group`.
    pub fn cpu_of(&self, group: u16, bit: u32) -> Option<u32> {
        let g = group as usize;
        if g >= self.group_sizes.len() || bit >= self.group_sizes[g] {
            return None;
        }
        Some(self.group_sizes[..g].iter().sum::<u32>() + bit)
    }

    /// (group, bit) of global cpu `cpu`.
    pub fn group_of(&self, cpu: u32) -> Option<(u16, u32)> {
        let mut first = 0;
        for (g, &n) in self.group_sizes.iter().enumerate() {
            if cpu < first + n {
                return Some((g as u16, cpu - first));
            }
            first += n;
        }
        None
    }

    pub fn cpu_count(&self) -> u32 {
        self.group_sizes.iter().sum()
    }

    /// The cpus of `count` `GROUP_AFFINITY` entries at `at` in `rec`.
    fn cpus(&self, rec: &[u8], count: u16, at: usize) -> Vec<u32> {
        let mut out = Vec::new();
        for i in 0..count as usize {
            let a = at + i * offset::AFFINITY_SIZE;
            let (Some(mask), Some(group)) = (u64_at(rec, a), u16_at(rec, a + 8)) else {
                break;
            };
            out.extend(
                (0..64)
                    .filter(|b| mask >> b & 1 == 1)
                    .filter_map(|b| self.cpu_of(group, b)),
            );
        }
        out.sort_unstable();
        out
    }
}

/// Split the buffer into its records (a record that claims to run past
/// the end, or to be shorter than its header, ends the list).
fn records(buf: &[u8]) -> Vec<(u32, &[u8])> {
    let mut out = Vec::new();
    let mut at = 0;
    while let (Some(kind), Some(size)) = (u32_at(buf, at), u32_at(buf, at + 4)) {
        let size = size as usize;
        if size < 8 || at + size > buf.len() {
            break;
        }
        out.push((kind, &buf[at..at + size]));
        at += size;
    }
    out
}

/// Read the buffer. Groups first (cpu numbers depend on them), then the
/// rest; a buffer without a group record is taken as one group of 64.
pub fn parse(buf: &[u8]) -> Lpi {
    let recs = records(buf);
    let mut lpi = Lpi::default();
    for &(kind, r) in &recs {
        if kind != GROUP {
            continue;
        }
        let n = u16_at(r, offset::GROUP_ACTIVE_COUNT).unwrap_or(0) as usize;
        for i in 0..n {
            let info = offset::GROUP_INFO + i * offset::GROUP_INFO_SIZE;
            // Active processors are the low bits of the mask; count them
            // from the mask where the count byte is missing.
            let active = u8_at(r, info + offset::GROUP_INFO_ACTIVE)
                .map(u32::from)
                .or_else(|| u64_at(r, info + offset::GROUP_INFO_MASK).map(|m| m.count_ones()));
            lpi.group_sizes.extend(active);
        }
    }
    if lpi.group_sizes.is_empty() {
        lpi.group_sizes.push(64);
    }
    for &(kind, r) in &recs {
        match kind {
            CORE | PACKAGE => {
                let n = u16_at(r, offset::PROCESSOR_GROUP_COUNT).unwrap_or(0);
                let cpus = lpi.cpus(r, n, offset::PROCESSOR_GROUP_MASK);
                if kind == CORE {
                    lpi.cores.push(cpus);
                } else {
                    lpi.packages.push(cpus);
                }
            }
            NUMA_NODE | NUMA_NODE_EX => {
                let node = u32_at(r, offset::NODE_NUMBER).unwrap_or(0);
                // Before Windows 11 GroupCount is 0 and one mask follows.
                let n = u16_at(r, offset::NODE_GROUP_COUNT).unwrap_or(0).max(1);
                let cpus = lpi.cpus(r, n, offset::NODE_GROUP_MASK);
                match lpi.nodes.iter_mut().find(|x| x.0 == node) {
                    Some(x) => {
                        x.1.extend(cpus);
                        x.1.sort_unstable();
                        x.1.dedup();
                    }
                    None => lpi.nodes.push((node, cpus)),
                }
            }
            CACHE => {
                let kind = match u32_at(r, offset::CACHE_TYPE) {
                    Some(0) => "unified",
                    Some(1) => "instruction",
                    Some(2) => "data",
                    _ => "trace",
                };
                let n = u16_at(r, offset::CACHE_GROUP_COUNT).unwrap_or(0).max(1);
                lpi.caches.push(LpiCache {
                    level: u8_at(r, offset::CACHE_LEVEL).unwrap_or(0),
                    kind,
                    size_bytes: u32_at(r, offset::CACHE_SIZE).unwrap_or(0) as u64,
                    line_bytes: u16_at(r, offset::CACHE_LINE).unwrap_or(0) as u32,
                    cpus: lpi.cpus(r, n, offset::CACHE_GROUP_MASK),
                });
            }
            _ => {}
        }
    }
    lpi.nodes.sort_by_key(|n| n.0);
    lpi
}

#[cfg(test)]
pub mod tests {
    use super::*;

    /// A record of `kind` with `body` placed at offset 8.
    fn record(kind: u32, len: usize, fields: &[(usize, &[u8])]) -> Vec<u8> {
        let mut r = vec![0u8; len];
        r[0..4].copy_from_slice(&kind.to_le_bytes());
        r[4..8].copy_from_slice(&(len as u32).to_le_bytes());
        for (at, bytes) in fields {
            r[*at..*at + bytes.len()].copy_from_slice(bytes);
        }
        r
    }

    fn affinity(mask: u64, group: u16) -> Vec<u8> {
        let mut a = mask.to_le_bytes().to_vec();
        a.extend(group.to_le_bytes());
        a.extend([0u8; 6]);
        a
    }

    /// A constructed machine: 2 groups of 4 cpus (a `bcdedit /set
    /// groupsize 4` box), one package per group, 2-thread cores, one node
    /// per group, a 32 KiB L1d per core and a 4 MiB L3 per package.
    pub fn two_groups() -> Vec<u8> {
        let mut buf = Vec::new();
        let mut group = record(
            GROUP,
            32 + 2 * 48,
            &[(8, &2u16.to_le_bytes()), (10, &2u16.to_le_bytes())],
        );
        for g in 0..2 {
            let info = 32 + g * 48;
            group[info] = 4; // maximum
            group[info + 1] = 4; // active
            group[info + 40..info + 48].copy_from_slice(&0xfu64.to_le_bytes());
        }
        buf.extend(group);
        for g in 0..2u16 {
            for core in 0..2 {
                let m = 0b11u64 << (2 * core);
                buf.extend(record(
                    CORE,
                    48,
                    &[(8, &[1]), (30, &1u16.to_le_bytes()), (32, &affinity(m, g))],
                ));
                buf.extend(record(
                    CACHE,
                    56,
                    &[
                        (8, &[1, 8]),
                        (10, &64u16.to_le_bytes()),
                        (12, &(32u32 << 10).to_le_bytes()),
                        (16, &2u32.to_le_bytes()),
                        (38, &1u16.to_le_bytes()),
                        (40, &affinity(m, g)),
                    ],
                ));
            }
            buf.extend(record(
                PACKAGE,
                48,
                &[(30, &1u16.to_le_bytes()), (32, &affinity(0xf, g))],
            ));
            buf.extend(record(
                CACHE,
                56,
                &[
                    (8, &[3, 16]),
                    (10, &64u16.to_le_bytes()),
                    (12, &(4u32 << 20).to_le_bytes()),
                    (16, &0u32.to_le_bytes()),
                    (38, &1u16.to_le_bytes()),
                    (40, &affinity(0xf, g)),
                ],
            ));
            buf.extend(record(
                NUMA_NODE,
                48,
                &[
                    (8, &u32::from(g).to_le_bytes()),
                    (30, &1u16.to_le_bytes()),
                    (32, &affinity(0xf, g)),
                ],
            ));
        }
        buf
    }

    #[test]
    fn two_processor_groups_number_cpus_globally() {
        let l = parse(&two_groups());
        assert_eq!(l.group_sizes, [4, 4]);
        assert_eq!(l.cpu_count(), 8);
        assert_eq!(l.cores, [vec![0, 1], vec![2, 3], vec![4, 5], vec![6, 7]]);
        assert_eq!(l.packages, [vec![0, 1, 2, 3], vec![4, 5, 6, 7]]);
        assert_eq!(l.nodes, [(0, vec![0, 1, 2, 3]), (1, vec![4, 5, 6, 7])]);
        let l3: Vec<&LpiCache> = l.caches.iter().filter(|c| c.level == 3).collect();
        assert_eq!(l3.len(), 2);
        assert_eq!(l3[1].cpus, [4, 5, 6, 7]);
        assert_eq!(l3[1].kind, "unified");
        assert_eq!(l3[1].size_bytes, 4 << 20);
        let l1 = &l.caches[0];
        assert_eq!((l1.level, l1.kind, l1.line_bytes), (1, "data", 64));
        assert_eq!(l.group_of(5), Some((1, 1)));
        assert_eq!(l.cpu_of(1, 3), Some(7));
        assert_eq!(l.cpu_of(2, 0), None);
        assert_eq!(l.group_of(8), None);
    }

    #[test]
    fn cut_or_lying_buffers_end_the_list() {
        let mut b = two_groups();
        let full = parse(&b);
        b.truncate(b.len() - 3);
        let cut = parse(&b);
        assert_eq!(cut.nodes.len(), 1, "the last record is cut off");
        assert_eq!(cut.cores, full.cores);
        // A record claiming to be 4 bytes long, and one past the end.
        let mut bad = 0u32.to_le_bytes().to_vec();
        bad.extend(4u32.to_le_bytes());
        assert_eq!(parse(&bad).cores.len(), 0);
        let mut long = 0u32.to_le_bytes().to_vec();
        long.extend(1000u32.to_le_bytes());
        assert_eq!(
            parse(&long),
            Lpi {
                group_sizes: vec![64],
                ..Lpi::default()
            }
        );
        assert_eq!(parse(&[]).cpu_count(), 64);
    }
}
