//! What the kernel gave a mapping, from the text of `/proc/self/smaps`.

/// The fields of one smaps entry that tell page size and locking: what
/// the system gave the mapping at an address.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PageFacts {
    pub start: usize,
    pub end: usize,
    pub kernel_page_bytes: u64,
    pub anon_huge_bytes: u64,
    pub locked_bytes: u64,
    pub rss_bytes: u64,
}

/// Parse smaps text and return the entry containing `addr`.
pub fn parse(text: &str, addr: usize) -> Option<PageFacts> {
    let mut cur: Option<PageFacts> = None;
    for line in text.lines() {
        let first = line.split_whitespace().next().unwrap_or("");
        if let Some((a, b)) = first.split_once('-') {
            if let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16)) {
                if let Some(e) = cur.take() {
                    if e.start <= addr && addr < e.end {
                        return Some(e);
                    }
                }
                cur = Some(PageFacts {
                    start: a,
                    end: b,
                    ..Default::default()
                });
                continue;
            }
        }
        if let Some(e) = cur.as_mut() {
            let kb = |l: &str| -> u64 {
                l.split_whitespace()
                    .nth(1)
                    .and_then(|v| v.parse::<u64>().ok())
                    .unwrap_or(0)
                    * 1024
            };
            if line.starts_with("KernelPageSize:") {
                e.kernel_page_bytes = kb(line);
            } else if line.starts_with("AnonHugePages:") {
                e.anon_huge_bytes = kb(line);
            } else if line.starts_with("Locked:") {
                e.locked_bytes = kb(line);
            } else if line.starts_with("Rss:") {
                e.rss_bytes = kb(line);
            }
        }
    }
    cur.filter(|e| e.start <= addr && addr < e.end)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
7f0000000000-7f0000400000 rw-p 00000000 00:00 0 
Size:               4096 kB
Rss:                4096 kB
AnonHugePages:      2048 kB
KernelPageSize:        4 kB
Locked:                0 kB
7f0000400000-7f0000600000 rw-p 00000000 00:00 0 
Size:               2048 kB
KernelPageSize:     2048 kB
Locked:             2048 kB
";

    #[test]
    fn finds_the_right_entry() {
        let e = parse(SAMPLE, 0x7f0000001000).unwrap();
        assert_eq!(e.anon_huge_bytes, 2 << 20);
        assert_eq!(e.kernel_page_bytes, 4096);
        let e = parse(SAMPLE, 0x7f0000400000).unwrap();
        assert_eq!(e.kernel_page_bytes, 2 << 20);
        assert_eq!(e.locked_bytes, 2 << 20);
        assert!(parse(SAMPLE, 0x1000).is_none());
    }
}
