//! The system's description of itself: its name and kernel, memory, the
//! knobs that change what a measurement means (huge pages, clocksource,
//! NUMA balancing, governor), CPU time as it counts it, and a name for
//! this boot of the machine.

pub use super::imp::system::{
    boot_id, cpu_ticks, emulator, environment, hostname, memory_available, memory_total,
    online_cpu_count, pci_devices_dir, smbios_dir, smbios_raw, ticks_per_second, user_cache_dir,
    user_data_dir,
};

/// One kernel instance: containers and network namespaces on one machine
/// share it, and share its memory bandwidth. The boot's id where the
/// system has one, else the host name.
pub fn machine_id() -> String {
    boot_id().unwrap_or_else(|| format!("host:{}", hostname()))
}
