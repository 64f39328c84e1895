//! Linux cpu lists (`0-3,8,10-11`): parsed from sysfs and flags, printed
//! in tables.

/// The most ids a cpu list may expand to, all its ranges together: no
/// kernel is built for more cpus (`CONFIG_NR_CPUS` is at most 8,192 on
/// x86-64), and the ranges are counted before any is expanded. A file of
/// 8,000 ranges of 65,536 each (a `local_cpulist` under
/// `BWSCOPE_SYSFS_PCI_ROOT`) otherwise expanded to 2 GB.
pub const MAX_CPU_IDS: u64 = 65_536;

/// Parse a Linux cpu list like `0-3,8,10-11`; a list naming more than
/// [`MAX_CPU_IDS`] ids, counted with repeats, is refused (it would only
/// be expanded into memory: check it first with [`missing`]).
pub fn parse_cpu_list(s: &str) -> Option<Vec<u32>> {
    let ranges = parse_ranges(s)?;
    let ids: u64 = ranges
        .iter()
        .map(|&(a, b)| u64::from(b - a) + 1)
        .fold(0, u64::saturating_add);
    if ids > MAX_CPU_IDS {
        return None;
    }
    let mut out = Vec::with_capacity(ids as usize);
    for (a, b) in ranges {
        out.extend(a..=b);
    }
    out.sort_unstable();
    out.dedup();
    Some(out)
}

/// The ranges of a cpu list as written (`0-3,8` → `[(0, 3), (8, 8)]`),
/// none expanded.
pub fn parse_ranges(s: &str) -> Option<Vec<(u32, u32)>> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.trim().is_empty()) {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a.trim().parse().ok()?, b.trim().parse().ok()?),
            None => {
                let a = part.trim().parse().ok()?;
                (a, a)
            }
        };
        if b < a {
            return None;
        }
        out.push((a, b));
    }
    Some(out)
}

/// The ids `list` names that `present` (sorted) lacks, as merged ranges,
/// found without expanding the list (`0-999999999` costs nothing); empty
/// when every id is present or `list` is not a list (its parser says
/// so).
pub fn missing(list: &str, present: &[u32]) -> Vec<(u32, u32)> {
    let mut gaps: Vec<(u32, u32)> = Vec::new();
    for (a, b) in parse_ranges(list).unwrap_or_default() {
        let mut from = u64::from(a);
        for &p in present.iter().filter(|&&p| (a..=b).contains(&p)) {
            if u64::from(p) > from {
                gaps.push((from as u32, p - 1));
            }
            from = u64::from(p) + 1;
        }
        if from <= u64::from(b) {
            gaps.push((from as u32, b));
        }
    }
    gaps.sort_unstable();
    let mut out: Vec<(u32, u32)> = Vec::new();
    for (a, b) in gaps {
        match out.last_mut() {
            Some(last) if u64::from(a) <= u64::from(last.1) + 1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// Ranges as a list: `[(2, 5), (9, 9)]` → `2-5,9`.
pub fn format_ranges(r: &[(u32, u32)]) -> String {
    r.iter()
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Format a cpu list compactly: `[0,1,2,5]` → `0-2,5`.
pub fn format_cpu_list(cpus: &[u32]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let start = cpus[i];
        let mut end = start;
        while i + 1 < cpus.len() && cpus[i + 1] == end + 1 {
            i += 1;
            end = cpus[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{}-{}", start, end)
        });
        i += 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(
            parse_cpu_list("0-3,8,10-11"),
            Some(vec![0, 1, 2, 3, 8, 10, 11])
        );
        assert_eq!(parse_cpu_list("5"), Some(vec![5]));
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("x"), None);
        assert_eq!(format_cpu_list(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
    }

    #[test]
    fn a_list_of_many_full_ranges_is_refused_before_it_is_expanded() {
        let many = vec!["0-65535"; 8000].join(",");
        assert_eq!(parse_cpu_list(&many), None);
        assert_eq!(parse_cpu_list("0-65535").map(|v| v.len()), Some(65_536));
        assert_eq!(parse_cpu_list("0-65535,0"), None);
    }

    #[test]
    fn missing_ids_are_found_without_expanding_the_list() {
        let m = |l, p: &[u32]| format_ranges(&missing(l, p));
        assert_eq!(m("0-999999999", &[0, 1]), "2-999999999");
        assert_eq!(m("0-3,8", &[0, 2, 3]), "1,8");
        assert_eq!(m("5,0-1,4-6", &[0, 1, 2, 3]), "4-6");
        assert_eq!(m("0-1", &[0, 1]), "");
        assert_eq!(m("x", &[0]), "");
        assert_eq!(m("4294967295", &[0]), "4294967295");
        assert_eq!(parse_cpu_list("0-999999999"), None);
    }
}
