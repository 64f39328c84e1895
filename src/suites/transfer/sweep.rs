//! The transfer sweep: per host kind, the CPU's view of it and the
//! copies in every host direction and size; then device-to-device copies.

use super::*;

/// The sweep.
pub(super) fn run(plan: &Plan, b: &mut dyn Backend, cx: &mut Ctx) -> Result<Flow, UserError> {
    let env = Env {
        plan,
        sampler: cx.sampler(SampleOpts::new(plan.samples, plan.min_sample_ms)),
        features: cx.host.features.clone(),
        hints: RefCell::new(HashMap::new()),
    };
    let host_dirs: Vec<Route> = plan
        .dir_list
        .iter()
        .copied()
        .filter(|d| !d.device_only())
        .collect();
    cx.plan_steps(step_count(plan, b, &host_dirs));
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
        if cx.stopped() {
            return Ok(Flow::Stopped);
        }
        // 1. What the CPU sees on this kind of memory.
        cx.step(&format!("{} cpu probe", kind.name()));
        for r in cpu_probe(&env, b, kind, probe_size as usize) {
            cx.push(r)?;
        }
        // 2. Transfers.
        let host = HostCopies {
            ki,
            kind,
            dirs: &host_dirs,
        };
        if host.run(&env, b, cx, &mut best_copy)? == Flow::Stopped {
            return Ok(Flow::Stopped);
        }
    }
    // 3. Device to device, once per size and engine.
    device_copies(&env, b, cx)
}

/// The steps of [`run`]'s sweep, for the progress bar (it read `24/0`):
/// per kind its CPU probe and each size × direction the backend supports,
/// then each size of each device-to-device engine asked for.
fn step_count(plan: &Plan, b: &dyn Backend, host_dirs: &[Route]) -> u64 {
    let sizes = plan.sizes.len() as u64;
    let supported = |k: HostKind, dirs: &[Route]| {
        dirs.iter()
            .filter(|&&d| b.unsupported(k, d).is_none())
            .count() as u64
    };
    let per_kind: u64 = plan
        .kind_list
        .iter()
        .map(|&k| 1 + sizes * supported(k, host_dirs))
        .sum();
    let d2d: Vec<Route> = [Route::D2d, Route::D2dSm]
        .into_iter()
        .filter(|d| plan.dir_list.contains(d))
        .collect();
    let device = plan
        .kind_list
        .first()
        .map_or(0, |&k| sizes * supported(k, &d2d));
    per_kind + device
}

/// The copies between the host and the device of one host kind.
struct HostCopies<'a> {
    /// The kind's index in the plan (it seeds the verification pattern).
    ki: usize,
    kind: HostKind,
    dirs: &'a [Route],
}

impl HostCopies<'_> {
    /// Every size and direction; `best_copy` collects the best real copy
    /// per (kind, size), the zero-copy test's reference.
    fn run(
        &self,
        env: &Env,
        b: &mut dyn Backend,
        cx: &mut Ctx,
        best_copy: &mut HashMap<(usize, u64), f64>,
    ) -> Result<Flow, UserError> {
        let (ki, kind, plan) = (self.ki, self.kind, env.plan);
        let backend = &plan.backend;
        let host_dirs = self.dirs;
        for &size in &plan.sizes {
            if host_dirs.is_empty() {
                break;
            }
            let needs = Needs {
                second_host: host_dirs.contains(&Route::Bidir),
                second_device: host_dirs.contains(&Route::Bidir),
            };
            let timers: Vec<Timer> = host_dirs
                .iter()
                .map(|&d| b.headline_timer(kind, d))
                .collect();
            let skips: Vec<Option<String>> =
                host_dirs.iter().map(|&d| b.unsupported(kind, d)).collect();
            let mut session =
                match transfer::catch("prepare", || b.prepare(kind, size as usize, needs)) {
                    Ok(s) => s,
                    Err(e) => {
                        for &d in host_dirs {
                            cx.push(env.error(
                                kernel_name(backend, d.name(), Some(kind)),
                                Some(kind),
                                d.into(),
                                d.name(),
                                size,
                                &e,
                            ))?;
                        }
                        continue;
                    }
                };
            for ((&dir, &timer), skip) in host_dirs.iter().zip(&timers).zip(&skips) {
                if cx.stopped() {
                    return Ok(Flow::Stopped);
                }
                let name = kernel_name(backend, dir.name(), Some(kind));
                if let Some(why) = skip {
                    cx.push(env.skipped(name, Some(kind), dir, size, why))?;
                    continue;
                }
                cx.step(&format!(
                    "{} {} {}",
                    kind.name(),
                    dir.name(),
                    format_bytes(size)
                ));
                if dir == Route::Map && !kind.is_mapped() {
                    continue;
                }
                if dir == Route::Map && kind.api() == Api::Cuda {
                    cx.push(self.cuda_map(env, session.as_mut(), size, name))?;
                    continue;
                }
                let reference = best_copy.get(&(ki, size)).copied();
                let rec =
                    measure_case(env, session.as_mut(), kind, dir, size, timer, reference, ki);
                match rec {
                    Ok(Some(r)) => {
                        if matches!(dir, Route::H2d | Route::D2h) {
                            if let Some(g) = r.payload_gbps {
                                let e = best_copy.entry((ki, size)).or_insert(0.0);
                                *e = e.max(g.best);
                            }
                        }
                        cx.push(r)?;
                    }
                    Ok(None) => return Ok(Flow::Stopped),
                    Err(e) => cx.push(env.error(name, Some(kind), dir.into(), dir.name(), size, &e))?,
                }
            }
        }
        Ok(Flow::Done)
    }

    /// CUDA's `map`: no call to time, so a skipped record, with the
    /// mapping itself still verified.
    fn cuda_map(&self, env: &Env, session: &mut dyn Session, size: u64, name: String) -> Record {
        let (ki, kind, dir) = (self.ki, self.kind, Route::Map);
        let mut r = env.base(name, dir.into(), Some(kind), dir.name(), size);
        r.status = Status::Skipped;
        r.reason = Some(
            "CUDA mapped memory is zero-copy by construction (kernels read it in place through cuMemHostGetDevicePointer): there is no map call to time; h2d-sm and d2h-sm measure kernels reading and writing it in place".into(),
        );
        // The mapping itself is still checked.
        if env.plan.verify {
            match verify(session, Route::Map, size as usize, seed(ki, size, dir)) {
                Ok(Ok(v)) => detail_of(&mut r).verified = v.into(),
                Ok(Err(msg)) => {
                    detail_of(&mut r).verified = Nullable::Value(false);
                    r.status = Status::Error;
                    r.reason = Some(format!("verification of the mapping failed: {}", msg));
                }
                Err(e) => {
                    r.status = Status::Error;
                    r.reason = Some(e.to_string());
                    detail_of(&mut r).error_name = Some(e.name.to_string());
                }
            }
        }
        detail_of(&mut r).zero_copy = Some(true);
        r
    }
}

/// Device to device, once per size and engine.
fn device_copies(env: &Env, b: &mut dyn Backend, cx: &mut Ctx) -> Result<Flow, UserError> {
    let plan = env.plan;
    let backend = &plan.backend;
    let kind = plan.kind_list[0];
    for dir in [Route::D2d, Route::D2dSm] {
        if !plan.dir_list.contains(&dir) {
            continue;
        }
        let name = kernel_name(backend, dir.name(), None);
        let skip = b.unsupported(kind, dir);
        let timer = b.headline_timer(kind, dir);
        for &size in &plan.sizes {
            if cx.stopped() {
                return Ok(Flow::Stopped);
            }
            if let Some(why) = &skip {
                cx.push(env.skipped(name.clone(), None, dir, size, why))?;
                continue;
            }
            let needs = Needs {
                second_host: false,
                second_device: true,
            };
            let mut session =
                match transfer::catch("prepare", || b.prepare(kind, size as usize, needs)) {
                    Ok(s) => s,
                    Err(e) => {
                        cx.push(env.error(name.clone(), None, dir.into(), dir.name(), size, &e))?;
                        continue;
                    }
                };
            cx.step(&format!("{} {}", dir.name(), format_bytes(size)));
            match measure_case(
                env,
                session.as_mut(),
                kind,
                dir,
                size,
                timer,
                None,
                usize::MAX,
            ) {
                Ok(Some(r)) => cx.push(r)?,
                Ok(None) => return Ok(Flow::Stopped),
                Err(e) => cx.push(env.error(name.clone(), None, dir.into(), dir.name(), size, &e))?,
            }
        }
    }
    Ok(Flow::Done)
}
