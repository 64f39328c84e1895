//! `bwscope transfer`: host ↔ accelerator copies through CUDA or OpenCL.
//!
//! For every host memory kind of the backend: the CPU's own read and write
//! bandwidth on a buffer of that kind (so write-combined memory is
//! recognised by behaviour, whatever flag was asked for), then for every
//! size and direction a calibrated, sampled, verified measurement. `d2d`
//! does not involve the host and runs once per size.
//!
//! Bytes counted: `h2d`, `d2h` and `map` count each byte once (bytes that
//! crossed the link); `bidir` counts the bytes of both directions; `d2d`
//! counts bytes read + bytes written in device memory (2× the bytes
//! copied; `payload_gbps` gives the copied bytes). The `-sm` directions
//! (CUDA) are the same copies done by a kernel on the GPU's SMs, reading
//! or writing mapped host memory in place, counted the same way.

use std::cell::RefCell;
use std::collections::HashMap;
use std::time::Duration;

use serde_json::{json, Value};

use super::{Ctx, Descriptor, Flow, Sampling, Suite};
use crate::error::UserError;
use crate::kernels::{self, Kernel, Op};
use crate::measure::kernel::Here;
use crate::measure::{Failure, SampleOpts, Sampler, Stamp, Workload};
use crate::model::detail::TransferDetail;
use crate::model::{limits, Warning};
use crate::model::{Detail, MemoryInfo, Nullable, Placement, Record, Sample, Stats, Status};
use crate::model::{Host, SuiteId};
use crate::stats;
use crate::transfer::{
    self, pci, Api, Backend, Route, DriverError, HostKind, Needs, Opened, Session, Timed, Timer,
};
use crate::util::units::format_bytes;

mod case;
mod placement;
mod plan;
mod sweep;

use case::*;
use placement::*;
pub use plan::{plan, TransferSuite};
use sweep::run;

const SUITE: SuiteId = SuiteId::Transfer;

pub const DESCRIPTOR: Descriptor = Descriptor {
    id: SuiteId::Transfer,
    about: "host ↔ accelerator copies (CUDA or OpenCL): pageable, pinned, write-combined, mapped",
    reads_clock: false,
    quick: None,
    key: None,
};

/// Default sweep: the latency end (4 KiB) to the bandwidth end (1 GiB),
/// ×4 per step.
pub fn default_sizes() -> Vec<u64> {
    crate::util::units::geometric(4 << 10, 1 << 30, 4.0)
}

/// Which API to open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendChoice {
    /// CUDA, then OpenCL (or the one API the kinds named belong to).
    #[default]
    Auto,
    Cuda,
    Opencl,
}

/// What a transfer run is asked for.
#[derive(Debug, Clone, Default)]
pub struct TransferOptions {
    pub backend: BackendChoice,
    pub device: usize,
    /// Host memory kinds, comma-separated (default: every kind offered).
    pub kinds: Option<String>,
    /// Directions, comma-separated (default: all).
    pub directions: Option<String>,
    pub sizes: Option<Vec<u64>>,
    pub no_verify: bool,
    pub host_node: Option<u32>,
    pub sampling: Sampling,
}
/// The CPU read/write probe runs on at most this much of a kind's memory.
const PROBE_MAX: u64 = 64 << 20;
/// A map whose rate beats the best real copy of the same size by this
/// factor moved no data (clpeak's zero-copy rule).
const ZERO_COPY_FACTOR: f64 = 3.0;
/// Above this, no link exists: certainly zero-copy (GB/s).
const ZERO_COPY_ABSURD_GBPS: f64 = 10_000.0;
/// CPU read / write below this: the memory behaves write-combined or
/// uncached (reads bypass the caches; WC reads are typically 10–50× slower).
const WC_READ_OVER_WRITE: f64 = 0.25;

/// Options after validation, stored in the run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Plan {
    pub backend: String,
    pub device: transfer::DeviceInfo,
    pub pci: Option<pci::PciContext>,
    pub kinds: Vec<&'static str>,
    pub directions: Vec<&'static str>,
    pub sizes: Vec<u64>,
    pub verify: bool,
    pub samples: usize,
    pub min_sample_ms: f64,
    pub host_cpus: Vec<u32>,
    pub host_node: Option<u32>,
    /// Where the host placement came from: `--host-node`, `device-local`, `unknown`.
    pub placement_source: String,
    pub byte_convention: &'static str,
    #[serde(skip)]
    kind_list: Vec<HostKind>,
    #[serde(skip)]
    dir_list: Vec<Route>,
}

pub const BYTE_CONVENTION: &str = "h2d/d2h/map and h2d-sm/d2h-sm: bytes copied (each byte once); bidir: bytes of both directions; \
d2d and d2d-sm: bytes read + bytes written in device memory (2x the bytes copied; payload_gbps = bytes copied)";

/// What every case of a run shares: the plan and the sampler.
struct Env<'a> {
    plan: &'a Plan,
    sampler: Sampler<'static>,
    features: crate::model::Features,
    /// Per (kind, direction), where the next size starts calibrating:
    /// the previous size's work per sample.
    hints: RefCell<HashMap<(usize, &'static str), crate::measure::Hint>>,
}

impl Env<'_> {
    fn base(
        &self,
        kernel: String,
        op: Op,
        kind: Option<HostKind>,
        dir: &str,
        size: u64,
    ) -> Record {
        let p = self.plan;
        let detail = TransferDetail {
            backend: Some(p.backend.clone()),
            device: Nullable::Value(p.device.name.clone()),
            device_index: Some(p.device.index as u64),
            pci_bus_id: p.device.pci_bus_id.clone().into(),
            host_kind: kind.map(|k| k.name().to_string()).into(),
            direction: Some(dir.into()),
            verified: Nullable::Null,
            link_theoretical_gbps: p.pci.as_ref().and_then(|c| c.theoretical_gbps).into(),
            ..TransferDetail::default()
        };
        Record {
            kernel,
            op,
            size_bytes: Some(size),
            threads: 1,
            cpus: p.host_cpus.clone(),
            placement: Some(Placement {
                cpu_node: p.host_node,
                memory_node: p.host_node,
                ..Placement::default()
            }),
            ..Record::new(detail)
        }
    }

    fn skipped(
        &self,
        kernel: String,
        kind: Option<HostKind>,
        dir: Route,
        size: u64,
        why: &str,
    ) -> Record {
        let mut r = self.base(kernel, dir.into(), kind, dir.name(), size);
        r.status = Status::Skipped;
        r.reason = Some(why.to_string());
        r
    }

    fn error(
        &self,
        kernel: String,
        kind: Option<HostKind>,
        op: Op,
        dir: &str,
        size: u64,
        e: &DriverError,
    ) -> Record {
        let mut r = self.base(kernel, op, kind, dir, size);
        r.status = Status::Error;
        r.reason = Some(e.to_string());
        let d = detail_of(&mut r);
        d.error_call = Some(e.call.to_string());
        d.error_name = Some(e.name.to_string());
        r
    }
}

/// The transfer detail of a record this suite made.
fn detail_of(r: &mut Record) -> &mut TransferDetail {
    match &mut r.detail {
        Detail::Transfer(d) => d,
        other => unreachable!("a transfer record with a {} detail", other.suite()),
    }
}

fn kernel_name(backend: &str, dir: &str, kind: Option<HostKind>) -> String {
    match kind {
        Some(k) => format!("{}_{}_{}", backend, dir, k.name()),
        None => format!("{}_{}", backend, dir),
    }
}

#[cfg(test)]
mod tests {
    use super::plan::{parse_dirs, size_problem};
    use super::*;
    use std::sync::atomic::AtomicBool;

    /// The transfer view reads the stored plan through
    /// `model::options::Transfer`: a renamed field fails here.
    #[test]
    fn the_view_reads_what_the_plan_stores() {
        let plan = Plan {
            backend: "cuda".into(),
            device: transfer::DeviceInfo {
                backend: "cuda".into(),
                index: 1,
                name: "GPU".into(),
                driver_version: Some("12.4".into()),
                pci_bus_id: Some("0000:65:00.0".into()),
                ..Default::default()
            },
            pci: Some(pci::PciContext {
                link_speed_gts: Some(16.0),
                link_gen: Some(4),
                link_width: Some(16),
                theoretical_gbps: Some(31.5),
                numa_node: Some(1),
                vendor_id: Some("10de".into()),
                device_id: Some("20f2".into()),
                ..Default::default()
            }),
            kinds: vec![],
            directions: vec![],
            sizes: vec![],
            verify: false,
            samples: 1,
            min_sample_ms: 1.0,
            host_cpus: vec![2, 3],
            host_node: Some(1),
            placement_source: "device-local".into(),
            byte_convention: BYTE_CONVENTION,
            kind_list: vec![],
            dir_list: vec![],
        };
        let o: crate::model::options::Transfer =
            serde_json::from_value(serde_json::to_value(&plan).unwrap()).unwrap();
        let d = o.device.unwrap();
        assert_eq!(
            (d.name.as_str(), d.backend.as_str(), d.index),
            ("GPU", "cuda", Some(1))
        );
        assert_eq!(d.driver_version.as_deref(), Some("12.4"));
        assert_eq!(d.pci_bus_id, plan.device.pci_bus_id);
        let p = o.pci.unwrap();
        assert_eq!(
            (p.link_speed_gts, p.link_gen, p.link_width),
            (Some(16.0), Some(4), Some(16))
        );
        assert_eq!((p.theoretical_gbps, p.numa_node), (Some(31.5), Some(1)));
        assert_eq!(
            (p.vendor_id.as_deref(), p.device_id.as_deref()),
            (Some("10de"), Some("20f2"))
        );
        assert_eq!(o.host_cpus, vec![2, 3]);
        assert_eq!(o.placement_source, "device-local");
        assert!(!o.verify);
        assert_eq!(o.byte_convention.as_deref(), Some(BYTE_CONVENTION));
        let none = TransferSuite::NoDevice {
            backend: BackendChoice::Auto,
            device: 0,
            reason: String::new(),
        };
        let o: crate::model::options::Transfer =
            serde_json::from_value(Suite::options(&none)).unwrap();
        assert!(o.device.is_none());
    }

    #[test]
    fn directions_parse_and_reject() {
        assert_eq!(
            parse_dirs(Some("h2d,d2h,h2d")).unwrap(),
            vec![Route::H2d, Route::D2h]
        );
        assert!(parse_dirs(Some("up"))
            .unwrap_err()
            .to_string()
            .contains("--directions"));
        assert_eq!(parse_dirs(None).unwrap().len(), 8);
    }

    #[test]
    fn check_reports_the_first_difference() {
        let mut a = vec![0u8; 64];
        fill(&mut a, 3, false);
        assert!(check(&a, 3).is_ok());
        assert!(check(&a, 4).is_err());
        a[10] ^= 1;
        a[20] ^= 1;
        assert_eq!(
            check(&a, 3).unwrap_err(),
            "2 of 64 bytes differ, first at offset 10"
        );
        let mut b = vec![0u8; 61];
        fill(&mut b, 3, true);
        assert!(
            b.iter().zip(&a).skip(21).all(|(x, y)| *x == !*y),
            "complement"
        );
        assert_eq!(
            check(&b, 3).unwrap_err(),
            "61 of 61 bytes differ, first at offset 0"
        );
    }

    #[test]
    fn zero_copy_rules() {
        assert!(is_zero_copy(Some(true), Some(5.0), None), "unified memory");
        assert!(
            is_zero_copy(None, Some(15_767.0), None),
            "clpeak's artefact"
        );
        assert!(
            is_zero_copy(Some(false), Some(100.0), Some(25.0)),
            "> 3x the best copy"
        );
        assert!(
            !is_zero_copy(Some(false), Some(60.0), Some(25.0)),
            "a real copy through the map"
        );
        assert!(!is_zero_copy(None, Some(12.0), None));
        assert!(!is_zero_copy(Some(false), None, Some(25.0)));
    }

    /// A session whose copies take 1 ms of host time and 0.9 ms of device
    /// time per rep, and fail after `fail_after` calls.
    struct FakeSession {
        calls: Vec<u64>,
        fail_after: usize,
    }

    impl Session for FakeSession {
        fn host(&mut self, _: usize) -> &mut [u8] {
            &mut []
        }
        fn run(&mut self, _: Route, reps: u64) -> Result<Timed, DriverError> {
            if self.calls.len() == self.fail_after {
                return Err(DriverError::new(
                    "cuMemcpyHtoDAsync_v2",
                    "CUDA_ERROR_LAUNCH_FAILED",
                ));
            }
            self.calls.push(reps);
            Ok(Timed {
                host_s: reps as f64 * 1e-3,
                device_s: Some(reps as f64 * 0.9e-3),
                per_dir_s: None,
                blocked: false,
            })
        }
        fn write_device(&mut self, _: usize, _: &[u8]) -> Result<(), DriverError> {
            Ok(())
        }
        fn read_device(&mut self, _: usize, _: &mut [u8]) -> Result<(), DriverError> {
            Ok(())
        }
        fn map_roundtrip(&mut self, _: &mut [u8]) -> Result<Option<()>, DriverError> {
            Ok(None)
        }
    }

    #[test]
    fn a_session_is_sampled_like_every_workload() {
        let stop = AtomicBool::new(false);
        let opts = SampleOpts {
            samples: 3,
            min_sample: Duration::from_millis(10),
            settle: None,
        };
        let mut s = FakeSession {
            calls: Vec::new(),
            fail_after: usize::MAX,
        };
        let mut w = TransferWork::new(&mut s, Route::H2d, 4096);
        let m = Sampler::new(opts, &stop).measure(&mut w, None).unwrap();
        assert!(m.reps >= 10, "reps {}", m.reps);
        assert_eq!(m.samples.len(), 3);
        for t in &m.samples {
            assert!(t.seconds >= 0.010);
            let dev = t.device_seconds.expect("device time carried along");
            assert!((dev / t.seconds - 0.9).abs() < 1e-6);
        }
        assert_eq!(m.units_per_sample, 4096 * m.reps);
        let kept = w.timed.len();
        drop(w);
        assert_eq!(s.calls[0], 1, "the untimed warm-up call comes first");
        assert_eq!(kept, s.calls.len() - 1, "every timed call is kept");
        // A driver failure mid-way is an error carrying the driver's name.
        let mut s = FakeSession {
            calls: Vec::new(),
            fail_after: 3,
        };
        let mut w = TransferWork::new(&mut s, Route::H2d, 4096);
        assert!(matches!(
            Sampler::new(opts, &stop).measure(&mut w, None),
            Err(Failure::Failed(_))
        ));
        assert_eq!(w.error.unwrap().name, "CUDA_ERROR_LAUNCH_FAILED");
    }

    #[test]
    fn size_problems_name_the_limit() {
        let info = transfer::DeviceInfo {
            max_alloc_bytes: Some(1 << 20),
            total_mem_bytes: Some(3 << 20),
            ..Default::default()
        };
        let d = [Route::H2d];
        let k = [HostKind::HostPtr];
        assert!(size_problem(1 << 20, &d, &k, &info).is_none());
        assert!(size_problem(2 << 20, &d, &k, &info)
            .unwrap()
            .contains("largest allocation"));
        let info = transfer::DeviceInfo {
            free_mem_bytes: Some(3 << 20),
            ..Default::default()
        };
        assert!(
            size_problem(2 << 20, &[Route::D2d], &[HostKind::Pinned], &info)
                .unwrap()
                .contains("free device memory")
        );
        assert!(size_problem(1 << 20, &[Route::D2d], &[HostKind::Pinned], &info).is_none());
    }
}
