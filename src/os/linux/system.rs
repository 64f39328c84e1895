//! `uname`, `/proc/meminfo`, `/proc/stat`, and the knobs in `/sys` and
//! `/proc/sys`.

use crate::model::Environment;
use crate::os::parse;

// sysfs and /proc attributes: a page at most, read bounded and never
// waiting (`os::input`), whatever sits at the path.
fn read(p: &str) -> Option<String> {
    crate::os::input::read_small_text(std::path::Path::new(p)).map(|s| s.trim().to_string())
}

/// (node name, "sysname release machine") from uname(2).
fn uname() -> Option<(String, String)> {
    // SAFETY: utsname is plain data filled by uname(2).
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

/// The host name (`uname -n`), `unknown` when it cannot be read.
pub fn hostname() -> String {
    uname().map_or_else(|| "unknown".into(), |u| u.0)
}

/// This boot's id (`/proc/sys/kernel/random/boot_id`).
pub fn boot_id() -> Option<String> {
    read("/proc/sys/kernel/random/boot_id")
}

fn meminfo(key: &str) -> Option<u64> {
    parse::kb_line(&std::fs::read_to_string("/proc/meminfo").ok()?, key)
}

pub fn memory_total() -> Option<u64> {
    meminfo("MemTotal")
}

pub fn memory_available() -> Option<u64> {
    meminfo("MemAvailable")
}

/// Busy (user nice system irq softirq) and steal time of all cpus, in
/// ticks of [`ticks_per_second`].
pub fn cpu_ticks() -> Option<(u64, u64)> {
    parse::proc_stat(&std::fs::read_to_string("/proc/stat").ok()?)
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
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    if n > 0 {
        n as f64
    } else {
        1.0
    }
}

/// The environment a run happened in; what cannot be read is `null`.
/// (`build_target_features` is the caller's: it is the build's, not the
/// system's.)
pub fn environment() -> Environment {
    let uname = uname();
    Environment {
        hostname: uname.as_ref().map(|u| u.0.clone()),
        kernel: uname.map(|u| u.1),
        mem_total_bytes: memory_total(),
        mem_available_bytes: memory_available(),
        thp_enabled: super::mem::thp_mode(),
        thp_defrag: read("/sys/kernel/mm/transparent_hugepage/defrag")
            .and_then(|s| parse::selected(&s)),
        hugepages_2m_reserved: read("/proc/sys/vm/nr_hugepages").and_then(|s| s.parse().ok()),
        clocksource: read("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
        numa_balancing: read("/proc/sys/kernel/numa_balancing").and_then(|s| s.parse().ok()),
        governor: read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        build_target_features: Vec::new(),
    }
}

/// The folder holding the firmware's SMBIOS entry point and table
/// (`smbios_entry_point`, `DMI`).
pub fn smbios_dir() -> Option<std::path::PathBuf> {
    Some("/sys/firmware/dmi/tables".into())
}

/// The folder of PCI devices by bus id (each with `numa_node`,
/// `local_cpulist`, link speed and width).
pub fn pci_devices_dir() -> Option<std::path::PathBuf> {
    Some("/sys/bus/pci/devices".into())
}

/// The user's folder for caches (`$XDG_CACHE_HOME`, else `~/.cache`);
/// None when the environment names neither (see [`xdg_dir`]).
pub fn user_cache_dir() -> Option<std::path::PathBuf> {
    xdg_dir("XDG_CACHE_HOME", ".cache")
}

/// The user's folder for data kept across runs (`$XDG_DATA_HOME`, else
/// `~/.local/share`); None when the environment names neither (see
/// [`xdg_dir`]).
pub fn user_data_dir() -> Option<std::path::PathBuf> {
    xdg_dir("XDG_DATA_HOME", ".local/share")
}

/// `$var`, else `$HOME/below`, as the XDG Base Directory Specification
/// has it (https://specifications.freedesktop.org/basedir-spec/latest/):
/// a relative path in the variable "is invalid and should be ignored"
/// (issue 49, E3: `XDG_DATA_HOME=relative/dir` once made a store under the
/// working folder), and the folder under `$HOME` only when `$HOME` is an
/// absolute path to a folder that exists: a home is never made (E4:
/// Debian's system users have `HOME=/nonexistent`, which must stay so;
/// `$var` itself may be made, as the specification allows).
fn xdg_dir(var: &str, below: &str) -> Option<std::path::PathBuf> {
    let abs = |k: &str| {
        std::env::var_os(k)
            .map(std::path::PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    abs(var).or_else(|| abs("HOME").filter(|h| h.is_dir()).map(|h| h.join(below)))
}

/// The tables are files here ([`smbios_dir`]).
pub fn smbios_raw() -> Option<Vec<u8>> {
    None
}

/// Not a compatibility layer (qemu-user is detected from what it shows of
/// the host, in `platform::arm`).
pub fn emulator() -> Option<&'static str> {
    None
}
