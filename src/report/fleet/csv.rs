//! `fleet.csv`: the pair matrices in long form, one row per flow, size and
//! view: `src,dst,size,direction,gbps,transport,step,concurrent,reason`.
//! `direction` is the view: `send` (the sender's bytes over its time) or
//! `recv` (what arrived, after the omit window: the headline). `gbps` is
//! GB/s = 10^9 bytes/s, as everywhere in bwscope; empty when the flow was
//! not measured, with the reason.

use crate::model::fleet::FleetRun;

pub const HEADER: [&str; 9] = [
    "src",
    "dst",
    "size",
    "direction",
    "gbps",
    "transport",
    "step",
    "concurrent",
    "reason",
];

pub fn encode(f: &FleetRun) -> Vec<u8> {
    let mut rows: Vec<Vec<String>> = vec![HEADER.iter().map(|s| s.to_string()).collect()];
    for m in &f.network {
        for x in &m.flows {
            for (dir, g) in [("send", x.send_gbps), ("recv", x.recv_gbps)] {
                rows.push(vec![
                    f.label(x.src),
                    f.label(x.dst),
                    x.size_bytes.to_string(),
                    dir.into(),
                    g.map_or(String::new(), |g| format!("{g:.6}")),
                    m.transport.name().to_string(),
                    x.step.to_string(),
                    x.concurrent.to_string(),
                    x.reason.clone().unwrap_or_default(),
                ]);
            }
        }
    }
    crate::report::csv::encode(&rows)
}
