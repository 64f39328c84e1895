//! A network test's outcome as records: one per flow of each chunk size
//! (receiver-side rate after the omit window, both ends' counts kept), or
//! one per request/answer test.

use crate::model::detail::{NetDetail, PeerView};
use crate::model::{limits, Warning};
use crate::model::{Detail, Op, Record, Sample, Status};
use crate::net::client::Outcome;
use crate::net::flow::{interval_rate, Batch};
use crate::net::protocol::{Way, Interval, Mode, Setup};
use crate::stats;
use crate::util::units::format_bytes;

/// `tcp_<mode>_<direction>[_<flow>]`: the flow is named only for
/// bidirectional streaming, which yields two records per point.
pub fn kernel_name(s: &Setup, flow: Option<&str>) -> String {
    let mut k = format!("tcp_{}_{}", s.mode.name(), s.direction.name());
    if let (Some(f), Mode::Stream, Way::Bidir) = (flow, s.mode, s.direction) {
        k.push('_');
        k.push_str(f);
    }
    k
}

/// What a record of `s` says of its point, before any figure.
pub(super) fn case_detail(s: &Setup, flow: Option<&str>, peer: &str) -> NetDetail {
    NetDetail {
        mode: Some(s.mode.name().into()),
        direction: Some(s.direction.name().into()),
        flow: flow.map(String::from).into(),
        streams: Some(s.streams as u64),
        chunk_bytes: Some(s.chunk_bytes),
        peer: Some(peer.into()),
        time_seconds: (s.time_ms > 0).then(|| s.time_ms as f64 / 1000.0).into(),
        bytes_asked: (s.bytes > 0).then_some(s.bytes).into(),
        omit_seconds: Some(s.omit_ms as f64 / 1000.0),
        ..NetDetail::default()
    }
}

/// The net detail of a record this suite made.
fn detail_of(r: &mut Record) -> &mut NetDetail {
    match &mut r.detail {
        Detail::Net(d) => d,
        other => unreachable!("a net record with a {} detail", other.suite()),
    }
}

/// The records of one test: one per flow.
pub fn records(o: &Outcome, peer: &str) -> Vec<Record> {
    let s = &o.setup;
    let rr = s.mode == Mode::Rr;
    let leader = PeerView {
        sent_bytes: o.sent,
        received_bytes: o.received,
        rounds: rr.then_some(o.rounds),
        seconds: o.seconds,
    };
    let transponder = PeerView {
        sent_bytes: o.server.sent_bytes,
        received_bytes: o.server.received_bytes,
        rounds: rr.then_some(o.server.rounds),
        seconds: o.server.active_nanos as f64 / 1e9,
    };
    let mut out = Vec::new();
    match s.mode {
        Mode::Stream => {
            if s.direction.leader_sends() {
                out.push(flow_record(
                    o,
                    Op::Send,
                    o.sent,
                    o.server.received_bytes,
                    &o.server.intervals,
                    peer,
                ));
            }
            if s.direction.leader_receives() {
                out.push(flow_record(
                    o,
                    Op::Recv,
                    o.server.sent_bytes,
                    o.received,
                    &o.recv_intervals,
                    peer,
                ));
            }
        }
        Mode::Rr => out.push(rr_record(o, peer)),
    }
    for r in &mut out {
        let d = detail_of(r);
        d.leader = Some(leader);
        d.transponder = Some(transponder);
    }
    out
}

/// A flow's record: its op is the flow (`send`, `recv`, `both`).
fn base(o: &Outcome, flow: Op, peer: &str) -> Record {
    let s = &o.setup;
    let kernel = kernel_name(s, Some(flow.as_str()));
    let detail = case_detail(s, Some(flow.as_str()), peer);
    Record {
        kernel,
        op: flow,
        size_bytes: Some(s.chunk_bytes),
        threads: s.streams as u32,
        ..Record::new(detail)
    }
}

/// Why a flow with bytes has no sample after the omit window.
fn why_no_sample(o: &Outcome, flow: &str) -> String {
    let s = &o.setup;
    let asked = (s.time_ms as f64 + s.omit_ms as f64) / 1000.0;
    let server_s = o.server.active_nanos as f64 / 1e9;
    // The server sends (the leader's recv flow) and stopped well before
    // the time asked: one of its per-test limits cut the test short, and
    // more --time would change nothing.
    if flow == "recv" && s.bytes == 0 && server_s < asked * 0.9 {
        return format!(
            "the server stopped sending after {} in {server_s:.2} s of the {asked:.2} s asked, before the omit window ended: its --max-bytes (or --max-time) limit cut the test (its first log line gives them); ask for --bytes within the limit, or raise it on the server",
            format_bytes(o.server.sent_bytes)
        );
    }
    NO_SAMPLE.into()
}

const NO_SAMPLE: &str =
    "no complete sample after the omit window: lengthen --time or shorten --omit";

fn finish(
    r: &mut Record,
    samples: Vec<Sample>,
    (sender, receiver): (u64, u64),
    rate: Option<f64>,
    why_empty: impl FnOnce() -> String,
) {
    let rates: Vec<f64> = samples
        .iter()
        .filter(|x| x.seconds > 0.0)
        .map(|x| x.bytes as f64 / x.seconds / 1e9)
        .collect();
    r.gbps = stats::summarize(&rates, true);
    r.payload_gbps = r.gbps;
    r.samples = samples;
    let d = detail_of(r);
    d.sender_bytes = Some(sender);
    d.receiver_bytes = Some(receiver);
    d.receiver_gbps = rate.map(|b| b / 1e9).into();
    d.receiver_gbitps = rate.map(|b| b * 8.0 / 1e9).into();
    match (rate, r.gbps) {
        (Some(_), Some(g)) => {
            if g.cv > limits::CV {
                r.warnings.push(Warning::HighCv { cv: g.cv });
            }
        }
        _ => {
            r.status = Status::Error;
            r.reason = Some(why_empty());
        }
    }
}

fn flow_record(
    o: &Outcome,
    flow: Op,
    sender: u64,
    receiver: u64,
    iv: &[Interval],
    peer: &str,
) -> Record {
    let mut r = base(o, flow.clone(), peer);
    let samples = iv
        .iter()
        .map(|i| Sample {
            seconds: i.nanos as f64 / 1e9,
            bytes: i.bytes,
            probe: None,
        })
        .collect();
    finish(
        &mut r,
        samples,
        (sender, receiver),
        interval_rate(iv),
        || why_no_sample(o, flow.as_str()),
    );
    r
}

/// Batches of all streams combined by position: bytes add up, the time is
/// the slowest stream's (streams run concurrently).
fn combine(batches: &[Vec<Batch>]) -> Vec<Sample> {
    let n = batches.iter().map(|b| b.len()).min().unwrap_or(0);
    (0..n)
        .map(|k| Sample {
            seconds: batches.iter().map(|b| b[k].seconds).fold(0.0, f64::max),
            bytes: batches.iter().map(|b| b[k].bytes).sum(),
            probe: None,
        })
        .collect()
}

fn rr_record(o: &Outcome, peer: &str) -> Record {
    let s = &o.setup;
    let flow = match s.direction {
        Way::Bidir => Op::Both,
        d => d.op(),
    };
    let mut r = base(o, flow, peer);
    let samples = combine(&o.batches);
    let secs: f64 = samples.iter().map(|x| x.seconds).sum();
    let bytes: u64 = samples.iter().map(|x| x.bytes).sum();
    let rate = (secs > 0.0).then(|| bytes as f64 / secs);
    // Round-trip time of one request/answer, median over stream 0's batches.
    let rtts: Vec<f64> = o
        .batches
        .first()
        .map(|b| {
            b.iter()
                .filter(|x| x.rounds > 0)
                .map(|x| x.seconds / x.rounds as f64 * 1e6)
                .collect()
        })
        .unwrap_or_default();
    detail_of(&mut r).rtt_us = stats::summarize(&rtts, false).map(|x| x.median).into();
    let (sender, receiver) = match s.direction {
        Way::Send => (o.sent, o.server.received_bytes),
        Way::Recv => (o.server.sent_bytes, o.received),
        Way::Bidir => (
            o.sent + o.server.sent_bytes,
            o.server.received_bytes + o.received,
        ),
    };
    finish(&mut r, samples, (sender, receiver), rate, || {
        NO_SAMPLE.into()
    });
    r
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn rr_streams_combine_by_position() {
        let b = |secs: f64, bytes: u64| Batch {
            start: Duration::ZERO,
            seconds: secs,
            bytes,
            rounds: 10,
        };
        let s = combine(&[vec![b(0.1, 100), b(0.2, 100)], vec![b(0.3, 50)]]);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].bytes, 150);
        assert!((s[0].seconds - 0.3).abs() < 1e-12);
    }
}
