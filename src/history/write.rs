//! Appending a run to the store: one transaction per run, so a run is in
//! the store whole or not at all, and `BEGIN IMMEDIATE`, so two runs
//! finishing at once queue on the busy timeout instead of failing when one
//! upgrades its read to a write.

use rusqlite::params;

use super::case;
use super::Store;
use crate::model::headline::Figure;
use crate::model::{Record, Run, Warning};

/// How a run came to the store.
#[derive(Debug, Clone, Default)]
pub struct Provenance {
    /// `local` (recorded as it finished) or `import`.
    pub source: &'static str,
    /// The file an import read.
    pub imported_from: Option<String>,
    /// Keep the host name itself (`--history-hostname`), not only its hash.
    pub hostname: bool,
    /// A fleet node's host name hash (`source = 'fleet'`); None for this
    /// machine's own runs.
    pub node: Option<String>,
}

/// What `record` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    /// A new run, with its id in the store and its row count.
    Added { id: i64, rows: usize },
    /// The store had it already (an import of a run recorded before).
    AlreadyThere { id: i64 },
}

impl Store {
    /// Append `run` with its headline `figures`.
    pub fn record(
        &mut self,
        run: &Run,
        figures: &[Figure],
        how: &Provenance,
    ) -> Result<Recorded, Warning> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| self_ignored(&self.path, &e))?;
        let sql = |e: rusqlite::Error| self_ignored(&self.path, &e);
        let done = add(&tx, run, figures, how).map_err(sql)?;
        tx.commit().map_err(sql)?;
        Ok(done)
    }
}

/// Append `run` inside the caller's transaction (one run, or a fleet's
/// nodes all at once).
pub(super) fn add(
    tx: &rusqlite::Transaction<'_>,
    run: &Run,
    figures: &[Figure],
    how: &Provenance,
) -> rusqlite::Result<Recorded> {
    let uid = case::run_uid(run);
    let had: Option<i64> = tx
        .query_row("SELECT id FROM runs WHERE uid = ?1", [&uid], |r| r.get(0))
        .ok();
    if let Some(id) = had {
        return Ok(Recorded::AlreadyThere { id });
    }
    insert_run(tx, run, &uid, how)?;
    let id = tx.last_insert_rowid();
    let mut rows = 0;
    {
        let mut case_st = tx.prepare(INSERT_CASE)?;
        let mut row_st = tx.prepare(INSERT_ROW)?;
        let mut put = |key: &str, r: &Record, fig: RowFigure| -> rusqlite::Result<()> {
            let case_id: i64 = case_st.query_row(
                params![
                    key,
                    r.suite().name(),
                    r.kernel,
                    r.op.as_str(),
                    r.pattern.as_ref().map(|p| p.as_str().to_string()),
                    r.regime.as_ref().map(|p| p.as_str().to_string()),
                    r.size_bytes.map(|s| s as i64),
                    r.threads,
                    fig.unit,
                    fig.higher_is_better,
                ],
                |x| x.get(0),
            )?;
            let f = case::flags(r, run);
            let status = r.status.name();
            row_st.execute(params![
                id,
                case_id,
                fig.best,
                fig.median,
                fig.cv,
                r.percent_of_limit,
                f.noisy,
                f.column(),
                status,
            ])?;
            rows += 1;
            Ok(())
        };
        for r in &run.records {
            put(&r.case_key(), r, RowFigure::of(r))?;
        }
        // A headline is kept with the case parts of the record it was read
        // from; a figure of no one record (the clock, a fleet's network)
        // is not a row of this run.
        for h in figures {
            let Some(r) = h.record.and_then(|i| run.records.get(i)) else {
                continue;
            };
            let fig = RowFigure {
                unit: h.unit(),
                higher_is_better: h.higher_is_better,
                best: Some(h.value),
                // The record's spread, on the headline's own scale.
                median: None,
                cv: RowFigure::of(r).cv,
            };
            put(&case::headline_key(&h.name), r, fig)?;
        }
    }
    Ok(Recorded::Added { id, rows })
}

fn self_ignored(path: &std::path::Path, e: &rusqlite::Error) -> Warning {
    Warning::HistoryIgnored {
        path: path.display().to_string(),
        reason: super::store::describe(e),
    }
}

fn insert_run(
    tx: &rusqlite::Transaction<'_>,
    run: &Run,
    uid: &str,
    how: &Provenance,
) -> rusqlite::Result<()> {
    let h = &run.host;
    let c = &h.cpu;
    let dimms = h.dram.as_ref().map(|d| json(&d.devices));
    tx.execute(
        "INSERT INTO runs (uid, started_at, finished_at, recorded_at, command, tool_version,
            revision, options, complete, source, node, imported_from, machine, cpu_vendor,
            cpu_model_name, cpu_family, cpu_model, cpu_stepping, microcode, physical_cores,
            caches, dimms, dram_peak_gbps, kernel, hypervisor, uarch, hostname_hash, hostname)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?27, ?7, ?8, ?9, ?26, ?10, ?11, ?12, ?13, ?14, ?15,
            ?16, NULL, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25)",
        params![
            uid,
            run.started_at,
            run.finished_at,
            crate::model::time::now_rfc3339(),
            run.command,
            run.tool.version,
            run.options.to_string(),
            run.complete,
            if how.source.is_empty() {
                "local"
            } else {
                how.source
            },
            how.imported_from,
            case::machine_key(h),
            c.vendor,
            c.model_name,
            c.family,
            c.model,
            c.stepping,
            h.physical_cores as i64,
            json(&h.caches),
            dimms,
            h.dram.as_ref().and_then(|d| d.peak_gbps),
            h.env.kernel,
            c.hypervisor,
            h.uarch
                .as_ref()
                .and_then(|u| u.row.as_ref())
                .map(|r| r.id.clone()),
            case::hostname_hash(h),
            if how.hostname {
                h.env.hostname.clone()
            } else {
                None
            },
            how.node,
            run.tool.revision,
        ],
    )?;
    Ok(())
}

/// A host part as a text column.
fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// Makes the case once (its key is unique) and returns its id either way.
const INSERT_CASE: &str = "INSERT INTO cases (key, suite, kernel, op, pattern, regime, size_bytes,
    threads, unit, higher_is_better) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
    ON CONFLICT (key) DO UPDATE SET key = excluded.key RETURNING id";

const INSERT_ROW: &str = "INSERT INTO rows (run_id, case_id, best, median, cv, percent_of_limit,
    noisy, flags, status) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";

/// A record's figure as a row holds it: its bandwidth, else its suite's
/// own figure (a latency in ns, lower is better). (A headline's row is
/// made from its [`Figure`].)
struct RowFigure {
    unit: &'static str,
    higher_is_better: bool,
    best: Option<f64>,
    median: Option<f64>,
    cv: Option<f64>,
}

impl RowFigure {
    fn of(r: &Record) -> RowFigure {
        let (stats, unit, higher_is_better) = match (r.gbps, r.detail.metric()) {
            (Some(g), _) => (Some(g), "GB/s", true),
            (None, Some(h)) => (Some(h.stats), h.unit, h.higher_is_better),
            (None, None) => (None, "", true),
        };
        RowFigure {
            unit,
            higher_is_better,
            best: stats.map(|s| s.best),
            median: stats.map(|s| s.median),
            cv: stats.map(|s| s.cv),
        }
    }
}
