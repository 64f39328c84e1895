//! One kind's timings: map a buffer (setup), copy into it once (first
//! pass), copy again and read it back (steady state), and verify what it
//! holds. The kernels are called once per pass, not sampled: the point is
//! the cost of each pass as a program meets it, first use included.

use std::time::Instant;

use super::{Case, MemtypePlan, Target};
use crate::kernels::{Kernel, KernelArgs};
use crate::memory::{kind, Buffer};
use crate::model::MemoryInfo;
use crate::os::device::{self, DeviceMapping};
use crate::os::mem::Mapping;

/// Timings of one kind.
#[derive(Debug, Clone)]
pub(super) struct Timed {
    pub(super) setup: f64,
    pub(super) first: f64,
    pub(super) passes: Vec<f64>,
    pub(super) reads: Vec<f64>,
    pub(super) info: MemoryInfo,
    pub(super) verified: String,
    pub(super) pat: Option<Result<Vec<String>, String>>,
    /// What the system reports of a plain RAM kind's pages (`VirtualQuery`).
    pub(super) protection: Option<String>,
}

enum Mapped {
    Buf(Buffer),
    Ram(Mapping),
    Dev(DeviceMapping),
}

impl Mapped {
    fn ptr(&mut self) -> *mut u8 {
        match self {
            Mapped::Buf(b) => b.as_mut_ptr(),
            Mapped::Ram(m) => m.as_ptr(),
            Mapped::Dev(d) => d.as_mut_ptr(),
        }
    }
}

/// Outcome of one case before it becomes a record.
pub(super) enum Outcome {
    Done(Box<Timed>),
    Skipped(String),
    Failed(String),
}

fn copy_once(k: &'static Kernel, src: *const u8, dst: *mut u8, len: usize) -> f64 {
    let args = KernelArgs::new(src, dst, len, 1);
    let t = Instant::now();
    // SAFETY: src and dst each hold `len` bytes (checked by the caller),
    // page aligned; the kernel runs on this CPU (checked in `plan`).
    let c = unsafe { (k.func)(&args) };
    let s = t.elapsed().as_secs_f64();
    std::hint::black_box(c);
    s
}

/// Times one kind: setup, first pass, steady passes and reads, then checks
/// the buffer holds what was copied.
pub(super) fn measure(plan: &MemtypePlan, case: &Case, src: &Buffer) -> Outcome {
    let n = plan.size;
    let t0 = Instant::now();
    let mut m = match map(&case.target, n) {
        Ok(m) => m,
        Err(o) => return o,
    };
    let setup = t0.elapsed().as_secs_f64();
    let dst = m.ptr();
    let first = copy_once(plan.copy, src.as_ptr(), dst, n);
    let protection = crate::os::mem::protection_at(dst as usize);
    let (info, verified) = match describe(&m, &case.target, dst, &protection) {
        Ok(d) => d,
        Err(o) => return o,
    };
    let passes: Vec<f64> = (0..plan.passes)
        .map(|_| copy_once(plan.copy, src.as_ptr(), dst, n))
        .collect();
    let mut reads = Vec::with_capacity(plan.read_passes);
    let mut sums = Vec::new();
    for _ in 0..plan.read_passes {
        let args = KernelArgs::new(dst, dst, n, 1);
        let t = Instant::now();
        // SAFETY: dst holds n bytes, n is a multiple of the read granule.
        sums.push(unsafe { (plan.read.func)(&args) });
        reads.push(t.elapsed().as_secs_f64());
    }
    if let Err(o) = read_back(case, src, dst, n) {
        return o;
    }
    let pat = match &case.target {
        Target::Device(d) => Some(device::pat_types(d.phys_start, n as u64)),
        _ => None,
    };
    drop(m);
    Outcome::Done(Box::new(Timed {
        setup,
        first,
        passes,
        reads,
        info,
        verified,
        pat,
        protection,
    }))
}

/// Maps `n` bytes of the target's kind (the setup the case times): a kind
/// the system cannot give is skipped, a device mapping that fails or is too
/// small fails the case.
fn map(target: &Target, n: usize) -> Result<Mapped, Outcome> {
    Ok(match target {
        Target::Anon(k) => match Buffer::map(n, *k) {
            Ok(b) => Mapped::Buf(b),
            Err(e) => return Err(Outcome::Skipped(e.to_string())),
        },
        Target::Ram(k) => match Mapping::private_caching(n, k.caching()) {
            Ok(m) => Mapped::Ram(m),
            Err(e) => return Err(Outcome::Skipped(format!("{}: {}", k.name(), e))),
        },
        Target::Device(d) => match DeviceMapping::map(d, n) {
            Ok(m) if m.len() < n => {
                return Err(Outcome::Failed(format!(
                    "{}: the mapping holds only {} bytes, less than --size",
                    d.path,
                    m.len()
                )))
            }
            Ok(m) => Mapped::Dev(m),
            Err(e) => return Err(Outcome::Failed(format!("cannot map {}: {}", d.path, e))),
        },
    })
}

/// What the mapped memory is, after the first pass touched it, and how
/// that was verified: an anonymous kind's pages as the system reports them
/// (a kind it did not give is skipped), or the protection of a RAM or
/// device mapping (`dst` its first byte).
fn describe(
    m: &Mapped,
    target: &Target,
    dst: *mut u8,
    protection: &Option<String>,
) -> Result<(MemoryInfo, String), Outcome> {
    match (m, target) {
        (Mapped::Buf(b), Target::Anon(k)) => {
            let info = b.memory_info();
            match kind::verify(*k, &info, b.len()) {
                Ok(v) => Ok((info, v)),
                Err(reason) => Err(Outcome::Skipped(format!("{}: {}", k.name(), reason))),
            }
        }
        (_, t) => {
            let s = crate::os::mem::page_facts(dst as usize);
            let verified = match (t, protection) {
                (Target::Ram(_), Some(p)) => format!("the system reports {p}"),
                (Target::Ram(_), None) => "the system reports no protection".to_string(),
                _ => "device mapping (see pat_type)".to_string(),
            };
            Ok((
                MemoryInfo {
                    kind: t.label().into(),
                    page_bytes: s.map(|s| s.kernel_page_bytes),
                    thp_fraction: None,
                    locked_fraction: None,
                },
                verified,
            ))
        }
    }
}

/// The buffer must hold exactly what was copied: for device memory this
/// is the proof that the region behaves as memory. A difference fails the
/// case at its first byte.
fn read_back(case: &Case, src: &Buffer, dst: *mut u8, n: usize) -> Result<(), Outcome> {
    // SAFETY: dst holds n initialised bytes (just copied).
    let got = unsafe { std::slice::from_raw_parts(dst as *const u8, n) };
    if let Some(off) = got.iter().zip(src.as_slice()).position(|(a, b)| a != b) {
        // Device memory can have a second writer: the device itself, or a
        // framebuffer console drawing its cursor into /dev/fb0.
        let hint = match &case.target {
            Target::Device(_) => {
                "; something else writes this memory while bwscope measures it \
                 (a framebuffer console draws into it until its vtconsole is \
                 unbound: write 0 to the vtconsole's bind file as root)"
            }
            _ => "",
        };
        return Err(Outcome::Failed(format!(
            "{}: read back differs from what was written at byte {}{hint}",
            case.target.label(),
            off
        )));
    }
    Ok(())
}
