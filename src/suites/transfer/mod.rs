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
//! copied; `payload_gbps` gives the copied bytes).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::cli::{BackendArg, OutputArgs, TransferArgs};
use crate::error::{UserError, EXIT_INTERRUPTED, EXIT_OK};
use crate::kernels::{self, Kernel, KernelArgs, Op};
use crate::measure::{stats, SampleOpts};
use crate::model::Host;
use crate::model::{limits, Warning};
use crate::model::{MemoryInfo, Placement, Record, Sample, Stats, Status};
use crate::transfer::{
    self, pci, Api, Backend, Direction, DriverError, HostKind, Needs, Opened, Session, Timed, Timer,
};
use crate::util::units::{format_bytes, parse_size_list};

mod case;
mod placement;

use case::*;
use placement::*;

const SUITE: &str = "transfer";
/// Default sweep: the latency end (4 KiB) to the bandwidth end (1 GiB).
pub const DEFAULT_SIZES: &str = "4KiB..1GiB:x4";
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
    dir_list: Vec<Direction>,
}

pub const BYTE_CONVENTION: &str = "h2d/d2h/map: bytes copied (each byte once); bidir: bytes of both directions; \
d2d: bytes read + bytes written in device memory (2x the bytes copied; payload_gbps = bytes copied)";

fn parse_dirs(spec: Option<&str>) -> Result<Vec<Direction>, UserError> {
    let Some(spec) = spec else {
        return Ok(transfer::DIRECTIONS.to_vec());
    };
    let mut v = Vec::new();
    for d in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let d = Direction::parse(d).ok_or_else(|| {
            UserError::flag(
                "--directions",
                format!("unknown direction '{}': use h2d, d2h, d2d, bidir or map", d),
            )
        })?;
        if !v.contains(&d) {
            v.push(d);
        }
    }
    if v.is_empty() {
        return Err(UserError::flag(
            "--directions",
            "no direction given: use e.g. h2d,d2h",
        ));
    }
    Ok(v)
}

fn parse_kinds(spec: Option<&str>, b: &dyn Backend) -> Result<Vec<HostKind>, UserError> {
    let offered = b.kinds();
    let names = || {
        offered
            .iter()
            .map(|k| k.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(spec) = spec else {
        return Ok(offered.to_vec());
    };
    let mut v = Vec::new();
    for s in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let k = HostKind::parse(s).ok_or_else(|| {
            UserError::flag(
                "--kinds",
                format!(
                    "unknown kind '{}': the {} backend offers {}",
                    s,
                    b.info().backend,
                    names()
                ),
            )
        })?;
        if !offered.contains(&k) {
            return Err(UserError::flag(
                "--kinds",
                format!(
                    "'{}' is a {} kind; the {} backend offers {} (or choose --backend {})",
                    s,
                    k.api().name(),
                    b.info().backend,
                    names(),
                    k.api().name()
                ),
            ));
        }
        if !v.contains(&k) {
            v.push(k);
        }
    }
    if v.is_empty() {
        return Err(UserError::flag(
            "--kinds",
            format!("no kind given: choose from {}", names()),
        ));
    }
    Ok(v)
}

/// Device and host memory one size needs, checked before anything runs.
fn size_problem(
    size: u64,
    dirs: &[Direction],
    kinds: &[HostKind],
    info: &transfer::DeviceInfo,
) -> Option<String> {
    let two_dev = dirs
        .iter()
        .any(|d| matches!(d, Direction::D2d | Direction::Bidir));
    let two_host = dirs.contains(&Direction::Bidir);
    if let Some(m) = info.max_alloc_bytes {
        if size > m {
            return Some(format!(
                "{} exceeds the device's largest allocation ({}); use sizes up to {}",
                format_bytes(size),
                format_bytes(m),
                format_bytes(m)
            ));
        }
    }
    let dev_bufs = if two_dev { 2 } else { 1 };
    // OpenCL ALLOC_HOST_PTR buffers come from the runtime too.
    let runtime_host = kinds
        .iter()
        .any(|k| matches!(k, HostKind::AllocHostPtr | HostKind::AllocHostPtrRo));
    let host_bufs = if two_host { 2 } else { 1 };
    let dev_need = size * (dev_bufs + if runtime_host { host_bufs } else { 0 });
    let (limit, what) = match (info.free_mem_bytes, info.total_mem_bytes) {
        (Some(f), _) => (Some(f), "free device memory"),
        (None, Some(t)) => (Some(t), "device global memory"),
        _ => (None, ""),
    };
    if let Some(l) = limit {
        if dev_need > l {
            return Some(format!(
                "{} needs {} of device memory ({} device buffer(s){}) but the device has {} of {}; use smaller sizes",
                format_bytes(size),
                format_bytes(dev_need),
                dev_bufs,
                if runtime_host { " + runtime-allocated host buffers" } else { "" },
                format_bytes(l),
                what
            ));
        }
    }
    // Host: the kind's buffer(s), a verification scratch, and on a
    // host-unified device the device buffers too.
    let unified = info.host_unified == Some(true);
    let host_need = size * (host_bufs + 1 + if unified { dev_bufs } else { 0 });
    if let Err(e) = super::check_memory(host_need, "--sizes", "use smaller --sizes") {
        return Some(e.to_string().trim_start_matches("--sizes: ").to_string());
    }
    None
}

/// Open the backend `--backend` names; `auto` tries CUDA, then OpenCL.
fn open_backend(
    arg: BackendArg,
    index: usize,
) -> Result<Result<Box<dyn Backend>, String>, UserError> {
    let order: &[Api] = match arg {
        BackendArg::Auto => &[Api::Cuda, Api::Opencl],
        BackendArg::Cuda => &[Api::Cuda],
        BackendArg::Opencl => &[Api::Opencl],
    };
    let mut reasons = Vec::new();
    for &api in order {
        match transfer::open(api, index) {
            Opened::Ready(b) => return Ok(Ok(b)),
            Opened::Unavailable(u) => reasons.push(format!("{}: {}", api.name(), u.0)),
            Opened::BadIndex(e) => {
                return Err(UserError::flag(
                    "--device",
                    format!(
                        "device {} does not exist: the {} backend has {} device(s) ({}); use 0..{}",
                        e.index,
                        api.name(),
                        e.count,
                        e.names.join("; "),
                        e.count - 1
                    ),
                ))
            }
        }
    }
    Ok(Err(reasons.join("; ")))
}

pub fn command(a: &TransferArgs, out: &OutputArgs) -> anyhow::Result<u8> {
    // Everything that needs no device is checked first.
    let dirs = parse_dirs(a.directions.as_deref())?;
    let explicit_sizes = a.sizes.is_some();
    let mut sizes = parse_size_list(a.sizes.as_deref().unwrap_or(DEFAULT_SIZES))
        .map_err(|e| UserError::flag("--sizes", e.to_string()))?;
    let opts = super::sample_opts(
        &a.sample,
        SampleOpts {
            samples: 5,
            min_sample: Duration::from_millis(20),
        },
    )?;
    let host = crate::platform::detect_host(false);
    if let Some(n) = a.host_node {
        if !host.nodes.iter().any(|x| x.id == n) {
            placement(&host, Some(n), None)?;
        }
    }
    // `auto` with kinds of one API only: open that API.
    let mut backend_arg = a.backend;
    if backend_arg == BackendArg::Auto {
        let apis: Vec<Api> = a
            .kinds
            .as_deref()
            .unwrap_or("")
            .split(',')
            .filter_map(|k| HostKind::parse(k.trim()).map(|k| k.api()))
            .collect();
        if let Some(&first) = apis.first() {
            if apis.iter().all(|&x| x == first) {
                backend_arg = match first {
                    Api::Cuda => BackendArg::Cuda,
                    Api::Opencl => BackendArg::Opencl,
                };
            }
        }
    }
    let backend = match open_backend(backend_arg, a.device)? {
        Ok(b) => b,
        Err(reason) => return skipped_run(a, out, host, &reason),
    };
    let mut backend = backend;
    let info = backend.info().clone();
    let kinds = parse_kinds(a.kinds.as_deref(), backend.as_ref())?;
    if dirs == [Direction::Map] && !kinds.iter().any(|k| k.is_mapped()) {
        return Err(UserError::flag(
            "--directions",
            "map applies to mapped kinds only (mapped, alloc-host-ptr, alloc-host-ptr-ro): add one to --kinds",
        )
        .into());
    }
    let mut run_warnings = Vec::new();
    let mut kept = Vec::new();
    for &s in &sizes {
        match size_problem(s, &dirs, &kinds, &info) {
            None => kept.push(s),
            Some(p) if explicit_sizes => return Err(UserError::flag("--sizes", p).into()),
            Some(p) => run_warnings.push(Warning::Other {
                message: format!("default sweep stops below {}: {}", format_bytes(s), p),
                hint: "pass --sizes to choose sizes that fit".into(),
            }),
        }
    }
    sizes = kept;
    if sizes.is_empty() {
        return Err(UserError::flag(
            "--sizes",
            "no default size fits this device; pass smaller --sizes",
        )
        .into());
    }
    let pci_ctx = info.pci_bus_id.as_deref().and_then(pci::read_sysfs);
    let HostPlacement {
        cpus,
        node,
        source,
        notes,
    } = placement(&host, a.host_node, pci_ctx.as_ref())?;
    if let Err(e) = pin_to(&cpus) {
        run_warnings.push(Warning::Other {
            message: format!(
                "could not pin the host thread to cpus {}: {}",
                crate::util::cpulist::format_cpu_list(&cpus),
                e
            ),
            hint: "check the process's cpu affinity (taskset)".into(),
        });
    }
    let plan = Plan {
        backend: info.backend.clone(),
        device: info.clone(),
        pci: pci_ctx.clone(),
        kinds: kinds.iter().map(|k| k.name()).collect(),
        directions: dirs.iter().map(|d| d.name()).collect(),
        sizes: sizes.clone(),
        verify: !a.no_verify,
        samples: opts.samples,
        min_sample_ms: opts.min_sample.as_secs_f64() * 1e3,
        host_cpus: cpus.clone(),
        host_node: node,
        placement_source: source,
        byte_convention: BYTE_CONVENTION,
        kind_list: kinds,
        dir_list: dirs,
    };
    eprintln!(
        "transfer: {} device {} \"{}\"{}; host cpus {} ({})",
        info.backend,
        info.index,
        info.name,
        info.pci_bus_id
            .as_deref()
            .map(|p| format!(" at {}", p))
            .unwrap_or_default(),
        crate::util::cpulist::format_cpu_list(&cpus),
        plan.placement_source
    );
    for n in &notes {
        eprintln!("transfer: {}", n);
    }
    crate::commands::announce(&super::estimate::transfer(&plan));
    let mut sink =
        crate::commands::start_run(SUITE, serde_json::to_value(&plan)?, out, host.clone())?;
    sink.run_mut().warnings.extend(run_warnings);
    let stop = crate::util::signal::install();
    let interrupted = run(&plan, backend.as_mut(), &mut sink, stop)?;
    finish(sink, interrupted)
}

fn finish(sink: crate::report::sink::Sink, interrupted: bool) -> anyhow::Result<u8> {
    let taken = sink.stdout_taken();
    let run = sink.finish(interrupted)?;
    if !taken {
        crate::util::out::print(&crate::report::views::render(&run));
    }
    if interrupted {
        eprintln!("interrupted: {} records kept", run.records.len());
        return Ok(EXIT_INTERRUPTED);
    }
    Ok(EXIT_OK)
}

/// No device: one `skipped` record with every backend's reason, exit 0.
fn skipped_run(a: &TransferArgs, out: &OutputArgs, host: Host, reason: &str) -> anyhow::Result<u8> {
    let backend = match a.backend {
        BackendArg::Auto => "auto",
        BackendArg::Cuda => "cuda",
        BackendArg::Opencl => "opencl",
    };
    let mut sink = crate::commands::start_run(
        SUITE,
        json!({ "backend": backend, "device": Value::Null, "device_index": a.device }),
        out,
        host,
    )?;
    let mut r = Record::skipped(SUITE, backend, format!("no accelerator: {}", reason));
    r.extra.insert("backend".into(), json!(backend));
    r.extra.insert("device".into(), Value::Null);
    eprintln!("transfer: skipped: {}", reason);
    sink.push(r)?;
    finish(sink, false)
}

/// Context shared by the records of a run.
struct Ctx<'a> {
    plan: &'a Plan,
    stop: &'a AtomicBool,
}

impl Ctx<'_> {
    fn base(
        &self,
        kernel: String,
        op: &str,
        kind: Option<HostKind>,
        dir: &str,
        size: u64,
    ) -> Record {
        let p = self.plan;
        let mut r = Record {
            suite: SUITE.into(),
            kernel,
            op: op.into(),
            size_bytes: Some(size),
            threads: 1,
            cpus: p.host_cpus.clone(),
            placement: Some(Placement {
                cpu_node: p.host_node,
                memory_node: p.host_node,
                ..Placement::default()
            }),
            ..Record::default()
        };
        let e = &mut r.extra;
        e.insert("backend".into(), json!(p.backend));
        e.insert("device".into(), json!(p.device.name));
        e.insert("device_index".into(), json!(p.device.index));
        e.insert("pci_bus_id".into(), json!(p.device.pci_bus_id));
        e.insert("host_kind".into(), json!(kind.map(|k| k.name())));
        e.insert("direction".into(), json!(dir));
        e.insert("verified".into(), Value::Null);
        e.insert(
            "link_theoretical_gbps".into(),
            json!(p.pci.as_ref().and_then(|c| c.theoretical_gbps)),
        );
        r
    }

    fn error(
        &self,
        kernel: String,
        kind: Option<HostKind>,
        dir: &str,
        size: u64,
        e: &DriverError,
    ) -> Record {
        let mut r = self.base(kernel, dir, kind, dir, size);
        r.status = Status::Error;
        r.reason = Some(e.to_string());
        r.extra.insert("error_call".into(), json!(e.call));
        r.extra.insert("error_name".into(), json!(e.name));
        r
    }
}

fn kernel_name(backend: &str, dir: &str, kind: Option<HostKind>) -> String {
    match kind {
        Some(k) => format!("{}_{}_{}", backend, dir, k.name()),
        None => format!("{}_{}", backend, dir),
    }
}

/// The sweep. Returns true when interrupted.
pub fn run(
    plan: &Plan,
    b: &mut dyn Backend,
    sink: &mut crate::report::sink::Sink,
    stop: &AtomicBool,
) -> Result<bool, UserError> {
    let ctx = Ctx { plan, stop };
    let backend = plan.backend.clone();
    let host_dirs: Vec<Direction> = plan
        .dir_list
        .iter()
        .copied()
        .filter(|d| *d != Direction::D2d)
        .collect();
    // Best real copy rate per (kind, size): the zero-copy reference.
    let mut best_copy: HashMap<(usize, u64), f64> = HashMap::new();
    let probe_size = plan
        .sizes
        .iter()
        .copied()
        .max()
        .unwrap_or(4096)
        .clamp(4096, PROBE_MAX);
    for (ki, &kind) in plan.kind_list.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            return Ok(true);
        }
        // 1. What the CPU sees on this kind of memory.
        for r in cpu_probe(&ctx, b, kind, probe_size as usize) {
            sink.push(r)?;
        }
        // 2. Transfers.
        for &size in &plan.sizes {
            if host_dirs.is_empty() {
                break;
            }
            let needs = Needs {
                second_host: host_dirs.contains(&Direction::Bidir),
                second_device: host_dirs.contains(&Direction::Bidir),
            };
            let timers: Vec<Timer> = host_dirs
                .iter()
                .map(|&d| b.headline_timer(kind, d))
                .collect();
            let mut session =
                match transfer::catch("prepare", || b.prepare(kind, size as usize, needs)) {
                    Ok(s) => s,
                    Err(e) => {
                        for &d in &host_dirs {
                            sink.push(ctx.error(
                                kernel_name(&backend, d.name(), Some(kind)),
                                Some(kind),
                                d.name(),
                                size,
                                &e,
                            ))?;
                        }
                        continue;
                    }
                };
            for (&dir, &timer) in host_dirs.iter().zip(&timers) {
                if stop.load(Ordering::Relaxed) {
                    return Ok(true);
                }
                let name = kernel_name(&backend, dir.name(), Some(kind));
                if dir == Direction::Map && !kind.is_mapped() {
                    continue;
                }
                if dir == Direction::Map && kind.api() == Api::Cuda {
                    let mut r = ctx.base(name, "map", Some(kind), "map", size);
                    r.status = Status::Skipped;
                    r.reason = Some(
                        "CUDA mapped memory is zero-copy by construction (kernels read it in place through cuMemHostGetDevicePointer); there is no map call to time and bwscope has no SM copy kernel yet".into(),
                    );
                    // The mapping itself is still checked.
                    if plan.verify {
                        let v = verify(
                            session.as_mut(),
                            Direction::Map,
                            size as usize,
                            seed(ki, size, dir),
                        );
                        match v {
                            Ok(Ok(v)) => {
                                r.extra.insert("verified".into(), json!(v));
                            }
                            Ok(Err(msg)) => {
                                r.extra.insert("verified".into(), json!(false));
                                r.status = Status::Error;
                                r.reason =
                                    Some(format!("verification of the mapping failed: {}", msg));
                            }
                            Err(e) => {
                                r.status = Status::Error;
                                r.reason = Some(e.to_string());
                                r.extra.insert("error_name".into(), json!(e.name));
                            }
                        }
                    }
                    r.extra.insert("zero_copy".into(), json!(true));
                    sink.push(r)?;
                    continue;
                }
                let reference = best_copy.get(&(ki, size)).copied();
                let rec = measure_case(
                    &ctx,
                    session.as_mut(),
                    kind,
                    dir,
                    size,
                    timer,
                    reference,
                    ki,
                );
                match rec {
                    Ok(Some(r)) => {
                        if matches!(dir, Direction::H2d | Direction::D2h) {
                            if let Some(g) = r.payload_gbps {
                                let e = best_copy.entry((ki, size)).or_insert(0.0);
                                *e = e.max(g.best);
                            }
                        }
                        sink.push(r)?;
                    }
                    Ok(None) => return Ok(true),
                    Err(e) => sink.push(ctx.error(name, Some(kind), dir.name(), size, &e))?,
                }
            }
        }
    }
    // 3. Device to device, once per size.
    if plan.dir_list.contains(&Direction::D2d) {
        let kind = plan.kind_list[0];
        for &size in &plan.sizes {
            let name = kernel_name(&backend, "d2d", None);
            let needs = Needs {
                second_host: false,
                second_device: true,
            };
            let timer = b.headline_timer(kind, Direction::D2d);
            let mut session =
                match transfer::catch("prepare", || b.prepare(kind, size as usize, needs)) {
                    Ok(s) => s,
                    Err(e) => {
                        sink.push(ctx.error(name, None, "d2d", size, &e))?;
                        continue;
                    }
                };
            match measure_case(
                &ctx,
                session.as_mut(),
                kind,
                Direction::D2d,
                size,
                timer,
                None,
                usize::MAX,
            ) {
                Ok(Some(r)) => sink.push(r)?,
                Ok(None) => return Ok(true),
                Err(e) => sink.push(ctx.error(name, None, "d2d", size, &e))?,
            }
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directions_parse_and_reject() {
        assert_eq!(
            parse_dirs(Some("h2d,d2h,h2d")).unwrap(),
            vec![Direction::H2d, Direction::D2h]
        );
        assert!(parse_dirs(Some("up"))
            .unwrap_err()
            .to_string()
            .contains("--directions"));
        assert_eq!(parse_dirs(None).unwrap().len(), 5);
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

    #[test]
    fn sampling_calibrates_and_excludes_warmup() {
        let stop = AtomicBool::new(false);
        let mut calls = Vec::new();
        let opts = SampleOpts {
            samples: 3,
            min_sample: Duration::from_millis(10),
        };
        // A fake copy taking 1 ms per rep.
        let (reps, t) = sample(
            |reps| {
                calls.push(reps);
                Ok(Timed {
                    host_s: reps as f64 * 1e-3,
                    ..Timed::default()
                })
            },
            &opts,
            &stop,
        )
        .unwrap()
        .unwrap();
        assert!(reps >= 10, "reps {reps}");
        assert_eq!(t.len(), 3);
        assert!(t.iter().all(|t| t.host_s >= 0.010));
        assert_eq!(calls[0], 1, "warm-up first");
        assert_eq!(
            calls.len(),
            1 + 2 + 3,
            "warm-up, two calibration calls, three samples: {calls:?}"
        );
    }

    #[test]
    fn size_problems_name_the_limit() {
        let info = transfer::DeviceInfo {
            max_alloc_bytes: Some(1 << 20),
            total_mem_bytes: Some(3 << 20),
            ..Default::default()
        };
        let d = [Direction::H2d];
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
            size_problem(2 << 20, &[Direction::D2d], &[HostKind::Pinned], &info)
                .unwrap()
                .contains("free device memory")
        );
        assert!(size_problem(1 << 20, &[Direction::D2d], &[HostKind::Pinned], &info).is_none());
    }
}
