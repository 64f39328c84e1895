//! CPU identity, ISA features and caches: from CPUID on x86-64, from the
//! auxiliary vector and MIDR on AArch64 (`platform::arm`).

#[cfg(target_arch = "x86_64")]
use raw_cpuid::{CacheType, CpuId};

use super::topology::CpuidCache;
use crate::model::{CpuIdent, Features};

/// Detect, then hide the features named in `BWSCOPE_DISABLE_ISA`
/// (comma-separated, e.g. `avx512f,avx2`; on AArch64 `sve,asimd`). That lets a user compare
/// narrower code paths and lets tests exercise the `skipped` path on a
/// CPU that has everything. Identifying the core reads [`detect_raw`]:
/// hiding a feature from the kernels does not make it another core.
pub fn detect_features() -> Features {
    let mut f = detect_raw();
    for name in disabled_isa() {
        hide(&mut f, name);
    }
    f
}

/// How one feature is hidden.
type Hide = fn(&mut Features);

/// The features `BWSCOPE_DISABLE_ISA` may name (on either architecture)
/// and how each is hidden.
const HIDE: &[(&str, Hide)] = &[
    ("sse2", |f| f.sse2 = false),
    ("avx", |f| f.avx = false),
    ("avx2", |f| f.avx2 = false),
    ("avx512f", |f| f.avx512f = false),
    ("avx512bw", |f| f.avx512bw = false),
    ("avx512_vbmi2", |f| f.avx512_vbmi2 = false),
    ("avx512_fp16", |f| f.avx512_fp16 = false),
    ("amx_tile", |f| f.amx_tile = false),
    ("amx_fp16", |f| f.amx_fp16 = false),
    ("avx_vnni", |f| f.avx_vnni = false),
    ("erms", |f| f.erms = false),
    ("fsrm", |f| f.fsrm = false),
    ("asimd", |f| f.asimd = false),
    ("neon", |f| f.asimd = false),
    ("sve", |f| f.sve = false),
    ("sve2", |f| f.sve2 = false),
    ("sme", |f| f.sme = false),
    ("dc_zva", |f| f.dc_zva = false),
];

/// Hide `name` from `f`; false when it is no feature of [`HIDE`].
fn hide(f: &mut Features, name: &str) -> bool {
    HIDE.iter()
        .find(|(n, _)| *n == name)
        .map(|(_, h)| h(f))
        .is_some()
}

/// The names in `BWSCOPE_DISABLE_ISA` (comma-separated, spaces and empty
/// items ignored).
fn disabled_isa() -> Vec<&'static str> {
    let list = std::env::var("BWSCOPE_DISABLE_ISA").unwrap_or_default();
    let names: Vec<String> = list
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .collect();
    HIDE.iter()
        .map(|(h, _)| *h)
        .filter(|h| names.iter().any(|n| n == h))
        .collect()
}

/// A name in `BWSCOPE_DISABLE_ISA` that is no feature (`avx512` for
/// `avx512f`) hid nothing, silently: the message names it and the known
/// ones (the caller adds the variable's name).
pub fn check_disable_isa() -> Result<(), String> {
    let list = std::env::var("BWSCOPE_DISABLE_ISA").unwrap_or_default();
    let Some(bad) = list
        .split(',')
        .map(str::trim)
        .find(|n| !n.is_empty() && !hide(&mut Features::default(), n))
    else {
        return Ok(());
    };
    let known: Vec<&str> = HIDE.iter().map(|(h, _)| *h).collect();
    let close: Vec<&str> = known
        .iter()
        .copied()
        .filter(|h| h.starts_with(bad) || bad.starts_with(h))
        .collect();
    let hint = match close.as_slice() {
        [one] => format!(" (did you mean {one}?)"),
        _ => String::new(),
    };
    Err(format!(
        "'{bad}' is not a feature bwscope can hide{hint}; give a comma-separated list of {}",
        known.join(", ")
    ))
}

/// CPUID leaf 7 subleaves 0 and 1 as (EBX, ECX, EDX) and EAX, zero where
/// the CPU does not have them (a leaf above the maximum returns another
/// leaf's data on Intel).
#[cfg(target_arch = "x86_64")]
fn leaf7() -> (core::arch::x86_64::CpuidResult, u32) {
    use core::arch::x86_64::{__cpuid, __cpuid_count, CpuidResult};
    // (safe since Rust 1.87: cpuid exists on every x86_64)
    let zero = CpuidResult {
        eax: 0,
        ebx: 0,
        ecx: 0,
        edx: 0,
    };
    if __cpuid(0).eax < 7 {
        return (zero, 0);
    }
    let s0 = __cpuid_count(7, 0);
    let s1 = if s0.eax >= 1 {
        __cpuid_count(7, 1).eax
    } else {
        0
    };
    (s0, s1)
}

/// The features as CPUID reports them.
pub fn detect_raw() -> Features {
    #[cfg(target_arch = "x86_64")]
    {
        let c = CpuId::new();
        let ext = c.get_extended_feature_info();
        let apm = c.get_advanced_power_mgmt_info();
        // raw-cpuid 11 does not expose FSRM (leaf 7 EDX bit 4), MOVDIR64B
        // (ECX bit 28) or the AMX bits: read the leaf directly. Bit
        // positions: Linux arch/x86/include/asm/cpufeatures.h (word 16 =
        // 7.0 ECX, word 18 = 7.0 EDX, word 12 = 7.1 EAX).
        let (l7, l7s1) = leaf7();
        Features {
            sse2: std::is_x86_feature_detected!("sse2"),
            sse4_1: std::is_x86_feature_detected!("sse4.1"),
            avx: std::is_x86_feature_detected!("avx"),
            avx2: std::is_x86_feature_detected!("avx2"),
            avx512f: std::is_x86_feature_detected!("avx512f"),
            avx512bw: std::is_x86_feature_detected!("avx512bw"),
            erms: ext.as_ref().is_some_and(|e| e.has_rep_movsb_stosb()),
            fsrm: l7.edx & (1 << 4) != 0,
            movdiri: l7.ecx & (1 << 27) != 0,
            movdir64b: l7.ecx & (1 << 28) != 0,
            clflushopt: ext.as_ref().is_some_and(|e| e.has_clflushopt()),
            clwb: ext.as_ref().is_some_and(|e| e.has_clwb()),
            invariant_tsc: apm.is_some_and(|a| a.has_invariant_tsc()),
            avx512_vbmi2: l7.ecx & (1 << 6) != 0,
            hybrid: l7.edx & (1 << 15) != 0,
            avx512_fp16: l7.edx & (1 << 23) != 0,
            amx_tile: l7.edx & (1 << 24) != 0,
            avx_vnni: l7s1 & (1 << 4) != 0,
            amx_fp16: l7s1 & (1 << 21) != 0,
            ..Features::default()
        }
    }
    #[cfg(target_arch = "aarch64")]
    {
        super::arm::detected().1.clone()
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    Features::default()
}

/// AArch64: the implementer's name as vendor, the kinds of core as the
/// model name (`Arm Cortex-A76 ×4 + Arm Cortex-A55 ×4`), implementer and
/// part of the first kind as family and model, its revision as stepping.
#[cfg(target_arch = "aarch64")]
pub fn ident() -> CpuIdent {
    let arm = &super::arm::detected().0;
    let first = arm.core_kinds.first();
    let model_name = arm
        .core_kinds
        .iter()
        .map(|k| format!("{} ×{}", k.name, k.cpus.len()))
        .collect::<Vec<_>>()
        .join(" + ");
    let midr = first
        .and_then(|k| u32::from_str_radix(k.midr.trim_start_matches("0x"), 16).ok())
        .map(crate::model::Midr);
    CpuIdent {
        vendor: first
            .and_then(|k| super::arm::midr::implementer_name(k.implementer))
            .unwrap_or("unknown")
            .into(),
        model_name,
        family: first.map_or(0, |k| k.implementer as u32),
        model: first.map_or(0, |k| k.part as u32),
        stepping: midr.map_or(0, |m| m.revision() as u32),
        hypervisor: None,
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub fn ident() -> CpuIdent {
    CpuIdent::default()
}

#[cfg(target_arch = "x86_64")]
pub fn ident() -> CpuIdent {
    let c = CpuId::new();
    let vendor = c
        .get_vendor_info()
        .map(|v| v.as_str().to_string())
        .unwrap_or_default();
    let model_name = c
        .get_processor_brand_string()
        .map(|b| b.as_str().trim().to_string())
        .unwrap_or_default();
    let (family, model, stepping) = c
        .get_feature_info()
        .map(|f| {
            (
                f.family_id() as u32,
                f.model_id() as u32,
                f.stepping_id() as u32,
            )
        })
        .unwrap_or_default();
    let hypervisor = c
        .get_feature_info()
        .filter(|f| f.has_hypervisor())
        .map(|_| {
            c.get_hypervisor_info()
                .map(|h| format!("{:?}", h.identify()))
                .unwrap_or_else(|| "unknown".into())
        });
    CpuIdent {
        vendor,
        model_name,
        family,
        model,
        stepping,
        hypervisor,
    }
}

/// Caches as CPUID describes them; none off x86-64 (AArch64 has no
/// EL0-readable cache geometry beyond `CTR_EL0`'s line sizes: sysfs
/// describes the caches there).
#[cfg(not(target_arch = "x86_64"))]
pub fn cpuid_caches() -> Vec<CpuidCache> {
    Vec::new()
}

#[cfg(target_arch = "x86_64")]
pub fn cpuid_caches() -> Vec<CpuidCache> {
    let c = CpuId::new();
    let Some(params) = c.get_cache_parameters() else {
        return Vec::new();
    };
    params
        .filter(|p| p.cache_type() != CacheType::Null)
        .map(|p| {
            let size = p.associativity() as u64
                * p.physical_line_partitions() as u64
                * p.coherency_line_size() as u64
                * p.sets() as u64;
            CpuidCache {
                level: p.level(),
                kind: match p.cache_type() {
                    CacheType::Data => "data",
                    CacheType::Instruction => "instruction",
                    CacheType::Unified => "unified",
                    _ => "other",
                }
                .into(),
                size_bytes: size,
                line_bytes: p.coherency_line_size() as u32,
                ways: p.associativity() as u32,
                max_sharing: p.max_cores_for_cache() as u32,
            }
        })
        .collect()
}
