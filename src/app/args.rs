//! From flags to suite options: parse the strings (sizes, lists) with
//! errors that name the flag, and map clap's enums onto the suites' own.
//! Suites never see clap; the survey and fleet build the same options
//! directly.

use crate::cli::{
    BackendArg, CacheArgs, ContendArgs, CoresArgs, LatencyArgs, MemoryArg, MemtypeArgs,
    NetDirectionArg, NetModeArg, NetRunArgs, NumaArgs, PagesArg, PlacementArg, ProbeArg, RegsArgs,
    SampleArgs, ThreadsArgs, TransferArgs,
};
use crate::error::UserError;
use crate::memory::PageKind;
use crate::net::protocol::{Mode, Way};
use crate::plan::cpus::Placement;
use crate::suites::cache::CacheOptions;
use crate::suites::contend::{BystanderKind, ContendOptions};
use crate::suites::latency::{LatencyOptions, Pages, View};
use crate::suites::memtype::MemtypeOptions;
use crate::suites::net::NetOptions;
use crate::suites::numa::{NumaOptions, Probe};
use crate::suites::regs::RegsOptions;
use crate::suites::threads::ThreadsOptions;
use crate::suites::transfer::{BackendChoice, TransferOptions};
use crate::suites::Sampling;
use crate::util::units;

fn sizes(flag: &'static str, text: Option<&str>) -> Result<Option<Vec<u64>>, UserError> {
    text.map(|s| units::parse_size_list(s).map_err(|e| UserError::flag(flag, e.to_string())))
        .transpose()
}

fn size(flag: &'static str, text: Option<&str>) -> Result<Option<u64>, UserError> {
    text.map(|s| units::parse_size(s).map_err(|e| UserError::flag(flag, e.to_string())))
        .transpose()
}

fn sampling(s: &SampleArgs) -> Sampling {
    Sampling {
        samples: s.samples,
        min_sample_ms: s.min_sample_ms,
    }
}

fn memory(m: MemoryArg) -> PageKind {
    let kind = match m {
        MemoryArg::Thp => PageKind::Thp,
        MemoryArg::Regular => PageKind::Regular,
        MemoryArg::Nohuge => PageKind::NoHuge,
        MemoryArg::Hugetlb2M => PageKind::Hugetlb2M,
        MemoryArg::Hugetlb1G => PageKind::Hugetlb1G,
        MemoryArg::Locked => PageKind::Locked,
    };
    kind.available()
}

pub fn cache(a: &CacheArgs) -> Result<CacheOptions, UserError> {
    Ok(CacheOptions {
        kernel: a.kernel.clone(),
        sizes: sizes("--sizes", a.sizes.as_deref())?,
        threads: a.threads,
        cpus: a.cpus.clone(),
        quick: a.quick,
        memory: memory(a.memory),
        first_use: a.first_use,
        pattern: a.pattern.clone(),
        sampling: sampling(&a.sample),
    })
}

pub fn cores(a: &CoresArgs) -> Result<crate::suites::cores::CoresOptions, UserError> {
    use crate::model::detail::Exchange;
    let pair = match &a.pair {
        None => None,
        Some(p) => {
            let v: Vec<u32> = p
                .split(',')
                .map(|x| x.trim().parse::<u32>())
                .collect::<Result<_, _>>()
                .ok()
                .filter(|v: &Vec<u32>| v.len() == 2)
                .ok_or_else(|| {
                    UserError::flag(
                        "--pair",
                        format!("'{p}' is not two cpu numbers: use e.g. 0,1"),
                    )
                })?;
            Some([v[0], v[1]])
        }
    };
    let exchanges = match &a.exchange {
        None => None,
        Some(list) => Some(
            list.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|x| {
                    Exchange::parse(x).ok_or_else(|| {
                        UserError::flag(
                            "--exchange",
                            format!("unknown exchange '{x}': use cas, hit, hitm or a list like cas,hitm"),
                        )
                    })
                })
                .collect::<Result<Vec<Exchange>, UserError>>()?,
        ),
    };
    Ok(crate::suites::cores::CoresOptions {
        cpus: a.cpus.clone(),
        pair,
        all_pairs: a.all_pairs,
        exchanges,
        per_class: a.per_class,
        budget_s: a.budget,
        fairness: a.fairness,
        seed: a.seed,
        quick: false,
        sampling: sampling(&a.sample),
    })
}

pub fn latency(a: &LatencyArgs) -> Result<LatencyOptions, UserError> {
    let views = match &a.view {
        None => None,
        Some(list) => Some(
            list.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|v| {
                    View::parse(v).ok_or_else(|| {
                        UserError::flag(
                            "--view",
                            format!("unknown view '{v}': use random, window, stride or a list like random,window"),
                        )
                    })
                })
                .collect::<Result<Vec<View>, UserError>>()?,
        ),
    };
    let stride = match &a.stride {
        // An unreadable stride is "not a positive multiple of 8" too.
        Some(s) => Some(units::parse_size(s).map_err(|_| {
            UserError::flag(
                "--stride",
                format!("'{s}' is not a positive multiple of 8 bytes (one pointer per node): use e.g. 64, 128 or 4KiB"),
            )
        })?),
        None => None,
    };
    Ok(LatencyOptions {
        sizes: sizes("--sizes", a.sizes.as_deref())?,
        pages: a
            .pages
            .iter()
            .map(|p| match p {
                PagesArg::Small => Pages::Small,
                PagesArg::Thp => Pages::Thp,
                PagesArg::Hugetlb => Pages::Hugetlb,
            })
            .collect(),
        views,
        window: size("--window", a.window.as_deref())?,
        stride,
        cpu: a.cpu,
        quick: a.quick,
        sampling: sampling(&a.sample),
    })
}

pub fn regs(a: &RegsArgs) -> RegsOptions {
    RegsOptions {
        kernel: a.kernel.clone(),
        cpu: a.cpu,
        sampling: sampling(&a.sample),
    }
}

pub fn threads(a: &ThreadsArgs) -> Result<ThreadsOptions, UserError> {
    let counts = match &a.counts {
        None => None,
        Some(list) => Some(
            list.split(',')
                .filter(|s| !s.trim().is_empty())
                .map(|s| s.trim().parse::<usize>())
                .collect::<Result<Vec<usize>, _>>()
                .map_err(|_| {
                    UserError::flag(
                        "--counts",
                        format!(
                            "'{}' is not a list of thread counts: write e.g. 1,2,4",
                            list
                        ),
                    )
                })?,
        ),
    };
    Ok(ThreadsOptions {
        kernel: a.kernel.clone(),
        sizes: sizes("--sizes", a.sizes.as_deref())?,
        threads: a.threads,
        counts,
        cpus: a.cpus.clone(),
        placement: match a.placement {
            PlacementArg::Compact => Placement::Compact,
            PlacementArg::Scatter => Placement::Scatter,
        },
        smt: a.smt,
        shared: a.shared,
        oversubscribe: a.oversubscribe,
        processes: a.processes,
        memory: memory(a.memory),
        sampling: sampling(&a.sample),
    })
}

pub fn numa(a: &NumaArgs) -> Result<NumaOptions, UserError> {
    Ok(NumaOptions {
        cpu_nodes: a.cpu_nodes.clone(),
        memory_nodes: a.memory_nodes.clone(),
        threads: a.threads,
        cpus: a.cpus.clone(),
        size: size("--size", a.size.as_deref())?,
        mix: a.mix.clone(),
        roles: a.roles.clone(),
        no_latency: a.no_latency,
        write_pair: a.scenario.is_some(),
        load: a.load.clone(),
        delays: a.delays.clone(),
        load_mix: a.load_mix.clone(),
        probe: match a.probe {
            ProbeArg::Latency => Probe::Latency,
            ProbeArg::Bandwidth => Probe::Bandwidth,
        },
        probe_cpu: a.probe_cpu,
        oversubscribe: a.oversubscribe,
        memory: memory(a.memory),
        tiers: a.tiers,
        interleave: a.interleave.clone(),
        sampling: sampling(&a.sample),
    })
}

pub fn memtype(a: &MemtypeArgs) -> Result<MemtypeOptions, UserError> {
    Ok(MemtypeOptions {
        kinds: a
            .kinds
            .as_ref()
            .map(|k| k.split(',').map(|s| s.trim().to_string()).collect()),
        size: size("--size", a.size.as_deref())?,
        passes: a.passes,
        read_passes: a.read_passes,
        kernel: a.kernel.clone(),
        cpu: a.cpu,
        device_mem: a.device_mem.clone(),
        allow_device_writes: a.allow_device_writes,
    })
}

pub fn transfer(a: &TransferArgs) -> Result<TransferOptions, UserError> {
    Ok(TransferOptions {
        backend: match a.backend {
            BackendArg::Auto => BackendChoice::Auto,
            BackendArg::Cuda => BackendChoice::Cuda,
            BackendArg::Opencl => BackendChoice::Opencl,
        },
        device: a.device,
        kinds: a.kinds.clone(),
        directions: a.directions.clone(),
        sizes: sizes("--sizes", a.sizes.as_deref())?,
        no_verify: a.no_verify,
        host_node: a.host_node,
        sampling: sampling(&a.sample),
    })
}

pub fn net(a: &NetRunArgs) -> Result<NetOptions, UserError> {
    Ok(NetOptions {
        host: a.host.clone(),
        port: a.port,
        mode: match a.mode {
            NetModeArg::Rr => Mode::Rr,
            NetModeArg::Stream => Mode::Stream,
        },
        direction: match a.direction {
            NetDirectionArg::Send => Way::Send,
            NetDirectionArg::Recv => Way::Recv,
            NetDirectionArg::Bidir => Way::Bidir,
        },
        streams: a.streams,
        chunks: sizes("--chunk", a.chunk.as_deref())?,
        time: a.time,
        bytes: size("--bytes", a.bytes.as_deref())?,
        omit: a.omit,
        interval_ms: a.interval_ms,
        token_file: a.token_file.clone(),
        timeout: a.timeout,
    })
}

pub fn contend(a: &ContendArgs) -> Result<ContendOptions, UserError> {
    Ok(ContendOptions {
        cpu: a.cpu.clone(),
        device: a.device.clone(),
        net: a.net.clone(),
        bystander: a.bystander.map(|p| match p {
            ProbeArg::Latency => BystanderKind::Latency,
            ProbeArg::Bandwidth => BystanderKind::Bandwidth,
        }),
        bystander_cpu: a.bystander_cpu,
        phases: a.phases.clone(),
        size: size("--size", a.size.as_deref())?,
        device_size: size("--device-size", a.device_size.as_deref())?,
        memory: memory(a.memory),
        sampling: sampling(&a.sample),
        token_file: a.token_file.clone(),
    })
}
