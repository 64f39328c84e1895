//! Reading the store: runs, one case's series, the standing of a run's
//! headline figures among its machine's earlier runs, and forgetting.
//! Everything read passes `trust` (strings cleaned, figures and times
//! checked) on its way out; a machine is matched by the literal start of
//! its key (no `LIKE` wildcards), a time as an instant.

use rusqlite::params;
use serde::Serialize;

use super::case;
use super::failure::Failure;
use super::trust;
use super::Store;
use crate::model::headline::Figure;
use crate::model::{HistoryContext, Run, Standing, Warning, RECENT};
use crate::util::date::Timestamp;

/// Rows of a machine whose key starts with `?N` (compared as text: a `%`
/// or `_` in the key given is itself).
macro_rules! machine_is {
    ($col:literal, $n:literal) => {
        concat!(
            "(?",
            $n,
            " IS NULL OR substr(",
            $col,
            ", 1, length(?",
            $n,
            ")) = ?",
            $n,
            ")"
        )
    };
}

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
    /// Runs started at or after this instant.
    pub since: Option<Timestamp>,
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
    /// The runs `f` asks for, oldest first.
    pub fn runs(&self, f: &Filter) -> Result<Vec<RunRow>, Warning> {
        let sql = concat!(
            "SELECT r.id, r.started_at, r.command, r.tool_version, r.machine,
                r.cpu_model_name, r.kernel, r.complete, r.source,
                (SELECT count(*) FROM rows w WHERE w.run_id = r.id),
                (SELECT count(*) FROM rows w WHERE w.run_id = r.id AND w.noisy)
             FROM runs r
             WHERE ",
            machine_is!("r.machine", "1"),
            " AND (?2 IS NULL OR r.command = ?2 OR r.command = ?2 || '-node' OR EXISTS (SELECT 1 FROM rows w
                    JOIN cases c ON c.id = w.case_id
                    WHERE w.run_id = r.id AND c.suite = ?2))
             ORDER BY r.started_at, r.id"
        );
        let rows = self
            .conn
            .prepare(sql)
            .and_then(|mut st| {
                st.query_map(params![f.machine, f.suite], |r| {
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
                })?
                .collect::<Result<Vec<_>, _>>()
            })
            .map_err(|e| self.warn(e))?;
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            let at = trust::instant(&format!("run {}", r.id), "started_at", &r.started_at)
                .map_err(|e| e.warning(&self.path))?;
            if f.since.is_some_and(|s| at < s) {
                continue;
            }
            out.push(RunRow {
                started_at: trust::text(&r.started_at),
                command: trust::text(&r.command),
                tool_version: trust::text(&r.tool_version),
                machine: trust::text(&r.machine),
                cpu: trust::text(&r.cpu),
                kernel: trust::text_opt(r.kernel),
                source: trust::text(&r.source),
                ..r
            });
        }
        Ok(out)
    }

    /// The cases measured on machines matching `machine` (all with None),
    /// headlines first.
    pub fn cases(&self, machine: Option<&str>) -> Result<Vec<CaseCount>, Warning> {
        let sql = concat!(
            "SELECT c.key, count(DISTINCT w.run_id) FROM rows w
             JOIN runs r ON r.id = w.run_id JOIN cases c ON c.id = w.case_id
             WHERE ",
            machine_is!("r.machine", "1"),
            " GROUP BY c.key
             ORDER BY substr(c.key, 1, 9) != 'headline/', c.key"
        );
        let rows = self
            .conn
            .prepare(sql)
            .and_then(|mut st| {
                st.query_map(params![machine], |r| {
                    Ok(CaseCount {
                        case: r.get(0)?,
                        runs: r.get(1)?,
                    })
                })?
                .collect::<Result<Vec<_>, _>>()
            })
            .map_err(|e| self.warn(e))?;
        Ok(rows
            .into_iter()
            .map(|c| CaseCount {
                case: trust::text(&c.case),
                ..c
            })
            .collect())
    }

    /// One case's figures on machines matching `machine`, oldest first
    /// (ok records only).
    pub fn series(&self, case: &str, machine: Option<&str>) -> Result<Vec<Point>, Warning> {
        let sql = concat!(
            "SELECT r.id, r.started_at, w.best, w.median, c.unit, c.higher_is_better,
                w.noisy, w.flags
             FROM rows w JOIN runs r ON r.id = w.run_id JOIN cases c ON c.id = w.case_id
             WHERE c.key = ?1 AND ",
            machine_is!("r.machine", "2"),
            " AND w.status = 'ok' AND c.unit != ''
             ORDER BY r.started_at, r.id"
        );
        // A figure read as NULL is kept as NaN here, so `point` names it
        // (a measured row of a case with a unit always has one).
        let rows = self
            .conn
            .prepare(sql)
            .and_then(|mut st| {
                st.query_map(params![case, machine], |r| {
                    Ok(Point {
                        run_id: r.get(0)?,
                        started_at: r.get(1)?,
                        value: r.get::<_, Option<f64>>(2)?.unwrap_or(f64::NAN),
                        median: r.get(3)?,
                        unit: r.get(4)?,
                        higher_is_better: r.get(5)?,
                        noisy: r.get(6)?,
                        flags: r.get(7)?,
                    })
                })?
                .collect::<Result<Vec<_>, _>>()
            })
            .map_err(|e| self.warn(e))?;
        rows.into_iter()
            .map(|p| point(p, case))
            .collect::<Result<_, _>>()
            .map_err(|e| e.warning(&self.path))
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
                       AND r.started_at <= ?4 AND w.status = 'ok'
                       AND r.source != 'fleet'
                     ORDER BY r.started_at, r.id",
                )
                .map_err(|e| self.warn(e))?;
            // NULL, where a headline always has a figure, is NaN here: named
            // below as every impossible value is.
            let earlier: Vec<(f64, bool)> = st
                .query_map(params![key, machine, uid, run.started_at], |r| {
                    Ok((r.get::<_, Option<f64>>(0)?.unwrap_or(f64::NAN), r.get(1)?))
                })
                .and_then(|it| it.collect())
                .map_err(|e| self.warn(e))?;
            for (v, _) in &earlier {
                trust::figure(&format!("case {key}"), "best", *v, f.unit())
                    .map_err(|e| e.warning(&self.path))?;
            }
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

    /// Forget `machine`'s watch samples (runs of command `watch`) beyond
    /// the newest `keep`: watch's retention (`watch --retain`).
    pub fn forget_watch_beyond(&mut self, machine: &str, keep: u64) -> Result<usize, Warning> {
        self.conn
            .execute(
                "DELETE FROM runs WHERE command = 'watch' AND machine = ?1 AND id NOT IN
                   (SELECT id FROM runs WHERE command = 'watch' AND machine = ?1
                    ORDER BY started_at DESC, id DESC LIMIT ?2)",
                params![machine, keep.min(i64::MAX as u64) as i64],
            )
            .map_err(|e| self.warn(e))
    }

    /// Forget every run started before the instant `before` (each run's
    /// start read as an instant, whatever offset it was stored with).
    /// Returns how many.
    pub fn forget_before(&mut self, before: Timestamp) -> Result<usize, Warning> {
        let all: Vec<(i64, String)> = self
            .conn
            .prepare("SELECT id, started_at FROM runs")
            .and_then(|mut st| {
                st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(|e| self.warn(e))?;
        let mut gone = Vec::new();
        for (id, at) in all {
            let at = trust::instant(&format!("run {id}"), "started_at", &at)
                .map_err(|e| e.warning(&self.path))?;
            if at < before {
                gone.push(id);
            }
        }
        let conn = &mut self.conn;
        let n = (|| {
            let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let mut n = 0;
            {
                let mut st = tx.prepare("DELETE FROM runs WHERE id = ?1")?;
                for id in &gone {
                    n += st.execute([id])?;
                }
            }
            tx.commit()?;
            Ok(n)
        })();
        n.map_err(|e| self.warn(e))
    }
}

/// A point as read, checked and cleaned (see `trust`).
fn point(p: Point, case: &str) -> Result<Point, Failure> {
    let what = format!("run {}, case {}", p.run_id, trust::text(case));
    trust::instant(&what, "started_at", &p.started_at)?;
    let value = trust::figure(&what, "best", p.value, &p.unit)?;
    let median = p
        .median
        .map(|m| trust::figure(&what, "median", m, &p.unit))
        .transpose()?;
    Ok(Point {
        started_at: trust::text(&p.started_at),
        value,
        median,
        unit: trust::text(&p.unit),
        flags: trust::text(&p.flags),
        ..p
    })
}
