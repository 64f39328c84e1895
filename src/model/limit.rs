//! The physical limit a bandwidth record is judged by (`limit_gbps`,
//! `percent_of_limit`, `bound_by` on every record): the lowest ceiling that
//! applies to its regime, at its clock, for the cores it ran on. Per-core
//! ceilings come from the microarchitecture row (L1 load and store ports,
//! L2→L1 fill, L3→core) times the clock measured next to the record; the
//! DRAM ceiling is the whole memory system's peak (`host.dram`), for one
//! thread too (one core rarely reaches it, and the views say so).

use serde::{Deserialize, Serialize};

use super::{Host, Op, Record, Regime};

/// Which ceiling a record's limit is.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum BoundBy {
    /// The L1 load ports: loads per cycle × access width × clock × cores.
    L1LoadPorts,
    /// The L1 store ports.
    L1StorePorts,
    /// L2 → L1 fill bytes per cycle.
    L2Fill,
    /// L3 → core bytes per cycle.
    L3PerCore,
    /// The memory channels: channels × MT/s × data width (SMBIOS or
    /// `--dram-peak`).
    DramChannels,
    /// No ceiling is known for this record (the core is not in the table,
    /// no clock, no DRAM peak, or not a CPU memory path).
    Unknown,
}

impl BoundBy {
    /// How a person reads it: "L1 load ports", "DRAM channels".
    pub fn label(self) -> &'static str {
        match self {
            BoundBy::L1LoadPorts => "L1 load ports",
            BoundBy::L1StorePorts => "L1 store ports",
            BoundBy::L2Fill => "L2→L1 fill",
            BoundBy::L3PerCore => "L3 per core",
            BoundBy::DramChannels => "DRAM channels",
            BoundBy::Unknown => "unknown",
        }
    }
}

/// What the limit of one bandwidth measurement depends on.
#[derive(Debug, Clone)]
pub struct LimitCase {
    /// `read`, `write` or `copy`.
    pub op: Op,
    /// The access width; None for code that picks its own (rep strings,
    /// libc), bounded by the core's widest path.
    pub width_bits: Option<u32>,
    /// `L1`, `L2`, `L3` or `DRAM`.
    pub regime: Regime,
    /// Distinct physical cores the threads ran on.
    pub cores: u32,
    /// The core clock next to the measurement, Hz.
    pub hz: Option<f64>,
    /// Non-temporal stores go to memory from any working set.
    pub nontemporal: bool,
}

/// A limit: the lowest applicable ceiling, GB/s, and which it is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limit {
    pub gbps: Option<f64>,
    pub bound_by: BoundBy,
}

impl Host {
    /// The lowest ceiling that applies to `c` (see the module doc): the L1
    /// ports in every cache regime, L2→L1 fill from L2 on, L3→core in L3;
    /// DRAM records by the memory system's peak alone; non-temporal stores
    /// by the L1 store ports and the DRAM peak. An unknown ceiling is left
    /// out; none known gives `unknown`.
    pub fn limit(&self, c: &LimitCase) -> Limit {
        let row = self.uarch.as_ref().and_then(|m| m.row.as_ref());
        let per_core =
            |bpc: Option<f64>| -> Option<f64> { Some(bpc? * c.hz? * c.cores.max(1) as f64 / 1e9) };
        let dram = self.dram.as_ref().and_then(|d| d.peak_gbps);
        let mut candidates: Vec<(Option<f64>, BoundBy)> = Vec::new();
        if c.regime == Regime::Dram {
            candidates.push((dram, BoundBy::DramChannels));
        } else {
            let l1 = per_core(self.l1_bytes_per_cycle(c.op.as_str(), c.width_bits));
            let fill = per_core(row.and_then(|r| r.l2_to_l1_bytes_per_cycle));
            let l3 = per_core(row.and_then(|r| r.l3_per_core_bytes_per_cycle));
            // A level is judged by its own ceiling or not at all: where
            // a row lacks a level's figure, the L1 ports (or L2's fill)
            // would call a full-speed L2 (L3) "50 % of its limit" (Zen 3:
            // 96 GB/s = 31.5 B/cycle against 64 B/cycle of load ports,
            // when its L2 delivers 32). Non-temporal stores bypass the
            // caches and stay judged by the store ports and DRAM.
            let own_level_known = c.nontemporal
                || match c.regime {
                    Regime::L2 => fill.is_some(),
                    Regime::L3 => l3.is_some(),
                    _ => true,
                };
            if own_level_known {
                candidates.push((l1, self.l1_port(&c.op, c.width_bits)));
            }
            if c.nontemporal {
                candidates.push((dram, BoundBy::DramChannels));
            } else if own_level_known {
                if matches!(c.regime, Regime::L2 | Regime::L3) {
                    candidates.push((fill, BoundBy::L2Fill));
                }
                if c.regime == Regime::L3 {
                    candidates.push((l3, BoundBy::L3PerCore));
                }
            }
        }
        candidates
            .into_iter()
            .filter_map(|(g, b)| g.filter(|g| g.is_finite() && *g > 0.0).map(|g| (g, b)))
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .map_or(
                Limit {
                    gbps: None,
                    bound_by: BoundBy::Unknown,
                },
                |(g, b)| Limit {
                    gbps: Some(g),
                    bound_by: b,
                },
            )
    }

    /// Which L1 ports bound `op`: loads for a read, stores for a write, and
    /// for a copy the scarcer of the two at that width.
    fn l1_port(&self, op: &Op, width_bits: Option<u32>) -> BoundBy {
        let rate = self
            .uarch
            .as_ref()
            .and_then(|m| m.row.as_ref())
            .and_then(|r| {
                r.rate(width_bits.unwrap_or(512))
                    .or_else(|| r.l1.last().copied())
            });
        match op {
            Op::Read => BoundBy::L1LoadPorts,
            Op::Copy if rate.is_some_and(|r| r.loads_per_cycle < r.stores_per_cycle) => {
                BoundBy::L1LoadPorts
            }
            _ => BoundBy::L1StorePorts,
        }
    }

    /// Distinct physical cores among `cpus` (SMT siblings share one core's
    /// ports); the count of cpus where the topology is unknown.
    pub fn cores_of(&self, cpus: &[u32]) -> u32 {
        let mut cores: Vec<(u32, u32)> = cpus
            .iter()
            .filter_map(|id| self.cpus.iter().find(|c| c.id == *id))
            .map(|c| (c.package, c.core))
            .collect();
        if cores.len() < cpus.len() {
            return cpus.len().max(1) as u32;
        }
        cores.sort_unstable();
        cores.dedup();
        cores.len().max(1) as u32
    }
}

impl super::Run {
    /// Judge this run's DRAM records by a peak stated after they were
    /// measured (a fleet's reference file): DRAM-regime records take it as
    /// their limit; non-temporal records elsewhere, when it is lower than
    /// theirs.
    pub fn restate_dram_peak(&mut self, gbps: f64) {
        let dram = Limit {
            gbps: Some(gbps),
            bound_by: BoundBy::DramChannels,
        };
        for r in self.records.iter_mut().filter(|r| r.gbps.is_some()) {
            let nt = r.nontemporal.unwrap_or(false);
            let in_dram = r.regime == Some(Regime::Dram);
            if in_dram || (nt && r.limit_gbps.is_none_or(|l| l > gbps)) {
                r.set_limit(dram);
            }
        }
    }
}

impl Record {
    /// Put `limit` on this record: the limit, the best sample's share of
    /// it, and which ceiling it is.
    pub fn set_limit(&mut self, limit: Limit) {
        self.limit_gbps = limit.gbps;
        self.bound_by = Some(limit.bound_by);
        self.percent_of_limit = match (self.gbps, limit.gbps) {
            (Some(s), Some(l)) if l > 0.0 => Some(s.best / l * 100.0),
            _ => None,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Cpu, Dram, L1Rate, Stats, Uarch, UarchMatch};

    /// Zen 5's row at 2 GHz: 2 × 64 B loads, 64 B of stores per cycle
    /// (512 bit), 64 B/cycle L2→L1, 32 B/cycle L3→core; cpus 0 and 1 are
    /// two cores, cpu 2 is cpu 0's SMT sibling.
    fn zen5(dram: Option<f64>) -> Host {
        let r = |w, l, s| L1Rate {
            width_bits: w,
            loads_per_cycle: l,
            stores_per_cycle: s,
        };
        let cpu = |id, core| Cpu {
            id,
            core,
            package: 0,
            node: 0,
            siblings: vec![],
        };
        Host {
            clock_hz: Some(2e9),
            uarch: Some(UarchMatch {
                row: Some(Uarch {
                    id: "zen5".into(),
                    name: "Zen 5".into(),
                    l1: vec![r(64, 4.0, 2.0), r(256, 2.0, 2.0), r(512, 2.0, 1.0)],
                    l2_to_l1_bytes_per_cycle: Some(64.0),
                    source: "test".into(),
                    l3_per_core_bytes_per_cycle: Some(32.0),
                    l3_source: Some("test".into()),
                    basis: None,
                }),
                reason: "test".into(),
            }),
            cpus: vec![cpu(0, 0), cpu(1, 1), cpu(2, 0)],
            dram: dram.map(|g| Dram {
                peak_gbps: Some(g),
                ..Dram::default()
            }),
            ..Host::default()
        }
    }

    fn case(op: &str, regime: &str) -> LimitCase {
        LimitCase {
            op: op.into(),
            width_bits: Some(512),
            regime: regime.into(),
            cores: 1,
            hz: Some(2e9),
            nontemporal: false,
        }
    }

    fn lim(g: f64, b: BoundBy) -> Limit {
        Limit {
            gbps: Some(g),
            bound_by: b,
        }
    }

    #[test]
    fn each_regime_takes_its_lowest_ceiling() {
        let h = zen5(Some(76.8));
        // L1: 2 × 64 B loads × 2 GHz; stores 64 B; a copy 2 × 64 B.
        assert_eq!(
            h.limit(&case("read", "L1")),
            lim(256.0, BoundBy::L1LoadPorts)
        );
        assert_eq!(
            h.limit(&case("write", "L1")),
            lim(128.0, BoundBy::L1StorePorts)
        );
        assert_eq!(
            h.limit(&case("copy", "L1")),
            lim(256.0, BoundBy::L1StorePorts)
        );
        // L2: 64 B/cycle of fill under 256 GB/s of load ports.
        assert_eq!(h.limit(&case("read", "L2")), lim(128.0, BoundBy::L2Fill));
        // L3: 32 B/cycle per core.
        assert_eq!(h.limit(&case("read", "L3")), lim(64.0, BoundBy::L3PerCore));
        // DRAM: the whole system's peak, one core or many.
        assert_eq!(
            h.limit(&case("read", "DRAM")),
            lim(76.8, BoundBy::DramChannels)
        );
        let two = LimitCase {
            cores: 2,
            ..case("read", "DRAM")
        };
        assert_eq!(h.limit(&two), lim(76.8, BoundBy::DramChannels));
        // Two cores double a per-core ceiling; the clock scales it.
        let two = LimitCase {
            cores: 2,
            hz: Some(3e9),
            ..case("read", "L3")
        };
        assert_eq!(h.limit(&two), lim(192.0, BoundBy::L3PerCore));
        // Non-temporal stores go to memory from any working set.
        let nt = LimitCase {
            nontemporal: true,
            ..case("write", "L1")
        };
        assert_eq!(h.limit(&nt), lim(76.8, BoundBy::DramChannels));
    }

    #[test]
    fn unknown_ceilings_are_left_out_never_guessed() {
        // No DRAM peak: a DRAM record has no limit.
        let h = zen5(None);
        let none = Limit {
            gbps: None,
            bound_by: BoundBy::Unknown,
        };
        assert_eq!(h.limit(&case("read", "DRAM")), none);
        // A non-temporal write without a DRAM peak: the store ports.
        let nt = LimitCase {
            nontemporal: true,
            ..case("write", "L2")
        };
        assert_eq!(h.limit(&nt), lim(128.0, BoundBy::L1StorePorts));
        // No clock: nothing per core.
        let no_clock = LimitCase {
            hz: None,
            ..case("read", "L1")
        };
        assert_eq!(h.limit(&no_clock), none);
        // No row (an unknown core): nothing per core, the DRAM peak still.
        let mut u = zen5(Some(50.0));
        u.uarch = Some(UarchMatch {
            row: None,
            reason: "unknown".into(),
        });
        assert_eq!(u.limit(&case("read", "L1")), none);
        assert_eq!(
            u.limit(&case("read", "DRAM")),
            lim(50.0, BoundBy::DramChannels)
        );
        // An L3 figure the row lacks (Intel's mesh): L3 has no limit; it
        // is never judged by L2's fill or the L1 ports (issue 39).
        let mut i = zen5(None);
        if let Some(r) = i.uarch.as_mut().and_then(|m| m.row.as_mut()) {
            r.l3_per_core_bytes_per_cycle = None;
        }
        assert_eq!(i.limit(&case("read", "L3")), none);
        assert_eq!(i.limit(&case("read", "L2")), lim(128.0, BoundBy::L2Fill));
        // An L2->L1 figure the row lacks (Zen 3): L2 has no limit, where
        // the L1 load ports once called a full-speed L2 "50 %".
        let mut z3 = zen5(None);
        if let Some(r) = z3.uarch.as_mut().and_then(|m| m.row.as_mut()) {
            r.l2_to_l1_bytes_per_cycle = None;
        }
        assert_eq!(z3.limit(&case("read", "L2")), none);
        assert_eq!(z3.limit(&case("write", "L2")), none);
        assert_eq!(
            z3.limit(&case("read", "L1")),
            lim(256.0, BoundBy::L1LoadPorts)
        );
    }

    #[test]
    fn a_peak_stated_later_judges_the_dram_records() {
        let mut run = crate::model::Run::new(
            "cache",
            serde_json::json!({}),
            zen5(None),
            crate::model::Units::GB,
        );
        let rec = |regime: &str, nt: bool, best: f64| {
            let mut r = Record {
                regime: Some(regime.into()),
                nontemporal: Some(nt),
                gbps: Some(Stats::constant(best, 1)),
                ..Record::new(crate::model::SuiteId::Cache)
            };
            r.set_limit(run.host.limit(&LimitCase {
                nontemporal: nt,
                ..case("write", regime)
            }));
            r
        };
        run.records = vec![
            rec("DRAM", false, 20.0),
            rec("L1", true, 30.0),
            rec("L1", false, 100.0),
        ];
        assert_eq!(run.records[0].bound_by, Some(BoundBy::Unknown));
        run.restate_dram_peak(40.0);
        assert_eq!(run.records[0].limit_gbps, Some(40.0));
        assert_eq!(run.records[0].percent_of_limit, Some(50.0));
        assert_eq!(run.records[1].bound_by, Some(BoundBy::DramChannels));
        assert_eq!(run.records[2].bound_by, Some(BoundBy::L1StorePorts));
    }

    #[test]
    fn smt_siblings_share_one_cores_ports() {
        let h = zen5(None);
        assert_eq!(h.cores_of(&[0, 1]), 2);
        assert_eq!(h.cores_of(&[0, 2]), 1);
        assert_eq!(h.cores_of(&[7, 8]), 2, "unknown cpus count as cores");
    }

    #[test]
    fn the_record_carries_its_share() {
        let mut r = Record {
            gbps: Some(Stats {
                best: 61.44,
                median: 60.0,
                min: 59.0,
                max: 61.44,
                mean: 60.0,
                cv: 0.01,
                n: 3,
            }),
            ..Record::new(crate::model::SuiteId::Cache)
        };
        r.set_limit(lim(76.8, BoundBy::DramChannels));
        assert_eq!(r.limit_gbps, Some(76.8));
        assert!((r.percent_of_limit.unwrap() - 80.0).abs() < 1e-9);
        let j = serde_json::to_value(&r).unwrap();
        assert_eq!(j["bound_by"], "dram_channels");
        assert!(j.get("extra").is_none(), "typed fields, not extra");
        r.set_limit(Limit {
            gbps: None,
            bound_by: BoundBy::Unknown,
        });
        assert_eq!(r.percent_of_limit, None);
        assert_eq!(serde_json::to_value(&r).unwrap()["bound_by"], "unknown");
    }
}
