//! The memory devices from the firmware's SMBIOS tables, decoded by the
//! `dmidecode` crate from the system's copies (`os::system::smbios_dir`:
//! on Linux `/sys/firmware/dmi/tables/smbios_entry_point` and `DMI`, root
//! only on most systems, absent in many VMs). `BWSCOPE_SMBIOS_DIR` names
//! another folder holding the two files (a dump from another machine; the
//! tests' fixtures). Both are read with the bounded reader (regular files
//! only, never waiting, at most [`MAX_TABLE`] bytes). Nothing here fails a
//! run: whatever cannot be read becomes a one-line reason and a null peak
//! (`platform::dram`).

use std::path::{Path, PathBuf};

use dmidecode::memory_device::MemoryTechnology;
use dmidecode::physical_memory_array::MemoryArrayUse;
use dmidecode::{EntryPoint, Structure};

use crate::model::{Dram, DramDevice};

/// The most bytes a table file may hold: SMBIOS 3 allows a 4 GiB table,
/// real ones are tens of KiB.
pub const MAX_TABLE: u64 = 16 << 20;

/// The folder the tables are read from.
fn dir() -> Option<PathBuf> {
    std::env::var_os("BWSCOPE_SMBIOS_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(crate::os::system::smbios_dir)
}

/// The memory system of this machine (or of `BWSCOPE_SMBIOS_DIR`'s dump).
pub fn detect() -> Dram {
    if let Some(d) = dir() {
        return read(&d);
    }
    const SOURCE: &str = "SMBIOS (GetSystemFirmwareTable)";
    match crate::os::system::smbios_raw() {
        None => unknown(SOURCE, "the system gave no SMBIOS tables".into()),
        Some(raw) => match from_raw(&raw).and_then(|(e, t)| decode(&e, &t)) {
            Ok((version, devices)) => super::dram::peak(
                &format!("SMBIOS {version} (GetSystemFirmwareTable)"),
                devices,
            ),
            Err(why) => unknown(SOURCE, why),
        },
    }
}

/// Windows' `RawSMBIOSData` (`GetSystemFirmwareTable('RSMB')`: a calling
/// method byte, the major and minor version, the DMI revision, the table's
/// length, then the table) as an entry point and a table for [`decode`]:
/// the entry point is an SMBIOS 3 one made for the table (the firmware's
/// own is not handed out).
pub fn from_raw(raw: &[u8]) -> Result<(Vec<u8>, Vec<u8>), String> {
    let header = raw
        .get(..8)
        .ok_or_else(|| format!("a {}-byte SMBIOS buffer (the header alone is 8)", raw.len()))?;
    let len = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
    let table = raw
        .get(8..8 + len as usize)
        .ok_or_else(|| format!("truncated SMBIOS buffer: its header gives {len} table bytes"))?;
    let mut ep = Vec::with_capacity(24);
    ep.extend(b"_SM3_");
    ep.push(0); // checksum, below
    ep.push(24); // length
    ep.extend([header[1].max(2), header[2], header[3], 1, 0]);
    ep.extend(len.to_le_bytes());
    ep.extend(0u64.to_le_bytes());
    ep[5] = ep.iter().fold(0u8, |s, b| s.wrapping_sub(*b));
    Ok((ep, table.to_vec()))
}

/// Read and decode the two files in `dir`.
pub fn read(dir: &Path) -> Dram {
    let source = format!("SMBIOS ({})", dir.display());
    use crate::os::input::{read_regular, InputError, Rules};
    let rules = Rules {
        max: MAX_TABLE,
        follow: true,
    };
    let load = |name: &str| read_regular(&dir.join(name), rules).map(|(b, _)| b);
    let (entry, table) = match (load("smbios_entry_point"), load("DMI")) {
        (Ok(e), Ok(t)) => (e, t),
        (Err(InputError::Io(e)), _) | (_, Err(InputError::Io(e))) => {
            let why = match e.kind() {
                // The folder missing is the usual case (a VM); a folder
                // with a file missing, or a link to nothing, names the file.
                std::io::ErrorKind::NotFound if dir.is_dir() => format!(
                    "no SMBIOS tables: {} or {} does not exist, or is a link to nothing",
                    dir.join("smbios_entry_point").display(),
                    dir.join("DMI").display()
                ),
                std::io::ErrorKind::NotFound => format!(
                    "no SMBIOS tables: {} does not exist (a VM without them?)",
                    dir.display()
                ),
                std::io::ErrorKind::PermissionDenied => format!(
                    "no SMBIOS memory devices: {} is readable by root only",
                    dir.join("DMI").display()
                ),
                _ => format!("SMBIOS tables unreadable: {e}"),
            };
            return unknown(&source, why);
        }
        (Err(e), _) | (_, Err(e)) => {
            return unknown(
                &source,
                format!("an SMBIOS table file in {} {e}", dir.display()),
            )
        }
    };
    match decode(&entry, &table) {
        Ok((version, devices)) => {
            super::dram::peak(&format!("SMBIOS {version} ({})", dir.display()), devices)
        }
        Err(why) => unknown(&source, why),
    }
}

fn unknown(source: &str, why: String) -> Dram {
    Dram {
        source: source.into(),
        note: format!("DRAM peak unknown ({why}; state it with --dram-peak)"),
        ..Dram::default()
    }
}

/// The SMBIOS version and the memory devices of system memory arrays, or
/// why the tables cannot be trusted. A structure the crate cannot decode
/// makes the whole table suspect: no device list is better than half of
/// one (a peak from half the channels would look plausible).
pub fn decode(entry: &[u8], table: &[u8]) -> Result<(String, Vec<DramDevice>), String> {
    let ep = EntryPoint::search(entry).map_err(|e| format!("corrupt SMBIOS entry point: {e}"))?;
    let need = ep.smbios_len() as usize;
    // The crate reads up to the length the entry point gives; a shorter
    // table is truncated (and must not be read past its end).
    if table.len() < need {
        return Err(format!(
            "truncated SMBIOS table: {} of the {need} bytes its entry point gives",
            table.len()
        ));
    }
    let version = format!("{}.{}", ep.major(), ep.minor());
    let table = memory_structures(&table[..need], ep.major(), ep.minor())?;
    let mut arrays: Vec<(u16, MemoryArrayUse)> = Vec::new();
    let mut devices = Vec::new();
    for s in ep.structures(&table) {
        match s.map_err(|e| format!("corrupt SMBIOS table: {e}"))? {
            Structure::PhysicalMemoryArray(a) => arrays.push((a.handle, a.r#use)),
            Structure::MemoryDevice(d) => devices.push(d),
            _ => {}
        }
    }
    // Devices of arrays that are not system memory (video, flash), and
    // persistent memory sharing a channel, are not DRAM bandwidth.
    let system = |h: u16| {
        arrays
            .iter()
            .find(|a| a.0 == h)
            .is_none_or(|a| a.1 == MemoryArrayUse::SystemMemory)
    };
    let out = devices
        .iter()
        .filter(|d| system(d.physical_memory_handle))
        .filter(|d| {
            !matches!(
                d.memory_technology,
                Some(
                    MemoryTechnology::NvDimmN
                        | MemoryTechnology::NvDimmF
                        | MemoryTechnology::NvDimmP
                        | MemoryTechnology::IntelOptane
                )
            )
        })
        .map(|d| DramDevice {
            locator: d.device_locator.trim().into(),
            bank_locator: d.bank_locator.trim().into(),
            size_bytes: size(d.size, d.extended_size),
            memory_type: type_name(d.memory_type),
            form_factor: form_name(d.form_factor),
            data_width_bits: d.data_width.map(u32::from),
            total_width_bits: d.total_width.map(u32::from),
            speed_mts: speed(d.speed, d.extended_speed),
            configured_mts: speed(
                d.configured_memory_speed,
                d.extended_configured_memory_speed,
            ),
            channel: super::dram::channel_of(d.device_locator, d.bank_locator),
            manufacturer: text(d.manufacturer),
            part_number: text(d.part_number),
        })
        .collect();
    Ok((version, out))
}

/// The table as the crate may decode it: the structures walked as the
/// crate walks them (a 4-byte header whose second byte is the formatted
/// area's length, then strings up to a double NUL; SMBIOS 3 stops at
/// End-of-Table), refusing what it would slice out of range (a length
/// below the header's own 4 bytes, a structure or strings running past
/// the table, a memory array shorter than its version's fields), and
/// every structure bwscope does not read marked Inactive (type 126), so
/// the crate's decoders of those types, which index without checking,
/// never see them.
fn memory_structures(table: &[u8], major: u8, minor: u8) -> Result<Vec<u8>, String> {
    let mut out = table.to_vec();
    let mut at = 0usize;
    while at + 4 <= table.len() {
        let (kind, len) = (table[at], usize::from(table[at + 1]));
        let corrupt = |what: &str| {
            Err(format!(
                "corrupt SMBIOS table: the structure at offset {at} (type {kind}) {what}"
            ))
        };
        if len < 4 {
            return corrupt(&format!(
                "gives its length as {len}, less than its 4-byte header"
            ));
        }
        let strings = at + len;
        if strings >= table.len() {
            return corrupt("runs past the end of the table");
        }
        let Some(end) = table[strings..].windows(2).position(|w| w == [0, 0]) else {
            return corrupt("has strings that never end");
        };
        match kind {
            16 => {
                // Type 16's fields: 0Fh bytes from 2.1 on, and from 2.7 on
                // the Extended Maximum Capacity (to 17h) when Maximum
                // Capacity says 8000_0000h, "see extended" (§7.17).
                let v = (major, minor);
                let extended = table.get(at + 7..at + 11) == Some(&[0, 0, 0, 0x80][..]);
                let need = if v > (2, 7) && len >= 0x0F && extended {
                    0x17
                } else if v > (2, 1) {
                    0x0F
                } else {
                    4
                };
                if len < need {
                    return corrupt(&format!(
                        "is a memory array of {len} bytes, shorter than the {need} its fields need"
                    ));
                }
            }
            17 | 127 => {}
            _ => out[at] = 126,
        }
        at = strings + end + 2;
        if major >= 3 && kind == 127 {
            break;
        }
    }
    Ok(out)
}

/// Type 17's Size: 0 an empty slot, 0xFFFF unknown (the crate gives None),
/// 0x7FFF "see Extended Size" (MiB, bits 30:0), bit 15 KiB units.
fn size(size: Option<u16>, extended: u32) -> Option<u64> {
    match size? {
        0 => None,
        0x7FFF => Some(u64::from(extended & 0x7FFF_FFFF) << 20),
        s if s & 0x8000 != 0 => Some(u64::from(s & 0x7FFF) << 10),
        s => Some(u64::from(s) << 20),
    }
}

/// Speed and Configured Memory Speed: 0 unknown (the crate gives None),
/// 0xFFFF "see the extended field" (SMBIOS 3.3, bits 30:0).
fn speed(speed: Option<u16>, extended: Option<u32>) -> Option<u32> {
    match speed? {
        0xFFFF => extended.map(|e| e & 0x7FFF_FFFF).filter(|&e| e > 0),
        s => Some(u32::from(s)),
    }
}

fn text(s: &str) -> Option<String> {
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_string())
}

fn type_name(t: dmidecode::memory_device::Type) -> String {
    use dmidecode::memory_device::Type as T;
    match t {
        T::Ddr => "DDR".into(),
        T::Ddr2 => "DDR2".into(),
        T::Ddr3 => "DDR3".into(),
        T::Ddr4 => "DDR4".into(),
        T::Ddr5 => "DDR5".into(),
        T::LpDdr => "LPDDR".into(),
        T::LpDdr2 => "LPDDR2".into(),
        T::LpDdr3 => "LPDDR3".into(),
        T::LpDdr4 => "LPDDR4".into(),
        T::LpDdr5 => "LPDDR5".into(),
        T::Hbm => "HBM".into(),
        T::Hbm2 => "HBM2".into(),
        other => format!("{other:?}"),
    }
}

fn form_name(f: dmidecode::memory_device::FormFactor) -> String {
    use dmidecode::memory_device::FormFactor as F;
    match f {
        F::Dimm => "DIMM".into(),
        F::SoDimm => "SODIMM".into(),
        F::RowOfChips => "Row of chips".into(),
        F::Chip => "Chip".into(),
        other => format!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    /// Windows' raw buffer: an 8-byte header (method, 3.4, DMI revision 0,
    /// the table's length) and a table holding only End-of-Table (type
    /// 127): decoded through the made entry point, with no devices.
    #[test]
    fn a_raw_firmware_buffer_decodes_through_a_made_entry_point() {
        let table = [127u8, 4, 0xff, 0xfe, 0, 0];
        let mut raw = vec![0u8, 3, 4, 0];
        raw.extend((table.len() as u32).to_le_bytes());
        raw.extend(table);
        let (ep, t) = super::from_raw(&raw).unwrap();
        assert_eq!(t, table);
        let (version, devices) = super::decode(&ep, &t).unwrap();
        assert_eq!(version, "3.4");
        assert!(devices.is_empty());
        // A header alone, a length past the end.
        assert!(super::from_raw(&raw[..5]).unwrap_err().contains("header"));
        assert!(super::from_raw(&raw[..10])
            .unwrap_err()
            .contains("truncated"));
    }

    /// A folder without its tables says which, not that the folder is
    /// missing (a link to nothing in a dump folder read that way).
    #[test]
    fn a_missing_table_in_a_folder_is_named() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("smbios_entry_point"), b"_SM3_").unwrap();
        let note = super::read(d.path()).note;
        assert!(note.contains("DMI"), "{note}");
        assert!(note.contains("or is a link to nothing"), "{note}");
        let gone = d.path().join("gone");
        assert!(super::read(&gone).note.contains("a VM without them"));
    }
}
