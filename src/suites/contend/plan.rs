//! Planning a contend run: every agent parsed and checked against this
//! machine before anything runs (a cpu two agents claim, a node without
//! memory, a device that does not exist, an unreachable transponder: a
//! one-line error naming the flag), the phases, the window.

use std::sync::Arc;
use std::time::Duration;

use super::agents::AgentId;
use super::net::NetAgent;
use super::team::CpuAgent;
use super::*;
use crate::error::UserError;
use crate::measure::SampleOpts;
use crate::transfer::{self, Opened};
use crate::util::cpulist::format_cpu_list;

/// The smallest CPU working set per thread: well past the caches of a
/// small machine, so a team streams from DRAM.
const MIN_CPU_BYTES: u64 = 32 << 20;
/// A device agent's copy size by default: the bandwidth end of the
/// transfer sweep's useful range, small enough for any device.
const DEVICE_BYTES: u64 = 64 << 20;
/// How long the plan waits for a transponder to answer.
const CONNECT: Duration = Duration::from_secs(3);

/// The plan for `o` on `host`.
pub fn plan(o: &ContendOptions, host: &Host) -> Result<ContendPlan, UserError> {
    let mut notes = Vec::new();
    let mut used: Vec<(u32, String)> = Vec::new();
    let given = !(o.cpu.is_empty() && o.device.is_empty() && o.net.is_empty());
    let mut agents = Vec::new();
    let mut skipped = Vec::new();
    let llc = host
        .llc_size(crate::model::Curve::Bandwidth)
        .unwrap_or(32 << 20);
    if given {
        for (i, spec) in o.cpu.iter().enumerate() {
            let name = format!("cpu{i}");
            agents.push(cpu_agent(host, o, spec, name, &mut used, llc)?);
        }
    } else {
        let a = default_team(host, o, llc, &mut notes)?;
        used.extend(a.cpus().iter().map(|&c| (c, a.name().to_string())));
        agents.push(a);
    }
    let probe = bystander_plan(host, o, &used, llc)?;
    let devices: Vec<String> = if given {
        o.device.clone()
    } else {
        default_devices(&mut notes)
    };
    for (i, spec) in devices.iter().enumerate() {
        let name = format!("dev{i}");
        match device::plan_agent(spec, name.clone(), o.device_size.unwrap_or(DEVICE_BYTES))? {
            Ok(a) => agents.push(a),
            Err(why) => skipped.push((name, spec.clone(), why)),
        }
    }
    let nets: Vec<String> = if given {
        o.net.clone()
    } else {
        notes.push("net0: a loopback TCP flow (this process is both ends)".into());
        vec!["loopback".into()]
    };
    for (i, spec) in nets.iter().enumerate() {
        agents.push(net_agent(spec, format!("net{i}"))?);
    }
    // Only devices were given and none can run here (no CUDA, no OpenCL):
    // their skipped records are the run, as `transfer` without a device
    // is, not a usage error.
    let phases = if agents.is_empty() && probe.is_none() && !skipped.is_empty() {
        Vec::new()
    } else {
        phases(o.phases.as_deref(), &agents, probe.is_some())?
    };
    let s = o
        .sampling
        .resolve(SampleOpts::new(DEFAULT_SLICES, DEFAULT_SLICE_MS))?;
    let window = s.samples as f64 * s.min_sample.as_secs_f64();
    if window > 60.0 {
        return Err(UserError::flag(
            "--samples",
            format!(
                "the window is --samples × --min-sample-ms = {window:.1} s; keep it at most 60 s"
            ),
        ));
    }
    super::agents::check_slices(s.min_sample)?;
    let need = |dev: bool| -> u64 {
        agents
            .iter()
            .map(|a| a.footprint())
            .map(|f| if dev { f.copies } else { f.host })
            .fold(0u64, u64::saturating_add)
    };
    // The flag named is the one whose memory is the larger part: a
    // `--device-size 1TiB` was refused as `--size`.
    let (cpu, dev) = (need(false), need(true));
    let (flag, hint) = if dev > cpu {
        ("--device-size", "give a smaller --device-size or fewer devices")
    } else {
        ("--size", "give a smaller --size or fewer agents")
    };
    super::super::check_memory(cpu.saturating_add(dev), flag, hint)?;
    for (name, spec, why) in &skipped {
        notes.push(format!("{name} ({spec}) skipped: {why}"));
    }
    Ok(ContendPlan {
        agents,
        bystander: probe,
        phases,
        warmup_seconds: WARMUP.as_secs_f64(),
        slices: s.samples,
        slice_seconds: s.min_sample.as_secs_f64(),
        memory: o.memory,
        dram_peak_gbps: host.dram.as_ref().and_then(|d| d.peak_gbps),
        notes,
        skipped,
        token: o
            .token_file
            .as_deref()
            .map(crate::net::token::read)
            .transpose()?,
    })
}

/// `N@NODE[:MIX]` or `cpus:LIST[:MIX]`, on cpus no earlier agent uses.
fn cpu_agent(
    host: &Host,
    o: &ContendOptions,
    spec: &str,
    name: String,
    used: &mut Vec<(u32, String)>,
    llc: u64,
) -> Result<Agent, UserError> {
    let flag = "--cpu";
    let s = spec.trim();
    let (team, mix) = match s.strip_prefix("cpus:") {
        Some(rest) => match rest.split_once(':') {
            Some((l, m)) => (format!("cpus:{l}"), Some(m)),
            None => (s.to_string(), None),
        },
        None => match s.split_once(':') {
            Some((t, m)) => (t.to_string(), Some(m)),
            None => (s.to_string(), None),
        },
    };
    let work = match mix.map(str::trim) {
        None | Some("") => CpuWork::Mix(Mix::READ),
        Some("copy") => CpuWork::Copy,
        Some(m) => {
            CpuWork::Mix(Mix::parse(m).map_err(|e| UserError::flag(flag, format!("{e}, or copy")))?)
        }
    };
    let explicit = team.starts_with("cpus:");
    let (mut cpus, _) = crate::suites::numa::parse_team(host, &team, true, flag)?;
    let node = (!explicit).then(|| node_of(host, cpus[0]));
    if let Some(node) = node {
        // N@NODE: the first free cpus of the node.
        let n = cpus.len();
        let free: Vec<u32> = node_cpus(host, node)
            .into_iter()
            .filter(|c| !used.iter().any(|u| u.0 == *c))
            .collect();
        if n > free.len() {
            return Err(UserError::flag(
                flag,
                format!(
                    "'{s}' needs {n} cpu(s) of node {node} but {} of them {} free{}",
                    free.len(),
                    if free.len() == 1 { "is" } else { "are" },
                    taken_by(used)
                ),
            ));
        }
        cpus = free[..n].to_vec();
        no_memory(host, node)?;
    }
    for c in &cpus {
        if let Some((_, other)) = used.iter().find(|u| u.0 == *c) {
            return Err(UserError::flag(
                flag,
                format!(
                    "cpu {c} of '{s}' is already used by {other}: give each agent its own cpus"
                ),
            ));
        }
    }
    used.extend(cpus.iter().map(|&c| (c, name.clone())));
    let bytes = o
        .size
        .unwrap_or_else(|| (4 * llc / cpus.len() as u64).max(MIN_CPU_BYTES));
    if bytes < 1 << 20 {
        return Err(UserError::flag("--size", "give at least 1MiB per thread"));
    }
    if let Some(node) = node {
        crate::memory::numa::check_node_room(node, bytes * cpus.len() as u64)
            .map_err(|m| UserError::flag(flag, m))?;
    }
    Ok(Arc::new(CpuAgent {
        id: AgentId {
            name,
            spec: format!("{}:{}", team_desc(&cpus, node), work.name()),
        },
        cpus,
        memory_node: node,
        work,
        bytes_per_thread: bytes,
    }))
}

fn team_desc(cpus: &[u32], node: Option<u32>) -> String {
    match node {
        Some(n) => format!("{}@node{n}", cpus.len()),
        None => format!("cpus:{}", format_cpu_list(cpus)),
    }
}

/// A node whose memory the system says is none.
fn no_memory(host: &Host, node: u32) -> Result<(), UserError> {
    match host.nodes.iter().find(|n| n.id == node) {
        Some(n) if n.memory_bytes == Some(0) => Err(UserError::flag(
            "--cpu",
            format!("node {node} has no memory: bind the team to a node with memory"),
        )),
        _ => Ok(()),
    }
}

/// `(cpus 0-1 are taken by cpu0)`.
fn taken_by(used: &[(u32, String)]) -> String {
    if used.is_empty() {
        return String::new();
    }
    let mut names: Vec<&str> = used.iter().map(|u| u.1.as_str()).collect();
    names.dedup();
    let mut cpus: Vec<u32> = used.iter().map(|u| u.0).collect();
    cpus.sort_unstable();
    format!(
        " (cpus {} are taken by {})",
        format_cpu_list(&cpus),
        names.join(", ")
    )
}

fn node_of(host: &Host, cpu: u32) -> u32 {
    host.cpus.iter().find(|c| c.id == cpu).map_or(0, |c| c.node)
}

/// Allowed cpus of `node`, one per physical core first.
fn node_cpus(host: &Host, node: u32) -> Vec<u32> {
    let order = super::super::default_cpu_order(host);
    let mut v: Vec<u32> = order
        .into_iter()
        .filter(|c| node_of(host, *c) == node)
        .collect();
    for c in &host.allowed_cpus {
        if node_of(host, *c) == node && !v.contains(c) {
            v.push(*c);
        }
    }
    v
}

/// With no agents given: one read team on every physical core (less one
/// for the probe).
fn default_team(
    host: &Host,
    o: &ContendOptions,
    llc: u64,
    notes: &mut Vec<String>,
) -> Result<Agent, UserError> {
    let mut cpus = super::super::default_cpu_order(host);
    if o.bystander.is_some() && cpus.len() > 1 {
        let keep = o.bystander_cpu.unwrap_or(*cpus.last().expect("non-empty"));
        cpus.retain(|&c| c != keep);
    }
    if cpus.is_empty() {
        return Err(UserError::flag("--cpu", "no cpu is free for a team"));
    }
    notes.push(format!(
        "cpu0: a read team on cpus {} (one per physical core)",
        format_cpu_list(&cpus)
    ));
    let bytes = o
        .size
        .unwrap_or_else(|| (4 * llc / cpus.len() as u64).max(MIN_CPU_BYTES));
    Ok(Arc::new(CpuAgent {
        id: AgentId {
            name: "cpu0".into(),
            spec: format!("cpus:{}:read", format_cpu_list(&cpus)),
        },
        cpus,
        memory_node: None,
        work: CpuWork::Mix(Mix::READ),
        bytes_per_thread: bytes,
    }))
}

/// Every CUDA device (h2d, pinned); OpenCL devices only where CUDA has
/// none (a GPU shows up under both).
fn default_devices(notes: &mut Vec<String>) -> Vec<String> {
    for (api, what) in [
        (Api::Cuda, "h2d:pinned"),
        (Api::Opencl, "h2d:alloc-host-ptr"),
    ] {
        if let Opened::BadIndex(e) = transfer::open(api, usize::MAX) {
            if e.count > 0 {
                notes.push(format!(
                    "devices: every {} device ({}), copying {what}",
                    api.name(),
                    e.names.join(", ")
                ));
                return (0..e.count)
                    .map(|i| format!("{}{}:{what}", api.name(), i))
                    .collect();
            }
        }
    }
    notes.push("devices: none found (no CUDA or OpenCL device here)".into());
    Vec::new()
}

/// `--bystander`: on `--bystander-cpu` or the first allowed cpu no agent uses.
fn bystander_plan(
    host: &Host,
    o: &ContendOptions,
    used: &[(u32, String)],
    llc: u64,
) -> Result<Option<BystanderPlan>, UserError> {
    let Some(kind) = o.bystander else {
        if o.bystander_cpu.is_some() {
            return Err(UserError::flag("--bystander-cpu", "needs --bystander"));
        }
        return Ok(None);
    };
    let cpu = match o.bystander_cpu {
        Some(c) => {
            crate::plan::cpus::resolve_cpu(host, Some(c))?;
            if let Some((_, other)) = used.iter().find(|u| u.0 == c) {
                return Err(UserError::flag(
                    "--bystander-cpu",
                    format!("cpu {c} is already used by {other}: the probe needs a cpu of its own"),
                ));
            }
            c
        }
        None => *host
            .allowed_cpus
            .iter()
            .find(|c| !used.iter().any(|u| u.0 == **c))
            .ok_or_else(|| {
                UserError::flag(
                    "--bystander",
                    format!(
                        "no cpu is free for the bystander: {} cpus here, 0 free{}; give the teams fewer cpus",
                        host.allowed_cpus.len(),
                        taken_by(used)
                    ),
                )
            })?,
    };
    Ok(Some(BystanderPlan {
        kind,
        cpu,
        bytes: (2 * llc).max(MIN_CPU_BYTES),
    }))
}

/// `loopback`, or `HOST[:PORT][:send|recv]` (a `bwscope net serve`),
/// reached before anything runs.
fn net_agent(spec: &str, name: String) -> Result<Agent, UserError> {
    let flag = "--net";
    let s = spec.trim();
    if s == "loopback" || s == "lo" {
        return Ok(Arc::new(NetAgent {
            id: AgentId {
                name,
                spec: "loopback".into(),
            },
            target: NetTarget::Loopback,
        }));
    }
    let (host, send) = match s.rsplit_once(':') {
        Some((h, "send")) => (h, true),
        Some((h, "recv")) => (h, false),
        _ => (s, false),
    };
    let addr = super::super::net::resolve_peer(host, None).map_err(|e| {
        UserError::flag(
            flag,
            e.to_string()
                .trim_start_matches("HOST[:PORT]: ")
                .to_string(),
        )
    })?;
    std::net::TcpStream::connect_timeout(&addr, CONNECT).map_err(|e| {
        UserError::flag(
            flag,
            format!("cannot reach the transponder at {addr} ({e}): is `bwscope net serve` running there?"),
        )
    })?;
    Ok(Arc::new(NetAgent {
        id: AgentId {
            name,
            spec: format!("{addr}:{}", if send { "send" } else { "recv" }),
        },
        target: NetTarget::Remote { addr, send },
    }))
}

/// `--phases`: `alone`, `pairs`, `all`, `idle` (the probe alone) or agent
/// names joined by `+`; default every agent alone, every pair (with
/// three or more agents), all together.
fn phases(spec: Option<&str>, agents: &[Agent], probe: bool) -> Result<Vec<Phase>, UserError> {
    let flag = "--phases";
    let n = agents.len();
    if n == 0 && !probe {
        return Err(UserError::flag(
            "--cpu",
            "no agent can run here: give --cpu, --device, --net or --probe",
        ));
    }
    let default = if probe {
        "idle,alone,pairs,all"
    } else {
        "alone,pairs,all"
    };
    let mut out: Vec<Phase> = Vec::new();
    let mut add = |v: Vec<usize>| {
        if !out.iter().any(|p| p.agents == v) {
            let name = if v.is_empty() {
                "idle".to_string()
            } else {
                v.iter()
                    .map(|&i| agents[i].name())
                    .collect::<Vec<_>>()
                    .join("+")
            };
            out.push(Phase { name, agents: v });
        }
    };
    for item in spec.unwrap_or(default).split(',').map(str::trim) {
        match item {
            "" => {}
            "idle" if probe => add(Vec::new()),
            "idle" => {
                return Err(UserError::flag(
                    flag,
                    "'idle' is the probe alone: add --probe",
                ))
            }
            "alone" => (0..n).for_each(|i| add(vec![i])),
            "pairs" if n > 2 => {
                for i in 0..n {
                    for j in i + 1..n {
                        add(vec![i, j]);
                    }
                }
            }
            "pairs" => {}
            "all" => {
                if n > 0 {
                    add((0..n).collect())
                }
            }
            group => {
                let mut v = Vec::new();
                for part in group.split('+').map(str::trim) {
                    let i = agents.iter().position(|a| a.name() == part).ok_or_else(|| {
                        UserError::flag(
                            flag,
                            format!(
                                "'{part}' is not an agent: write alone, pairs, all, idle or names like {} joined by +",
                                agents.iter().map(|a| a.name()).collect::<Vec<_>>().join(", ")
                            ),
                        )
                    })?;
                    if !v.contains(&i) {
                        v.push(i);
                    }
                }
                v.sort_unstable();
                add(v);
            }
        }
    }
    if out.is_empty() {
        return Err(UserError::flag(flag, "no phase to run"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(name: &str) -> Agent {
        Arc::new(NetAgent {
            id: AgentId {
                name: name.into(),
                spec: "loopback".into(),
            },
            target: NetTarget::Loopback,
        })
    }

    /// Node 0: cpus 0-1 and memory; node 1: cpus 2-3, no memory.
    fn cpu_only_node() -> Host {
        let mut h = Host::default();
        for id in 0..4u32 {
            h.cpus.push(crate::model::Cpu {
                id,
                core: id,
                package: 0,
                node: id / 2,
                siblings: vec![id],
            });
            h.allowed_cpus.push(id);
        }
        for n in 0..2u32 {
            h.nodes.push(crate::model::Node {
                id: n,
                cpus: vec![2 * n, 2 * n + 1],
                memory_bytes: Some(if n == 0 { 1 << 30 } else { 0 }),
                distances: vec![10, 20],
            });
        }
        h
    }

    #[test]
    fn teams_take_free_cpus_and_refuse_a_node_without_memory() {
        let h = cpu_only_node();
        let o = |cpu: &[&str], probe: bool| ContendOptions {
            cpu: cpu.iter().map(|s| s.to_string()).collect(),
            bystander: probe.then_some(BystanderKind::Latency),
            size: Some(1 << 20),
            phases: Some("all".into()),
            ..ContendOptions::default()
        };
        let e = plan(&o(&["1@1"], false), &h).unwrap_err().to_string();
        assert!(e.starts_with("--cpu: node 1 has no memory"), "{e}");
        // Two teams on node 0 get its two cpus; the probe the next free one.
        let p = plan(&o(&["1@0", "1@0:write"], true), &h).unwrap();
        let cpus: Vec<Vec<u32>> = p
            .agents
            .iter()
            .map(|a| a.cpus().to_vec())
            .collect();
        let mut all = cpus.concat();
        all.sort_unstable();
        assert_eq!((cpus.len(), all), (2, vec![0, 1]));
        assert_eq!(p.bystander.unwrap().cpu, 2);
        let e = plan(&o(&["2@0", "1@0"], false), &h)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("0 of them are free (cpus 0-1 are taken by cpu0)"),
            "{e}"
        );
        let e = plan(&o(&["cpus:0-3"], true), &h).unwrap_err().to_string();
        assert!(e.starts_with("--bystander: no cpu is free"), "{e}");
    }

    #[test]
    fn default_phases_are_alone_pairs_all() {
        let a = [cpu("cpu0"), cpu("dev0"), cpu("net0")];
        let p = phases(None, &a, false).unwrap();
        let names: Vec<&str> = p.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "cpu0",
                "dev0",
                "net0",
                "cpu0+dev0",
                "cpu0+net0",
                "dev0+net0",
                "cpu0+dev0+net0"
            ]
        );
        // Two agents: the pair is all.
        assert_eq!(phases(None, &a[..2], false).unwrap().len(), 3);
        let p = phases(Some("idle,net0+cpu0"), &a, true).unwrap();
        assert_eq!(p[0].name, "idle");
        assert_eq!(p[1].name, "cpu0+net0");
        let e = phases(Some("cpu9"), &a, false).unwrap_err().to_string();
        assert!(e.starts_with("--phases:"), "{e}");
        assert!(phases(Some("idle"), &a, false).is_err());
    }
}
