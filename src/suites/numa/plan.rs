//! Planning a NUMA run: nodes, the cpus of each cell, the size, and the
//! mode (matrix, write pair, loaded latency), checked against the machine.

use super::*;

/// Resolve and check the options against this machine.
pub fn plan(a: &NumaOptions, host: &Host) -> Result<NumaPlan, UserError> {
    let explicit_cpus = match &a.cpus {
        Some(list) => Some(crate::plan::cpus::parse_cpus(host, list, "--cpus")?),
        None => None,
    };
    let (mut cpu_nodes, memory_nodes) = nodes(a, host, explicit_cpus.as_deref())?;
    if a.write_pair {
        // The pair runs on node 0 (the first cpu node).
        cpu_nodes.truncate(1);
    }
    let cell_cpus = cpu_nodes
        .iter()
        .map(|&node| {
            Ok((
                node,
                cell(a, host, node, &cpu_nodes, explicit_cpus.as_deref())?,
            ))
        })
        .collect::<Result<Vec<_>, UserError>>()?;
    let size = size(a, host, &cell_cpus)?;
    let mode = if a.write_pair {
        Mode::WritePair
    } else if let Some(spec) = &a.load {
        load_mode(a, host, spec)?
    } else {
        matrix_mode(a, &cell_cpus)?
    };
    let tiers = super::tiers::plan_tiers(a, host, &cpu_nodes, &memory_nodes)?;
    // The load mode uses one memory node for probe and load alike.
    let memory_nodes = match &mode {
        Mode::Load { cpus, .. } => vec![load_memory_node(host, a, cpus)],
        _ => memory_nodes,
    };
    let threads_total = match &mode {
        Mode::Load { cpus, .. } => cpus.len() + 1,
        _ => cell_cpus.iter().map(|c| c.1.len()).max().unwrap_or(1) + 1,
    };
    super::super::check_memory(
        (size + (4 << 20)) * threads_total as u64,
        "--size",
        "use a smaller --size or fewer --threads",
    )?;
    let o = a.sampling.resolve(SampleOpts::default())?;
    Ok(NumaPlan {
        mode,
        cpu_nodes,
        memory_nodes,
        cell_cpus,
        size,
        samples: o.samples,
        min_sample_ms: o.min_sample.as_secs_f64() * 1000.0,
        memory: a.memory.available(),
        numa_balancing: host.env.numa_balancing,
        tiers,
    })
}

/// The cpu nodes (`--cpu-nodes`, else the nodes of `--cpus`, else every
/// node with cpus) and memory nodes (`--memory-nodes`, else every node
/// with memory), checked.
fn nodes(
    a: &NumaOptions,
    host: &Host,
    explicit_cpus: Option<&[u32]>,
) -> Result<(Vec<u32>, Vec<u32>), UserError> {
    let with_cpus: Vec<u32> = host
        .nodes
        .iter()
        .filter(|n| !node_cpus(host, n.id).is_empty())
        .map(|n| n.id)
        .collect();
    let with_memory: Vec<u32> = host
        .nodes
        .iter()
        .filter(|n| n.memory_bytes != Some(0))
        .map(|n| n.id)
        .collect();
    let cpu_nodes = match (&a.cpu_nodes, explicit_cpus) {
        (Some(s), _) => parse_nodes(host, s, "--cpu-nodes")?,
        (None, Some(c)) => {
            let mut v: Vec<u32> = c.iter().map(|&c| node_of(host, c)).collect();
            v.sort_unstable();
            v.dedup();
            v
        }
        (None, None) => with_cpus.clone(),
    };
    if let Some(bad) = cpu_nodes.iter().find(|n| !with_cpus.contains(n)) {
        return Err(UserError::flag(
            "--cpu-nodes",
            format!("node {} has no cpus this process may use", bad),
        ));
    }
    let memory_nodes = match &a.memory_nodes {
        Some(s) => parse_nodes(host, s, "--memory-nodes")?,
        None => with_memory,
    };
    if let Some(bad) = memory_nodes.iter().find(|n| {
        host.nodes
            .iter()
            .any(|x| x.id == **n && x.memory_bytes == Some(0))
    }) {
        return Err(UserError::flag(
            "--memory-nodes",
            format!("node {} has no memory", bad),
        ));
    }
    Ok((cpu_nodes, memory_nodes))
}

/// The cpus of a cell on cpu node `node`: `--cpus` (checked against the
/// node and `--threads`), else `--threads` (default: one per physical
/// core, 2 for the write pair) of the node's usable cpus.
fn cell(
    a: &NumaOptions,
    host: &Host,
    node: u32,
    cpu_nodes: &[u32],
    explicit_cpus: Option<&[u32]>,
) -> Result<Vec<u32>, UserError> {
    let avail = node_cpus(host, node);
    if let Some(c) = explicit_cpus {
        if let Some(bad) = c.iter().find(|&&x| node_of(host, x) != node) {
            if cpu_nodes.len() > 1 || a.cpu_nodes.is_some() {
                return Err(UserError::flag(
                    "--cpus",
                    format!(
                        "cpu {} is on node {}, not on cpu node {}: give cpus of one node",
                        bad,
                        node_of(host, *bad),
                        node
                    ),
                ));
            }
        }
        if let Some(t) = a.threads {
            if t != c.len() {
                return Err(UserError::flag(
                    "--threads",
                    format!(
                        "{} threads but --cpus names {} cpus: give one or make them agree",
                        t,
                        c.len()
                    ),
                ));
            }
        }
        return Ok(c.to_vec());
    }
    let default = if a.write_pair {
        2
    } else {
        physical_cores(host, node).max(1)
    };
    let n = a.threads.unwrap_or(default);
    if n == 0 {
        return Err(UserError::flag("--threads", "must be at least 1"));
    }
    if n <= avail.len() || a.oversubscribe {
        return Ok((0..n).map(|i| avail[i % avail.len()]).collect());
    }
    if a.write_pair && a.threads.is_none() {
        // The scenario records a skip instead (see run_pair).
        return Ok(avail);
    }
    Err(UserError::flag(
        "--threads",
        format!(
            "{} threads but node {} has {} usable cpus ({}); use at most {} or add --oversubscribe",
            n,
            node,
            avail.len(),
            crate::util::cpulist::format_cpu_list(&avail),
            avail.len()
        ),
    ))
}

/// Bytes per thread: `--size`, else DRAM-sized in aggregate without
/// growing with the thread count (the sweep's top size split over the
/// cell's threads, never below 64 MiB per thread).
fn size(a: &NumaOptions, host: &Host, cell_cpus: &[(u32, Vec<u32>)]) -> Result<u64, UserError> {
    let size = match a.size {
        Some(s) => s,
        None => {
            let threads = cell_cpus.iter().map(|c| c.1.len()).max().unwrap_or(1) as u64;
            (crate::plan::sizes::default_top(host, crate::model::Curve::Bandwidth) / threads)
                .max(64 << 20)
                / (2 << 20)
                * (2 << 20)
        }
    };
    if size < (2 * mix::CHUNK) as u64 {
        return Err(UserError::flag(
            "--size",
            format!(
                "must be at least {} per thread",
                format_bytes(2 * mix::CHUNK as u64)
            ),
        ));
    }
    Ok(size)
}

/// A list of mixes (`mlc`: MLC's default set).
fn parse_mixes(s: &str, flag: &'static str) -> Result<Vec<Mix>, UserError> {
    let s = if s.trim().eq_ignore_ascii_case("mlc") {
        mix::DEFAULT_MIXES
    } else {
        s
    };
    mix::parse_list(s).map_err(|m| UserError::flag(flag, m))
}

/// The loaded-latency curve of `--load SPEC`: its cpus, delays, mix and
/// the probe's cpu (`--probe-cpu`, else a free cpu on the memory node).
fn load_mode(a: &NumaOptions, host: &Host, spec: &str) -> Result<Mode, UserError> {
    let (cpus, description) = parse_load(host, spec, a.oversubscribe)?;
    let delays_ns = match &a.delays {
        Some(d) => d
            .split(',')
            .filter(|p| !p.trim().is_empty())
            .map(|p| p.trim().parse::<u64>().ok().filter(|&v| v <= 10_000_000))
            .collect::<Option<Vec<u64>>>()
            .filter(|v| !v.is_empty())
            .ok_or_else(|| UserError::flag("--delays", format!("'{}' is not a list of delays in ns (each ≤ 10000000): write e.g. 0,500,5000", d)))?,
        None => DEFAULT_DELAYS_NS.to_vec(),
    };
    let load_mix = match &a.load_mix {
        Some(m) => Mix::parse(m).map_err(|e| UserError::flag("--load-mix", e))?,
        None => Mix::READ,
    };
    let probe_cpu = match a.probe_cpu {
        Some(c) => {
            if !host.allowed_cpus.contains(&c) {
                return Err(UserError::flag(
                    "--probe-cpu",
                    format!("cpu {} is offline or not allowed for this process", c),
                ));
            }
            if cpus.contains(&c) {
                return Err(UserError::flag(
                    "--probe-cpu",
                    format!("cpu {} also runs a load thread: pick another", c),
                ));
            }
            c
        }
        None => {
            let mem_node = load_memory_node(host, a, &cpus);
            let mut pref = node_cpus(host, mem_node);
            pref.extend(host.allowed_cpus.iter().copied());
            pref.into_iter().find(|c| !cpus.contains(c)).ok_or_else(|| {
                UserError::flag("--load", "the load takes every cpu: leave one for the probe thread (fewer load threads)")
            })?
        }
    };
    Ok(Mode::Load {
        cpus,
        description,
        delays_ns,
        load_mix,
        probe_cpu,
        probe: a.probe,
    })
}

/// The matrix: `--mix` (default read) or `--roles` (one per thread of
/// every cell), and the chase latency unless `--no-latency`.
fn matrix_mode(a: &NumaOptions, cell_cpus: &[(u32, Vec<u32>)]) -> Result<Mode, UserError> {
    let roles = match &a.roles {
        Some(r) => {
            let v = parse_mixes(r, "--roles")?;
            for (_, cpus) in cell_cpus {
                if v.len() != cpus.len() {
                    return Err(UserError::flag(
                        "--roles",
                        format!("{} roles for {} threads per cell: give one role per thread (or set --threads)", v.len(), cpus.len()),
                    ));
                }
            }
            Some(v)
        }
        None => None,
    };
    let mixes = match &a.mix {
        Some(m) => parse_mixes(m, "--mix")?,
        None if a.tiers => parse_mixes(super::TIER_MIXES, "--mix")?,
        None => vec![Mix::READ],
    };
    Ok(Mode::Matrix {
        mixes,
        roles,
        latency: !a.no_latency,
    })
}

fn parse_nodes(host: &Host, s: &str, flag: &'static str) -> Result<Vec<u32>, UserError> {
    let mut ids: Vec<u32> = host.nodes.iter().map(|n| n.id).collect();
    ids.sort_unstable();
    // Named before the list is expanded (`0-999999999`).
    let bad = crate::util::cpulist::missing(s, &ids);
    let what = match bad.as_slice() {
        [] => None,
        [(a, b)] if a == b => Some(format!("node {a} does not exist")),
        _ => Some(format!(
            "nodes {} do not exist",
            crate::util::cpulist::format_ranges(&bad)
        )),
    };
    if let Some(what) = what {
        return Err(UserError::flag(
            flag,
            format!(
                "{what} (nodes here: {})",
                crate::util::cpulist::format_cpu_list(&ids)
            ),
        ));
    }
    let v = crate::util::cpulist::parse_cpu_list(s).ok_or_else(|| {
        UserError::flag(
            flag,
            format!("'{}' is not a node list: write e.g. 0,1 or 0-3", s),
        )
    })?;
    if v.is_empty() {
        return Err(UserError::flag(flag, "the list is empty"));
    }
    Ok(v)
}

/// Allowed cpus of `node`, one per physical core first, then SMT siblings.
fn node_cpus(host: &Host, node: u32) -> Vec<u32> {
    let mut primary = Vec::new();
    let mut secondary = Vec::new();
    let mut cores = Vec::new();
    for c in host
        .cpus
        .iter()
        .filter(|c| c.node == node && host.allowed_cpus.contains(&c.id))
    {
        if cores.contains(&(c.package, c.core)) {
            secondary.push(c.id);
        } else {
            cores.push((c.package, c.core));
            primary.push(c.id);
        }
    }
    primary.extend(secondary);
    primary
}

fn physical_cores(host: &Host, node: u32) -> usize {
    let mut cores: Vec<(u32, u32)> = host
        .cpus
        .iter()
        .filter(|c| c.node == node && host.allowed_cpus.contains(&c.id))
        .map(|c| (c.package, c.core))
        .collect();
    cores.sort_unstable();
    cores.dedup();
    cores.len()
}

pub(super) fn node_of(host: &Host, cpu: u32) -> u32 {
    host.cpus.iter().find(|c| c.id == cpu).map_or(0, |c| c.node)
}

/// Parse `N@K`, `N@nodeK` or `cpus:LIST` into load cpus.
fn parse_load(
    host: &Host,
    spec: &str,
    oversubscribe: bool,
) -> Result<(Vec<u32>, String), UserError> {
    parse_team(host, spec, oversubscribe, "--load")
}

/// The most threads an oversubscribed team may put on one cpu.
pub(crate) const MAX_THREADS_PER_CPU: usize = 8;

/// Parse a team given to `flag` as `N@K`, `N@nodeK` or `cpus:LIST` into
/// its cpus and the description records carry (`2@node0`, `cpus:0-1`).
pub(crate) fn parse_team(
    host: &Host,
    spec: &str,
    oversubscribe: bool,
    flag: &'static str,
) -> Result<(Vec<u32>, String), UserError> {
    let s = spec.trim();
    if let Some(list) = s.strip_prefix("cpus:") {
        let cpus = crate::plan::cpus::parse_cpus(host, list, flag)?;
        let d = format!("cpus:{}", crate::util::cpulist::format_cpu_list(&cpus));
        return Ok((cpus, d));
    }
    let bad = || {
        UserError::flag(
            flag,
            format!(
                "'{}' is not a team: write N@NODE (e.g. 2@0) or cpus:LIST (e.g. cpus:0-3)",
                s
            ),
        )
    };
    let (n, node) = s.split_once('@').ok_or_else(bad)?;
    let n: usize = n.trim().parse().map_err(|_| bad())?;
    let node: u32 = node
        .trim()
        .trim_start_matches("node")
        .parse()
        .map_err(|_| bad())?;
    if n == 0 {
        return Err(UserError::flag(flag, "needs at least 1 load thread"));
    }
    if !host.nodes.iter().any(|x| x.id == node) {
        let ids: Vec<u32> = host.nodes.iter().map(|n| n.id).collect();
        return Err(UserError::flag(
            flag,
            format!(
                "node {} does not exist (nodes here: {})",
                node,
                crate::util::cpulist::format_cpu_list(&ids)
            ),
        ));
    }
    let avail = node_cpus(host, node);
    if avail.is_empty() {
        return Err(UserError::flag(
            flag,
            format!("node {} has no cpus this process may use", node),
        ));
    }
    if n > avail.len() && !oversubscribe {
        return Err(UserError::flag(
            flag,
            format!(
                "{} threads but node {} has {} usable cpus; use at most {} or add --oversubscribe",
                n,
                node,
                avail.len(),
                avail.len()
            ),
        ));
    }
    // Checked before the list is built: `4294967295@0` asked for a 16 GB
    // vector and `18446744073709551615@0` panicked ("capacity overflow").
    let most = avail.len() * MAX_THREADS_PER_CPU;
    if n > most {
        return Err(UserError::flag(
            flag,
            format!(
                "{n} threads on node {node}'s {} usable cpus is more than {MAX_THREADS_PER_CPU} a cpu, which measures only the scheduler; use at most {most}",
                avail.len()
            ),
        ));
    }
    let cpus: Vec<u32> = (0..n).map(|i| avail[i % avail.len()]).collect();
    Ok((cpus, format!("{}@node{}", n, node)))
}

/// The memory node of a loaded-latency run: the first of --memory-nodes,
/// else the probe cpu's node, else the load's node (everything local, as
/// MLC's loaded latency).
fn load_memory_node(host: &Host, a: &NumaOptions, load_cpus: &[u32]) -> u32 {
    a.memory_nodes
        .as_deref()
        .and_then(crate::util::cpulist::parse_cpu_list)
        .and_then(|v| v.first().copied())
        .or_else(|| a.probe_cpu.map(|c| node_of(host, c)))
        .unwrap_or_else(|| node_of(host, load_cpus[0]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Cpu, Node};

    fn two_node_host() -> Host {
        let mut h = Host::default();
        for (id, node) in [(0u32, 0u32), (1, 0), (2, 1), (3, 1)] {
            h.cpus.push(Cpu {
                id,
                core: id,
                package: node,
                node,
                siblings: vec![id],
            });
            h.allowed_cpus.push(id);
        }
        for n in 0..2u32 {
            h.nodes.push(Node {
                id: n,
                cpus: vec![2 * n, 2 * n + 1],
                memory_bytes: Some(1 << 30),
                distances: if n == 0 { vec![10, 20] } else { vec![20, 10] },
            });
        }
        h
    }

    /// The numa view reads the stored plan through
    /// `model::options::Numa`: a renamed field fails here.
    #[test]
    fn the_view_reads_what_the_plan_stores() {
        use crate::model::options::{Numa, NumaModeKind};
        use crate::suites::Suite;
        let h = two_node_host();
        let read = |a: NumaOptions| -> Numa {
            let p = plan(&a, &h).unwrap();
            serde_json::from_value(Suite::options(&p)).unwrap()
        };
        let m = read(NumaOptions::default());
        assert_eq!(m.mode.mode, NumaModeKind::Matrix);
        assert_eq!((m.cpu_nodes, m.memory_nodes), (vec![0, 1], vec![0, 1]));
        assert!(m.tiers.is_none());
        let l = read(NumaOptions {
            load: Some("1@node1".into()),
            ..Default::default()
        });
        assert_eq!(l.mode.mode, NumaModeKind::Load);
        assert_eq!(l.mode.description.as_deref(), Some("1@node1"));
        assert!(l.mode.probe_cpu.is_some());
        let w = read(NumaOptions {
            write_pair: true,
            oversubscribe: true,
            ..Default::default()
        });
        assert_eq!(w.mode.mode, NumaModeKind::WritePair);
        let t = read(NumaOptions {
            tiers: true,
            ..Default::default()
        });
        assert_eq!(t.tiers.and_then(|t| t.matrix), Some(true));
    }

    #[test]
    fn load_specs() {
        let h = two_node_host();
        assert_eq!(parse_load(&h, "2@1", false).unwrap().0, vec![2, 3]);
        assert_eq!(parse_load(&h, "1@node0", false).unwrap().1, "1@node0");
        assert_eq!(parse_load(&h, "cpus:1-2", false).unwrap().0, vec![1, 2]);
        assert!(parse_load(&h, "3@1", false)
            .unwrap_err()
            .to_string()
            .contains("--oversubscribe"));
        assert_eq!(parse_load(&h, "3@1", true).unwrap().0, vec![2, 3, 2]);
        for bad in ["2", "x@1", "0@0", "1@7", "cpus:9"] {
            let e = parse_load(&h, bad, false).unwrap_err().to_string();
            assert!(e.starts_with("--load:"), "{bad}: {e}");
        }
    }

    #[test]
    fn node_lists_are_checked() {
        let h = two_node_host();
        assert_eq!(parse_nodes(&h, "0-1", "--cpu-nodes").unwrap(), vec![0, 1]);
        let e = parse_nodes(&h, "3", "--memory-nodes")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--memory-nodes") && e.contains("node 3 does not exist"),
            "{e}"
        );
        assert_eq!(node_cpus(&h, 1), vec![2, 3]);
    }
}
