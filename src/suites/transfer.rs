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
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::cli::{BackendArg, OutputArgs, TransferArgs};
use crate::error::{UserError, EXIT_INTERRUPTED, EXIT_OK};
use crate::kernels::{self, Kernel, KernelArgs, Op};
use crate::measure::{stats, SampleOpts};
use crate::platform::{topology, Host};
use crate::report::model::{MemoryInfo, Placement, Record, Run, Sample, Stats, Status, Units};
use crate::report::table;
use crate::report::warnings::{limits, Warning};
use crate::transfer::{
    self, pci, Api, Backend, Direction, DriverError, HostKind, Needs, Opened, Session, Timed, Timer,
};
use crate::util::units::{format_bytes, parse_size_list};

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
    if let Err(e) = super::check_memory(host_need, "--sizes") {
        return Some(e.to_string().trim_start_matches("--sizes: ").to_string());
    }
    None
}

/// Set the calling thread's memory policy: bind (`--host-node`) or prefer
/// (device-local default) `node`. Failure is harmless (single-node
/// machines, kernels without NUMA) and reported as a note.
fn set_mempolicy(node: u32, bind: bool) -> Result<(), String> {
    const MPOL_PREFERRED: i64 = 1;
    const MPOL_BIND: i64 = 2;
    if node >= 1024 {
        return Err("node id out of range".into());
    }
    let mut mask = [0u64; 16];
    mask[(node / 64) as usize] |= 1 << (node % 64);
    // SAFETY: set_mempolicy reads `maxnode` bits from the mask.
    let r = unsafe {
        libc::syscall(
            libc::SYS_set_mempolicy,
            if bind { MPOL_BIND } else { MPOL_PREFERRED },
            mask.as_ptr(),
            (mask.len() * 64) as u64,
        )
    };
    if r != 0 {
        return Err(std::io::Error::last_os_error().to_string());
    }
    Ok(())
}

/// Pin the calling thread to `cpus` (all of them: the driver may use
/// helper threads, and a single cpu would make them compete).
fn pin_to(cpus: &[u32]) -> Result<(), String> {
    // SAFETY: cpu_set_t is plain data.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            libc::CPU_SET(c as usize, &mut set);
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error().to_string());
        }
    }
    Ok(())
}

/// Where the host thread runs and its memory lives.
struct HostPlacement {
    cpus: Vec<u32>,
    node: Option<u32>,
    /// `--host-node`, `device-local` or `unknown`.
    source: String,
    notes: Vec<String>,
}

/// Resolve where the host thread runs: `--host-node`, else the device's
/// local cpus from sysfs, else anywhere.
fn placement(
    host: &Host,
    host_node: Option<u32>,
    pci: Option<&pci::PciContext>,
) -> Result<HostPlacement, UserError> {
    let mut notes = Vec::new();
    let allowed = &host.allowed_cpus;
    if let Some(n) = host_node {
        let node = host.nodes.iter().find(|x| x.id == n).ok_or_else(|| {
            UserError::flag(
                "--host-node",
                format!(
                    "no NUMA node {} here (nodes: {})",
                    n,
                    host.nodes
                        .iter()
                        .map(|x| x.id.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
        })?;
        let cpus: Vec<u32> = node
            .cpus
            .iter()
            .copied()
            .filter(|c| allowed.contains(c))
            .collect();
        if cpus.is_empty() {
            return Err(UserError::flag(
                "--host-node",
                format!(
                    "node {} has no cpu this process may use (allowed: {})",
                    n,
                    topology::format_cpu_list(allowed)
                ),
            ));
        }
        if let Err(e) = set_mempolicy(n, true) {
            notes.push(format!("could not bind host memory to node {}: {}", n, e));
        }
        return Ok(HostPlacement {
            cpus,
            node: Some(n),
            source: "--host-node".into(),
            notes,
        });
    }
    if let Some(p) = pci {
        let cpus: Vec<u32> = p
            .local_cpus
            .iter()
            .copied()
            .filter(|c| allowed.contains(c))
            .collect();
        if !cpus.is_empty() {
            if let Some(n) = p.numa_node {
                if let Err(e) = set_mempolicy(n, false) {
                    notes.push(format!(
                        "could not prefer node {} for host memory: {}",
                        n, e
                    ));
                }
            }
            return Ok(HostPlacement {
                cpus,
                node: p.numa_node,
                source: "device-local".into(),
                notes,
            });
        }
    }
    notes.push("device locality unknown (no PCI sysfs entry): host thread not restricted".into());
    Ok(HostPlacement {
        cpus: allowed.clone(),
        node: None,
        source: "unknown".into(),
        notes,
    })
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
    let host = Host::detect(false);
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
                topology::format_cpu_list(&cpus),
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
        topology::format_cpu_list(&cpus),
        plan.placement_source
    );
    for n in &notes {
        eprintln!("transfer: {}", n);
    }
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
        print!("{}", table::render(&run));
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

fn seed(ki: usize, size: u64, dir: Direction) -> u64 {
    ((ki as u64 + 1) * 0x9e37_79b9_7f4a_7c15) ^ size.rotate_left(17) ^ dir as u64
}

/// Fill `buf` with the pseudo-random pattern of `seed` (its bitwise
/// complement with `invert`): the destination is pre-filled with the
/// complement, so a copy that moves nothing cannot pass.
fn fill(buf: &mut [u8], seed: u64, invert: bool) {
    let mut rng = crate::util::rng::XorShift64::new(seed | 1);
    let mask = if invert { u64::MAX } else { 0 };
    for c in buf.chunks_mut(8) {
        let x = (rng.next_u64() ^ mask).to_le_bytes();
        c.copy_from_slice(&x[..c.len()]);
    }
}

/// Compare `got` with the pattern of `seed`, regenerated on the fly (no
/// second buffer: verification at 1 GiB needs one scratch buffer only),
/// and describe the first difference.
fn check(got: &[u8], seed: u64) -> Result<(), String> {
    let mut rng = crate::util::rng::XorShift64::new(seed | 1);
    let (mut bad, mut first) = (0usize, None);
    for (i, c) in got.chunks(8).enumerate() {
        let want = rng.next_u64().to_le_bytes();
        for (j, (a, b)) in c.iter().zip(&want).enumerate() {
            if a != b {
                bad += 1;
                first.get_or_insert(i * 8 + j);
            }
        }
    }
    match first {
        None => Ok(()),
        Some(f) => Err(format!(
            "{} of {} bytes differ, first at offset {}",
            bad,
            got.len(),
            f
        )),
    }
}

/// Pattern written, copied, read back, compared. `Ok(Err(msg))` is a
/// mismatch; `Err` a driver failure; `Ok(Ok(None))`: nothing to check.
fn verify(
    s: &mut dyn Session,
    dir: Direction,
    n: usize,
    seed: u64,
) -> Result<Result<Option<bool>, String>, DriverError> {
    let mut scratch = vec![0u8; n];
    let r = match dir {
        Direction::H2d => {
            fill(s.host(0), seed, false);
            fill(&mut scratch, seed, true);
            s.write_device(0, &scratch)?;
            s.run(Direction::H2d, 1)?;
            s.read_device(0, &mut scratch)?;
            check(&scratch, seed)
        }
        Direction::D2h => {
            fill(&mut scratch, seed, false);
            s.write_device(0, &scratch)?;
            fill(s.host(0), seed, true);
            s.run(Direction::D2h, 1)?;
            check(s.host(0), seed)
        }
        Direction::D2d => {
            fill(&mut scratch, seed, false);
            s.write_device(0, &scratch)?;
            fill(&mut scratch, seed, true);
            s.write_device(1, &scratch)?;
            s.run(Direction::D2d, 1)?;
            s.read_device(1, &mut scratch)?;
            check(&scratch, seed)
        }
        Direction::Bidir => {
            let seed2 = seed ^ 0x5555;
            fill(s.host(0), seed, false);
            fill(&mut scratch, seed, true);
            s.write_device(0, &scratch)?;
            fill(&mut scratch, seed2, false);
            s.write_device(1, &scratch)?;
            fill(s.host(1), seed2, true);
            s.run(Direction::Bidir, 1)?;
            s.read_device(0, &mut scratch)?;
            check(&scratch, seed)
                .map_err(|m| format!("h2d half: {}", m))
                .and_then(|_| check(s.host(1), seed2).map_err(|m| format!("d2h half: {}", m)))
        }
        Direction::Map => {
            fill(s.host(0), seed, false);
            fill(&mut scratch, seed, true);
            match s.map_roundtrip(&mut scratch)? {
                None => return Ok(Ok(None)),
                Some(()) => check(&scratch, seed),
            }
        }
    };
    Ok(r.map(|_| Some(true)))
}

/// Warm-up (excluded), calibrate `reps` on the host clock to reach the
/// minimum sample time, then take the samples. `None` when interrupted.
fn sample<F>(
    mut f: F,
    opts: &SampleOpts,
    stop: &AtomicBool,
) -> Result<Option<(u64, Vec<Timed>)>, DriverError>
where
    F: FnMut(u64) -> Result<Timed, DriverError>,
{
    f(1)?;
    let min = opts.min_sample.as_secs_f64();
    let mut reps = 1u64;
    loop {
        if stop.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let t = f(reps)?.host_s;
        if t >= min || reps >= 1 << 20 {
            break;
        }
        let factor = if t > 0.0 { (min / t) * 1.1 } else { 16.0 };
        reps = ((reps as f64 * factor.clamp(1.5, 1000.0)).ceil() as u64)
            .max(reps + 1)
            .min(1 << 20);
    }
    let mut out = Vec::with_capacity(opts.samples);
    for _ in 0..opts.samples {
        if stop.load(Ordering::Relaxed) {
            return Ok(None);
        }
        out.push(f(reps)?);
    }
    Ok(Some((reps, out)))
}

fn rates(bytes: u64, secs: impl Iterator<Item = Option<f64>>) -> Option<Vec<f64>> {
    secs.map(|s| s.filter(|s| *s > 0.0).map(|s| bytes as f64 / s / 1e9))
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn measure_case(
    ctx: &Ctx,
    s: &mut dyn Session,
    kind: HostKind,
    dir: Direction,
    size: u64,
    timer: Timer,
    reference_gbps: Option<f64>,
    ki: usize,
) -> Result<Option<Record>, DriverError> {
    let plan = ctx.plan;
    let opts = SampleOpts {
        samples: plan.samples,
        min_sample: Duration::from_secs_f64(plan.min_sample_ms / 1e3),
    };
    let host_kind = (dir != Direction::D2d).then_some(kind);
    let mut r = ctx.base(
        kernel_name(&plan.backend, dir.name(), host_kind),
        dir.name(),
        host_kind,
        dir.name(),
        size,
    );
    let Some((reps, timed)) = transfer::catch(dir.name(), || {
        sample(|reps| s.run(dir, reps), &opts, ctx.stop)
    })?
    else {
        return Ok(None);
    };
    // Bytes per sample under the suite's convention.
    let per_copy = match dir {
        Direction::D2d | Direction::Bidir => 2 * size,
        _ => size,
    };
    let bytes = per_copy * reps;
    let payload_ratio = if dir == Direction::D2d { 0.5 } else { 1.0 };
    let host_rates = rates(bytes, timed.iter().map(|t| Some(t.host_s)));
    let event_rates = rates(bytes, timed.iter().map(|t| t.device_s));
    let (headline, used) = match (timer, &event_rates) {
        (Timer::DeviceEvents, Some(ev)) => (ev.clone(), Timer::DeviceEvents),
        _ => (host_rates.clone().unwrap_or_default(), Timer::HostClock),
    };
    let secs: Vec<f64> = timed
        .iter()
        .map(|t| match used {
            Timer::DeviceEvents => t.device_s.unwrap_or(t.host_s),
            Timer::HostClock => t.host_s,
        })
        .collect();
    r.reps_per_sample = Some(reps);
    r.payload_bytes_per_pass = Some(size);
    if dir == Direction::D2d {
        r.bytes_read_per_pass = Some(size);
        r.bytes_written_per_pass = Some(size);
    }
    r.extra.insert("timer".into(), json!(used));
    r.extra.insert(
        "bytes_counted".into(),
        json!(match dir {
            Direction::D2d => "read+write",
            Direction::Bidir => "both directions",
            _ => "payload",
        }),
    );
    r.extra.insert(
        "host_gbps".into(),
        json!(host_rates
            .as_deref()
            .and_then(|v| stats::summarize(v, true))),
    );
    r.extra.insert(
        "event_gbps".into(),
        json!(event_rates
            .as_deref()
            .and_then(|v| stats::summarize(v, true))),
    );
    if dir == Direction::Bidir {
        let per = |i: usize| rates(size * reps, timed.iter().map(|t| t.per_dir_s.map(|p| p[i])));
        r.extra.insert(
            "h2d_gbps".into(),
            json!(per(0).as_deref().and_then(|v| stats::summarize(v, true))),
        );
        r.extra.insert(
            "d2h_gbps".into(),
            json!(per(1).as_deref().and_then(|v| stats::summarize(v, true))),
        );
    }
    let g = stats::summarize(&headline, true);
    // Zero-copy: a map that "moves" bytes faster than any real copy moved
    // nothing. Report the time it takes, never a bandwidth.
    let zero_copy = dir == Direction::Map
        && is_zero_copy(plan.device.host_unified, g.map(|g| g.best), reference_gbps);
    if dir == Direction::Map {
        r.extra.insert("zero_copy".into(), json!(zero_copy));
        let per_map: Vec<f64> = timed.iter().map(|t| t.host_s / reps as f64).collect();
        r.extra.insert(
            "map_unmap_seconds".into(),
            json!(stats::summarize(&per_map, false)),
        );
        r.extra
            .insert("reference_copy_gbps".into(), json!(reference_gbps));
    }
    if zero_copy {
        r.samples = secs
            .iter()
            .map(|&s| Sample {
                seconds: s,
                bytes: 0,
            })
            .collect();
        r.extra.insert(
            "note".into(),
            json!(if plan.device.host_unified == Some(true) {
                "zero-copy: host and device share memory, map/unmap moved no data"
            } else {
                "zero-copy: map/unmap was faster than 3x the best real copy, so it moved no data"
            }),
        );
    } else {
        r.samples = secs.iter().map(|&s| Sample { seconds: s, bytes }).collect();
        r.gbps = g;
        r.payload_gbps = stats::summarize(
            &headline
                .iter()
                .map(|x| x * payload_ratio)
                .collect::<Vec<_>>(),
            true,
        );
        if let Some(g) = &g {
            r.warnings = spread_warnings(g);
            if let Some(l) = plan.pci.as_ref().and_then(|c| c.theoretical_gbps) {
                let per_dir_best = if dir == Direction::Bidir {
                    g.best / 2.0
                } else {
                    g.best
                };
                if matches!(dir, Direction::H2d | Direction::D2h | Direction::Bidir)
                    && per_dir_best > l * limits::OVER_CEILING
                {
                    r.warnings.push(Warning::AboveCeiling {
                        gbps: per_dir_best,
                        ceiling_gbps: l,
                    });
                }
            }
        }
    }
    if let Some(p) = host_kind.map(|_| s.host(0).as_ptr() as usize) {
        r.memory = Some(memory_info(kind, p, size));
        check_placement(&mut r, p, size as usize);
    }
    if plan.verify {
        match transfer::catch("verify", || {
            verify(s, dir, size as usize, seed(ki, size, dir))
        })? {
            Ok(v) => {
                r.extra.insert("verified".into(), json!(v));
            }
            Err(msg) => {
                r.extra.insert("verified".into(), json!(false));
                r.status = Status::Error;
                r.reason = Some(format!("verification failed: {}", msg));
            }
        }
    }
    Ok(Some(r))
}

/// A map/unmap moved no data when host and device share memory, or when
/// its apparent rate beats 3× the best real copy of the same kind and size
/// (clpeak's rule), or is beyond any link (10 TB/s).
fn is_zero_copy(
    host_unified: Option<bool>,
    map_best_gbps: Option<f64>,
    reference_gbps: Option<f64>,
) -> bool {
    host_unified == Some(true)
        || map_best_gbps.is_some_and(|g| {
            g > ZERO_COPY_ABSURD_GBPS || reference_gbps.is_some_and(|rf| g > ZERO_COPY_FACTOR * rf)
        })
}

fn spread_warnings(g: &Stats) -> Vec<Warning> {
    let mut w = Vec::new();
    if g.cv > limits::CV {
        w.push(Warning::HighCv { cv: g.cv });
    }
    if g.median > 0.0 && g.best / g.median > limits::BEST_OVER_MEDIAN {
        w.push(Warning::BestMedianSpread {
            ratio: g.best / g.median,
        });
    }
    w
}

/// Fraction of (up to 64 evenly spaced) pages of `[addr, addr + len)` that
/// `move_pages` finds on `node`: where the host buffer actually landed.
fn pages_on_node(addr: usize, len: usize, node: u32) -> Option<f64> {
    const PAGE: usize = 4096;
    let n_pages = len.div_ceil(PAGE).max(1);
    let count = n_pages.min(64);
    let step = n_pages / count;
    let base = addr & !(PAGE - 1);
    let pages: Vec<*mut libc::c_void> = (0..count)
        .map(|i| (base + i * step * PAGE) as *mut libc::c_void)
        .collect();
    let mut status = vec![-1i32; count];
    // SAFETY: with a null `nodes` array move_pages only reports each page's
    // node into `status`; both arrays hold `count` entries.
    let r = unsafe {
        libc::syscall(
            libc::SYS_move_pages,
            0,
            count as libc::c_ulong,
            pages.as_ptr(),
            std::ptr::null::<i32>(),
            status.as_mut_ptr(),
            0,
        )
    };
    let valid: Vec<i32> = status.into_iter().filter(|s| *s >= 0).collect();
    if r != 0 || valid.is_empty() {
        return None;
    }
    Some(valid.iter().filter(|&&s| s as u32 == node).count() as f64 / valid.len() as f64)
}

/// Record where the host buffer's pages are, when a node was chosen.
fn check_placement(r: &mut Record, addr: usize, len: usize) {
    if let Some(p) = r.placement.as_mut() {
        if let Some(n) = p.memory_node {
            p.verified_fraction = pages_on_node(addr, len, n);
        }
    }
}

fn memory_info(kind: HostKind, addr: usize, size: u64) -> MemoryInfo {
    let s = crate::memory::smaps::lookup(addr);
    MemoryInfo {
        kind: kind.name().into(),
        page_bytes: s.as_ref().map(|s| s.kernel_page_bytes),
        thp_fraction: s
            .as_ref()
            .map(|s| (s.anon_huge_bytes as f64 / size as f64).min(1.0)),
        locked_fraction: s
            .as_ref()
            .map(|s| (s.locked_bytes as f64 / size as f64).min(1.0)),
    }
}

/// The widest cached (not non-temporal) sequential kernel of `op` that runs
/// here and whose alignment `addr` meets.
fn probe_kernel(op: Op, addr: usize) -> Option<&'static Kernel> {
    let f = crate::platform::Features::detect();
    kernels::registry()
        .iter()
        .filter(|k| k.op == op && !k.nontemporal && k.width_bits > 0 && k.supported(&f))
        .filter(|k| addr % k.align.max(1) == 0)
        .max_by_key(|k| k.width_bits)
}

/// CPU read and write bandwidth on one buffer of `kind`.
fn cpu_probe(ctx: &Ctx, b: &mut dyn Backend, kind: HostKind, size: usize) -> Vec<Record> {
    let plan = ctx.plan;
    let name = |op: &str| format!("{}_cpu-{}_{}", plan.backend, op, kind.name());
    let needs = Needs::default();
    let mut session = match transfer::catch("prepare", || b.prepare(kind, size, needs)) {
        Ok(s) => s,
        Err(e) => {
            return ["read", "write"]
                .iter()
                .map(|op| {
                    ctx.error(
                        name(op),
                        Some(kind),
                        &format!("cpu-{}", op),
                        size as u64,
                        &e,
                    )
                })
                .collect()
        }
    };
    let opts = SampleOpts {
        samples: plan.samples,
        min_sample: Duration::from_secs_f64(plan.min_sample_ms / 1e3),
    };
    let buf = session.host(0);
    let addr = buf.as_mut_ptr();
    let mut out = Vec::new();
    for op in [Op::Read, Op::Write] {
        let dir = format!("cpu-{}", op.name());
        let Some(k) = probe_kernel(op, addr as usize) else {
            out.push(Record::skipped(
                SUITE,
                &name(op.name()),
                "no asm kernel fits this buffer's alignment",
            ));
            continue;
        };
        let len = size - size % k.granule;
        let mut r = ctx.base(name(op.name()), op.name(), Some(kind), &dir, len as u64);
        r.width_bits = Some(k.width_bits);
        r.nontemporal = Some(false);
        r.pattern = Some("seq".into());
        let call = |reps: u64| -> f64 {
            let args = KernelArgs::new(addr, addr, len, reps);
            let t = Instant::now();
            // SAFETY: addr is valid for len bytes (len ≤ the buffer), aligned
            // for k, len is a multiple of its granule, and the ISA is present.
            let sum = unsafe { (k.func)(&args) };
            std::hint::black_box(sum);
            t.elapsed().as_secs_f64()
        };
        let Ok(Some((reps, timed))) = sample(
            |reps| {
                Ok(Timed {
                    host_s: call(reps),
                    ..Timed::default()
                })
            },
            &opts,
            ctx.stop,
        ) else {
            break;
        };
        let bytes = len as u64 * reps;
        let g: Vec<f64> = timed
            .iter()
            .map(|t| bytes as f64 / t.host_s / 1e9)
            .collect();
        r.samples = timed
            .iter()
            .map(|t| Sample {
                seconds: t.host_s,
                bytes,
            })
            .collect();
        r.reps_per_sample = Some(reps);
        r.bytes_read_per_pass = Some(if op == Op::Read { len as u64 } else { 0 });
        r.bytes_written_per_pass = Some(if op == Op::Write { len as u64 } else { 0 });
        r.payload_bytes_per_pass = Some(len as u64);
        r.gbps = stats::summarize(&g, true);
        r.payload_gbps = r.gbps;
        r.warnings = r.gbps.as_ref().map(spread_warnings).unwrap_or_default();
        r.memory = Some(memory_info(kind, addr as usize, len as u64));
        check_placement(&mut r, addr as usize, len);
        r.extra.insert("cpu_kernel".into(), json!(k.name));
        r.extra.insert("timer".into(), json!(Timer::HostClock));
        out.push(r);
    }
    // The verdict goes on both records: reads far slower than writes mean
    // the CPU sees write-combined / uncached memory.
    let best = |op: &str| {
        out.iter()
            .find(|r| r.op == op)
            .and_then(|r| r.gbps)
            .map(|g| g.best)
    };
    if let (Some(rd), Some(wr)) = (best("read"), best("write")) {
        let ratio = rd / wr;
        for r in &mut out {
            r.extra.insert("cpu_read_over_write".into(), json!(ratio));
            r.extra
                .insert("behaves_wc".into(), json!(ratio < WC_READ_OVER_WRITE));
        }
    }
    out
}

/// The human table of a transfer run: device context, then one row per
/// record.
pub fn render(run: &Run, records: &[&Record], units: Units) -> String {
    let mut out = String::new();
    let o = &run.options;
    if let Some(d) = o.get("device").filter(|d| d.is_object()) {
        let s = |v: &Value| v.as_str().map(str::to_string);
        let _ = writeln!(
            out,
            "device: {} ({} #{}{}{})",
            s(&d["name"]).unwrap_or_default(),
            s(&d["backend"]).unwrap_or_default(),
            d["index"],
            s(&d["driver_version"])
                .map(|v| format!(", driver {}", v))
                .unwrap_or_default(),
            s(&d["pci_bus_id"])
                .map(|v| format!(", pci {}", v))
                .unwrap_or_default(),
        );
        let p = &o["pci"];
        if p.is_object() {
            let _ = writeln!(
                out,
                "link:   {} GT/s (gen {}) x{} → {} GB/s per direction (theoretical, after encoding); numa node {}",
                p["link_speed_gts"],
                p["link_gen"],
                p["link_width"],
                p["theoretical_gbps"].as_f64().map_or("?".into(), |v| format!("{:.2}", v)),
                p["numa_node"]
            );
        }
        let _ = writeln!(
            out,
            "host:   cpus {} ({}), verification {}",
            o["host_cpus"]
                .as_array()
                .map(|a| topology::format_cpu_list(
                    &a.iter()
                        .filter_map(|v| v.as_u64().map(|x| x as u32))
                        .collect::<Vec<_>>()
                ))
                .unwrap_or_default(),
            s(&o["placement_source"]).unwrap_or_default(),
            if o["verify"].as_bool() == Some(false) {
                "off"
            } else {
                "on"
            }
        );
    }
    let mut rows = vec![vec![
        "kind".to_string(),
        "direction".into(),
        "size".into(),
        format!("best {}", units.label()),
        "median".into(),
        "cv %".into(),
        "timer".into(),
        "verified".into(),
        "note".into(),
    ]];
    let f = |v: f64| {
        let v = v * 1e9 / units.bytes_per_unit();
        if v >= 100.0 {
            format!("{:.0}", v)
        } else if v >= 10.0 {
            format!("{:.1}", v)
        } else {
            format!("{:.2}", v)
        }
    };
    for r in records.iter().filter(|r| r.status != Status::Skipped) {
        let e = &r.extra;
        let (best, med, cv) = r.gbps.map_or(("-".into(), "-".into(), "-".into()), |g| {
            (f(g.best), f(g.median), format!("{:.1}", g.cv * 100.0))
        });
        let mut note = String::new();
        if r.status == Status::Error {
            note = format!("error: {}", r.reason.as_deref().unwrap_or(""));
        } else if e.get("zero_copy").and_then(Value::as_bool) == Some(true) {
            let t = e["map_unmap_seconds"]["median"].as_f64().unwrap_or(0.0);
            note = format!("zero-copy (map+unmap {:.1} µs, no data moved)", t * 1e6);
        } else if r.op == "bidir" {
            let g = |k: &str| e[k]["best"].as_f64().map_or("-".into(), f);
            note = format!("h2d {} + d2h {}", g("h2d_gbps"), g("d2h_gbps"));
        } else if let Some(ratio) = e.get("cpu_read_over_write").and_then(Value::as_f64) {
            if r.op == "read" {
                note = format!(
                    "read/write {:.2}{}",
                    ratio,
                    if ratio < WC_READ_OVER_WRITE {
                        ": behaves write-combined"
                    } else {
                        ""
                    }
                );
            }
        } else if let (Some(h), Some(ev)) = (
            e["host_gbps"]["best"].as_f64(),
            e["event_gbps"]["best"].as_f64(),
        ) {
            note = format!("host {} / events {}", f(h), f(ev));
        }
        if r.op == "d2d" && r.status == Status::Ok {
            note = format!("read+write counted; {}", note);
        }
        rows.push(vec![
            e.get("host_kind")
                .and_then(Value::as_str)
                .unwrap_or("-")
                .to_string(),
            e.get("direction")
                .and_then(Value::as_str)
                .unwrap_or(&r.op)
                .to_string(),
            r.size_bytes.map_or("-".into(), format_bytes),
            best,
            med,
            cv,
            e.get("timer")
                .and_then(Value::as_str)
                .unwrap_or("-")
                .to_string(),
            match e.get("verified") {
                Some(Value::Bool(true)) => "yes".into(),
                Some(Value::Bool(false)) => "FAILED".into(),
                _ => "-".into(),
            },
            note,
        ]);
    }
    if rows.len() > 1 {
        out.push_str(&table::grid(&rows));
        let _ = writeln!(
            out,
            "{} = {} bytes/s; bytes: {}",
            units.label(),
            if units == Units::GB { "10^9" } else { "2^30" },
            BYTE_CONVENTION
        );
    }
    out
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
