//! A fleet's runs in the store: rank 0 records every node's run
//! (`source = 'fleet'`, `node` its host name hash) and the figures its
//! verdicts judged, so the next run of the same fleet can be judged
//! against this one (`crate::report::fleet::past`).

use rusqlite::params;

use super::trust;
use super::write::{add, Provenance, Recorded};
use super::Store;
use crate::model::fleet_past::{NodeFigures, PastFleetRun};
use crate::model::{Run, Warning};

/// One fleet run as the store keeps it.
pub struct FleetRecord<'a> {
    /// The fleet's identity (`crate::app::fleet`'s `fleet_key`).
    pub fleet: &'a str,
    /// This run's identity.
    pub fleet_run: &'a str,
    pub started_at: &'a str,
    /// Each node kept: its run and its judged figures (`NodeFigures::node`
    /// is its host name hash).
    pub nodes: Vec<(&'a Run, &'a NodeFigures)>,
    /// Keep the host names themselves (`--history-hostname`).
    pub hostname: bool,
}

impl Store {
    /// Append a fleet run's nodes, all in one transaction. Returns how
    /// many node runs were added.
    pub fn record_fleet(&mut self, f: &FleetRecord<'_>) -> Result<usize, Warning> {
        let conn = &mut self.conn;
        let added = (|| {
            let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let mut added = 0;
            for (run, figs) in &f.nodes {
                let how = Provenance {
                    source: "fleet",
                    imported_from: None,
                    hostname: f.hostname,
                    node: Some(figs.node.clone()),
                };
                // A node run the store has already (the same fleet recorded
                // twice) keeps the figures it had.
                let Recorded::Added { id, .. } = add(&tx, run, &[], &how)? else {
                    continue;
                };
                let mut st = tx.prepare_cached(
                    "INSERT INTO fleet_figures (run_id, fleet, fleet_run, fleet_started_at, node,
                        metric, value) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                )?;
                for (metric, value) in &figs.figures {
                    st.execute(params![
                        id,
                        f.fleet,
                        f.fleet_run,
                        f.started_at,
                        figs.node,
                        metric,
                        value
                    ])?;
                }
                added += 1;
            }
            tx.commit()?;
            Ok(added)
        })();
        added.map_err(|e| self.warn(e))
    }

    /// The `limit` latest runs of `fleet` started before `before` (RFC
    /// 3339, so the text order is the time order), newest first, each
    /// with its nodes' figures.
    pub fn fleet_past(
        &self,
        fleet: &str,
        before: &str,
        limit: u32,
    ) -> Result<Vec<PastFleetRun>, Warning> {
        let warn = |e: rusqlite::Error| self.warn(e);
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT fleet_run, fleet_started_at FROM fleet_figures
                 WHERE fleet = ?1 AND fleet_started_at < ?2
                 GROUP BY fleet_run ORDER BY fleet_started_at DESC LIMIT ?3",
            )
            .map_err(warn)?;
        let runs: Vec<(String, String)> = st
            .query_map(params![fleet, before, limit], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .and_then(|it| it.collect())
            .map_err(warn)?;
        let mut fig = self
            .conn
            .prepare_cached(
                "SELECT node, metric, value FROM fleet_figures WHERE fleet_run = ?1
                 ORDER BY node, metric",
            )
            .map_err(warn)?;
        let mut out = Vec::new();
        for (uid, started_at) in runs {
            let rows: Vec<(String, String, f64)> = fig
                .query_map([&uid], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .and_then(|it| it.collect())
                .map_err(warn)?;
            let mut nodes: Vec<NodeFigures> = Vec::new();
            for (node, metric, value) in rows {
                // As every figure the store hands back: checked, its
                // words cleaned (`trust`); one that fails fails the read,
                // so no past is judged from part of it.
                let (node, metric) = (trust::text(&node), trust::text(&metric));
                let what = format!("fleet run {}, node {node}", trust::text(&uid));
                trust::figure(&what, &metric, value, trust::metric_unit(&metric))
                    .map_err(|e| e.warning(&self.path))?;
                match nodes.last_mut() {
                    Some(n) if n.node == node => n.figures.push((metric, value)),
                    _ => nodes.push(NodeFigures {
                        node,
                        figures: vec![(metric, value)],
                    }),
                }
            }
            let started_at = trust::text(&started_at);
            out.push(PastFleetRun { started_at, nodes });
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::Mode;

    fn node_run(host: &str, started: &str) -> Run {
        let v: serde_json::Value =
            serde_json::from_str(include_str!("../../tests/fixtures/cache-quick.json")).unwrap();
        let mut run: Run = serde_json::from_value(v).unwrap();
        run.host.env.hostname = Some(host.into());
        run.started_at = started.into();
        run
    }

    #[test]
    fn a_fleets_runs_come_back_newest_first_with_every_nodes_figures() {
        let d = tempfile::tempdir().unwrap();
        let mut s = Store::open(&d.path().join("h.sqlite3"), Mode::Create)
            .unwrap()
            .unwrap();
        for (i, t) in ["2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"]
            .iter()
            .enumerate()
        {
            let runs: Vec<Run> = ["a", "b"].iter().map(|h| node_run(h, t)).collect();
            let figs: Vec<NodeFigures> = ["ha", "hb"]
                .iter()
                .map(|n| NodeFigures {
                    node: n.to_string(),
                    figures: vec![("dram_read_gbps".into(), 10.0 + i as f64)],
                })
                .collect();
            let uid = format!("run{i}");
            let rec = FleetRecord {
                fleet: "F",
                fleet_run: &uid,
                started_at: t,
                nodes: runs.iter().zip(&figs).collect(),
                hostname: false,
            };
            assert_eq!(s.record_fleet(&rec).unwrap(), 2);
            // Recorded again: nothing added twice.
            assert_eq!(s.record_fleet(&rec).unwrap(), 0);
        }
        let past = s.fleet_past("F", "2026-02-01T00:00:00Z", 10).unwrap();
        assert_eq!(past.len(), 2);
        assert_eq!(past[0].started_at, "2026-01-02T00:00:00Z");
        assert_eq!(past[0].nodes.len(), 2);
        assert_eq!(past[0].nodes[1].node, "hb");
        assert_eq!(
            past[0].nodes[1].figures,
            vec![("dram_read_gbps".to_string(), 11.0)]
        );
        // Only earlier runs, only this fleet, at most `limit`.
        assert_eq!(
            s.fleet_past("F", "2026-01-02T00:00:00Z", 10).unwrap().len(),
            1
        );
        assert!(s
            .fleet_past("G", "2026-02-01T00:00:00Z", 10)
            .unwrap()
            .is_empty());
        assert_eq!(
            s.fleet_past("F", "2026-02-01T00:00:00Z", 1).unwrap().len(),
            1
        );
        // The node runs are the fleet's, with the node's hash.
        let (source, node): (String, String) = s
            .conn
            .query_row(
                "SELECT source, node FROM runs ORDER BY id LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!((source.as_str(), node.as_str()), ("fleet", "ha"));
        // A figure no measurement gives fails the read (issue 49 S9: an
        // Inf row was skipped while the line counted it, and 1e308 made
        // the past median inf), naming the run and the metric.
        for bad in ["1e999", "1e308", "-5"] {
            s.conn
                .execute_batch(&format!(
                    "UPDATE fleet_figures SET value = {bad} WHERE rowid = 1"
                ))
                .unwrap();
            let w = s
                .fleet_past("F", "2026-02-01T00:00:00Z", 10)
                .unwrap_err()
                .to_string();
            assert!(
                w.contains("dram_read_gbps") && w.contains("edited or corrupted"),
                "{w}"
            );
        }
    }
}
