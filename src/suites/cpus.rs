//! Which cpus a suite runs on, and whether its memory fits.

use crate::error::UserError;
use crate::model::Host;
use crate::util::cpulist::{format_cpu_list, parse_cpu_list};

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

/// The cpus a team runs on, from `--threads` and `--cpus`.
pub fn resolve_cpus(
    host: &Host,
    threads: Option<usize>,
    cpus: Option<&str>,
) -> Result<Vec<u32>, UserError> {
    if let Some(list) = cpus {
        let parsed = parse_cpu_list(list).ok_or_else(|| {
            UserError::flag(
                "--cpus",
                format!("'{}' is not a cpu list: write e.g. 0,2,4-7", list),
            )
        })?;
        if parsed.is_empty() {
            return Err(UserError::flag("--cpus", "the list is empty"));
        }
        if let Some(bad) = parsed.iter().find(|c| !host.allowed_cpus.contains(c)) {
            return Err(UserError::flag(
                "--cpus",
                format!(
                    "cpu {} is offline or not allowed for this process (allowed: {})",
                    bad,
                    format_cpu_list(&host.allowed_cpus)
                ),
            ));
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
pub fn check_memory(need: u64, flag: &'static str) -> Result<(), UserError> {
    let avail = crate::platform::env::meminfo("MemAvailable");
    if let Some(a) = avail {
        if need > a / 10 * 9 {
            return Err(UserError::NotEnoughMemory {
                flag,
                need: crate::util::units::format_bytes(need),
                available: crate::util::units::format_bytes(a),
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
