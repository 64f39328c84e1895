//! The system's description of itself on macOS: `uname`, `sysctl`
//! (`hw.memsize`, `kern.bootsessionuuid`, `sysctl.proc_translated`), and
//! the Mach host statistics (`host_statistics64` for free memory,
//! `host_statistics(HOST_CPU_LOAD_INFO)` for CPU ticks).

use crate::model::Environment;

/// (node name, "sysname release machine") from uname(3).
fn uname() -> Option<(String, String)> {
    // SAFETY: utsname is plain data filled by uname.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: a valid utsname to fill.
    if unsafe { libc::uname(&mut u) } != 0 {
        return None;
    }
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
}

pub fn hostname() -> String {
    uname().map_or_else(|| "unknown".into(), |u| u.0)
}

/// This boot's id (`kern.bootsessionuuid`).
pub fn boot_id() -> Option<String> {
    super::sysctl_text("kern.bootsessionuuid").filter(|s| !s.is_empty())
}

pub fn memory_total() -> Option<u64> {
    super::hw().memory_bytes
}

/// Memory a program could get without paging: free, speculative,
/// purgeable and inactive (file cache the system drops on demand) pages,
/// which is how `vm_stat`'s figures add up to what Activity Monitor calls
/// available.
pub fn memory_available() -> Option<u64> {
    // SAFETY: plain data, filled by the call.
    let mut v: libc::vm_statistics64 = unsafe { std::mem::zeroed() };
    let mut count = libc::HOST_VM_INFO64_COUNT;
    // SAFETY: `v` holds HOST_VM_INFO64_COUNT integers, as `count` says.
    // (libc deprecates its Mach calls in favour of the mach2 crate; three
    // calls do not justify a dependency.)
    #[allow(deprecated)]
    let kr = unsafe {
        libc::host_statistics64(
            libc::mach_host_self(),
            libc::HOST_VM_INFO64,
            (&mut v as *mut libc::vm_statistics64).cast(),
            &mut count,
        )
    };
    if kr != libc::KERN_SUCCESS {
        return None;
    }
    let pages = u64::from(v.free_count)
        + u64::from(v.speculative_count)
        + u64::from(v.purgeable_count)
        + u64::from(v.inactive_count);
    Some(pages * super::page_size() as u64)
}

/// Busy (user, system, nice) ticks of all cpus and no steal: macOS
/// states none (`host_statistics(HOST_CPU_LOAD_INFO)`).
pub fn cpu_ticks() -> Option<(u64, u64)> {
    // SAFETY: plain data, filled by the call.
    let mut info: libc::host_cpu_load_info = unsafe { std::mem::zeroed() };
    let mut count = libc::HOST_CPU_LOAD_INFO_COUNT;
    // SAFETY: `info` holds HOST_CPU_LOAD_INFO_COUNT integers.
    #[allow(deprecated)]
    let kr = unsafe {
        libc::host_statistics(
            libc::mach_host_self(),
            libc::HOST_CPU_LOAD_INFO,
            (&mut info as *mut libc::host_cpu_load_info).cast(),
            &mut count,
        )
    };
    if kr != libc::KERN_SUCCESS {
        return None;
    }
    let t = |i: libc::c_int| u64::from(info.cpu_ticks[i as usize]);
    Some((
        t(libc::CPU_STATE_USER) + t(libc::CPU_STATE_SYSTEM) + t(libc::CPU_STATE_NICE),
        0,
    ))
}

pub fn ticks_per_second() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

pub fn online_cpu_count() -> f64 {
    f64::from(super::hw().cpu_count())
}

pub fn environment() -> Environment {
    let uname = uname();
    Environment {
        hostname: uname.as_ref().map(|u| u.0.clone()),
        kernel: uname.map(|u| u.1),
        mem_total_bytes: memory_total(),
        mem_available_bytes: memory_available(),
        // No transparent huge pages, no huge page pool, no clocksource,
        // NUMA balancing or governor knob a program can read.
        thp_enabled: None,
        thp_defrag: None,
        hugepages_2m_reserved: None,
        clocksource: None,
        numa_balancing: None,
        governor: None,
        build_target_features: Vec::new(),
    }
}

/// No SMBIOS tables on Apple silicon, and none a program reads on Intel
/// Macs (no sysfs, no firmware-table call).
pub fn smbios_dir() -> Option<std::path::PathBuf> {
    None
}

pub fn smbios_raw() -> Option<Vec<u8>> {
    None
}

/// No PCI device folder.
pub fn pci_devices_dir() -> Option<std::path::PathBuf> {
    None
}

/// `~/Library/Caches`, macOS's folder for a user's caches.
pub fn user_cache_dir() -> Option<std::path::PathBuf> {
    home().map(|h| h.join("Library/Caches"))
}

/// `$HOME` when it is an absolute path to a folder that exists: a home is
/// never made (as on Linux).
fn home() -> Option<std::path::PathBuf> {
    std::env::var_os("HOME")
        .map(std::path::PathBuf::from)
        .filter(|h| h.is_absolute() && h.is_dir())
}

/// The user's folder for data kept across runs: `~/Library/Application
/// Support` (Apple, "File System Programming Guide": where an app keeps
/// the files it creates and manages for the user); None without `$HOME`.
pub fn user_data_dir() -> Option<std::path::PathBuf> {
    home().map(|h| h.join("Library/Application Support"))
}

/// Rosetta 2, when it translates this (x86-64) program on Apple silicon
/// (`sysctl.proc_translated` is 1; Apple, "About the Rosetta translation
/// environment"): its times are of translated code, never an Intel Mac's.
pub fn emulator() -> Option<&'static str> {
    (super::sysctl_int("sysctl.proc_translated") == Some(1)).then_some(
        "Rosetta 2 translates this x86-64 program on Apple silicon: its times are of translated code; build for aarch64-apple-darwin",
    )
}
