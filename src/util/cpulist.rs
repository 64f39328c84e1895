//! Linux cpu lists (`0-3,8,10-11`): parsed from sysfs and flags, printed
//! in tables.

/// Parse a Linux cpu list like `0-3,8,10-11`.
pub fn parse_cpu_list(s: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        if let Some((a, b)) = part.split_once('-') {
            let a: u32 = a.trim().parse().ok()?;
            let b: u32 = b.trim().parse().ok()?;
            if b < a || b - a > 65_536 {
                return None;
            }
            out.extend(a..=b);
        } else {
            out.push(part.trim().parse().ok()?);
        }
    }
    out.sort_unstable();
    out.dedup();
    Some(out)
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
}
