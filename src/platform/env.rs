//! The environment a run happened in: kernel, memory, THP, clocksource,
//! NUMA balancing. Everything is read from /proc and /sys; what cannot be
//! read is `null`.

use std::fs;

use crate::model::Environment;

fn read(p: &str) -> Option<String> {
    fs::read_to_string(p).ok().map(|s| s.trim().to_string())
}

/// The bracketed choice in a sysfs selector such as `always [madvise] never`.
pub fn selected(s: &str) -> Option<String> {
    let a = s.find('[')?;
    let b = s[a..].find(']')? + a;
    Some(s[a + 1..b].to_string())
}

/// A `Key: N kB` line of a /proc file, in bytes.
fn kb_line(file: &str, key: &str) -> Option<u64> {
    let text = read(file)?;
    text.lines()
        .find(|l| l.starts_with(key) && l[key.len()..].starts_with(':'))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<u64>().ok())
        .map(|kb| kb * 1024)
}

/// A `Key: N kB` line of /proc/meminfo, in bytes.
pub fn meminfo(key: &str) -> Option<u64> {
    kb_line("/proc/meminfo", key)
}

/// The address space this process may still map when a limit is set
/// (`ulimit -v`, RLIMIT_AS, against VmSize; `ulimit -d`, RLIMIT_DATA,
/// against VmData, which private writable mappings count towards):
/// `(left, limit)` for the tighter one, None without a limit.
pub fn address_space_left() -> Option<(u64, u64)> {
    let soft = |res| {
        // SAFETY: plain data filled by getrlimit.
        let mut r: libc::rlimit = unsafe { std::mem::zeroed() };
        // SAFETY: a valid rlimit to fill.
        (unsafe { libc::getrlimit(res, &mut r) } == 0 && r.rlim_cur != libc::RLIM_INFINITY)
            .then_some(r.rlim_cur)
    };
    [
        (soft(libc::RLIMIT_AS), "VmSize"),
        (soft(libc::RLIMIT_DATA), "VmData"),
    ]
    .into_iter()
    .filter_map(|(lim, used)| {
        let lim = lim?;
        Some((
            lim.saturating_sub(kb_line("/proc/self/status", used).unwrap_or(0)),
            lim,
        ))
    })
    .min()
}

/// Read the environment from /proc and /sys.
pub fn detect() -> Environment {
    {
        let uname = {
            // SAFETY: utsname is plain data filled by uname(2).
            let mut u: libc::utsname = unsafe { std::mem::zeroed() };
            if unsafe { libc::uname(&mut u) } == 0 {
                let f = |a: &[libc::c_char]| {
                    // SAFETY: uname NUL-terminates every field.
                    unsafe { std::ffi::CStr::from_ptr(a.as_ptr()) }
                        .to_string_lossy()
                        .into_owned()
                };
                Some((
                    f(&u.nodename),
                    format!("{} {} {}", f(&u.sysname), f(&u.release), f(&u.machine)),
                ))
            } else {
                None
            }
        };
        let mut tf = Vec::new();
        if cfg!(target_feature = "avx2") {
            tf.push("avx2".to_string());
        }
        if cfg!(target_feature = "sse2") {
            tf.push("sse2".to_string());
        }
        Environment {
            hostname: uname.as_ref().map(|u| u.0.clone()),
            kernel: uname.map(|u| u.1),
            mem_total_bytes: meminfo("MemTotal"),
            mem_available_bytes: meminfo("MemAvailable"),
            thp_enabled: read("/sys/kernel/mm/transparent_hugepage/enabled")
                .and_then(|s| selected(&s)),
            thp_defrag: read("/sys/kernel/mm/transparent_hugepage/defrag")
                .and_then(|s| selected(&s)),
            hugepages_2m_reserved: read("/proc/sys/vm/nr_hugepages").and_then(|s| s.parse().ok()),
            clocksource: read("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
            numa_balancing: read("/proc/sys/kernel/numa_balancing").and_then(|s| s.parse().ok()),
            governor: read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
            build_target_features: tf,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn address_space_is_unlimited_or_sensible() {
        if let Some((left, limit)) = super::address_space_left() {
            assert!(left <= limit, "{left} {limit}");
        }
    }

    #[test]
    fn selector() {
        assert_eq!(
            super::selected("always [madvise] never").as_deref(),
            Some("madvise")
        );
        assert_eq!(super::selected("none"), None);
    }

    #[test]
    fn meminfo_reads() {
        assert!(super::meminfo("MemTotal").unwrap() > 1 << 20);
        assert!(super::meminfo("MemAvailable").is_some());
    }
}
