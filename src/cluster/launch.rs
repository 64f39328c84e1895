//! Which rank this process is, read from the launcher's environment, so
//! the default build needs no MPI library: `mpirun` (Open MPI), `mpiexec`
//! (MPICH Hydra, Intel MPI: PMI), `srun` (Slurm), `flux run`, MVAPICH.
//!
//! The first launcher whose rank *and* size are both set wins, in the
//! order of [`LAUNCHERS`]: an `mpirun` inside a Slurm allocation carries
//! Slurm's variables too, and its own describe the job it started. Slurm's
//! are read from the step (`SLURM_STEP_NUM_TASKS`), never the allocation,
//! so a batch script running `bwscope fleet` directly (no `srun`) is not
//! mistaken for rank 0 of a fleet that never starts.

/// Where this rank sits in the job.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Launch {
    pub launcher: &'static str,
    pub rank: u32,
    pub size: u32,
    pub local_rank: Option<u32>,
    /// A name of the job (and step) shared by every rank of it, where the
    /// launcher gives one: it keys the rendezvous file.
    pub job: Option<String>,
}

/// (launcher, rank variable, size variable, local-rank variable, job
/// variables joined with '.').
const LAUNCHERS: &[(&str, &str, &str, &str, &[&str])] = &[
    (
        "openmpi",
        "OMPI_COMM_WORLD_RANK",
        "OMPI_COMM_WORLD_SIZE",
        "OMPI_COMM_WORLD_LOCAL_RANK",
        &["OMPI_MCA_ess_base_jobid"],
    ),
    (
        "mvapich",
        "MV2_COMM_WORLD_RANK",
        "MV2_COMM_WORLD_SIZE",
        "MV2_COMM_WORLD_LOCAL_RANK",
        &[],
    ),
    ("pmi", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", &[]),
    (
        "slurm",
        "SLURM_PROCID",
        "SLURM_STEP_NUM_TASKS",
        "SLURM_LOCALID",
        &["SLURM_JOB_ID", "SLURM_STEP_ID"],
    ),
    (
        "flux",
        "FLUX_TASK_RANK",
        "FLUX_JOB_SIZE",
        "FLUX_TASK_LOCAL_ID",
        &["FLUX_JOB_ID"],
    ),
];

/// Fallback job names where the launcher's own variables give none.
const JOB_FALLBACKS: &[&str] = &["PMIX_NAMESPACE", "PMI_KVSNAME", "SLURM_JOB_ID"];

/// The most ranks a fleet may have: one rank per node, and no machine has
/// this many nodes (the largest, Fugaku, has 158,976). A size beyond it is
/// a variable set by hand or garbage, and rank 0 would only spend its
/// memory on a roster of ranks that cannot exist (4,294,967,295 aborted
/// it allocating 515 GB).
pub const MAX_RANKS: u32 = 1 << 18;

/// The command a user should type, for the error outside a launcher.
pub const HOW_TO_LAUNCH: &str = "run it under a launcher, one rank per node: `mpirun -np N bwscope fleet` (Open MPI, MPICH) or `srun -N N --ntasks-per-node=1 bwscope fleet` (Slurm); `bwscope fleet --dry-run --nodes N` prints the plan here";

/// Read the launcher's variables through `env`. `Ok(None)`: no launcher;
/// `Err`: a launcher whose variables make no sense (named in the message).
pub fn detect(env: &dyn Fn(&str) -> Option<String>) -> Result<Option<Launch>, String> {
    for &(launcher, rank_var, size_var, local_var, job_vars) in LAUNCHERS {
        let (Some(rank), Some(size)) = (env(rank_var), env(size_var)) else {
            continue;
        };
        let num = |var: &str, text: &str| -> Result<u32, String> {
            text.trim()
                .parse::<u32>()
                .map_err(|_| format!("{var}={text} is not a number (launcher {launcher})"))
        };
        let rank = num(rank_var, &rank)?;
        let size = num(size_var, &size)?;
        if size == 0 || rank >= size {
            return Err(format!(
                "{rank_var}={rank} and {size_var}={size} do not describe a rank of a job (launcher {launcher})"
            ));
        }
        if size > MAX_RANKS {
            return Err(format!(
                "{size_var}={size} is more ranks than a fleet can have (at most {MAX_RANKS}, one per node); no launcher started this job (launcher {launcher})"
            ));
        }
        let local_rank = env(local_var).and_then(|v| v.trim().parse().ok());
        let parts: Vec<String> = job_vars.iter().filter_map(|v| env(v)).collect();
        let job = if parts.is_empty() {
            JOB_FALLBACKS.iter().find_map(|v| env(v))
        } else {
            Some(parts.join("."))
        };
        return Ok(Some(Launch {
            launcher,
            rank,
            size,
            local_rank,
            job,
        }));
    }
    Ok(None)
}

/// How long each step of the PMI conversation may take.
const PMI_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// The job's PMI key-space name, asked of the process manager over the
/// socket in `PMI_FD` (PMI-1 wire protocol: `init`, `get_my_kvsname`,
/// `finalize`). MPICH's Hydra and Intel MPI set no job name in the
/// environment, so two jobs started at once in one folder shared the
/// rendezvous file `default` and swapped ranks; the key space is the job's
/// own (`kvs_<pid>_<n>_<random>_<host>`), the same for every rank of it.
///
/// Only for the TCP control (MPI itself speaks PMI when it starts); the
/// conversation always ends with `finalize`, without which Hydra kills the
/// job when this process exits.
pub fn pmi_kvsname() -> Option<String> {
    use std::io::{BufRead, BufReader, Read, Write};
    let fd: i32 = std::env::var("PMI_FD").ok()?.trim().parse().ok()?;
    let (r, mut w) = crate::os::net::process_manager_socket(fd, PMI_WAIT)?;
    let mut r = BufReader::new(r);
    let mut ask = |cmd: &str| -> Option<String> {
        w.write_all(cmd.as_bytes()).ok()?;
        let mut line = String::new();
        (&mut r).take(4096).read_line(&mut line).ok()?;
        Some(line)
    };
    let init = ask("cmd=init pmi_version=1 pmi_subversion=1\n")?;
    if !init.contains("cmd=response_to_init") || !init.contains("rc=0") {
        return None;
    }
    let name = ask("cmd=get_my_kvsname\n").and_then(|l| {
        l.split_whitespace()
            .find_map(|f| f.strip_prefix("kvsname="))
            .map(str::to_string)
    });
    let _ = ask("cmd=finalize\n");
    name.filter(|n| !n.is_empty())
}

/// [`detect`] on this process's environment.
pub fn from_env() -> Result<Option<Launch>, String> {
    detect(&|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn with(vars: &[(&str, &str)]) -> Result<Option<Launch>, String> {
        let m: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        detect(&|k| m.get(k).cloned())
    }

    #[test]
    fn none_outside_a_launcher() {
        assert_eq!(with(&[("HOME", "/root")]).unwrap(), None);
        // A batch script has the allocation's variables but no step.
        assert_eq!(
            with(&[("SLURM_PROCID", "0"), ("SLURM_NTASKS", "4")]).unwrap(),
            None
        );
    }

    #[test]
    fn open_mpi_wins_over_the_surrounding_allocation() {
        let l = with(&[
            ("SLURM_PROCID", "0"),
            ("SLURM_STEP_NUM_TASKS", "1"),
            ("OMPI_COMM_WORLD_RANK", "2"),
            ("OMPI_COMM_WORLD_SIZE", "4"),
            ("OMPI_COMM_WORLD_LOCAL_RANK", "0"),
            ("OMPI_MCA_ess_base_jobid", "123"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(
            (l.launcher, l.rank, l.size, l.local_rank),
            ("openmpi", 2, 4, Some(0))
        );
        assert_eq!(l.job.as_deref(), Some("123"));
    }

    #[test]
    fn slurm_step_and_hydra() {
        let l = with(&[
            ("SLURM_PROCID", "1"),
            ("SLURM_STEP_NUM_TASKS", "2"),
            ("SLURM_JOB_ID", "77"),
            ("SLURM_STEP_ID", "0"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!((l.launcher, l.rank, l.size), ("slurm", 1, 2));
        assert_eq!(l.job.as_deref(), Some("77.0"));
        let l = with(&[("PMI_RANK", "0"), ("PMI_SIZE", "3")])
            .unwrap()
            .unwrap();
        assert_eq!((l.launcher, l.size, l.job), ("pmi", 3, None));
    }

    #[test]
    fn nonsense_is_an_error_naming_the_variable() {
        let e = with(&[("PMI_RANK", "x"), ("PMI_SIZE", "3")]).unwrap_err();
        assert!(e.contains("PMI_RANK=x"), "{e}");
        let e = with(&[("PMI_RANK", "3"), ("PMI_SIZE", "3")]).unwrap_err();
        assert!(e.contains("PMI_SIZE=3"), "{e}");
        let e = with(&[("PMI_RANK", "0"), ("PMI_SIZE", "262145")]).unwrap_err();
        assert!(
            e.contains("PMI_SIZE=262145") && e.contains("at most 262144"),
            "{e}"
        );
        assert!(with(&[("PMI_RANK", "0"), ("PMI_SIZE", "262144")]).is_ok());
    }
}
