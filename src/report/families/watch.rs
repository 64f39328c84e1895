//! What `bwscope watch` leaves for node_exporter after each sample: the
//! last sample's figures in the same families as every run's
//! (`command="watch"`), this machine's usual figures beside them, the
//! spell probes' readings, the state as one gauge per state (1 for the
//! current one, so an alert can say `bwscope_watch_state{state="stepped"}
//! == 1`) and the samples taken, a counter.

use super::{family_of, help_of, labels_of, Families};
use crate::model::headline::{Figure, Headline};
use crate::model::{WatchState, WatchStatus};
use crate::report::exposition::{Family, Kind};

/// The families of a watch file.
pub fn families(w: &WatchStatus) -> Vec<Family> {
    let mut f = Families::default();
    let host = || ("host", w.host.clone());
    let plain = vec![host()];
    let size = ("size_bytes", w.size_bytes.to_string());
    f.get("run", Kind::Info, super::RUN_HELP).push(
        vec![
            host(),
            ("command", "watch".into()),
            ("version", env!("CARGO_PKG_VERSION").into()),
            (
                "revision",
                crate::model::REVISION.unwrap_or_default().into(),
            ),
        ],
        1.0,
    );
    // The last sample's figures, as the survey's `DRAM read` and `DRAM
    // latency` (one core, a DRAM-sized set), with the kernel and the set.
    let labels = |h: Headline, extra: Vec<(&'static str, String)>| {
        let mut l = vec![host(), ("command", "watch".to_string())];
        l.extend(labels_of(&Figure::of(h, 0.0)));
        l.extend(extra);
        l
    };
    let read = labels(
        Headline::DramRead,
        vec![("kernel", w.kernel.clone()), size.clone()],
    );
    let latency = labels(Headline::DramLatency, vec![size]);
    for (h, last, usual, lbl) in [
        (
            Headline::DramRead,
            w.last.dram_read_gbps,
            w.usual_dram_read_gbps,
            &read,
        ),
        (
            Headline::DramLatency,
            w.last.latency_ns,
            w.usual_latency_ns,
            &latency,
        ),
    ] {
        let fig = Figure::of(h, 0.0);
        if let Some(v) = last {
            f.gauge(&family_of(&fig), &help_of(&fig))
                .push(lbl.clone(), h.quantity().to_base(v));
        }
        if let Some(v) = usual {
            f.gauge(
                &format!("watch_usual_{}", family_of(&fig)),
                "This machine's usual figure: the median of its clean samples in the history store and this watch (the one step rule's usual level), in the figure's base unit.",
            )
            .push(lbl.clone(), h.quantity().to_base(v));
        }
    }
    let l = &w.last;
    let probes = [
        ("watch_core_share_ratio", "The share of its core the core-share probe found in the last sample (1 = a core of its own; about 0.5 = a busy SMT sibling).", l.core_share, 1.0),
        ("watch_chase_seconds", "The memory probe's median reading in the last sample, seconds per load.", l.chase_ns, 1e-9),
        ("watch_chase_baseline_seconds", "The memory probe's quiet reading (10th percentile) the last sample is judged against, seconds per load.", l.chase_baseline_ns, 1e-9),
        ("watch_last_sample_timestamp_seconds", "When the last sample was taken, seconds since the Unix epoch.", Some(l.unix_seconds), 1.0),
        ("watch_usual_samples", "How many clean samples (the history store's and this watch's, before the last) the usual figures rest on.", Some(w.usual_from as f64), 1.0),
    ];
    for (name, help, v, factor) in probes {
        if let Some(v) = v {
            f.gauge(name, help).push(plain.clone(), v * factor);
        }
    }
    for st in WatchState::ALL {
        f.gauge("watch_state", "The last sample's state: 1 for the current one (ok, core_shared, memory_contended, noisy, stepped), 0 for the others.")
            .push(vec![host(), ("state", st.as_str().into())], f64::from(u8::from(st == l.state)));
    }
    f.get(
        "watch_samples",
        Kind::Counter,
        "Samples this watch has taken since it started.",
    )
    .push(plain, w.samples as f64);
    f.0
}
