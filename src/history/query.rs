//! Reading the store: runs, one case's series, the standing of a run's
//! headline figures among its machine's earlier runs, and forgetting.

use rusqlite::params;
use serde::Serialize;

use super::case;
use super::Store;
use crate::model::headline::Figure;
use crate::model::{HistoryContext, Run, Standing, Warning, RECENT};

/// One run as `bwscope history` lists it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RunRow {
    pub id: i64,
    pub started_at: String,
    pub command: String,
    pub tool_version: String,
    pub machine: String,
    pub cpu: String,
    pub kernel: Option<String>,
    pub complete: bool,
    pub source: String,
    pub rows: i64,
    pub noisy_rows: i64,
}

/// Which runs to list.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// A machine key, or its first characters.
    pub machine: Option<String>,
    /// RFC 3339 or a date: runs started at or after it.
    pub since: Option<String>,
    /// Runs with a record of this suite.
    pub suite: Option<String>,
}

/// One point of a case's series.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Point {
    pub run_id: i64,
    pub started_at: String,
    pub value: f64,
    pub median: Option<f64>,
    pub unit: String,
    pub higher_is_better: bool,
    pub noisy: bool,
    pub flags: String,
}

/// A case of a machine and how many runs measured it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CaseCount {
    pub case: String,
    pub runs: i64,
}

impl Store {
    fn warn(&self, e: rusqlite::Error) -> Warning {
        Warning::HistoryIgnored {
            path: self.path.display().to_string(),
            reason: super::store::describe(&e),
        }
    }

    /// The runs `f` asks for, oldest first.
    pub fn runs(&self, f: &Filter) -> Result<Vec<RunRow>, Warning> {
        let machine = f.machine.as_ref().map(|m| format!("{m}%"));
        let mut st = self
            .conn
            .prepare(
                "SELECT r.id, r.started_at, r.command, r.tool_version, r.machine,
                    r.cpu_model_name, r.kernel, r.complete, r.source,
                    (SELECT count(*) FROM rows w WHERE w.run_id = r.id),
                    (SELECT count(*) FROM rows w WHERE w.run_id = r.id AND w.noisy)
                 FROM runs r
                 WHERE (?1 IS NULL OR r.machine LIKE ?1)
                   AND (?2 IS NULL OR r.started_at >= ?2)
                   AND (?3 IS NULL OR EXISTS (SELECT 1 FROM rows w
                        JOIN cases c ON c.id = w.case_id
                        WHERE w.run_id = r.id AND c.suite = ?3))
                 ORDER BY r.started_at, r.id",
            )
            .map_err(|e| self.warn(e))?;
        let rows = st
            .query_map(params![machine, f.since, f.suite], |r| {
                Ok(RunRow {
                    id: r.get(0)?,
                    started_at: r.get(1)?,
                    command: r.get(2)?,
                    tool_version: r.get(3)?,
                    machine: r.get(4)?,
                    cpu: r.get(5)?,
                    kernel: r.get(6)?,
                    complete: r.get(7)?,
                    source: r.get(8)?,
                    rows: r.get(9)?,
                    noisy_rows: r.get(10)?,
                })
            })
            .and_then(|it| it.collect::<Result<Vec<_>, _>>());
        rows.map_err(|e| self.warn(e))
    }

    /// The cases measured on machines matching `machine` (all with None),
    /// headlines first.
    pub fn cases(&self, machine: Option<&str>) -> Result<Vec<CaseCount>, Warning> {
        let machine = machine.map(|m| format!("{m}%"));
        let mut st = self
            .conn
            .prepare(
                "SELECT c.key, count(DISTINCT w.run_id) FROM rows w
                 JOIN runs r ON r.id = w.run_id JOIN cases c ON c.id = w.case_id
                 WHERE (?1 IS NULL OR r.machine LIKE ?1)
                 GROUP BY c.key
                 ORDER BY c.key NOT LIKE 'headline/%', c.key",
            )
            .map_err(|e| self.warn(e))?;
        let rows = st
            .query_map(params![machine], |r| {
                Ok(CaseCount {
                    case: r.get(0)?,
                    runs: r.get(1)?,
                })
            })
            .and_then(|it| it.collect::<Result<Vec<_>, _>>());
        rows.map_err(|e| self.warn(e))
    }

    /// One case's figures on machines matching `machine`, oldest first
    /// (ok records only).
    pub fn series(&self, case: &str, machine: Option<&str>) -> Result<Vec<Point>, Warning> {
        let machine = machine.map(|m| format!("{m}%"));
        let mut st = self
            .conn
            .prepare(
                "SELECT r.id, r.started_at, w.best, w.median, c.unit, c.higher_is_better,
                    w.noisy, w.flags
                 FROM rows w JOIN runs r ON r.id = w.run_id JOIN cases c ON c.id = w.case_id
                 WHERE c.key = ?1 AND (?2 IS NULL OR r.machine LIKE ?2)
                   AND w.status = 'ok' AND w.best IS NOT NULL
                 ORDER BY r.started_at, r.id",
            )
            .map_err(|e| self.warn(e))?;
        let rows = st
            .query_map(params![case, machine], |r| {
                Ok(Point {
                    run_id: r.get(0)?,
                    started_at: r.get(1)?,
                    value: r.get(2)?,
                    median: r.get(3)?,
                    unit: r.get(4)?,
                    higher_is_better: r.get(5)?,
                    noisy: r.get(6)?,
                    flags: r.get(7)?,
                })
            })
            .and_then(|it| it.collect::<Result<Vec<_>, _>>());
        rows.map_err(|e| self.warn(e))
    }

    /// Where `run`'s headline `figures` sit among its machine's earlier
    /// runs (the run itself left out, should it be in the store already).
    /// A fleet's node runs are left out too: they are judged against
    /// their fleet's past (`fleet_figures`), and the node phase measures
    /// other cases than this machine's own commands.
    pub fn standing(&self, run: &Run, figures: &[Figure]) -> Result<HistoryContext, Warning> {
        let machine = case::machine_key(&run.host);
        let uid = case::run_uid(run);
        let earlier_runs: i64 = self
            .conn
            .query_row(
                "SELECT count(*) FROM runs WHERE machine = ?1 AND uid != ?2
                 AND started_at <= ?3 AND source != 'fleet'",
                params![machine, uid, run.started_at],
                |r| r.get(0),
            )
            .map_err(|e| self.warn(e))?;
        let mut standings = Vec::new();
        for f in figures {
            let key = case::headline_key(&f.name);
            let mut st = self
                .conn
                .prepare_cached(
                    "SELECT w.best, w.noisy FROM rows w JOIN runs r ON r.id = w.run_id
                     JOIN cases c ON c.id = w.case_id
                     WHERE c.key = ?1 AND r.machine = ?2 AND r.uid != ?3
                       AND r.started_at <= ?4 AND w.status = 'ok' AND w.best IS NOT NULL
                       AND r.source != 'fleet'
                     ORDER BY r.started_at, r.id",
                )
                .map_err(|e| self.warn(e))?;
            let earlier: Vec<(f64, bool)> = st
                .query_map(params![key, machine, uid, run.started_at], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
                .and_then(|it| it.collect())
                .map_err(|e| self.warn(e))?;
            let mut clean: Vec<f64> = earlier.iter().filter(|e| !e.1).map(|e| e.0).collect();
            let noisy = earlier.len() - clean.len();
            // A machine that is never quiet (a shared host) still gets an
            // answer for a noisy figure: among the earlier noisy ones, said
            // so. A quiet figure is never judged against noisy ones.
            let this_noisy = f
                .record
                .and_then(|i| run.records.get(i))
                .is_some_and(|r| case::flags(r, run).noisy);
            let among_noisy = clean.is_empty() && noisy > 0 && this_noisy;
            if among_noisy {
                clean = earlier.iter().map(|e| e.0).collect();
            }
            let (rank, percentile) = crate::stats::rank(f.value, &clean, f.higher_is_better);
            standings.push(Standing {
                name: f.name.clone(),
                case: key,
                value: f.value,
                unit: f.unit().to_string(),
                earlier: clean.len() as u32,
                left_out_noisy: (earlier.len() - clean.len()) as u32,
                among_noisy,
                recent: clean[clean.len().saturating_sub(RECENT)..].to_vec(),
                rank,
                percentile,
                expected: None,
            });
        }
        Ok(HistoryContext {
            earlier_runs: earlier_runs as u32,
            standings,
        })
    }

    /// Forget one run (its rows go with it). Returns whether it was there.
    pub fn forget_run(&mut self, id: i64) -> Result<bool, Warning> {
        let n = self
            .conn
            .execute("DELETE FROM runs WHERE id = ?1", [id])
            .map_err(|e| self.warn(e))?;
        Ok(n > 0)
    }

    /// Forget every run started before `before` (RFC 3339 or a date).
    /// Returns how many.
    pub fn forget_before(&mut self, before: &str) -> Result<usize, Warning> {
        let n = self
            .conn
            .execute("DELETE FROM runs WHERE started_at < ?1", [before])
            .map_err(|e| self.warn(e))?;
        Ok(n)
    }
}
