//! CPU identity, ISA features and caches from CPUID.

use raw_cpuid::{CacheType, CpuId};
use serde::{Deserialize, Serialize};

use crate::model::{CpuIdent, Features};

/// Detect, then hide the features named in `BWSCOPE_DISABLE_ISA`
/// (comma-separated, e.g. `avx512f,avx2`). That lets a user compare
/// narrower code paths and lets tests exercise the `skipped` path on a
/// CPU that has everything.
pub fn detect_features() -> Features {
    let mut f = detect_raw();
    if let Ok(list) = std::env::var("BWSCOPE_DISABLE_ISA") {
        for name in list.split(',').map(str::trim) {
            match name {
                "sse2" => f.sse2 = false,
                "avx" => f.avx = false,
                "avx2" => f.avx2 = false,
                "avx512f" => f.avx512f = false,
                "avx512bw" => f.avx512bw = false,
                "erms" => f.erms = false,
                "fsrm" => f.fsrm = false,
                _ => {}
            }
        }
    }
    f
}

fn detect_raw() -> Features {
    #[cfg(target_arch = "x86_64")]
    {
        let c = CpuId::new();
        let ext = c.get_extended_feature_info();
        let apm = c.get_advanced_power_mgmt_info();
        // raw-cpuid 11 does not expose FSRM (leaf 7 EDX bit 4) or
        // MOVDIR64B (leaf 7 ECX bit 28): read the leaf directly.
        // (safe since Rust 1.87: cpuid exists on every x86_64)
        let l7 = core::arch::x86_64::__cpuid_count(7, 0);
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
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    Features::default()
}

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

/// One cache as reported by CPUID (deterministic cache parameters: leaf 4
/// on Intel, 0x8000_001D on AMD). AMD's legacy leaf 0x8000_0006 is not
/// used: in KVM guests it reports a 256 MiB L3 for a 32 MiB one.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CpuidCache {
    pub level: u8,
    pub kind: String,
    pub size_bytes: u64,
    pub line_bytes: u32,
    pub ways: u32,
    /// Maximum logical processors sharing it, per CPUID.
    pub max_sharing: u32,
}

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
