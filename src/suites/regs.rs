//! `bwscope regs`: register and stack transfer rates (suite `regs`).
//!
//! Each `reg_` kernel repeats a block of independent moves (see
//! `kernels::x86_regs`); reps are calibrated so a sample lasts at least
//! `--min-sample-ms`, and bytes per sample = reps × the block's bytes (the
//! bytes arriving in the destinations). There is no working set, so the
//! records have `size_bytes: null` and no regime; bytes per cycle (from
//! the measured clock) make the figures comparable across machines.

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::cli::{OutputArgs, RegsArgs};
use crate::error::{UserError, EXIT_INTERRUPTED, EXIT_OK};
use crate::kernels::{self, Kernel, KernelArgs, Pattern};
use crate::measure::{noise, stats, SampleOpts};
use crate::model::Host;
use crate::model::{Record, Sample};

use super::pinned;

/// Resolved options.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RegsPlan {
    #[serde(serialize_with = "names")]
    pub kernels: Vec<&'static Kernel>,
    pub cpu: u32,
    pub samples: usize,
    pub min_sample_ms: f64,
}

fn names<S: serde::Serializer>(k: &[&'static Kernel], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(k.iter().map(|k| k.name))
}

pub fn plan(args: &RegsArgs, host: &Host) -> Result<RegsPlan, UserError> {
    let selected = kernels::select(args.kernel.as_deref().unwrap_or("reg_"))
        .map_err(|m| UserError::flag("--kernel", m))?;
    let kernels: Vec<&'static Kernel> = selected
        .into_iter()
        .filter(|k| k.pattern == Pattern::Register)
        .collect();
    if kernels.is_empty() {
        return Err(UserError::flag(
            "--kernel",
            "no register kernel named: `bwscope regs` runs reg_ kernels (see `bwscope kernels reg_`); memory kernels run with `bwscope cache`",
        ));
    }
    let cpu = pinned::resolve_cpu(host, args.cpu)?;
    let o = super::sample_opts(
        &args.sample,
        SampleOpts {
            samples: 7,
            min_sample: Duration::from_millis(10),
        },
    )?;
    Ok(RegsPlan {
        kernels,
        cpu,
        samples: o.samples,
        min_sample_ms: o.min_sample.as_secs_f64() * 1000.0,
    })
}

/// Measure one register kernel on the calling (pinned) thread.
pub fn measure_kernel(
    k: &'static Kernel,
    host: &Host,
    cpu: u32,
    opts: &SampleOpts,
    stop: &AtomicBool,
) -> Result<Record, crate::measure::Interrupted> {
    let call = |reps: u64| -> (f64, u64) {
        let a = KernelArgs::new(std::ptr::null(), std::ptr::null_mut(), 0, reps);
        let t0 = Instant::now();
        // SAFETY: register kernels touch no buffer (stack kernels restore
        // rsp), and the caller checked the ISA.
        let r = unsafe { (k.func)(&a) };
        (t0.elapsed().as_secs_f64(), std::hint::black_box(r))
    };
    let reps = pinned::calibrate(opts.min_sample.as_secs_f64(), 1000, stop, |r| call(r).0)?;
    let bytes = reps * k.granule as u64;
    let before = noise::snapshot();
    let mut samples = Vec::with_capacity(opts.samples);
    let mut checksum = 0;
    for _ in 0..opts.samples.max(1) {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(crate::measure::Interrupted);
        }
        let (secs, r) = call(reps);
        checksum = r;
        samples.push(Sample {
            seconds: secs,
            bytes,
        });
    }
    let noise = noise::since(before);
    let rates = crate::measure::gbps(&samples);
    let g = stats::summarize(&rates, true);
    let per_instr = (k.width_bits / 8).max(1) as u64;
    let instrs = k.granule as u64 / per_instr;
    let mut r = Record {
        suite: "regs".into(),
        kernel: k.name.into(),
        op: k.op.name().into(),
        width_bits: Some(k.width_bits),
        nontemporal: None,
        pattern: None,
        size_bytes: None,
        threads: 1,
        cpus: vec![cpu],
        regime: None,
        payload_bytes_per_pass: Some(k.granule as u64),
        reps_per_sample: Some(reps),
        samples,
        gbps: g,
        payload_gbps: g,
        noise,
        ..Record::default()
    };
    r.extra
        .insert("bytes_per_instruction".into(), json!(per_instr));
    r.extra
        .insert("instructions_per_iteration".into(), json!(instrs));
    r.extra.insert("checksum".into(), json!(checksum));
    if let (Some(hz), Some(s)) = (host.clock_hz, g) {
        let bpc = s.best * 1e9 / hz;
        r.extra.insert("bytes_per_cycle".into(), json!(bpc));
        r.extra.insert(
            "instructions_per_cycle".into(),
            json!(bpc / per_instr as f64),
        );
    }
    r.warnings = pinned::spread_warnings(r.gbps.as_ref(), true);
    r.warnings.extend(pinned::noise_warnings(&r));
    Ok(r)
}

/// `bwscope regs`.
pub fn command(a: &RegsArgs, out: &OutputArgs) -> anyhow::Result<u8> {
    let host = crate::platform::detect_host(true);
    let plan = plan(a, &host)?;
    crate::commands::announce(&super::estimate::regs(&plan));
    let mut sink =
        crate::commands::start_run("regs", serde_json::to_value(&plan)?, out, host.clone())?;
    let stop = crate::util::signal::install();
    let opts = SampleOpts {
        samples: plan.samples,
        min_sample: Duration::from_secs_f64(plan.min_sample_ms / 1000.0),
    };
    let mut interrupted = false;
    let flag = &mut interrupted;
    let (h, p) = (&host, &plan);
    pinned::run_on_cpu(plan.cpu, &mut sink, plan.kernels.len() as u64, move |tx| {
        for &k in &p.kernels {
            let rec = match k.skip_reason(&h.features) {
                Some(reason) => Record::skipped("regs", k.name, reason),
                None => match measure_kernel(k, h, p.cpu, &opts, stop) {
                    Ok(r) => r,
                    Err(_) => {
                        *flag = true;
                        return Ok(());
                    }
                },
            };
            if tx.send(rec).is_err() {
                return Ok(());
            }
        }
        Ok(())
    })?;
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
