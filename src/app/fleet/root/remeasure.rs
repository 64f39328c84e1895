//! More turns for nodes whose memory figures look like outliers.
//!
//! A node's key points are a few milliseconds each. On a virtual machine a
//! neighbour on the host's sibling thread, or a vCPU moved to a busier
//! core, can slow them by a third while the guest sees nothing: no other
//! process ran (foreign load 0) and steal time cannot be resolved over so
//! short a window (`noise.steal_resolution_cpus` ≈ 1 CPU). Seen on a 2-vCPU
//! Zen 5 guest: one healthy node of five read L2 at 178 GB/s instead of
//! 281, every sample alike, in 2 of 5 fleet runs; measured again at once,
//! two such nodes were still slow (the disturbance lasted seconds), and
//! with one immediate second turn healthy nodes still failed on L1, L3 and
//! DRAM memcpy figures in 3 of 10 runs (issue 29, item 9). A slow node is
//! slow every time it is measured; a passing interference is not. So after
//! the network phase rank 0 judges the fleet, has every node whose memory
//! figure is an outlier (or below `--reference`) measure its node plan once
//! more, one rank at a time, and judges again, up to [`TURNS`] turns, a
//! node's turns at least [`SPACING_S`] × (turn − 1) seconds apart (other
//! suspects' turns fill the gap where there are several). Every turn's
//! records stay on the node (`FleetNode::turns`), each case keeps its best
//! record, and the verdict fails a figure only when every turn was bad
//! (one that was not is `transient`).

use std::time::{Duration, Instant};

use super::Root;
use crate::app::again;
use crate::model::fleet::{NodeStatus, NodeTurn};
use crate::model::{Record, Repeats, Run, Warning};
use crate::report::fleet::reference::Reference;
use crate::report::fleet::{reference, verdict};
use crate::report::metric;

/// Turns after the network phase, at most: a node measured four times,
/// at four moments, and bad in each, is slow.
pub(super) const TURNS: u32 = 3;

/// Seconds between the end of a node's turn and the start of its next,
/// at least, times the number of turns it has had after the network phase
/// (5 s, then 10 s): a disturbance of a few seconds does not span them.
pub(super) const SPACING_S: f64 = 5.0;

/// The least time from a node's turn `turn - 1` to its turn `turn`.
fn spacing(turn: u32) -> Duration {
    Duration::from_secs_f64(SPACING_S * turn.saturating_sub(1) as f64)
}

impl Root<'_> {
    /// Each node whose memory figure is bad and not noisy, with those
    /// figures' names.
    fn suspects(&self, reference: &Option<(String, Reference)>) -> Vec<(u32, Vec<String>)> {
        let v = verdict::judge(
            &self.fleet,
            &verdict::Settings {
                z: self.plan.outlier_z,
                pct: self.plan.outlier_pct,
                reference: reference.clone(),
            },
        );
        v.nodes
            .iter()
            .filter(|n| {
                let node = &self.fleet.nodes[n.rank as usize];
                node.status == NodeStatus::Ok && node.run.is_some()
            })
            .filter_map(|n| {
                let m: Vec<String> = n
                    .checks
                    .iter()
                    .filter(|c| c.fails())
                    .filter(|c| verdict::is_memory_metric(&c.metric))
                    .map(|c| c.metric.clone())
                    .collect();
                (!m.is_empty()).then_some((n.rank, m))
            })
            .collect()
    }

    /// Wait until `t`, or a stop request.
    fn pause_until(&self, t: Instant, label: &str) {
        let wait = t.saturating_duration_since(Instant::now());
        if wait >= Duration::from_millis(500) {
            eprintln!(
                "bwscope fleet: waiting {:.0} s so that {label}'s next turn is at another moment",
                wait.as_secs_f64()
            );
        }
        while !self.stopped() {
            let left = t.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            std::thread::sleep(left.min(Duration::from_millis(100)));
        }
    }

    /// The fleet's warnings about the turns: those not read, and which
    /// nodes were measured again, how often, and how many cases a later
    /// turn won. `said` holds (rank, turns, cases won).
    fn tell(&mut self, said: &[(u32, u32, usize)], failed: &[String]) {
        if !failed.is_empty() {
            self.fleet.warnings.push(Warning::Other {
                message: format!("a later turn was not read: {}", failed.join("; ")),
                hint: "the node keeps the turns it has; every rank should run the same bwscope"
                    .into(),
            });
        }
        if !said.is_empty() {
            let list: Vec<String> = said
                .iter()
                .map(|&(r, turns, won)| {
                    format!(
                        "{} ({turns} more turn{}, {won} case(s) better than before)",
                        self.fleet.nodes[r as usize].label,
                        if turns == 1 { "" } else { "s" }
                    )
                })
                .collect();
            self.fleet.warnings.push(Warning::Other {
            message: format!(
                "measured once more because a memory figure was an outlier: {}",
                list.join(", ")
            ),
            hint: format!("up to {TURNS} more turns, at least {SPACING_S:.0} s apart; every turn's records are in the node's `turns`, each case keeps its best; a figure fails only when it was bad in every turn (otherwise it is `transient`)"),
        });
        }
    }

    /// Measure the suspects again, turn after turn, and keep every turn.
    pub(super) fn remeasure(&mut self) -> anyhow::Result<()> {
        if self.plan.node.suites.is_empty() || self.stopped() {
            return Ok(());
        }
        let reference = match &self.plan.reference {
            Some(p) => Some((p.clone(), reference::load(p)?)),
            None => None,
        };
        let mut last: Vec<Option<Instant>> = vec![None; self.fleet.nodes.len()];
        // (rank, turns, cases a later turn won)
        let mut said: Vec<(u32, u32, usize)> = Vec::new();
        let mut failed: Vec<String> = Vec::new();
        for turn in 1..=TURNS {
            let suspects = self.suspects(&reference);
            if suspects.is_empty() || self.stopped() {
                break;
            }
            // One rank at a time: alone on its machine, as a user re-running
            // it by hand would measure it.
            for (i, (rank, metrics)) in suspects.iter().enumerate() {
                if self.stopped() {
                    break;
                }
                let r = *rank as usize;
                let label = self.fleet.nodes[r].label.clone();
                if let Some(t) = last[r] {
                    self.pause_until(t + spacing(turn), &label);
                }
                eprintln!(
                    "bwscope fleet: measuring {label} once more (turn {turn} of {TURNS}: {} an outlier)",
                    metrics.join(", ")
                );
                let est = self.hellos[r]
                    .as_ref()
                    .and_then(|h| h.estimate_s)
                    .unwrap_or(1.0);
                let at = self.cx.t0.elapsed().as_secs_f64();
                let got = self.measure_on(1000 * turn + i as u32, &[*rank], est)?;
                last[r] = Some(Instant::now());
                let again = match got.into_iter().next().and_then(|(_, g)| g) {
                    Some(Ok(reply)) => reply.run.filter(|r| !r.interrupted),
                    Some(Err(e)) => {
                        failed.push(e);
                        None
                    }
                    None => None,
                };
                self.note_lost();
                let first_at = self.measured_at[r];
                let node = &mut self.fleet.nodes[r];
                let (Some(again), Some(first)) = (again, node.run.as_mut()) else {
                    continue;
                };
                if node.turns.is_empty() {
                    node.turns.push(NodeTurn {
                        turn: 0,
                        at_seconds: first_at,
                        records: first.records.clone(),
                    });
                }
                node.turns.push(NodeTurn {
                    turn,
                    at_seconds: Some(at),
                    records: again.records.clone(),
                });
                let won = keep_better(first, again);
                match said.iter_mut().find(|s| s.0 == *rank) {
                    Some(s) => {
                        s.1 += 1;
                        s.2 += won;
                    }
                    None => said.push((*rank, 1, won)),
                }
                self.save();
            }
        }
        self.tell(&said, &failed);
        Ok(())
    }
}

/// For each case of `first` that `again` measured too (same
/// [`Record::case_key`]), keep the better record: more GB/s, or fewer ns
/// for latency. The one kept from the later turn says so; a DRAM case
/// adds the turn to its `repeats`. Returns how many cases the later turn
/// won.
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
        // Every turn so far, then this one.
        let repeats = (old.regime == Some(crate::model::Regime::Dram)).then(|| {
            let mut turns = match old.repeats.take() {
                Some(r) => r.turns,
                None => again::turn("record", old).into_iter().collect(),
            };
            turns.extend(again::turn("remeasure", &new));
            Repeats::of(turns, old.threads, online)
        });
        let better = if higher { n > o } else { n < o };
        if better {
            let mut new = new;
            new.warnings.push(Warning::Other {
                message: format!(
                    "measured again (the fleet called this node an outlier); this turn is better than the best before it, {o:.3}"
                ),
                hint: "a figure better in a later turn was slowed by something passing (a host neighbour, a migration); every turn is in the node's `turns`".into(),
            });
            *old = new;
            won += 1;
        }
        if let Some(r) = repeats {
            old.warnings
                .retain(|w| !matches!(w, Warning::MemoryContended { .. }));
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
            .any(|w| w.to_string().contains("the best before it, 177.000")));
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
        use verdict::is_memory_metric;
        assert!(is_memory_metric("l2_read_gbps"));
        assert!(is_memory_metric("dram_latency_ns"));
        assert!(!is_memory_metric("clock_ghz"));
        assert!(!is_memory_metric("tcp_in_gbps"));
        assert!(!is_memory_metric("mpi_out_gbps"));
    }

    #[test]
    fn a_nodes_turns_are_spaced_further_apart_each_time() {
        assert_eq!(spacing(1), Duration::ZERO);
        assert_eq!(spacing(2), Duration::from_secs(5));
        assert_eq!(spacing(3), Duration::from_secs(10));
    }
}
