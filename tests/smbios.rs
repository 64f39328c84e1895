//! The DRAM peak from SMBIOS tables, through the real binary: each fixture
//! is built here byte by byte from the layout of the DMTF SMBIOS Reference
//! Specification (DSP0134 3.7.0): the 64-bit entry point (§5.2.2, table 3),
//! the Physical Memory Array (type 16, §7.17, table 72), the Memory Device
//! (type 17, §7.18, table 74, the 3.3 length 5Ch) and End-of-Table (type
//! 127, §7.46). Every field is written at the offset the table gives, named
//! as the table names it, so a reader can check one against the other. No
//! fixture comes from one machine. `bwscope info` reads them from
//! `BWSCOPE_SMBIOS_DIR`, a folder laid out like /sys/firmware/dmi/tables.

mod common;

use common::bwscope;
use serde_json::Value;

/// A type 17 device as a firmware would describe it.
#[derive(Clone)]
struct Dev {
    locator: &'static str,
    bank: &'static str,
    /// MiB; 0 an empty slot.
    size_mib: u32,
    /// Memory Type byte (§7.18.2): 22h DDR5, 23h LPDDR5, 1Ah DDR4.
    mem_type: u8,
    /// Form Factor byte (§7.18.1): 09h DIMM, 0Bh Row of chips.
    form: u8,
    total_width: u16,
    data_width: u16,
    /// Speed and Configured Memory Speed, MT/s: 0 unknown, FFFFh "see the
    /// extended field".
    speed: u16,
    configured: u16,
    extended_configured: u32,
}

fn ddr5(locator: &'static str, bank: &'static str, size_mib: u32, mts: u16) -> Dev {
    Dev {
        locator,
        bank,
        size_mib,
        mem_type: 0x22,
        form: 0x09,
        total_width: 80,
        data_width: 64,
        speed: if size_mib > 0 { 5600 } else { 0 },
        configured: if size_mib > 0 { mts } else { 0 },
        extended_configured: 0,
    }
}

/// A structure table under construction.
#[derive(Default)]
struct Table {
    bytes: Vec<u8>,
    next_handle: u16,
}

impl Table {
    fn handle(&mut self) -> u16 {
        self.next_handle += 1;
        self.next_handle
    }

    /// Formatted area (whose first byte is the type, the second its
    /// length) then the strings, each NUL-terminated, then a NUL (two NULs
    /// when there are none): §6.1.3.
    fn push(&mut self, formatted: Vec<u8>, strings: &[&str]) {
        assert_eq!(formatted[1] as usize, formatted.len(), "length byte");
        self.bytes.extend(formatted);
        if strings.iter().all(|s| s.is_empty()) {
            self.bytes.extend([0, 0]);
            return;
        }
        for s in strings.iter().filter(|s| !s.is_empty()) {
            self.bytes.extend(s.as_bytes());
            self.bytes.push(0);
        }
        self.bytes.push(0);
    }

    /// Type 16, Physical Memory Array, 2.7+ (length 17h).
    fn array(&mut self, devices: u16) -> u16 {
        let h = self.handle();
        let mut f = vec![0u8; 0x17];
        f[0x00] = 16; // Type
        f[0x01] = 0x17; // Length
        f[0x02..0x04].copy_from_slice(&h.to_le_bytes()); // Handle
        f[0x04] = 0x03; // Location: system board or motherboard
        f[0x05] = 0x03; // Use: system memory
        f[0x06] = 0x06; // Memory Error Correction: multi-bit ECC
        f[0x07..0x0B].copy_from_slice(&0x8000_0000u32.to_le_bytes()); // Maximum Capacity: see extended
        f[0x0B..0x0D].copy_from_slice(&0xFFFEu16.to_le_bytes()); // Memory Error Information Handle: not provided
        f[0x0D..0x0F].copy_from_slice(&devices.to_le_bytes()); // Number of Memory Devices
        f[0x0F..0x17].copy_from_slice(&(4u64 << 40).to_le_bytes()); // Extended Maximum Capacity, bytes
        self.push(f, &[]);
        h
    }

    /// Type 17, Memory Device, 3.3 (length 5Ch).
    fn device(&mut self, array: u16, d: &Dev) {
        let h = self.handle();
        let mut f = vec![0u8; 0x5C];
        let empty = d.size_mib == 0;
        f[0x00] = 17; // Type
        f[0x01] = 0x5C; // Length
        f[0x02..0x04].copy_from_slice(&h.to_le_bytes()); // Handle
        f[0x04..0x06].copy_from_slice(&array.to_le_bytes()); // Physical Memory Array Handle
        f[0x06..0x08].copy_from_slice(&0xFFFEu16.to_le_bytes()); // Memory Error Information Handle
        f[0x08..0x0A].copy_from_slice(&d.total_width.to_le_bytes()); // Total Width
        f[0x0A..0x0C].copy_from_slice(&d.data_width.to_le_bytes()); // Data Width
                                                                    // Size: MiB below 32 GiB − 1 MiB, else 7FFFh and Extended Size.
        let (size, extended) = if d.size_mib >= 0x7FFF {
            (0x7FFFu16, d.size_mib)
        } else {
            (d.size_mib as u16, 0)
        };
        f[0x0C..0x0E].copy_from_slice(&size.to_le_bytes()); // Size
        f[0x0E] = d.form; // Form Factor
        f[0x0F] = 0; // Device Set: none
        let (maker, serial, part) = if empty {
            ("NO DIMM", "NO DIMM", "NO DIMM")
        } else {
            ("Samsung", "0001", "M321R8GA0BB0-CQK")
        };
        let strings = [d.locator, d.bank, maker, serial, part];
        // A string field holds its number among the strings present, or 0
        // for none (§6.1.3).
        let idx = |i: usize| -> u8 {
            if strings[i].is_empty() {
                0
            } else {
                strings[..=i].iter().filter(|s| !s.is_empty()).count() as u8
            }
        };
        f[0x10] = idx(0); // Device Locator
        f[0x11] = idx(1); // Bank Locator
        f[0x12] = if empty { 0x02 } else { d.mem_type }; // Memory Type (02h unknown)
        f[0x13..0x15].copy_from_slice(&(if empty { 0x0004u16 } else { 0x0080 }).to_le_bytes()); // Type Detail: unknown / synchronous
        f[0x15..0x17].copy_from_slice(&d.speed.to_le_bytes()); // Speed
        f[0x17] = idx(2); // Manufacturer
        f[0x18] = idx(3); // Serial Number
        f[0x19] = 0; // Asset Tag: none
        f[0x1A] = idx(4); // Part Number
        f[0x1B] = if empty { 0 } else { 2 }; // Attributes: rank
        f[0x1C..0x20].copy_from_slice(&extended.to_le_bytes()); // Extended Size, MiB
        f[0x20..0x22].copy_from_slice(&d.configured.to_le_bytes()); // Configured Memory Speed
        let mv: u16 = if empty { 0 } else { 1100 };
        f[0x22..0x24].copy_from_slice(&mv.to_le_bytes()); // Minimum Voltage, mV
        f[0x24..0x26].copy_from_slice(&mv.to_le_bytes()); // Maximum Voltage
        f[0x26..0x28].copy_from_slice(&mv.to_le_bytes()); // Configured Voltage
        f[0x28] = if empty { 0x02 } else { 0x03 }; // Memory Technology: unknown / DRAM
        f[0x29..0x2B].copy_from_slice(&0x0008u16.to_le_bytes()); // Operating Mode Capability: volatile
        f[0x2B] = 0; // Firmware Version: none
                     // 2Ch–53h: module and controller IDs, the four sizes: 0 (unknown).
        let ext_speed: u32 = 0;
        f[0x54..0x58].copy_from_slice(&ext_speed.to_le_bytes()); // Extended Speed
        f[0x58..0x5C].copy_from_slice(&d.extended_configured.to_le_bytes()); // Extended Configured Memory Speed
        self.push(f, &strings);
    }

    /// Type 127, End-of-Table.
    fn end(&mut self) {
        let h = self.handle();
        let mut f = vec![127u8, 4, 0, 0];
        f[2..4].copy_from_slice(&h.to_le_bytes());
        self.push(f, &[]);
    }

    /// The 64-bit entry point (§5.2.2) for a table of `len` bytes,
    /// SMBIOS `major.minor`: anchor "_SM3_", a checksum that makes the 24
    /// bytes sum to 0, length 18h, version, docrev 0, entry point revision
    /// 01h, reserved, the table's maximum size and address.
    fn entry_point(len: u32, major: u8, minor: u8) -> Vec<u8> {
        let mut e = vec![0u8; 0x18];
        e[0x00..0x05].copy_from_slice(b"_SM3_"); // Anchor String
        e[0x06] = 0x18; // Entry Point Length
        e[0x07] = major; // SMBIOS Major Version
        e[0x08] = minor; // SMBIOS Minor Version
        e[0x09] = 0; // SMBIOS Docrev
        e[0x0A] = 0x01; // Entry Point Revision
        e[0x0B] = 0; // Reserved
        e[0x0C..0x10].copy_from_slice(&len.to_le_bytes()); // Structure Table Maximum Size
        e[0x10..0x18].copy_from_slice(&0x000F_0000u64.to_le_bytes()); // Structure Table Address
        let sum = e.iter().fold(0u8, |a, b| a.wrapping_add(*b));
        e[0x05] = 0u8.wrapping_sub(sum); // Entry Point Structure Checksum
        e
    }

    /// Write the folder `info` reads: smbios_entry_point and DMI.
    fn write(&self, dir: &std::path::Path) {
        let ep = Table::entry_point(self.bytes.len() as u32, 3, 3);
        std::fs::write(dir.join("smbios_entry_point"), ep).unwrap();
        std::fs::write(dir.join("DMI"), &self.bytes).unwrap();
    }
}

/// `bwscope info` on the tables in `dir`, as JSON (`host.dram`), and the
/// text view.
fn info(dir: &std::path::Path, extra: &[&str]) -> (Value, String) {
    let run = |json: bool| {
        let mut c = bwscope();
        c.env("BWSCOPE_SMBIOS_DIR", dir)
            .args(extra)
            .args(["info", "--no-clock"]);
        if json {
            c.args(["--json", "-"]);
        }
        String::from_utf8(c.assert().success().get_output().stdout.clone()).unwrap()
    };
    let host: Value = serde_json::from_str(&run(true)).unwrap();
    (host["dram"].clone(), run(false))
}

fn peak(d: &Value) -> Option<f64> {
    d["peak_gbps"].as_f64()
}

/// A 2-socket server, 8 DDR5 channels per socket, two slots per channel
/// (the second empty): 16 × 64 GiB DIMMs at 4800 MT/s (rated 5600).
fn server() -> Table {
    const LOC: [[&str; 16]; 2] = [
        [
            "P1-DIMMA1",
            "P1-DIMMA2",
            "P1-DIMMB1",
            "P1-DIMMB2",
            "P1-DIMMC1",
            "P1-DIMMC2",
            "P1-DIMMD1",
            "P1-DIMMD2",
            "P1-DIMME1",
            "P1-DIMME2",
            "P1-DIMMF1",
            "P1-DIMMF2",
            "P1-DIMMG1",
            "P1-DIMMG2",
            "P1-DIMMH1",
            "P1-DIMMH2",
        ],
        [
            "P2-DIMMA1",
            "P2-DIMMA2",
            "P2-DIMMB1",
            "P2-DIMMB2",
            "P2-DIMMC1",
            "P2-DIMMC2",
            "P2-DIMMD1",
            "P2-DIMMD2",
            "P2-DIMME1",
            "P2-DIMME2",
            "P2-DIMMF1",
            "P2-DIMMF2",
            "P2-DIMMG1",
            "P2-DIMMG2",
            "P2-DIMMH1",
            "P2-DIMMH2",
        ],
    ];
    let mut t = Table::default();
    for socket in LOC {
        let a = t.array(16);
        for (i, loc) in socket.iter().enumerate() {
            let size = if i % 2 == 0 { 64 << 10 } else { 0 };
            t.device(a, &ddr5(loc, "BANK", size, 4800));
        }
    }
    t.end();
    t
}

#[test]
fn a_two_socket_ddr5_server_peaks_at_its_channels() {
    let dir = tempfile::tempdir().unwrap();
    server().write(dir.path());
    let (d, text) = info(dir.path(), &[]);
    // 16 channels × 4800 MT/s × 8 B.
    assert!((peak(&d).unwrap() - 614.4).abs() < 1e-6, "{d}");
    assert_eq!(d["channels"], 16);
    assert_eq!(d["devices"].as_array().unwrap().len(), 32);
    assert_eq!(
        d["note"],
        "16 channels × 4800 MT/s × 64 bit = 614.4 GB/s (16 of 32 slots populated)"
    );
    assert!(
        d["source"].as_str().unwrap().starts_with("SMBIOS 3.3"),
        "{d}"
    );
    let a1 = &d["devices"][0];
    assert_eq!(a1["size_bytes"], 64u64 << 30);
    assert_eq!(
        (a1["speed_mts"].as_u64(), a1["configured_mts"].as_u64()),
        (Some(5600), Some(4800))
    );
    assert_eq!(a1["channel"], "socket 1 channel A");
    assert_eq!(a1["memory_type"], "DDR5");
    // Empty slots are listed as such and count for nothing.
    assert!(d["devices"][1]["size_bytes"].is_null());
    assert!(d["warnings"].is_null(), "{d}");
    assert!(
        text.contains("dram       peak 614.4 GB/s: 16 channels × 4800 MT/s × 64 bit"),
        "{text}"
    );
    assert!(
        text.contains("P2-DIMMH2") && text.contains("empty"),
        "{text}"
    );
}

#[test]
fn a_laptop_with_soldered_lpddr5_counts_its_16_bit_channels() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = Table::default();
    let a = t.array(8);
    for loc in [
        "Controller0-ChannelA-DIMM0",
        "Controller0-ChannelB-DIMM0",
        "Controller0-ChannelC-DIMM0",
        "Controller0-ChannelD-DIMM0",
        "Controller1-ChannelA-DIMM0",
        "Controller1-ChannelB-DIMM0",
        "Controller1-ChannelC-DIMM0",
        "Controller1-ChannelD-DIMM0",
    ] {
        t.device(
            a,
            &Dev {
                locator: loc,
                bank: "BANK 0",
                size_mib: 2048,
                mem_type: 0x23,
                form: 0x0B,
                total_width: 16,
                data_width: 16,
                speed: 6400,
                configured: 6400,
                extended_configured: 0,
            },
        );
    }
    t.end();
    t.write(dir.path());
    let (d, text) = info(dir.path(), &[]);
    // 8 channels × 6400 MT/s × 2 B.
    assert!((peak(&d).unwrap() - 102.4).abs() < 1e-6, "{d}");
    assert_eq!(d["channels"], 8);
    assert_eq!(d["devices"][0]["memory_type"], "LPDDR5");
    assert_eq!(d["devices"][0]["form_factor"], "Row of chips");
    assert!(
        text.contains("8 channels × 6400 MT/s × 16 bit = 102.4 GB/s"),
        "{text}"
    );
}

#[test]
fn a_vm_without_memory_devices_says_so_and_takes_a_stated_peak() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = Table::default();
    t.array(0);
    t.end();
    t.write(dir.path());
    let (d, text) = info(dir.path(), &[]);
    assert_eq!(peak(&d), None);
    assert_eq!(
        d["note"],
        "DRAM peak unknown (no SMBIOS memory devices (type 17); state it with --dram-peak)"
    );
    assert!(
        text.contains("dram       DRAM peak unknown (no SMBIOS memory devices"),
        "{text}"
    );
    // The user states it.
    let (d, text) = info(dir.path(), &["--dram-peak", "409.6GB/s"]);
    assert_eq!(peak(&d), Some(409.6));
    assert_eq!(d["source"], "--dram-peak");
    assert!(
        text.contains("dram       peak 409.6 GB/s: stated with --dram-peak"),
        "{text}"
    );
    // No tables at all (this kind of VM): one line, no peak.
    let none = dir.path().join("absent");
    let (d, _) = info(&none, &[]);
    assert_eq!(peak(&d), None);
    assert!(
        d["note"].as_str().unwrap().contains("does not exist"),
        "{d}"
    );
}

#[test]
fn a_bad_stated_peak_names_the_flag() {
    bwscope()
        .args(["info", "--no-clock", "--dram-peak", "fast"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "--dram-peak: 'fast' is not a bandwidth",
        ));
}

#[test]
fn corrupt_or_truncated_tables_give_no_peak() {
    let dir = tempfile::tempdir().unwrap();
    let t = server();
    // A checksum that does not sum to zero.
    t.write(dir.path());
    let mut ep = std::fs::read(dir.path().join("smbios_entry_point")).unwrap();
    ep[0x05] = ep[0x05].wrapping_add(1);
    std::fs::write(dir.path().join("smbios_entry_point"), &ep).unwrap();
    let (d, _) = info(dir.path(), &[]);
    assert_eq!(peak(&d), None);
    assert!(
        d["note"]
            .as_str()
            .unwrap()
            .contains("corrupt SMBIOS entry point"),
        "{d}"
    );
    // A table cut short of the length its entry point gives.
    t.write(dir.path());
    std::fs::write(dir.path().join("DMI"), &t.bytes[..t.bytes.len() / 2]).unwrap();
    let (d, _) = info(dir.path(), &[]);
    assert_eq!(peak(&d), None);
    let note = d["note"].as_str().unwrap();
    assert!(note.contains("truncated SMBIOS table"), "{note}");
    // A structure whose strings never end (its length byte overstated).
    let mut bad = Table::default();
    let a = bad.array(1);
    bad.device(a, &ddr5("CPU0_DIMM_A1", "", 32 << 10, 4800));
    let len = bad.bytes.len();
    bad.bytes.truncate(len - 1); // drop the strings' final NUL
    bad.bytes.extend(std::iter::repeat_n(b'x', 16));
    bad.write(dir.path());
    let (d, _) = info(dir.path(), &[]);
    assert_eq!(peak(&d), None);
    assert!(
        d["note"].as_str().unwrap().contains("corrupt SMBIOS table"),
        "{d}"
    );
    // Empty files.
    std::fs::write(dir.path().join("smbios_entry_point"), b"").unwrap();
    let (d, _) = info(dir.path(), &[]);
    assert_eq!(peak(&d), None);
}

#[test]
fn unknown_speeds_void_the_peak_and_mixed_speeds_warn() {
    let dir = tempfile::tempdir().unwrap();
    // One DIMM whose configured speed is 0 (unknown).
    let mut t = Table::default();
    let a = t.array(2);
    t.device(a, &ddr5("CPU0_DIMM_A1", "", 32 << 10, 4800));
    t.device(a, &ddr5("CPU0_DIMM_B1", "", 32 << 10, 0));
    t.end();
    t.write(dir.path());
    let (d, text) = info(dir.path(), &[]);
    assert_eq!(peak(&d), None);
    assert!(
        text.contains("DRAM peak unknown (CPU0_DIMM_B1 reports no configured speed (0 or unknown)"),
        "{text}"
    );
    // Mixed speeds: each channel at its own, and a warning.
    let mut t = Table::default();
    let a = t.array(4);
    for (loc, mts) in [
        ("CPU0_DIMM_A1", 4800),
        ("CPU0_DIMM_B1", 4800),
        ("CPU0_DIMM_C1", 4400),
        ("CPU0_DIMM_D1", 4400),
    ] {
        t.device(a, &ddr5(loc, "", 32 << 10, mts));
    }
    t.end();
    t.write(dir.path());
    let (d, text) = info(dir.path(), &[]);
    assert!((peak(&d).unwrap() - 147.2).abs() < 1e-6, "{d}");
    let w = d["warnings"][0].as_str().unwrap();
    assert!(
        w.contains("mixed DIMM speeds (4800 MT/s on 2, 4400 MT/s on 2)"),
        "{w}"
    );
    assert!(text.contains("warning: mixed DIMM speeds"), "{text}");
    // MRDIMM-class speeds past 65534 MT/s' field: FFFFh and the extended one.
    let mut t = Table::default();
    let a = t.array(1);
    let mut dev = ddr5("CPU0_DIMM_A1", "", 64 << 10, 0xFFFF);
    dev.extended_configured = 8800;
    t.device(a, &dev);
    t.end();
    t.write(dir.path());
    let (d, _) = info(dir.path(), &[]);
    assert_eq!(d["devices"][0]["configured_mts"], 8800);
    assert!((peak(&d).unwrap() - 70.4).abs() < 1e-6, "{d}");
}

#[test]
fn locators_that_name_no_channel_give_no_peak() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = Table::default();
    let a = t.array(2);
    t.device(a, &ddr5("PROC 1 DIMM 1", "", 32 << 10, 4800));
    t.device(a, &ddr5("PROC 1 DIMM 2", "", 32 << 10, 4800));
    t.end();
    t.write(dir.path());
    let (d, _) = info(dir.path(), &[]);
    assert_eq!(peak(&d), None);
    assert!(
        d["note"]
            .as_str()
            .unwrap()
            .contains("'PROC 1 DIMM 1' names no channel"),
        "{d}"
    );
}
