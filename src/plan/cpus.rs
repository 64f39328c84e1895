//! Which cpus a suite runs on, and whether its memory fits.

use crate::error::UserError;
use crate::model::Host;
use crate::util::cpulist::{format_cpu_list, parse_cpu_list};

/// How threads are added to the team.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Placement {
    /// Fill one node (and, with SMT, one core) before the next.
    #[default]
    Compact,
    /// Round-robin over nodes and packages.
    Scatter,
}

/// Cpus in the default placement order: one per physical core (its first
/// allowed sibling), highest core first so a single thread avoids cpu 0,
/// which takes most interrupts; then the remaining SMT siblings.
pub fn default_cpu_order(host: &Host) -> Vec<u32> {
    let allowed = &host.allowed_cpus;
    let mut primary = Vec::new();
    let mut secondary = Vec::new();
    let mut seen_cores = Vec::new();
    for c in host.cpus.iter().filter(|c| allowed.contains(&c.id)) {
        let key = (c.package, c.core);
        if seen_cores.contains(&key) {
            secondary.push(c.id);
        } else {
            seen_cores.push(key);
            primary.push(c.id);
        }
    }
    if primary.is_empty() {
        primary = allowed.clone();
    }
    primary.reverse();
    primary.extend(secondary);
    primary
}

/// `kind:ID` in a `--cpus` flag: the allowed cpus of that kind of core
/// (`host.arm.core_kinds[].id`, listed by `bwscope info`), in order; None
/// when `spec` is a plain cpu list.
pub fn kind_cpus(
    host: &Host,
    spec: &str,
    flag: &'static str,
) -> Option<Result<Vec<u32>, UserError>> {
    let id = spec.trim().strip_prefix("kind:")?.trim();
    let kinds = host.arm.as_ref().map(|a| &a.core_kinds[..]).unwrap_or(&[]);
    let ids = || {
        kinds
            .iter()
            .map(|k| format!("kind:{}", k.id))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(kind) = kinds.iter().find(|k| k.id.eq_ignore_ascii_case(id)) else {
        let msg = if kinds.is_empty() {
            format!("'{spec}': no kinds of core are known on this machine (they come from ARM MIDRs); give cpu numbers, e.g. 0,2,4-7")
        } else {
            format!(
                "'{spec}' names no kind of core here; this machine has {}",
                ids()
            )
        };
        return Some(Err(UserError::flag(flag, msg)));
    };
    let cpus: Vec<u32> = kind
        .cpus
        .iter()
        .copied()
        .filter(|c| host.allowed_cpus.contains(c))
        .collect();
    if cpus.is_empty() {
        return Some(Err(UserError::flag(
            flag,
            format!(
                "no cpu of kind {} ({}) is allowed for this process (allowed: {})",
                kind.id,
                format_cpu_list(&kind.cpus),
                format_cpu_list(&host.allowed_cpus)
            ),
        )));
    }
    Some(Ok(cpus))
}

/// The cpus a team runs on, from `--threads` and `--cpus` (a list, or
/// `kind:ID`: that kind's cpus, the first `--threads` of them if given).
pub fn resolve_cpus(
    host: &Host,
    threads: Option<usize>,
    cpus: Option<&str>,
) -> Result<Vec<u32>, UserError> {
    if let Some(all) = cpus.and_then(|spec| kind_cpus(host, spec, "--cpus")) {
        let all = all?;
        return match threads {
            None => Ok(all),
            Some(0) => Err(UserError::flag("--threads", "must be at least 1")),
            Some(t) if t <= all.len() => Ok(all[..t].to_vec()),
            Some(t) => Err(UserError::flag(
                "--threads",
                format!(
                    "{t} threads but --cpus {} names {} cpus ({}); use at most {}",
                    cpus.unwrap_or_default(),
                    all.len(),
                    format_cpu_list(&all),
                    all.len()
                ),
            )),
        };
    }
    if let Some(list) = cpus {
        not_allowed(host, list, "--cpus")?;
        let parsed = parse_cpu_list(list).ok_or_else(|| {
            UserError::flag(
                "--cpus",
                format!("'{}' is not a cpu list: write e.g. 0,2,4-7", list),
            )
        })?;
        if parsed.is_empty() {
            return Err(UserError::flag("--cpus", "the list is empty"));
        }
        if let Some(t) = threads {
            if t != parsed.len() {
                return Err(UserError::flag(
                    "--threads",
                    format!(
                        "{} threads but --cpus names {} cpus: give one or make them agree",
                        t,
                        parsed.len()
                    ),
                ));
            }
        }
        return Ok(parsed);
    }
    let n = threads.unwrap_or(1);
    if n == 0 {
        return Err(UserError::flag("--threads", "must be at least 1"));
    }
    let order = default_cpu_order(host);
    if n > order.len() {
        return Err(UserError::flag(
            "--threads",
            format!(
                "{} threads but this process may use only {} cpus ({}); use at most {}",
                n,
                order.len(),
                format_cpu_list(&host.allowed_cpus),
                order.len()
            ),
        ));
    }
    let mut v: Vec<u32> = order[..n].to_vec();
    v.sort_unstable();
    Ok(v)
}

/// Refuse before allocating when `need` bytes exceed MemAvailable (leaving
/// 10 % for the rest of the system), so the OOM killer never gets a say.
/// `hint` says what to change, naming only the command's own flags.
pub fn check_memory(need: u64, flag: &'static str, hint: &'static str) -> Result<(), UserError> {
    // The address-space limit, less a margin for code, stacks and the
    // allocator, binds first where one is set.
    if let Some((left, limit)) = crate::os::process::address_space_left() {
        let usable = left.saturating_sub(left / 16 + (16 << 20));
        if need > usable {
            return Err(UserError::AddressSpace {
                flag,
                need: crate::util::units::format_bytes(need),
                left: crate::util::units::format_bytes(usable),
                limit: crate::util::units::format_bytes(limit),
                hint,
            });
        }
    }
    let avail = crate::os::system::memory_available();
    if let Some(a) = avail {
        let limit = a / 10 * 9;
        if need > limit {
            return Err(UserError::NotEnoughMemory {
                flag,
                need: crate::util::units::format_bytes(need),
                limit: crate::util::units::format_bytes(limit),
                available: crate::util::units::format_bytes(a),
                hint,
            });
        }
    }
    Ok(())
}

/// The cpu a single-thread suite runs on: `--cpu` (checked against the
/// allowed set) or the first of the default order (the last core).
pub fn resolve_cpu(host: &Host, cpu: Option<u32>) -> Result<u32, UserError> {
    match cpu {
        Some(c) => Ok(resolve_cpus(host, None, Some(&c.to_string())).map_err(|_| {
            UserError::flag(
                "--cpu",
                format!(
                    "cpu {} is offline or not allowed for this process (allowed: {})",
                    c,
                    format_cpu_list(&host.allowed_cpus)
                ),
            )
        })?[0]),
        None => Ok(resolve_cpus(host, Some(1), None)?[0]),
    }
}

/// Allowed cpus ordered by `placement`; without `smt` only the first
/// allowed sibling of each core.
pub fn placement_order(host: &Host, placement: Placement, smt: bool) -> Vec<u32> {
    let mut cpus: Vec<&crate::model::Cpu> = host
        .cpus
        .iter()
        .filter(|c| host.allowed_cpus.contains(&c.id))
        .collect();
    cpus.sort_by_key(|c| (c.node, c.package, c.core, c.id));
    let mut primary: Vec<&crate::model::Cpu> = Vec::new();
    let mut secondary: Vec<&crate::model::Cpu> = Vec::new();
    for c in cpus {
        if primary
            .iter()
            .any(|p| (p.package, p.core) == (c.package, c.core))
        {
            secondary.push(c);
        } else {
            primary.push(c);
        }
    }
    if primary.is_empty() {
        return host.allowed_cpus.clone();
    }
    match placement {
        Placement::Compact => {
            if smt {
                // Siblings next to each other: core 0's threads, then core 1's.
                let mut all: Vec<&crate::model::Cpu> =
                    primary.iter().chain(secondary.iter()).copied().collect();
                all.sort_by_key(|c| (c.node, c.package, c.core, c.id));
                all.iter().map(|c| c.id).collect()
            } else {
                primary.iter().map(|c| c.id).collect()
            }
        }
        Placement::Scatter => {
            let mut out = round_robin(&primary);
            if smt {
                out.extend(round_robin(&secondary));
            }
            out
        }
    }
}

/// Take one cpu from each (node, package) group in turn.
fn round_robin(cpus: &[&crate::model::Cpu]) -> Vec<u32> {
    let mut groups: Vec<((u32, u32), Vec<u32>)> = Vec::new();
    for c in cpus {
        let key = (c.node, c.package);
        match groups.iter_mut().find(|g| g.0 == key) {
            Some(g) => g.1.push(c.id),
            None => groups.push((key, vec![c.id])),
        }
    }
    let mut out = Vec::new();
    let mut i = 0;
    while out.len() < cpus.len() {
        for g in &groups {
            if let Some(&c) = g.1.get(i) {
                out.push(c);
            }
        }
        i += 1;
    }
    out
}

/// An explicit cpu list, validated against the cpus this process may use.
pub fn parse_cpus(host: &Host, list: &str, flag: &'static str) -> Result<Vec<u32>, UserError> {
    if let Some(kind) = kind_cpus(host, list, flag) {
        return kind;
    }
    not_allowed(host, list, flag)?;
    // Keep the order given (threads are added in it); ranges expand in place.
    let mut parsed: Vec<u32> = Vec::new();
    for part in list.split(',').filter(|p| !p.trim().is_empty()) {
        let cpus = crate::util::cpulist::parse_cpu_list(part).ok_or_else(|| {
            UserError::flag(
                flag,
                format!("'{}' is not a cpu list: write e.g. 0,2,4-7", list),
            )
        })?;
        for c in cpus {
            if !parsed.contains(&c) {
                parsed.push(c);
            }
        }
    }
    if parsed.is_empty() {
        return Err(UserError::flag(flag, "the list is empty"));
    }
    Ok(parsed)
}

/// The cpus of `list` this process may not use, named as ranges before
/// the list is expanded: `0-999999999` was "not a cpu list" (a range too
/// wide to expand) rather than the cpus it names that do not exist.
fn not_allowed(host: &Host, list: &str, flag: &'static str) -> Result<(), UserError> {
    let mut allowed = host.allowed_cpus.clone();
    allowed.sort_unstable();
    let bad = crate::util::cpulist::missing(list, &allowed);
    let what = match bad.as_slice() {
        [] => return Ok(()),
        [(a, b)] if a == b => format!("cpu {a} is"),
        _ => format!("cpus {} are", crate::util::cpulist::format_ranges(&bad)),
    };
    Err(UserError::flag(
        flag,
        format!(
            "{what} offline or not allowed for this process (allowed: {})",
            format_cpu_list(&host.allowed_cpus)
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Cpu;

    #[test]
    fn cpus_by_kind_of_core() {
        use crate::model::{ArmHost, CoreKind};
        let kind = |id: &str, cpus| CoreKind::for_test(id, cpus, None);
        let mut h = host(&[(0, 0, 0), (1, 1, 0), (2, 2, 0), (3, 3, 0), (4, 4, 0)]);
        h.allowed_cpus = vec![0, 1, 2, 3];
        h.arm = Some(ArmHost {
            core_kinds: vec![
                kind("cortex-a55", vec![0, 1]),
                kind("cortex-a76", vec![2, 3, 4]),
            ],
            ..Default::default()
        });
        assert_eq!(
            resolve_cpus(&h, None, Some("kind:cortex-a76")).unwrap(),
            vec![2, 3]
        );
        assert_eq!(
            resolve_cpus(&h, Some(1), Some("kind:Cortex-A55")).unwrap(),
            vec![0]
        );
        assert_eq!(
            parse_cpus(&h, "kind:cortex-a55", "--cpus").unwrap(),
            vec![0, 1]
        );
        let e = resolve_cpus(&h, Some(3), Some("kind:cortex-a55"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("--threads") && e.contains("at most 2"), "{e}");
        let e = resolve_cpus(&h, None, Some("kind:x1"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("kind:cortex-a55, kind:cortex-a76"), "{e}");
        // No kinds off ARM: the error says what to give instead.
        h.arm = None;
        let e = parse_cpus(&h, "kind:big", "--cpus")
            .unwrap_err()
            .to_string();
        assert!(e.contains("give cpu numbers"), "{e}");
    }

    fn host(spec: &[(u32, u32, u32)]) -> Host {
        // (id, core, node); package = node
        let mut h = Host::default();
        for &(id, core, node) in spec {
            h.cpus.push(Cpu {
                id,
                core,
                package: node,
                node,
                siblings: vec![id],
            });
            h.allowed_cpus.push(id);
        }
        h
    }

    #[test]
    fn compact_and_scatter_orders() {
        // 2 nodes × 2 cores × 2 threads; siblings are id and id+4.
        let h = host(&[
            (0, 0, 0),
            (1, 1, 0),
            (2, 0, 1),
            (3, 1, 1),
            (4, 0, 0),
            (5, 1, 0),
            (6, 0, 1),
            (7, 1, 1),
        ]);
        assert_eq!(
            placement_order(&h, Placement::Compact, false),
            vec![0, 1, 2, 3]
        );
        assert_eq!(
            placement_order(&h, Placement::Compact, true),
            vec![0, 4, 1, 5, 2, 6, 3, 7]
        );
        assert_eq!(
            placement_order(&h, Placement::Scatter, false),
            vec![0, 2, 1, 3]
        );
        assert_eq!(
            placement_order(&h, Placement::Scatter, true),
            vec![0, 2, 1, 3, 4, 6, 5, 7]
        );
    }

    #[test]
    fn explicit_cpus_keep_their_order() {
        let h = host(&[(0, 0, 0), (1, 1, 0), (2, 2, 0), (3, 3, 0)]);
        assert_eq!(parse_cpus(&h, "3,0-1,3", "--cpus").unwrap(), vec![3, 0, 1]);
        assert!(parse_cpus(&h, "7", "--cpus")
            .unwrap_err()
            .to_string()
            .contains("cpu 7"));
        assert!(parse_cpus(&h, "a", "--cpus").is_err());
        assert!(parse_cpus(&h, ",", "--cpus").is_err());
    }
}
