//! AArch64 detection: features from the auxiliary vector, the SVE vector
//! length, `dc zva` and cache-line facts from the EL0-readable ID
//! registers, and the kind of every cpu from its MIDR.
//!
//! Sources: Linux `Documentation/arch/arm64/elf_hwcaps.rst` (HWCAP bits),
//! `sve.rst` (`prctl(PR_SVE_GET_VL)`), `cpu-feature-registers.rst` (EL0
//! reads of `MIDR_EL1`, trapped and emulated by the kernel); the Arm ARM
//! for `DCZID_EL0` (BS [3:0] = log2 of the block in 4-byte words, DZP [4]
//! = prohibited) and `CTR_EL0` (IminLine [3:0], DminLine [19:16], log2
//! words).
//!
//! The decoders and the text parsers compile on every target, so x86 CI
//! tests them against fixtures; only the register reads are AArch64 code.
//! Under an emulator (qemu-user) `/proc/cpuinfo` and `/sys` are the
//! host's: they are used for CPU facts only when they describe an arm64
//! kernel's machine, and otherwise the run says so (`foreign_files`).

pub mod midr;

use std::path::Path;

#[cfg(target_arch = "aarch64")]
use crate::model::ArmHost;
use crate::model::{CoreKind, Midr};

/// HWCAP bits (`arch/arm64/include/uapi/asm/hwcap.h`).
const HWCAP_ASIMD: u64 = 1 << 1;
const HWCAP_SVE: u64 = 1 << 22;
const HWCAP2_SVE2: u64 = 1 << 1;
const HWCAP2_SME: u64 = 1 << 23;

/// (asimd, sve, sve2, sme) from `AT_HWCAP` and `AT_HWCAP2`.
pub fn decode_hwcaps(hwcap: u64, hwcap2: u64) -> (bool, bool, bool, bool) {
    (
        hwcap & HWCAP_ASIMD != 0,
        hwcap & HWCAP_SVE != 0,
        hwcap2 & HWCAP2_SVE2 != 0,
        hwcap2 & HWCAP2_SME != 0,
    )
}

/// Bytes one `dc zva` zeroes, or None when `DCZID_EL0.DZP` prohibits it.
pub fn dczid_block_bytes(dczid: u64) -> Option<u32> {
    (dczid & 0x10 == 0).then(|| 4u32 << (dczid & 0xf))
}

/// (smallest data line, smallest instruction line) in bytes from `CTR_EL0`.
pub fn ctr_line_bytes(ctr: u64) -> (u32, u32) {
    (4u32 << ((ctr >> 16) & 0xf), 4u32 << (ctr & 0xf))
}

/// Group per-cpu MIDRs into kinds (one per implementer and part), in
/// order of first appearance, each identified in the table.
pub fn core_kinds(midrs: &[(u32, Midr)]) -> Vec<CoreKind> {
    let mut kinds: Vec<CoreKind> = Vec::new();
    for &(cpu, m) in midrs {
        let (imp, part) = m.core();
        if let Some(k) = kinds
            .iter_mut()
            .find(|k| k.implementer == imp && k.part == part)
        {
            k.cpus.push(cpu);
            continue;
        }
        let uarch = super::uarch::identify_arm(m);
        let id = uarch
            .row
            .as_ref()
            .map_or_else(|| format!("{imp:#04x}-{part:#05x}"), |r| r.id.clone());
        kinds.push(CoreKind {
            id,
            name: midr::core_name(m),
            midr: format!("{:#010x}", m.0),
            implementer: imp,
            part,
            cpus: vec![cpu],
            uarch,
        });
    }
    kinds
}

/// `midr_source` where the system states kinds of core instead of MIDRs.
const STATED_SOURCE: &str = "sysctl hw.perflevelN (macOS hides MIDR_EL1)";

/// Kinds of core the system states by name (macOS's performance levels,
/// fastest first) where it hides the per-cpu MIDR: no part number, so no
/// microarchitecture row and no ceiling (never guessed from the name).
pub fn stated_kinds(levels: Vec<(String, Vec<u32>)>) -> Vec<CoreKind> {
    levels
        .into_iter()
        .map(|(name, cpus)| CoreKind {
            id: format!("apple-{}", name.to_lowercase()),
            name: format!("Apple {name} cores"),
            midr: "unknown".into(),
            implementer: 0x61,
            part: 0,
            cpus,
            uarch: crate::model::UarchMatch {
                row: None,
                reason: format!("{STATED_SOURCE}: no part number to look up"),
            },
        })
        .collect()
}

/// Where the per-cpu MIDRs come from, in order: sysfs, an arm64
/// `/proc/cpuinfo`, else `mrs MIDR_EL1` on this cpu for every cpu (the
/// files describe another architecture, or none could be read).
/// `cpuinfo` is the text of `/proc/cpuinfo` (None if unreadable).
pub fn midrs_from(
    sys_cpu: &Path,
    cpuinfo: Option<&str>,
    online: &[u32],
    this_cpu: Midr,
) -> (Vec<(u32, Midr)>, &'static str, Option<String>) {
    if let Some(m) = midr::sysfs_midrs(sys_cpu, online) {
        return (m, "sysfs", None);
    }
    let from_cpuinfo = cpuinfo.map(midr::cpuinfo_midrs).unwrap_or_default();
    if !from_cpuinfo.is_empty() {
        return (from_cpuinfo, crate::os::cpu::CPUINFO, None);
    }
    let foreign = cpuinfo.and_then(midr::foreign_cpuinfo).map(|what| {
        format!(
            "/proc/cpuinfo describes another architecture ({what}), and sysfs has no MIDRs: an emulator (qemu-user) shows its host's files; CPU facts come from this core's registers"
        )
    });
    let all = online.iter().map(|&c| (c, this_cpu)).collect();
    (all, "mrs MIDR_EL1", foreign)
}

/// The AArch64 facts of this machine, and its features (before
/// `BWSCOPE_DISABLE_ISA`).
#[cfg(target_arch = "aarch64")]
pub fn detect(online: &[u32]) -> (ArmHost, crate::model::Features) {
    let r = regs::read();
    let (asimd, sve, sve2, sme) = decode_hwcaps(r.hwcap, r.hwcap2);
    let dc_zva = dczid_block_bytes(r.dczid);
    let (dline, iline) = ctr_line_bytes(r.ctr);
    let cpuinfo = crate::os::cpu::cpuinfo();
    let (midrs, source, foreign) = midrs_from(
        crate::os::cpu::cpu_dir(),
        cpuinfo.as_deref(),
        online,
        Midr(r.midr as u32),
    );
    let (kinds, source) = match crate::os::cpu::stated_core_kinds() {
        Some(levels) => (stated_kinds(levels), STATED_SOURCE),
        None => (core_kinds(&midrs), source),
    };
    let host = ArmHost {
        sve_vector_bits: sve.then(regs::sve_vl_bytes).flatten().map(|b| b * 8),
        dc_zva_block_bytes: dc_zva,
        dcache_line_bytes: dline,
        icache_line_bytes: iline,
        core_kinds: kinds,
        midr_source: source.into(),
        foreign_files: foreign,
    };
    let features = crate::model::Features {
        asimd,
        sve,
        sve2,
        sme,
        dc_zva: dc_zva.is_some(),
        ..Default::default()
    };
    (host, features)
}

/// [`detect`] for the online cpus, once per process.
#[cfg(target_arch = "aarch64")]
pub fn detected() -> &'static (ArmHost, crate::model::Features) {
    static ONCE: std::sync::OnceLock<(ArmHost, crate::model::Features)> =
        std::sync::OnceLock::new();
    ONCE.get_or_init(|| detect(&super::topology::online_cpus()))
}

/// Why this process's `/proc` and `/sys` do not describe its machine (an
/// emulator's host), read once; None on a native arm64 kernel and off
/// AArch64.
pub fn foreign_files() -> Option<&'static str> {
    static WHY: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    WHY.get_or_init(|| {
        if !cfg!(target_arch = "aarch64") {
            return None;
        }
        let cpuinfo = crate::os::cpu::cpuinfo()?;
        let sys = crate::os::cpu::cpu_dir().join("cpu0/regs/identification/midr_el1");
        if sys.exists() {
            return None;
        }
        midr::foreign_cpuinfo(&cpuinfo)
    })
    .as_deref()
}

#[cfg(target_arch = "aarch64")]
pub mod regs {
    //! The EL0-readable registers and the auxiliary vector.

    pub struct Regs {
        pub hwcap: u64,
        pub hwcap2: u64,
        pub midr: u64,
        pub dczid: u64,
        pub ctr: u64,
    }

    pub fn read() -> Regs {
        let mut midr = 0u64;
        let (dczid, ctr): (u64, u64);
        // A system that states kinds of core itself (macOS) does not trap
        // and emulate `mrs MIDR_EL1` at EL0 as Linux does: the read would
        // be an undefined instruction there.
        if crate::os::cpu::stated_core_kinds().is_none() {
            // SAFETY: Linux traps and emulates EL0 reads of MIDR_EL1.
            unsafe { core::arch::asm!("mrs {}, midr_el1", out(reg) midr, options(nomem, nostack)) };
        }
        // SAFETY: DCZID_EL0 is always EL0-readable; CTR_EL0 is unless
        // SCTLR_EL1.UCT is clear, which neither Linux nor macOS leaves so.
        unsafe {
            core::arch::asm!("mrs {}, dczid_el0", out(reg) dczid, options(nomem, nostack));
            core::arch::asm!("mrs {}, ctr_el0", out(reg) ctr, options(nomem, nostack));
        }
        let (hwcap, hwcap2) = crate::os::cpu::hwcaps();
        Regs {
            hwcap,
            hwcap2,
            midr,
            dczid,
            ctr,
        }
    }

    pub use crate::os::cpu::sve_vl_bytes;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hwcaps_and_id_registers_decode() {
        // Values QEMU 7.2 gives `-cpu max` and `-cpu cortex-a72`.
        assert_eq!(
            decode_hwcaps(0xecff_fffb, 0x7f87_7fff),
            (true, true, true, true)
        );
        assert_eq!(decode_hwcaps(0x8fb, 0), (true, false, false, false));
        assert_eq!(dczid_block_bytes(4), Some(64));
        assert_eq!(dczid_block_bytes(6), Some(256)); // A64FX: 256 B lines
        assert_eq!(dczid_block_bytes(0x14), None); // DZP set
        assert_eq!(ctr_line_bytes(0x8444_c004), (64, 64));
        assert_eq!(ctr_line_bytes(0x8666_8006), (256, 256));
    }

    #[test]
    fn kinds_group_cpus_by_part_and_find_their_rows() {
        let a55 = Midr(0x412f_d050);
        let a76 = Midr(0x414f_d0b1);
        let max = Midr(0x000f_0510);
        let kinds = core_kinds(&[(0, a55), (1, a55), (2, a76), (3, a76), (4, max)]);
        assert_eq!(kinds.len(), 3);
        assert_eq!(kinds[0].id, "cortex-a55");
        assert_eq!(kinds[0].cpus, vec![0, 1]);
        assert_eq!(kinds[1].id, "cortex-a76");
        assert_eq!(kinds[1].midr, "0x414fd0b1");
        assert!(kinds[1].uarch.row.is_some());
        // Unknown: no row, named by its codes, and the reason says so.
        assert_eq!(kinds[2].id, "0x00-0x051");
        assert!(kinds[2].uarch.row.is_none());
        assert!(
            kinds[2].uarch.reason.contains("0x00"),
            "{}",
            kinds[2].uarch.reason
        );
    }

    #[test]
    fn stated_kinds_are_named_levels_without_a_row() {
        let k = stated_kinds(vec![
            ("Performance".into(), vec![0, 1, 2, 3]),
            ("Efficiency".into(), vec![4, 5, 6, 7]),
        ]);
        let ids: Vec<&str> = k.iter().map(|k| k.id.as_str()).collect();
        assert_eq!(ids, ["apple-performance", "apple-efficiency"]);
        assert_eq!(k[1].cpus, [4, 5, 6, 7]);
        assert!(k.iter().all(|k| k.uarch.row.is_none()), "{k:?}");
        assert!(k[0].uarch.reason.contains("hides MIDR_EL1"));
    }

    #[test]
    fn midrs_prefer_sysfs_then_cpuinfo_then_this_core() {
        let d = tempfile::tempdir().unwrap();
        let this = Midr(0x410f_d083);
        // Neither file describes an ARM machine: this core's MIDR for all,
        // and the reason names what the files describe.
        let x86 = "processor\t: 0\nvendor_id\t: AuthenticAMD\n\nprocessor\t: 1\nvendor_id\t: AuthenticAMD\n";
        let (m, src, foreign) = midrs_from(d.path(), Some(x86), &[0, 1], this);
        assert_eq!(m, vec![(0, this), (1, this)]);
        assert_eq!(src, "mrs MIDR_EL1");
        assert!(foreign.unwrap().contains("AuthenticAMD"));
        // An arm64 cpuinfo.
        let arm = "processor\t: 0\nCPU implementer\t: 0x41\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n\nprocessor\t: 1\nCPU implementer\t: 0x41\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n";
        let (m, src, foreign) = midrs_from(d.path(), Some(arm), &[0, 1], this);
        assert_eq!(src, crate::os::cpu::CPUINFO);
        assert_eq!(m[1].1.core(), (0x41, 0xd0c));
        assert!(foreign.is_none());
        // Sysfs wins when every cpu has it.
        for c in 0..2 {
            let p = d.path().join(format!("cpu{c}/regs/identification"));
            std::fs::create_dir_all(&p).unwrap();
            std::fs::write(p.join("midr_el1"), "0x00000000411fd401\n").unwrap();
        }
        let (m, src, _) = midrs_from(d.path(), Some(arm), &[0, 1], this);
        assert_eq!(src, "sysfs");
        assert_eq!(m[0].1.core(), (0x41, 0xd40));
    }
}
