//! Planning a transfer run: directions, kinds and sizes checked against
//! the device (opened here), and where the host side runs.

use super::*;
use crate::suites::estimate::Estimate;

pub(super) fn parse_dirs(spec: Option<&str>) -> Result<Vec<Route>, UserError> {
    let Some(spec) = spec else {
        return Ok(transfer::ROUTES.to_vec());
    };
    let mut v = Vec::new();
    for d in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let d = Route::parse(d).ok_or_else(|| {
            UserError::flag(
                "--directions",
                format!(
                    "unknown direction '{}': use h2d, d2h, d2d, bidir, map, h2d-sm, d2h-sm or d2d-sm",
                    d
                ),
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
pub(super) fn size_problem(
    size: u64,
    dirs: &[Route],
    kinds: &[HostKind],
    info: &transfer::DeviceInfo,
) -> Option<String> {
    let two_dev = dirs
        .iter()
        .any(|d| matches!(d.copy_of(), Route::D2d | Route::Bidir));
    let two_host = dirs.contains(&Route::Bidir);
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
    if let Err(e) = crate::suites::check_memory(host_need, "--sizes", "use smaller --sizes") {
        return Some(e.to_string().trim_start_matches("--sizes: ").to_string());
    }
    None
}

/// Open the backend `--backend` names; `auto` tries CUDA, then OpenCL.
fn open_backend(
    arg: BackendChoice,
    index: usize,
) -> Result<Result<Box<dyn Backend>, String>, UserError> {
    let order: &[Api] = match arg {
        BackendChoice::Auto => &[Api::Cuda, Api::Opencl],
        BackendChoice::Cuda => &[Api::Cuda],
        BackendChoice::Opencl => &[Api::Opencl],
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

/// A planned transfer run: a device and its plan, or no device (one
/// `skipped` record with every backend's reason, exit 0).
pub enum TransferSuite {
    Ready {
        plan: Box<Plan>,
        backend: RefCell<Box<dyn Backend>>,
        /// What the run found out while planning (placement notes).
        notes: Vec<String>,
        warnings: Vec<Warning>,
    },
    NoDevice {
        backend: BackendChoice,
        device: usize,
        reason: String,
    },
}

/// Resolve the options: open the device, choose kinds, directions, sizes
/// and the host placement. Everything that needs no device is checked
/// first.
pub fn plan(a: &TransferOptions, host: &Host) -> Result<TransferSuite, UserError> {
    let dirs = parse_dirs(a.directions.as_deref())?;
    let explicit_sizes = a.sizes.is_some();
    let mut sizes = a.sizes.clone().unwrap_or_else(default_sizes);
    if sizes.is_empty() {
        return Err(UserError::flag("--sizes", "the list is empty"));
    }
    let opts = a.sampling.resolve(SampleOpts {
        samples: 5,
        min_sample: Duration::from_millis(20),
        settle: None,
    })?;
    if let Some(n) = a.host_node {
        if !host.nodes.iter().any(|x| x.id == n) {
            placement(host, Some(n), None)?;
        }
    }
    let backend = match open_backend(backend_choice(a), a.device)? {
        Ok(b) => b,
        Err(reason) => {
            return Ok(TransferSuite::NoDevice {
                backend: a.backend,
                device: a.device,
                reason,
            })
        }
    };
    let info = backend.info().clone();
    let dirs = offered_dirs(dirs, a.directions.is_none(), backend.as_ref())?;
    let kinds = parse_kinds(a.kinds.as_deref(), backend.as_ref())?;
    if dirs == [Route::Map] && !kinds.iter().any(|k| k.is_mapped()) {
        return Err(UserError::flag(
            "--directions",
            "map applies to mapped kinds only (mapped, alloc-host-ptr, alloc-host-ptr-ro): add one to --kinds",
        ));
    }
    let mut warnings = Vec::new();
    sizes = fitting_sizes(sizes, explicit_sizes, &dirs, &kinds, &info, &mut warnings)?;
    let pci_ctx = info.pci_bus_id.as_deref().and_then(pci::read_sysfs);
    let HostPlacement {
        cpus,
        node,
        source,
        mut notes,
    } = placement(host, a.host_node, pci_ctx.as_ref())?;
    if let Err(e) = pin_to(&cpus) {
        warnings.push(Warning::Other {
            message: format!(
                "could not pin the host thread to cpus {}: {}",
                crate::util::cpulist::format_cpu_list(&cpus),
                e
            ),
            hint: "check the process's cpu affinity (taskset)".into(),
        });
    }
    notes.insert(
        0,
        format!(
            "{} device {} \"{}\"{}; host cpus {} ({})",
            info.backend,
            info.index,
            info.name,
            info.pci_bus_id
                .as_deref()
                .map(|p| format!(" at {}", p))
                .unwrap_or_default(),
            crate::util::cpulist::format_cpu_list(&cpus),
            source
        ),
    );
    let plan = Plan {
        backend: info.backend.clone(),
        device: info.clone(),
        pci: pci_ctx,
        kinds: kinds.iter().map(|k| k.name()).collect(),
        directions: dirs.iter().map(|d| d.name()).collect(),
        sizes,
        verify: !a.no_verify,
        samples: opts.samples,
        min_sample_ms: opts.min_sample.as_secs_f64() * 1e3,
        host_cpus: cpus,
        host_node: node,
        placement_source: source,
        byte_convention: BYTE_CONVENTION,
        kind_list: kinds,
        dir_list: dirs,
    };
    Ok(TransferSuite::Ready {
        plan: Box::new(plan),
        backend: RefCell::new(backend),
        notes,
        warnings,
    })
}

/// The backend to open: `auto` with kinds of one API only opens that API.
fn backend_choice(a: &TransferOptions) -> BackendChoice {
    if a.backend != BackendChoice::Auto {
        return a.backend;
    }
    let apis: Vec<Api> = a
        .kinds
        .as_deref()
        .unwrap_or("")
        .split(',')
        .filter_map(|k| HostKind::parse(k.trim()).map(|k| k.api()))
        .collect();
    match apis.first() {
        Some(&first) if apis.iter().all(|&x| x == first) => match first {
            Api::Cuda => BackendChoice::Cuda,
            Api::Opencl => BackendChoice::Opencl,
        },
        _ => BackendChoice::Auto,
    }
}

/// The directions to run: by default those the backend offers; asked for,
/// each must be offered.
fn offered_dirs(
    dirs: Vec<Route>,
    by_default: bool,
    backend: &dyn Backend,
) -> Result<Vec<Route>, UserError> {
    let offered = backend.directions();
    if by_default {
        return Ok(dirs.into_iter().filter(|d| offered.contains(d)).collect());
    }
    match dirs.iter().find(|d| !offered.contains(d)) {
        Some(d) => Err(UserError::flag(
            "--directions",
            format!(
                "{} needs copy kernels, which the {} backend does not have: it offers {}",
                d.name(),
                backend.info().backend,
                offered
                    .iter()
                    .map(|d| d.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
        None => Ok(dirs),
    }
}

/// The sizes the device can hold: one asked for that does not fit is an
/// error; the default sweep stops below the first that does not, with a
/// warning.
fn fitting_sizes(
    sizes: Vec<u64>,
    explicit: bool,
    dirs: &[Route],
    kinds: &[HostKind],
    info: &transfer::DeviceInfo,
    warnings: &mut Vec<Warning>,
) -> Result<Vec<u64>, UserError> {
    let mut kept = Vec::new();
    for s in sizes {
        match size_problem(s, dirs, kinds, info) {
            None => kept.push(s),
            Some(p) if explicit => return Err(UserError::flag("--sizes", p)),
            Some(p) => warnings.push(Warning::Other {
                message: format!("default sweep stops below {}: {}", format_bytes(s), p),
                hint: "pass --sizes to choose sizes that fit".into(),
            }),
        }
    }
    if kept.is_empty() {
        return Err(UserError::flag(
            "--sizes",
            "no default size fits this device; pass smaller --sizes",
        ));
    }
    Ok(kept)
}

/// How long the plan will take (see `suites::estimate` for the rule).
fn estimate(p: &super::Plan) -> Estimate {
    Estimate::sampled(
        p.kinds.len() * p.directions.len() * p.sizes.len(),
        p.samples,
        p.min_sample_ms,
    )
}

impl Suite for TransferSuite {
    fn id(&self) -> SuiteId {
        SuiteId::Transfer
    }

    fn estimate(&self) -> Estimate {
        match self {
            TransferSuite::Ready { plan, .. } => estimate(plan),
            TransferSuite::NoDevice { .. } => Estimate::nothing("no device"),
        }
    }

    fn options(&self) -> Value {
        match self {
            TransferSuite::Ready { plan, .. } => serde_json::to_value(plan).expect("plain data"),
            TransferSuite::NoDevice {
                backend, device, ..
            } => json!({ "backend": backend, "device": Value::Null, "device_index": device }),
        }
    }

    fn run(&self, cx: &mut Ctx) -> anyhow::Result<Flow> {
        match self {
            TransferSuite::NoDevice {
                backend, reason, ..
            } => {
                let name = serde_json::to_value(backend).expect("plain");
                let name = name.as_str().unwrap_or("auto");
                let r = Record {
                    status: Status::Skipped,
                    reason: Some(format!("no accelerator: {}", reason)),
                    kernel: name.into(),
                    ..Record::new(TransferDetail {
                        backend: Some(name.into()),
                        device: Nullable::Null,
                        ..TransferDetail::default()
                    })
                };
                cx.note(&format!("transfer: skipped: {}", reason));
                cx.push(r)?;
                Ok(Flow::Done)
            }
            TransferSuite::Ready {
                plan,
                backend,
                notes,
                warnings,
            } => {
                for n in notes {
                    cx.note(&format!("transfer: {}", n));
                }
                for w in warnings {
                    cx.run_warning(w.clone());
                }
                Ok(run(plan, backend.borrow_mut().as_mut(), cx)?)
            }
        }
    }
}
