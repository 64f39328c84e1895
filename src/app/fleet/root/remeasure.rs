//! A second turn for nodes whose memory figures look like outliers.
//!
//! A node's key points are a few milliseconds each. On a virtual machine a
//! neighbour on the host's sibling thread, or a vCPU moved to a busier
//! core, can slow them by a third while the guest sees nothing: no other
//! process ran (foreign load 0) and steal time cannot be resolved over so
//! short a window (`noise.steal_resolution_cpus` ≈ 1 CPU). Seen on a 2-vCPU
//! Zen 5 guest: one healthy node of five read L2 at 178 GB/s instead of
//! 281, every sample alike, in 2 of 5 fleet runs; measured again at once,
//! two such nodes were still slow (the disturbance lasted seconds). A slow
//! node stays slow when measured again later; a passing interference does
//! not. So after the network phase, before judging, rank 0 has every node
//! whose memory figure is an outlier (or below `--reference`) measure its
//! node plan once more, alone, and each case keeps the better of its two
//! records, marked.

use super::Root;
use crate::app::again;
use crate::model::fleet::NodeStatus;
use crate::model::{Record, Repeats, Run, Warning};
use crate::report::fleet::{reference, verdict};
use crate::report::metric;

/// The figures a node's turn measures again: memory bandwidth and latency.
/// Network figures come from the network phase, the clock from start-up.
fn is_memory_metric(metric: &str) -> bool {
    !(metric.starts_with("tcp_") || metric.starts_with("mpi_") || metric.starts_with("clock"))
}

impl Root<'_> {
    /// Measure the suspects once more and keep each case's better record.
    pub(super) fn remeasure(&mut self) -> anyhow::Result<()> {
        if self.plan.node.suites.is_empty() || self.stopped() {
            return Ok(());
        }
        let reference = match &self.plan.reference {
            Some(p) => Some((p.clone(), reference::load(p)?)),
            None => None,
        };
        let v = verdict::judge(
            &self.fleet,
            &verdict::Settings {
                z: self.plan.outlier_z,
                pct: self.plan.outlier_pct,
                reference,
            },
        );
        let suspects: Vec<(u32, Vec<String>)> = v
            .nodes
            .iter()
            .filter(|n| {
                let node = &self.fleet.nodes[n.rank as usize];
                node.status == NodeStatus::Ok && node.run.is_some()
            })
            .filter_map(|n| {
                let m: Vec<String> = n
                    .checks
                    .iter()
                    .filter(|c| (c.outlier || c.below_reference) && !c.noisy)
                    .filter(|c| is_memory_metric(&c.metric))
                    .map(|c| c.metric.clone())
                    .collect();
                (!m.is_empty()).then_some((n.rank, m))
            })
            .collect();
        if suspects.is_empty() {
            return Ok(());
        }
        let mut said = Vec::new();
        let mut failed: Vec<String> = Vec::new();
        // One rank at a time: alone on its machine, as a user re-running it
        // by hand would measure it.
        for (i, (rank, metrics)) in suspects.iter().enumerate() {
            if self.stopped() {
                break;
            }
            let label = self.fleet.nodes[*rank as usize].label.clone();
            eprintln!(
                "bwscope fleet: measuring {label} once more ({} an outlier)",
                metrics.join(", ")
            );
            let est = self.hellos[*rank as usize]
                .as_ref()
                .and_then(|h| h.estimate_s)
                .unwrap_or(1.0);
            let got = self.measure_on(1000 + i as u32, &[*rank], est)?;
            let again = match got.into_iter().next().and_then(|(_, g)| g) {
                Some(Ok(reply)) => reply.run.filter(|r| !r.interrupted),
                Some(Err(e)) => {
                    failed.push(e);
                    None
                }
                None => None,
            };
            self.note_lost();
            let (Some(again), Some(first)) = (again, self.fleet.nodes[*rank as usize].run.as_mut())
            else {
                continue;
            };
            let kept = keep_better(first, again);
            said.push(format!("{label} ({kept} case(s) better the second time)"));
            self.save();
        }
        if !failed.is_empty() {
            self.fleet.warnings.push(Warning::Other {
                message: format!("a second turn was not read: {}", failed.join("; ")),
                hint: "the node keeps its first run; every rank should run the same bwscope".into(),
            });
        }
        if !said.is_empty() {
            self.fleet.warnings.push(Warning::Other {
                message: format!(
                    "measured once more because a memory figure was an outlier: {}",
                    said.join(", ")
                ),
                hint: "each case keeps the better of its two records (marked in the node's run); a node that is slow twice is judged on it".into(),
            });
        }
        Ok(())
    }
}

/// For each case of `first` that `again` measured too (same
/// [`Record::case_key`]), keep the better record: more GB/s, or fewer ns
/// for latency. The one kept from the second turn says so. Returns how many
/// cases the second turn won.
pub(super) fn keep_better(first: &mut Run, again: Run) -> usize {
    let mut won = 0;
    let online = first.host.cpus.len();
    for new in again.records {
        let key = new.case_key();
        let Some(old) = first.records.iter_mut().find(|r| r.case_key() == key) else {
            continue;
        };
        let Some((o, n, higher)) = figures(old, &new) else {
            continue;
        };
        // A DRAM figure that moved between the turns by more than the
        // node's load explains was contended from outside (issue 29):
        // both turns stay on the record kept, and its verdict is noisy.
        let repeats = (old.regime == Some(crate::model::Regime::Dram)).then(|| {
            let turns = [again::turn("record", old), again::turn("remeasure", &new)];
            Repeats::of(turns.into_iter().flatten().collect(), old.threads, online)
        });
        let better = if higher { n > o } else { n < o };
        if better {
            let mut new = new;
            new.warnings.push(Warning::Other {
                message: format!(
                    "measured twice (the fleet called this node an outlier); this is the better turn, the first gave {o:.3}"
                ),
                hint: "a figure better the second time was slowed by something passing (a host neighbour, a migration)".into(),
            });
            *old = new;
            won += 1;
        }
        if let Some(r) = repeats {
            old.warnings.extend(r.warning());
            old.repeats = Some(r);
        }
    }
    won
}

/// The two records' best figures and whether higher is better.
fn figures(old: &Record, new: &Record) -> Option<(f64, f64, bool)> {
    if let (Some(o), Some(n)) = (old.gbps, new.gbps) {
        return Some((o.best, n.best, true));
    }
    let (o, n) = (metric::latency(old)?, metric::latency(new)?);
    Some((o.best, n.best, false))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Stats, Status};

    fn run_of(records: Vec<Record>) -> Run {
        Run {
            records,
            ..serde_json::from_str(include_str!("../../../../tests/fixtures/cache-quick.json"))
                .unwrap()
        }
    }

    fn stats(best: f64) -> Stats {
        Stats::constant(best, 3)
    }

    #[test]
    fn each_case_keeps_its_better_turn() {
        let base: Run =
            serde_json::from_str(include_str!("../../../../tests/fixtures/cache-quick.json"))
                .unwrap();
        let ok: Vec<Record> = base
            .records
            .iter()
            .filter(|r| r.status == Status::Ok && r.gbps.is_some())
            .take(2)
            .cloned()
            .collect();
        assert_eq!(ok.len(), 2, "the fixture has two bandwidth records");
        let (mut a, mut b) = (ok[0].clone(), ok[1].clone());
        a.gbps = Some(stats(177.0));
        b.gbps = Some(stats(280.0));
        let mut first = run_of(vec![a.clone(), b.clone()]);
        // The second turn: a faster, b slower.
        let (mut a2, mut b2) = (a.clone(), b.clone());
        a2.gbps = Some(stats(281.0));
        b2.gbps = Some(stats(250.0));
        assert_eq!(keep_better(&mut first, run_of(vec![a2, b2])), 1);
        assert_eq!(first.records[0].gbps.unwrap().best, 281.0);
        assert!(first.records[0]
            .warnings
            .iter()
            .any(|w| w.to_string().contains("the first gave 177.000")));
        // The slower second turn is not taken, and nothing is marked.
        assert_eq!(first.records[1].gbps.unwrap().best, 280.0);
        assert_eq!(first.records[1].warnings, b.warnings);
        // A case the first turn did not have is not added.
        let mut c = a.clone();
        c.size_bytes = Some(c.size_bytes.unwrap() * 3);
        assert_eq!(keep_better(&mut first, run_of(vec![c])), 0);
        assert_eq!(first.records.len(), 2);
    }

    /// Issue 29, item 7: a DRAM figure that moved between the turns by
    /// more than the node's load explains keeps both turns, contended.
    #[test]
    fn a_dram_figure_that_moved_between_turns_keeps_both_contended() {
        let base: Run =
            serde_json::from_str(include_str!("../../../../tests/fixtures/cache-quick.json"))
                .unwrap();
        let mut a = base
            .records
            .iter()
            .find(|r| r.status == Status::Ok && r.regime == Some(crate::model::Regime::Dram))
            .cloned()
            .expect("the fixture has a DRAM record");
        a.gbps = Some(stats(39.0));
        // Measured quietly both times.
        a.noise = None;
        let mut slow = a.clone();
        slow.gbps = Some(stats(24.0));
        let mut first = run_of(vec![slow]);
        assert_eq!(keep_better(&mut first, run_of(vec![a])), 1);
        let r = &first.records[0];
        let rep = r.repeats.as_ref().expect("both turns kept");
        assert_eq!(rep.range(), (24.0, 39.0));
        assert!(rep.contended);
        assert!(r
            .warnings
            .iter()
            .any(|w| matches!(w, Warning::MemoryContended { .. })));
    }

    #[test]
    fn network_figures_are_not_a_nodes_turn() {
        assert!(is_memory_metric("l2_read_gbps"));
        assert!(is_memory_metric("dram_latency_ns"));
        assert!(!is_memory_metric("clock_ghz"));
        assert!(!is_memory_metric("tcp_in_gbps"));
        assert!(!is_memory_metric("mpi_out_gbps"));
    }
}
