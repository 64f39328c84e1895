//! Resolving `bwscope memtype`'s options: the kernels, the cpu, the
//! device regions and the memory kinds to run.

use super::{Case, MemtypeOptions, MemtypePlan, RamKind, Target};
use crate::error::UserError;
use crate::kernels::{self, Kernel, Op, Pattern};
use crate::memory::{kind, PageKind};
use crate::model::Host;
use crate::os::device::{self, DeviceSpec};
use crate::util::units::format_bytes;

const DEVICE_KINDS: [&str; 4] = ["device-wc", "device-uc", "device-fb", "device-dumb"];

/// Resolve and validate the options.
pub fn plan(a: &MemtypeOptions, host: &Host) -> Result<MemtypePlan, UserError> {
    let (copy, read) = pick_kernels(a, host)?;
    let raw = a.size.unwrap_or(32 << 20);
    let gran = copy.granule.max(read.granule).max(64) as u64;
    let size = raw - raw % gran;
    if size == 0 {
        return Err(UserError::flag(
            "--size",
            format!(
                "{} is below one {}-byte block of the kernels; use at least {}",
                format_bytes(raw),
                gran,
                gran
            ),
        ));
    }
    let passes = a.passes.unwrap_or(20);
    if passes == 0 || passes > 100_000 {
        return Err(UserError::flag("--passes", "must be between 1 and 100000"));
    }
    let read_passes = a.read_passes.unwrap_or(5);
    if read_passes == 0 || read_passes > 100_000 {
        return Err(UserError::flag(
            "--read-passes",
            "must be between 1 and 100000",
        ));
    }
    let cpu = pick_cpu(a, host)?;
    let devices = devices(a, size)?;
    let mut cases = cases(a, size, &devices)?;
    // Regular is the baseline of the break-even count: always first.
    cases.retain(|c| !matches!(c.target, Target::Anon(PageKind::Regular)));
    cases.insert(
        0,
        Case {
            target: Target::Anon(PageKind::Regular),
            explicit: true,
        },
    );
    crate::suites::check_memory(size * 2 + (8 << 20), "--size", "use a smaller --size")?;
    Ok(MemtypePlan {
        size: size as usize,
        passes,
        read_passes,
        copy,
        read,
        cpu,
        cases,
    })
}

/// The copy kernel (`--kernel`, else the widest cached copy) and the read
/// kernel (the widest cached read).
fn pick_kernels(
    a: &MemtypeOptions,
    host: &Host,
) -> Result<(&'static Kernel, &'static Kernel), UserError> {
    let copy = match &a.kernel {
        Some(spec) => {
            let ks = kernels::select_streaming(spec).map_err(|m| UserError::flag("--kernel", m))?;
            match ks.as_slice() {
                [k] if k.op == Op::Copy => *k,
                [k] => return Err(UserError::flag("--kernel", format!("{} is a {} kernel; memtype needs a copy kernel (see `bwscope kernels copy`)", k.name, k.op))),
                _ => return Err(UserError::flag("--kernel", format!("'{}' names {} kernels; name exactly one copy kernel", spec, ks.len()))),
            }
        }
        None => kernels::widest(Op::Copy, Pattern::Seq, &host.features)
            .ok_or_else(|| UserError::flag("--kernel", "no copy kernel runs on this cpu"))?,
    };
    if let Some(r) = copy.skip_reason(&host.features) {
        return Err(UserError::flag(
            "--kernel",
            format!("{} cannot run here: {}", copy.name, r),
        ));
    }
    let read = kernels::widest(Op::Read, Pattern::Seq, &host.features)
        .ok_or_else(|| UserError::flag("--kernel", "no read kernel runs on this cpu"))?;
    Ok((copy, read))
}

/// The cpu to run on: `--cpu`, else the first of the default order.
fn pick_cpu(a: &MemtypeOptions, host: &Host) -> Result<u32, UserError> {
    Ok(match a.cpu {
        Some(c) if !host.allowed_cpus.contains(&c) => {
            return Err(UserError::flag(
                "--cpu",
                format!(
                    "cpu {} is offline or not allowed (allowed: {})",
                    c,
                    crate::util::cpulist::format_cpu_list(&host.allowed_cpus)
                ),
            ))
        }
        Some(c) => c,
        None => crate::suites::default_cpu_order(host).first().copied().unwrap_or(0),
    })
}

/// The devices of `--device-mem`: confirmed (`--allow-device-writes`),
/// identified as plain memory, and at least `size` bytes long.
fn devices(a: &MemtypeOptions, size: u64) -> Result<Vec<DeviceSpec>, UserError> {
    if !a.device_mem.is_empty() && !a.allow_device_writes {
        return Err(UserError::flag(
            "--device-mem",
            format!(
                "this overwrites the first {} of {}; add --allow-device-writes to confirm",
                format_bytes(size),
                a.device_mem.join(", ")
            ),
        ));
    }
    let mut devices = Vec::new();
    for p in &a.device_mem {
        let d = device::identify(p).map_err(|m| UserError::flag("--device-mem", m))?;
        if size > d.size {
            return Err(UserError::flag(
                "--size",
                format!(
                    "{} is larger than {} ({}, {}); use --size {} or less",
                    format_bytes(size),
                    p,
                    d.what,
                    format_bytes(d.size),
                    format_bytes(d.size)
                ),
            ));
        }
        devices.push(d);
    }
    Ok(devices)
}

/// The kinds to measure: `--kinds` (each checked: an anonymous kind must
/// be available, a device kind needs its `--device-mem`), else every
/// anonymous kind and every device named.
fn cases(a: &MemtypeOptions, size: u64, devices: &[DeviceSpec]) -> Result<Vec<Case>, UserError> {
    let mut cases: Vec<Case> = Vec::new();
    match &a.kinds {
        None => cases = default_cases(devices),
        Some(list) => {
            for item in list.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
                cases.extend(named_cases(item, size, devices)?);
            }
            if cases.is_empty() {
                return Err(UserError::flag("--kinds", "the list is empty"));
            }
        }
    }
    // Regular is the baseline of the break-even count: always first.
    cases.retain(|c| !matches!(c.target, Target::Anon(PageKind::Regular)));
    cases.insert(
        0,
        Case {
            target: Target::Anon(PageKind::Regular),
            explicit: true,
        },
    );
    Ok(cases)
}

/// Every anonymous kind this system has (transparent huge pages only
/// where it has them), plain RAM of each caching type where the system
/// maps it so, and every device named.
fn default_cases(devices: &[DeviceSpec]) -> Vec<Case> {
    let mut cases: Vec<Case> = PageKind::ALL
        .iter()
        .filter(|&&k| k != PageKind::Thp || crate::os::mem::TRANSPARENT_HUGE_PAGES)
        .map(|&k| Case {
            target: Target::Anon(k),
            explicit: false,
        })
        .collect();
    if crate::os::mem::PLAIN_RAM_CACHING {
        cases.extend(RamKind::ALL.iter().map(|&k| Case {
            target: Target::Ram(k),
            explicit: false,
        }));
    }
    cases.extend(devices.iter().map(|d| Case {
        target: Target::Device(d.clone()),
        explicit: true,
    }));
    cases
}

/// The cases of one `--kinds` item, checked: an anonymous kind must be
/// available, plain RAM of a caching type mapped so by the system, a
/// device kind must have its `--device-mem`.
fn named_cases(item: &str, size: u64, devices: &[DeviceSpec]) -> Result<Vec<Case>, UserError> {
    if let Some(k) = PageKind::parse(item) {
        if k != k.available() {
            return Err(UserError::flag(
                "--kinds",
                format!(
                    "{} does not exist on this system (its pages would be {})",
                    k.name(),
                    k.available().name()
                ),
            ));
        }
        kind::check_available(k, size, 1).map_err(|m| UserError::flag("--kinds", m))?;
        return Ok(vec![Case {
            target: Target::Anon(k),
            explicit: true,
        }]);
    }
    if let Some(k) = RamKind::ALL
        .into_iter()
        .find(|k| k.name().eq_ignore_ascii_case(item))
    {
        if !crate::os::mem::PLAIN_RAM_CACHING {
            return Err(UserError::flag(
                "--kinds",
                format!(
                    "{} is plain RAM mapped {}, which this system gives only over device memory: use --device-mem with a PCI BAR (resourceN_wc or resourceN) and the kind device-{}, or run on Windows",
                    k.name(),
                    if k == RamKind::Wc { "write-combined" } else { "uncached" },
                    k.name()
                ),
            ));
        }
        return Ok(vec![Case {
            target: Target::Ram(k),
            explicit: true,
        }]);
    }
    let Some(dk) = DEVICE_KINDS.iter().find(|d| d.eq_ignore_ascii_case(item)) else {
        return Err(UserError::flag(
            "--kinds",
            format!("unknown kind '{}': use regular, thp, nohuge, hugetlb-2M, hugetlb-1G, locked, wc, uc, device-wc, device-uc, device-fb, device-dumb", item),
        ));
    };
    let matching: Vec<&DeviceSpec> = devices.iter().filter(|d| d.kind == *dk).collect();
    if matching.is_empty() {
        let want = match *dk {
            "device-wc" => "a .../resourceN_wc file of a prefetchable PCI BAR",
            "device-uc" => "a .../resourceN file of a prefetchable PCI BAR",
            "device-dumb" => "a DRM primary node /dev/dri/cardN",
            _ => "a framebuffer /dev/fbN",
        };
        return Err(UserError::flag(
            "--kinds",
            format!("{} needs --device-mem naming {}", dk, want),
        ));
    }
    Ok(matching
        .into_iter()
        .map(|d| Case {
            target: Target::Device(d.clone()),
            explicit: true,
        })
        .collect())
}
