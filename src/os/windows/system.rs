//! The system's description of itself on Windows: `GetComputerNameExW`,
//! `RtlGetVersion`, `GlobalMemoryStatusEx`, `GetSystemTimes`, the SMBIOS
//! tables from `GetSystemFirmwareTable('RSMB')`.

use windows_sys::Wdk::System::SystemServices::RtlGetVersion;
use windows_sys::Win32::System::SystemInformation::{
    ComputerNamePhysicalDnsHostname, GetComputerNameExW, GetSystemFirmwareTable,
    GlobalMemoryStatusEx, MEMORYSTATUSEX, OSVERSIONINFOW, RSMB,
};
use windows_sys::Win32::System::Threading::GetSystemTimes;

use super::{filetime_ns, ZERO_FILETIME};
use crate::model::Environment;

pub fn hostname() -> String {
    let mut buf = [0u16; 256];
    let mut n = buf.len() as u32;
    // SAFETY: `buf` holds `n` UTF-16 units.
    if unsafe { GetComputerNameExW(ComputerNamePhysicalDnsHostname, buf.as_mut_ptr(), &mut n) } == 0
    {
        return "unknown".into();
    }
    String::from_utf16_lossy(&buf[..n as usize])
}

/// "Windows 10.0.19045": the kernel's own version (`RtlGetVersion` is not
/// subject to the compatibility shims of `GetVersionEx`).
fn kernel() -> Option<String> {
    // SAFETY: plain data with its size set, filled by the call.
    let mut v: OSVERSIONINFOW = unsafe { std::mem::zeroed() };
    v.dwOSVersionInfoSize = std::mem::size_of::<OSVERSIONINFOW>() as u32;
    // SAFETY: as above.
    (unsafe { RtlGetVersion(&mut v) } >= 0).then(|| {
        format!(
            "Windows {}.{}.{}",
            v.dwMajorVersion, v.dwMinorVersion, v.dwBuildNumber
        )
    })
}

/// No boot id: the host name names the machine.
pub fn boot_id() -> Option<String> {
    None
}

fn memory() -> Option<MEMORYSTATUSEX> {
    // SAFETY: plain data with its length set.
    let mut m: MEMORYSTATUSEX = unsafe { std::mem::zeroed() };
    m.dwLength = std::mem::size_of::<MEMORYSTATUSEX>() as u32;
    // SAFETY: as above.
    (unsafe { GlobalMemoryStatusEx(&mut m) } != 0).then_some(m)
}

pub fn memory_total() -> Option<u64> {
    memory().map(|m| m.ullTotalPhys)
}

pub fn memory_available() -> Option<u64> {
    memory().map(|m| m.ullAvailPhys)
}

/// Busy time of all cpus (kernel + user − idle) in ticks of 100 ns, and no
/// steal: Windows guests are not told what their hypervisor took.
pub fn cpu_ticks() -> Option<(u64, u64)> {
    let (mut idle, mut kernel, mut user) = (ZERO_FILETIME, ZERO_FILETIME, ZERO_FILETIME);
    // SAFETY: out-pointers to locals.
    if unsafe { GetSystemTimes(&mut idle, &mut kernel, &mut user) } == 0 {
        return None;
    }
    // Kernel time includes idle time.
    let busy = (filetime_ns(&kernel) + filetime_ns(&user)).saturating_sub(filetime_ns(&idle));
    Some((busy / 100, 0))
}

pub fn ticks_per_second() -> f64 {
    1e7
}

pub fn online_cpu_count() -> f64 {
    super::lpi().cpu_count().max(1) as f64
}

pub fn environment() -> Environment {
    Environment {
        hostname: Some(hostname()),
        kernel: kernel(),
        mem_total_bytes: memory_total(),
        mem_available_bytes: memory_available(),
        // No transparent huge pages, no pool of huge pages reserved ahead,
        // no clocksource or NUMA balancing knobs, no governor file.
        thp_enabled: None,
        thp_defrag: None,
        hugepages_2m_reserved: None,
        clocksource: None,
        numa_balancing: None,
        governor: None,
        build_target_features: Vec::new(),
    }
}

/// The tables come from the firmware call, not from files.
pub fn smbios_dir() -> Option<std::path::PathBuf> {
    None
}

/// The raw SMBIOS data (`RawSMBIOSData`: 8 header bytes with the version,
/// then the structure table).
pub fn smbios_raw() -> Option<Vec<u8>> {
    // SAFETY: a size query with a null buffer.
    let n = unsafe { GetSystemFirmwareTable(RSMB, 0, std::ptr::null_mut(), 0) };
    if n == 0 || n > 16 << 20 {
        return None;
    }
    let mut b = vec![0u8; n as usize];
    // SAFETY: `b` holds `n` bytes.
    let got = unsafe { GetSystemFirmwareTable(RSMB, 0, b.as_mut_ptr(), n) };
    (got == n).then_some(b)
}

/// No PCI device folder.
pub fn pci_devices_dir() -> Option<std::path::PathBuf> {
    None
}

/// `%LOCALAPPDATA%`.
pub fn user_cache_dir() -> Option<std::path::PathBuf> {
    // An absolute folder that exists: a profile's folder is never made.
    std::env::var_os("LOCALAPPDATA")
        .map(std::path::PathBuf::from)
        .filter(|p| p.is_absolute() && p.is_dir())
}

/// The user's folder for data kept across runs: `%LOCALAPPDATA%`, as for
/// caches (Windows keeps both there).
pub fn user_data_dir() -> Option<std::path::PathBuf> {
    user_cache_dir()
}

/// Wine, when it runs this program: it exports `wine_get_version` from its
/// ntdll. Its times are the host kernel's and wine's, never Windows'.
pub fn emulator() -> Option<&'static str> {
    use windows_sys::Win32::System::LibraryLoader::{GetModuleHandleW, GetProcAddress};
    static WHY: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    WHY.get_or_init(|| {
        let ntdll = super::wide("ntdll.dll");
        // SAFETY: a module every process has; a NUL-terminated name.
        let h = unsafe { GetModuleHandleW(ntdll.as_ptr()) };
        if h.is_null() {
            return None;
        }
        // SAFETY: a NUL-terminated export name.
        let f = unsafe { GetProcAddress(h, c"wine_get_version".as_ptr().cast()) }?;
        // SAFETY: wine_get_version takes nothing and returns a static C string.
        let v = unsafe {
            let get: unsafe extern "C" fn() -> *const core::ffi::c_char = std::mem::transmute(f);
            std::ffi::CStr::from_ptr(get()).to_string_lossy().into_owned()
        };
        Some(format!(
            "wine {v} runs this Windows program on another system's kernel: its calls are wine's and its times are not Windows times"
        ))
    })
    .as_deref()
}
