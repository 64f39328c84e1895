//! The store's tables and how an older store is brought up to date.
//!
//! The version is SQLite's `PRAGMA user_version`. `MIGRATIONS[i]` takes a
//! store from version `i` to `i + 1` (version 0: an empty file), all in one
//! transaction, so a store is at one version or the next, never between.
//! A store written by a newer bwscope is left alone (and reported).
//!
//! A run has a `source` (`local`, `import`, `fleet`; a watch sample is a
//! `local` run of command `watch`) and a `node` (a fleet node's host name
//! hash, null for this machine), so a fleet's nodes and a stream of small
//! samples are rows of the same two tables.

use rusqlite::Connection;

use super::failure::Failure;
use crate::model::StoreProblem;

/// Version 1: runs (with the machine's identity), cases (what was
/// measured, once per case: a survey repeats ~260 of them every run) and
/// rows (a run's figure of a case).
const V1: &str = "
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    uid TEXT NOT NULL UNIQUE,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    recorded_at TEXT NOT NULL,
    command TEXT NOT NULL,
    tool_version TEXT NOT NULL,
    revision TEXT,
    options TEXT NOT NULL,
    complete INTEGER NOT NULL,
    source TEXT NOT NULL,
    node TEXT,
    imported_from TEXT,
    machine TEXT NOT NULL,
    cpu_vendor TEXT NOT NULL,
    cpu_model_name TEXT NOT NULL,
    cpu_family INTEGER NOT NULL,
    cpu_model INTEGER NOT NULL,
    cpu_stepping INTEGER NOT NULL,
    microcode TEXT,
    physical_cores INTEGER NOT NULL,
    caches TEXT NOT NULL,
    dimms TEXT,
    dram_peak_gbps REAL,
    kernel TEXT,
    hypervisor TEXT,
    uarch TEXT,
    hostname_hash TEXT,
    hostname TEXT
);
CREATE INDEX runs_machine ON runs (machine, started_at);
CREATE TABLE cases (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    suite TEXT NOT NULL,
    kernel TEXT NOT NULL,
    op TEXT NOT NULL,
    pattern TEXT,
    regime TEXT,
    size_bytes INTEGER,
    threads INTEGER NOT NULL,
    unit TEXT NOT NULL,
    higher_is_better INTEGER NOT NULL
);
CREATE TABLE rows (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    case_id INTEGER NOT NULL REFERENCES cases (id),
    best REAL,
    median REAL,
    cv REAL,
    percent_of_limit REAL,
    noisy INTEGER NOT NULL,
    flags TEXT NOT NULL,
    status TEXT NOT NULL
);
CREATE INDEX rows_case ON rows (case_id, run_id);
CREATE INDEX rows_run ON rows (run_id);
";

/// Version 2: a fleet's verdict figures per node (`bwscope fleet`'s rank
/// 0 records each node's run with `source = 'fleet'` and `node` its host
/// name hash, and beside it the figures the verdicts judged), so a fleet
/// is judged against its own recent runs. `fleet` is the fleet's identity
/// (its hosts, suites and schedule), `fleet_run` one run of it.
const V2: &str = "
CREATE TABLE fleet_figures (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    fleet TEXT NOT NULL,
    fleet_run TEXT NOT NULL,
    fleet_started_at TEXT NOT NULL,
    node TEXT NOT NULL,
    metric TEXT NOT NULL,
    value REAL NOT NULL
);
CREATE INDEX fleet_figures_fleet ON fleet_figures (fleet, fleet_started_at);
CREATE INDEX fleet_figures_run ON fleet_figures (run_id);
";

/// Version 3: one name, one figure. Up to version 2 the headline "DRAM
/// memcpy" was the fastest single-core DRAM copy of any kernel (often
/// `rep movsb`), while a fleet's `dram_memcpy_gbps` was libc's `memcpy`;
/// the fastest copy is "DRAM copy" now, and "DRAM memcpy" libc's alone.
/// The rows keep their meaning under the new name. (No earlier store can
/// hold a "DRAM copy" case: the name is new.)
const V3: &str = "
UPDATE cases SET key = 'headline/DRAM copy' WHERE key = 'headline/DRAM memcpy';
";

/// Every step, oldest first: `MIGRATIONS.len()` is this bwscope's version.
pub const MIGRATIONS: &[&str] = &[V1, V2, V3];

/// The version this bwscope writes.
pub fn current() -> i64 {
    MIGRATIONS.len() as i64
}

/// Why a store could not be brought up to date.
#[derive(Debug)]
pub enum MigrateError {
    /// Written by a newer bwscope (its version, the last this one knows).
    Newer(i64, i64),
    /// SQLite failed, `doing` what.
    Sql(rusqlite::Error, String),
}

impl std::fmt::Display for MigrateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MigrateError::Newer(v, last) => write!(
                f,
                "it is of version {v}, written by a newer bwscope (this one knows {last})"
            ),
            MigrateError::Sql(e, doing) if doing.is_empty() => write!(f, "{e}"),
            MigrateError::Sql(e, doing) => write!(f, "{doing}: {e}"),
        }
    }
}

impl MigrateError {
    /// The failure it is for the store at `path`, opened as `conn`.
    pub fn into_failure(self, conn: &Connection, path: &std::path::Path) -> Failure {
        match self {
            MigrateError::Newer(..) => Failure::new(StoreProblem::Newer, self.to_string()),
            MigrateError::Sql(e, doing) => {
                let mut f = Failure::sql(&e, Some(conn), path);
                if !doing.is_empty() {
                    f.reason = format!("{doing}: {}", f.reason);
                }
                f
            }
        }
    }
}

/// Bring `conn` up to the last of `steps`. Err: a newer store than the
/// steps know, or a step that failed (then nothing of it is kept).
pub fn migrate(conn: &mut Connection, steps: &[&str]) -> Result<(), MigrateError> {
    let sql = |e| MigrateError::Sql(e, String::new());
    // Most opens find the store up to date: asked without a write lock, so
    // a run never queues behind another's write just to learn that.
    let seen: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(sql)?;
    if seen == steps.len() as i64 {
        return Ok(());
    }
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(sql)?;
    let version: i64 = tx
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(sql)?;
    let last = steps.len() as i64;
    if version > last {
        return Err(MigrateError::Newer(version, last));
    }
    for (v, step) in steps.iter().enumerate().skip(version.max(0) as usize) {
        tx.execute_batch(step)
            .map_err(|e| MigrateError::Sql(e, format!("updating it from version {v}")))?;
    }
    if version < last {
        tx.pragma_update(None, "user_version", last).map_err(sql)?;
    }
    tx.commit().map_err(sql)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A synthetic later version, to test the mechanism on.
    const V2: &str = "ALTER TABLE rows ADD COLUMN p95 REAL;";

    fn columns(conn: &Connection, table: &str) -> Vec<String> {
        let mut st = conn
            .prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))
            .unwrap();
        st.query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    }

    #[test]
    fn every_earlier_version_is_brought_up_to_date_keeping_its_rows() {
        // From each earlier version of [V1, V2]: 0 (empty), 1.
        for from in 0..2 {
            let mut conn = Connection::open_in_memory().unwrap();
            migrate(&mut conn, &[V1, V2][..from]).unwrap();
            if from == 1 {
                conn.execute_batch(
                    "INSERT INTO runs (uid, started_at, recorded_at, command, tool_version, options, complete, source, machine, cpu_vendor, cpu_model_name, cpu_family, cpu_model, cpu_stepping, physical_cores, caches) VALUES ('u', 't', 't', 'cache', '0.1.0', '{}', 1, 'local', 'm', 'v', 'n', 1, 2, 3, 4, '[]');
                     INSERT INTO cases (key, suite, kernel, op, threads, unit, higher_is_better) VALUES ('k', 'cache', 'x', 'read', 1, 'GB/s', 1);
                     INSERT INTO rows (run_id, case_id, best, noisy, flags, status) VALUES (1, 1, 5.0, 0, '', 'ok');",
                )
                .unwrap();
            }
            migrate(&mut conn, &[V1, V2]).unwrap();
            let v: i64 = conn
                .query_row("PRAGMA user_version", [], |r| r.get(0))
                .unwrap();
            assert_eq!(v, 2, "from {from}");
            assert!(columns(&conn, "rows").contains(&"p95".to_string()));
            let n: i64 = conn
                .query_row("SELECT count(*) FROM rows", [], |r| r.get(0))
                .unwrap();
            assert_eq!(n, i64::from(from == 1), "from {from}");
            // Again: nothing to do, nothing changes.
            migrate(&mut conn, &[V1, V2]).unwrap();
        }
    }

    /// A store of version 2 keeps its fastest-copy rows under the name
    /// that now means them.
    #[test]
    fn version_3_renames_the_fastest_copy() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn, &MIGRATIONS[..2]).unwrap();
        conn.execute_batch(
            "INSERT INTO cases (key, suite, kernel, op, threads, unit, higher_is_better) VALUES ('headline/DRAM memcpy', 'cache', 'rep_movsb', 'copy', 1, 'GB/s', 1);",
        )
        .unwrap();
        migrate(&mut conn, MIGRATIONS).unwrap();
        let keys: Vec<String> = conn
            .prepare("SELECT key FROM cases")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(keys, ["headline/DRAM copy"]);
    }

    #[test]
    fn a_newer_store_is_refused_and_a_failed_step_leaves_nothing() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn, &[V1, V2]).unwrap();
        let e = migrate(&mut conn, &[V1]).unwrap_err().to_string();
        assert!(e.contains("newer bwscope"), "{e}");
        let mut conn = Connection::open_in_memory().unwrap();
        let e = migrate(&mut conn, &[V1, "CREATE TABLE t (a); BOGUS"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("from version 1"), "{e}");
        let v: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v, 0);
        assert!(columns(&conn, "runs").is_empty());
        assert_eq!(current(), 3);
    }
}
