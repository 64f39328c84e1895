//! Which records a run's headline figures ([`crate::model::headline`]) are
//! read from: once, here, for the summary, the history, the fleet's
//! verdicts, the metrics files and the HTML report. Every figure is a
//! record's `best` (the estimate of what the path can do; medians swing
//! 2× on shared machines), picked by shape ([`summary::Shape`]), never by
//! a kernel's name.

use super::summary::{self, Shape};
use crate::model::headline::{Figure, Headline, Quantity};
use crate::model::{noise_slowdown, Op, Record, Regime, Run, Status, SuiteId};

/// Every headline figure `run`'s records allow: the fixed ones in
/// [`Headline::ALL`]'s order, then what each suite declares of its
/// records (`SuiteDetail::judged`).
pub fn figures(run: &Run) -> Vec<Figure> {
    let mut out: Vec<Figure> = Headline::ALL
        .into_iter()
        .filter_map(|h| read(run, h))
        .collect();
    out.extend(declared(run));
    out
}

/// The fixed headline `h` of `run`, if its records allow it.
pub fn of(run: &Run, h: Headline) -> Option<Figure> {
    read(run, h)
}

fn read(run: &Run, h: Headline) -> Option<Figure> {
    let single = |shape: &Shape, regime: Regime| summary::single(run, shape, &regime);
    let (value, record) = match h {
        Headline::L1Read => single(&Shape::READ, Regime::L1)?,
        Headline::L2Read => single(&Shape::READ, Regime::L2)?,
        Headline::L3Read => single(&Shape::READ, Regime::L3)?,
        Headline::DramRead => single(&Shape::READ, Regime::Dram)?,
        Headline::DramReadAll => summary::all_cores(run, &Op::Read)?,
        Headline::DramWrite => single(&Shape::WRITE, Regime::Dram)?,
        Headline::DramNtWrite => single(&Shape::NT_WRITE, Regime::Dram)?,
        Headline::DramCopy => summary::dram_copy(run).map(|c| (c.gbps, c.winner))?,
        Headline::DramMemcpy => single(&Shape::MEMCPY, Regime::Dram)?,
        Headline::DramLatency => summary::dram_latency(run)?,
        Headline::DeviceMemory => device_memory(run)?,
        Headline::Clock => {
            return run
                .host
                .clock_hz
                .filter(|hz| hz.is_finite() && *hz > 0.0)
                .map(|hz| Figure::of(h, hz / 1e9));
        }
    };
    Some(with_record(Figure::of(h, value), run, record))
}

/// `f` read from `record` of `run`: its index, kernel and the noise it
/// was measured in.
fn with_record(mut f: Figure, run: &Run, record: &Record) -> Figure {
    f.record = run.records.iter().position(|r| std::ptr::eq(r, record));
    f.kernel = (!record.kernel.is_empty()).then(|| record.kernel.clone());
    // The reading itself, not what stands out of its resolution: a
    // verdict gives a figure the benefit of the doubt (a short window
    // resolves 2 CPUs and could otherwise hide a busy machine).
    f.foreign_cpus = record.noise.map(|n| n.foreign_cpus);
    f.noise_slowdown = f
        .foreign_cpus
        .map(|c| noise_slowdown(c, record.threads, run.host.cpus.len()));
    f.contended = record.repeats.as_ref().is_some_and(|x| x.contended);
    f
}

/// What each suite declares a fleet judges of its records
/// ([`SuiteDetail::judged`](crate::model::SuiteDetail::judged)): numa's
/// tier cells, memtype's kinds, contend's aggregate.
fn declared(run: &Run) -> Vec<Figure> {
    let mut out = Vec::new();
    for &suite in SuiteId::ALL {
        let records: Vec<&Record> = run
            .records
            .iter()
            .filter(|r| r.status == Status::Ok && r.suite() == suite)
            .collect();
        for j in suite.judged(&records) {
            let f = Figure::declared(
                j.metric,
                j.quantity,
                j.higher_is_better,
                j.family,
                j.labels,
                j.what,
                j.value,
            );
            out.push(with_record(f, run, j.record));
        }
    }
    out
}

/// The smallest d2d copy that judges the device's own memory: DCGM's
/// memory test works on arrays of 256 MiB (64 Mi 4-byte integers), and a
/// copy of this size (512 MiB of traffic) is far past a GPU's last-level
/// cache (an A100's L2 is 40 MB), which would flatter a smaller copy.
pub const DEVICE_MEMORY_MIN_BYTES: u64 = 256 << 20;

/// The transfer suite's best device-to-device copy (d2d or d2d-sm) of at
/// least `DEVICE_MEMORY_MIN_BYTES`: bytes read + bytes written in device
/// memory, the way DCGM's memory bandwidth floor counts them
/// (`history::reference`).
fn device_memory(run: &Run) -> Option<(f64, &Record)> {
    run.records
        .iter()
        .filter(|r| r.status == Status::Ok && r.suite() == SuiteId::Transfer)
        .filter(|r| matches!(r.op, Op::D2d | Op::D2dSm))
        .filter(|r| r.size_bytes.is_some_and(|s| s >= DEVICE_MEMORY_MIN_BYTES))
        .filter_map(|r| r.gbps.map(|g| (g.best, r)))
        .max_by(|a, b| a.0.total_cmp(&b.0))
}

/// A figure's value as the summary and the history print it: bandwidth
/// with three significant digits, latency in whole ns.
pub fn show(value: f64, quantity: Quantity) -> String {
    match quantity {
        Quantity::Latency => format!("{value:.0} ns"),
        q => format!("{} {}", super::short_num(value), q.unit()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only a transfer d2d copy past the cache-sized bound is the
    /// device's memory; a smaller copy, a failed one or an h2d copy is not.
    #[test]
    fn device_memory_is_the_best_large_d2d_copy() {
        let rec = |op: Op, size: u64, best: f64, status: Status| Record {
            op,
            size_bytes: Some(size),
            gbps: Some(crate::model::Stats::constant(best, 2)),
            status,
            ..Record::new(SuiteId::Transfer)
        };
        let big = DEVICE_MEMORY_MIN_BYTES;
        let mut run = Run::new(
            "transfer",
            serde_json::json!({}),
            crate::model::Host::default(),
            Default::default(),
        );
        run.records = vec![
            rec(Op::D2d, big / 2, 9000.0, Status::Ok),
            rec(Op::H2d, big, 8000.0, Status::Ok),
            rec(Op::D2dSm, big, 7000.0, Status::Error),
            rec(Op::D2d, big, 1500.0, Status::Ok),
            rec(Op::D2dSm, 2 * big, 1600.0, Status::Ok),
        ];
        let f = figures(&run);
        let d: Vec<_> = f
            .iter()
            .filter(|f| f.headline == Some(Headline::DeviceMemory))
            .collect();
        assert_eq!(d.len(), 1);
        assert_eq!((d[0].value, d[0].unit()), (1600.0, "GB/s"));
        assert_eq!(d[0].record, Some(4));
        run.records.truncate(3);
        assert!(figures(&run)
            .iter()
            .all(|f| f.headline != Some(Headline::DeviceMemory)));
    }

    /// "DRAM copy" is the fastest copy of any kernel and names it; "DRAM
    /// memcpy" is libc's memcpy whichever kernel won.
    #[test]
    fn copy_and_memcpy_are_two_figures() {
        let run: Run =
            serde_json::from_str(include_str!("../../tests/fixtures/cache-quick.json")).unwrap();
        let figs = figures(&run);
        let copy = figs.iter().find(|f| f.headline == Some(Headline::DramCopy));
        let memcpy = figs
            .iter()
            .find(|f| f.headline == Some(Headline::DramMemcpy));
        if let Some(m) = memcpy {
            assert_eq!(m.kernel.as_deref(), Some("libc_memcpy"));
            let c = copy.expect("a memcpy record is a copy too");
            assert!(c.value >= m.value, "{c:?} {m:?}");
        }
        for f in figs.iter().filter(|f| f.headline != Some(Headline::Clock)) {
            let r = &run.records[f.record.expect("every figure but the clock has its record")];
            assert_eq!(f.kernel.as_deref(), Some(r.kernel.as_str()));
        }
    }
}
