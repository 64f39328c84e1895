//! What `bwscope watch` leaves for node_exporter after each sample: the
//! last sample's figures in the same families as every run's
//! (`command="watch"`), this machine's usual figures beside them, the
//! spell probes' readings, the state as one gauge per state (1 for the
//! current one, so an alert can say `bwscope_watch_state{state="stepped"}
//! == 1`) and the samples taken, a counter.

use super::{dims, Families};
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
    // The last sample's figures, as the survey's `dram_read` and
    // `dram_latency` (one core, a DRAM-sized set), with the kernel and set.
    let figure = |k: &str| {
        let mut l = vec![
            host(),
            ("command", "watch".to_string()),
            ("figure", k.to_string()),
        ];
        l.extend(dims(k));
        l
    };
    let read = [
        figure("dram_read"),
        vec![("kernel", w.kernel.clone()), size.clone()],
    ]
    .concat();
    let latency = [figure("dram_latency"), vec![size]].concat();
    let bw = super::quantity("GB/s").expect("listed");
    let lat = super::quantity("ns").expect("listed");
    if let Some(g) = w.last.dram_read_gbps {
        f.gauge(bw.name, bw.help).push(read.clone(), g * 1e9);
    }
    if let Some(ns) = w.last.latency_ns {
        f.gauge(lat.name, lat.help).push(latency.clone(), ns * 1e-9);
    }
    if let Some(g) = w.usual_dram_read_gbps {
        f.gauge(
            "watch_usual_bandwidth_bytes_per_second",
            "This machine's usual figure: the median of its clean watch samples, bytes per second.",
        )
        .push(read, g * 1e9);
    }
    if let Some(ns) = w.usual_latency_ns {
        f.gauge("watch_usual_latency_seconds", "This machine's usual latency: the median of its clean watch samples, seconds per load.")
            .push(latency, ns * 1e-9);
    }
    let l = &w.last;
    let probes = [
        ("watch_core_share_ratio", "The share of its core the core-share probe found in the last sample (1 = a core of its own; about 0.5 = a busy SMT sibling).", l.core_share, 1.0),
        ("watch_chase_seconds", "The memory probe's median reading in the last sample, seconds per load.", l.chase_ns, 1e-9),
        ("watch_chase_baseline_seconds", "The memory probe's quiet reading (10th percentile) the last sample is judged against, seconds per load.", l.chase_baseline_ns, 1e-9),
        ("watch_last_sample_timestamp_seconds", "When the last sample was taken, seconds since the Unix epoch.", Some(l.unix_seconds), 1.0),
        ("watch_usual_samples", "How many clean samples the usual figures rest on.", Some(w.usual_from as f64), 1.0),
    ];
    for (name, help, v, factor) in probes {
        if let Some(v) = v {
            f.gauge(name, help).push(plain.clone(), v * factor);
        }
    }
    for st in WatchState::ALL {
        f.gauge("watch_state", "The last sample's state: 1 for the current one (ok, core_shared, memory_contended, stepped), 0 for the others.")
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
