//! Which core each cpu is, from its MIDR: read per cpu from sysfs or
//! `/proc/cpuinfo` (both parsed here from text, so fixtures written from
//! the kernel's documented formats test them on any machine), and the
//! names of the implementers and parts bwscope knows.
//!
//! Formats: `/sys/devices/system/cpu/cpuN/regs/identification/midr_el1`
//! holds the register as `0x00000000410fd0c1` (Linux
//! `Documentation/ABI/testing/sysfs-devices-system-cpu`, "regs/
//! identification"); `/proc/cpuinfo` on arm64 prints, per cpu, `processor
//! : N` and `CPU implementer : 0x41`, `CPU variant : 0x3`, `CPU part :
//! 0xd0c`, `CPU revision : 1` (`arch/arm64/kernel/cpuinfo.c`, `c_show`).
//! Part numbers: `arch/arm64/include/asm/cputype.h`.

use std::path::Path;

use crate::model::Midr;

/// Implementer codes (MIDR[31:24]) and their names.
const IMPLEMENTERS: &[(u8, &str)] = &[
    (0x41, "Arm"),
    (0x42, "Broadcom"),
    (0x43, "Cavium"),
    (0x46, "Fujitsu"),
    (0x48, "HiSilicon"),
    (0x4e, "NVIDIA"),
    (0x50, "Applied Micro"),
    (0x51, "Qualcomm"),
    (0x53, "Samsung"),
    (0x61, "Apple"),
    (0x6d, "Microsoft"),
    (0xc0, "Ampere"),
];

/// (implementer, part, name) for cores that may appear beside the table's
/// rows (a LITTLE core without a row still has a name).
const PARTS: &[(u8, u16, &str)] = &[
    (0x41, 0xd03, "Cortex-A53"),
    (0x41, 0xd04, "Cortex-A35"),
    (0x41, 0xd05, "Cortex-A55"),
    (0x41, 0xd07, "Cortex-A57"),
    (0x41, 0xd08, "Cortex-A72"),
    (0x41, 0xd09, "Cortex-A73"),
    (0x41, 0xd0a, "Cortex-A75"),
    (0x41, 0xd0b, "Cortex-A76"),
    (0x41, 0xd0c, "Neoverse N1"),
    (0x41, 0xd0d, "Cortex-A77"),
    (0x41, 0xd0e, "Cortex-A76AE"),
    (0x41, 0xd40, "Neoverse V1"),
    (0x41, 0xd41, "Cortex-A78"),
    (0x41, 0xd42, "Cortex-A78AE"),
    (0x41, 0xd44, "Cortex-X1"),
    (0x41, 0xd46, "Cortex-A510"),
    (0x41, 0xd47, "Cortex-A710"),
    (0x41, 0xd48, "Cortex-X2"),
    (0x41, 0xd49, "Neoverse N2"),
    (0x41, 0xd4b, "Cortex-A78C"),
    (0x41, 0xd4c, "Cortex-X1C"),
    (0x41, 0xd4d, "Cortex-A715"),
    (0x41, 0xd4e, "Cortex-X3"),
    (0x41, 0xd4f, "Neoverse V2"),
    (0x41, 0xd80, "Cortex-A520"),
    (0x41, 0xd81, "Cortex-A720"),
    (0x41, 0xd82, "Cortex-X4"),
    (0x41, 0xd84, "Neoverse V3"),
    (0x41, 0xd8e, "Neoverse N3"),
    (0x46, 0x001, "A64FX"),
    (0x61, 0x022, "Icestorm (M1)"),
    (0x61, 0x023, "Firestorm (M1)"),
    (0x61, 0x024, "Icestorm (M1 Pro)"),
    (0x61, 0x025, "Firestorm (M1 Pro)"),
    (0x61, 0x028, "Icestorm (M1 Max)"),
    (0x61, 0x029, "Firestorm (M1 Max)"),
    (0x61, 0x032, "Blizzard (M2)"),
    (0x61, 0x033, "Avalanche (M2)"),
    (0x61, 0x034, "Blizzard (M2 Pro)"),
    (0x61, 0x035, "Avalanche (M2 Pro)"),
    (0x61, 0x038, "Blizzard (M2 Max)"),
    (0x61, 0x039, "Avalanche (M2 Max)"),
    (0xc0, 0xac3, "AmpereOne"),
];

/// The implementer's name, if known.
pub fn implementer_name(code: u8) -> Option<&'static str> {
    IMPLEMENTERS
        .iter()
        .find(|(c, _)| *c == code)
        .map(|(_, n)| *n)
}

/// A human name for the core: `Arm Cortex-A55`, or the codes in hex when
/// the part is not in the list (`implementer 0x00 part 0x051 (not in
/// bwscope's list)`).
pub fn core_name(m: Midr) -> String {
    let (imp, part) = m.core();
    match PARTS.iter().find(|(i, p, _)| *i == imp && *p == part) {
        Some((_, _, n)) => format!("{} {n}", implementer_name(imp).unwrap_or("?")),
        None => format!(
            "implementer {imp:#04x}{} part {part:#05x} (not in bwscope's list)",
            implementer_name(imp).map_or(String::new(), |n| format!(" ({n})"))
        ),
    }
}

/// `cpuN`'s MIDR as sysfs holds it, from the text of its `midr_el1`.
pub fn parse_sysfs_midr(text: &str) -> Option<Midr> {
    let t = text.trim();
    let hex = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X"))?;
    u64::from_str_radix(hex, 16).ok().map(|v| Midr(v as u32))
}

/// Every cpu's MIDR under a sysfs cpu directory (`/sys/devices/system/cpu`
/// or a fixture tree), for the cpus given; None unless every one has it.
pub fn sysfs_midrs(root: &Path, cpus: &[u32]) -> Option<Vec<(u32, Midr)>> {
    cpus.iter()
        .map(|&c| {
            let p = root.join(format!("cpu{c}/regs/identification/midr_el1"));
            let text = crate::os::input::read_small_text(&p)?;
            Some((c, parse_sysfs_midr(&text)?))
        })
        .collect()
}

/// Per-cpu MIDRs from the text of an arm64 `/proc/cpuinfo`; empty when the
/// text has no `CPU implementer` line (another architecture's file).
pub fn cpuinfo_midrs(text: &str) -> Vec<(u32, Midr)> {
    let mut out = Vec::new();
    for block in text.split("\n\n") {
        let mut cpu = None;
        let (mut imp, mut var, mut part, mut rev) = (None, None, None, None);
        for line in block.lines() {
            let Some((k, v)) = line.split_once(':') else {
                continue;
            };
            let v = v.trim();
            let num = |v: &str| -> Option<u32> {
                match v.strip_prefix("0x") {
                    Some(h) => u32::from_str_radix(h, 16).ok(),
                    None => v.parse().ok(),
                }
            };
            match k.trim() {
                "processor" => cpu = v.parse::<u32>().ok(),
                "CPU implementer" => imp = num(v),
                "CPU variant" => var = num(v),
                "CPU part" => part = num(v),
                "CPU revision" => rev = num(v),
                _ => {}
            }
        }
        if let (Some(c), Some(i), Some(p)) = (cpu, imp, part) {
            let m = Midr::from_fields(
                i as u8,
                var.unwrap_or(0) as u8,
                p as u16,
                rev.unwrap_or(0) as u8,
            );
            out.push((c, m));
        }
    }
    out
}

/// What another architecture's `/proc/cpuinfo` says it is, in a few words
/// (`vendor_id AuthenticAMD, model name AMD EPYC`), or None when the text
/// is an arm64 kernel's (it has `CPU implementer` lines).
pub fn foreign_cpuinfo(text: &str) -> Option<String> {
    if text.lines().any(|l| l.starts_with("CPU implementer")) {
        return None;
    }
    let said: Vec<String> = ["vendor_id", "model name", "isa", "uarch"]
        .iter()
        .filter_map(|key| {
            text.lines()
                .filter_map(|l| l.split_once(':'))
                .find(|(k, _)| k.trim() == *key)
                .map(|(k, v)| format!("{} {}", k.trim(), v.trim()))
        })
        .collect();
    Some(if said.is_empty() {
        "no `CPU implementer` line".into()
    } else {
        said.join(", ")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Raspberry Pi 5-like big-only part and a big.LITTLE phone SoC, in
    /// the arm64 kernel's `c_show` format.
    const CPUINFO_BIG_LITTLE: &str = "processor\t: 0\nBogoMIPS\t: 38.40\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x2\nCPU part\t: 0xd05\nCPU revision\t: 0\n\nprocessor\t: 1\nBogoMIPS\t: 38.40\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x2\nCPU part\t: 0xd05\nCPU revision\t: 0\n\nprocessor\t: 2\nBogoMIPS\t: 38.40\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x4\nCPU part\t: 0xd0b\nCPU revision\t: 1\n\n";

    #[test]
    fn cpuinfo_gives_each_cpu_its_midr() {
        let m = cpuinfo_midrs(CPUINFO_BIG_LITTLE);
        assert_eq!(m.len(), 3);
        assert_eq!(m[0], (0, Midr(0x412fd050)));
        assert_eq!(m[2].1, Midr(0x414fd0b1));
        assert_eq!(m[2].1.core(), (0x41, 0xd0b));
        assert_eq!(core_name(m[0].1), "Arm Cortex-A55");
        assert!(foreign_cpuinfo(CPUINFO_BIG_LITTLE).is_none());
    }

    #[test]
    fn an_x86_cpuinfo_is_recognised_as_foreign() {
        let x86 = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 2\nmodel name\t: AMD EPYC\nflags\t\t: fpu vme sse2\n\n";
        assert!(cpuinfo_midrs(x86).is_empty());
        let why = foreign_cpuinfo(x86).unwrap();
        assert!(
            why.contains("AuthenticAMD") && why.contains("AMD EPYC"),
            "{why}"
        );
    }

    #[test]
    fn sysfs_tree_gives_every_cpu_or_nothing() {
        let d = tempfile::tempdir().unwrap();
        for (c, v) in [(0, "0x00000000410fd034"), (1, "0x00000000410fd083\n")] {
            let p = d.path().join(format!("cpu{c}/regs/identification"));
            std::fs::create_dir_all(&p).unwrap();
            std::fs::write(p.join("midr_el1"), v).unwrap();
        }
        let m = sysfs_midrs(d.path(), &[0, 1]).unwrap();
        assert_eq!(m[0].1.core(), (0x41, 0xd03));
        assert_eq!(m[1].1.core(), (0x41, 0xd08));
        assert_eq!(m[1].1.variant(), 0);
        assert_eq!(m[1].1.revision(), 3);
        assert!(sysfs_midrs(d.path(), &[0, 1, 2]).is_none());
    }

    #[test]
    fn unknown_parts_are_named_in_hex() {
        // QEMU's `-cpu max` reports implementer 0 (reserved for software).
        let n = core_name(Midr(0x000f0510));
        assert_eq!(n, "implementer 0x00 part 0x051 (not in bwscope's list)");
        let n = core_name(Midr::from_fields(0x41, 0, 0xfff, 0));
        assert!(n.contains("0x41 (Arm)") && n.contains("0xfff"), "{n}");
    }
}
