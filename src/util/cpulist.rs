//! Linux cpu lists (`0-3,8,10-11`): parsed from sysfs and flags, printed
//! in tables.

/// Parse a Linux cpu list like `0-3,8,10-11`; a range wider than 65,536
/// is refused (it would only be expanded into memory: check it first
/// with [`missing`]).
pub fn parse_cpu_list(s: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for (a, b) in parse_ranges(s)? {
        if b - a > 65_536 {
            return None;
        }
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
