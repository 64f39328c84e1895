//! Device agents: a copy stream through the transfer backends (CUDA copy
//! engines or SM copies, OpenCL), counted by the transfer suite's
//! convention: h2d, d2h and the `-sm` copies count each byte once, bidir
//! the bytes of both directions, d2d the bytes read + written.

use std::sync::Arc;

use super::agents::{
    AgentId,     Agent, AgentType, Body, Counted, Counter, Figure, Footprint, Gate, Running, Start,
};
use super::records;
use crate::error::UserError;
use crate::model::{AgentKind, Host, Record};
use crate::transfer::{self, pci, Api, Route, HostKind, Needs, Opened};

/// A host ↔ device copy stream through a transfer backend (`--device`).
/// Its core is not probed for spells: its thread only submits copies
/// that a DMA engine (or the device's cores) carry out, so its core's
/// share says nothing about its figure (docs/noise.md).
#[derive(Debug, Clone, serde::Serialize)]
pub struct DeviceAgent {
    #[serde(flatten)]
    pub id: AgentId,
    #[serde(serialize_with = "api_name")]
    pub api: Api,
    pub index: usize,
    pub direction: Route,
    pub host_kind: HostKind,
    pub bytes: u64,
    pub device: String,
    /// An OpenCL device that is the CPU itself (PoCL): no DMA.
    pub device_is_cpu: bool,
    pub link_gbps: Option<f64>,
}

fn api_name<S: serde::Serializer>(a: &Api, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(a.name())
}

impl AgentType for DeviceAgent {
    fn kind(&self) -> AgentKind {
        AgentKind::Device
    }

    fn id(&self) -> &AgentId {
        &self.id
    }

    fn footprint(&self) -> Footprint {
        Footprint {
            faulted: 2 * self.bytes,
            host: 0,
            copies: 3 * self.bytes,
        }
    }

    fn options(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("plain data")
    }

    fn start(&self, _: &Start) -> Result<Running, String> {
        start(self)
    }

    fn describe(&self, r: &mut Record, f: &Figure, _: &Host) {
        let direction = self.direction;
        r.op = direction.into();
        r.threads = 1;
        r.size_bytes = Some(self.bytes);
        r.payload_bytes_per_pass = Some(self.bytes);
        // d2d counts read + written; the payload is half.
        let payload = if f.valid && direction.device_only() { 0.5 } else { 1.0 };
        r.payload_gbps = r.gbps.map(|s| s.scaled(payload));
        let d = records::detail_of(r);
        d.backend = Some(self.api.name().into());
        d.device = Some(if self.device_is_cpu {
            format!("{} (the CPU itself: host memcpy, not DMA)", self.device)
        } else {
            self.device.clone()
        });
        d.host_kind = Some(self.host_kind.name().into());
        d.direction = Some(direction.name().into());
        d.device_is_cpu = Some(self.device_is_cpu);
        d.dma = Some(!self.device_is_cpu);
        d.link_theoretical_gbps = self.link_gbps.into();
        d.byte_convention = Some(BYTE_CONVENTION.into());
    }
}

/// How a device agent's bytes are counted (records say it).
pub const BYTE_CONVENTION: &str =
    "bytes copied (each byte once); bidir: both directions; d2d: read + written";

/// Bytes one copy of `size` counts in `dir`.
pub fn counted(dir: Route, size: u64) -> u64 {
    match dir.copy_of() {
        Route::Bidir | Route::D2d => 2 * size,
        _ => size,
    }
}

/// `BACKEND[N]:DIR[:HOSTKIND]` (`cuda:h2d`, `cuda1:sm-d2h`,
/// `opencl:d2h:host-ptr`): the device opened to check it exists and can
/// do the copy, then closed. `Ok(Err(why))`: the API is not available
/// here (a skipped agent).
pub fn plan_agent(
    spec: &str,
    name: String,
    bytes: u64,
) -> Result<Result<Agent, String>, UserError> {
    let bad = |m: String| UserError::flag("--device", m);
    let (api, index, direction, kind) = parse_spec(spec)?;
    let b = match transfer::open(api, index) {
        Opened::Ready(b) => b,
        Opened::Unavailable(u) => return Ok(Err(format!("{}: {}", api.name(), u.0))),
        Opened::BadIndex(e) => {
            return Err(bad(format!(
                "{} device {} does not exist: {} device(s) here{}",
                api.name(),
                e.index,
                e.count,
                if e.names.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", e.names.join("; "))
                }
            )))
        }
    };
    let host_kind = host_kind_of(kind, api, direction, b.as_ref())?;
    let info = b.info();
    let device_is_cpu = info.notes.iter().any(|n| n.starts_with("type CPU"));
    let link_gbps = info
        .pci_bus_id
        .as_deref()
        .and_then(pci::read_sysfs)
        .and_then(|c| c.theoretical_gbps);
    Ok(Ok(std::sync::Arc::new(DeviceAgent {
        id: AgentId {
            spec: format!(
                "{}{index}:{}:{}",
                api.name(),
                direction.name(),
                host_kind.name()
            ),
            name,
        },
        api,
        index,
        direction,
        host_kind,
        bytes,
        device: info.name.clone(),
        device_is_cpu,
        link_gbps,
    })))
}

/// The spec's API, device index, direction and host kind as written,
/// checked without opening anything.
fn parse_spec(spec: &str) -> Result<(Api, usize, Route, Option<&str>), UserError> {
    let bad = |m: String| UserError::flag("--device", m);
    let mut parts = spec.trim().split(':');
    let backend = parts.next().unwrap_or("");
    let dir = parts.next().unwrap_or("");
    let kind = parts.next();
    if parts.next().is_some() || dir.is_empty() {
        return Err(bad(format!(
            "'{spec}' is not a device agent: write BACKEND:DIR[:HOSTKIND], e.g. cuda:h2d, cuda1:sm-d2h or opencl:d2h:host-ptr"
        )));
    }
    let digits = backend.trim_start_matches(|c: char| c.is_ascii_alphabetic());
    let api = match &backend[..backend.len() - digits.len()] {
        "cuda" => Api::Cuda,
        "opencl" => Api::Opencl,
        other => {
            return Err(bad(format!(
                "'{other}' is not a backend: use cuda or opencl"
            )))
        }
    };
    let index: usize = if digits.is_empty() {
        0
    } else {
        digits
            .parse()
            .map_err(|_| bad(format!("'{digits}' is not a device index")))?
    };
    let dir_name = match dir.strip_prefix("sm-") {
        Some(d) => format!("{d}-sm"),
        None => dir.to_string(),
    };
    let direction = Route::parse(&dir_name)
        .filter(|d| *d != Route::Map)
        .ok_or_else(|| {
            bad(format!(
                "'{dir}' is not a direction: use h2d, d2h, bidir, d2d, or sm-h2d, sm-d2h, sm-d2d (CUDA)"
            ))
        })?;
    Ok((api, index, direction, kind))
}

/// The host kind the agent copies from or to (as written, or the API's
/// default for the direction), checked against what the device can do.
fn host_kind_of(
    kind: Option<&str>,
    api: Api,
    direction: Route,
    b: &dyn transfer::Backend,
) -> Result<HostKind, UserError> {
    let bad = |m: String| UserError::flag("--device", m);
    let host_kind = match kind {
        Some(k) => HostKind::parse(k)
            .filter(|k| b.kinds().contains(k))
            .ok_or_else(|| {
                bad(format!(
                    "'{k}' is not a host kind of {}: use {}",
                    api.name(),
                    b.kinds()
                        .iter()
                        .map(|k| k.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })?,
        None => match (api, direction.is_sm()) {
            (Api::Cuda, true) => HostKind::Mapped,
            (Api::Cuda, false) => HostKind::Pinned,
            (Api::Opencl, _) => HostKind::AllocHostPtr,
        },
    };
    if !b.directions().contains(&direction) {
        return Err(bad(format!(
            "{} cannot copy {}",
            api.name(),
            direction.name()
        )));
    }
    if let Some(why) = b.unsupported(host_kind, direction) {
        return Err(bad(format!(
            "{} {}: {why}",
            direction.name(),
            host_kind.name()
        )));
    }
    Ok(host_kind)
}

/// The device agent's thread: the device opened and the buffers prepared
/// there, then copies back to back in each phase.
fn start(a: &DeviceAgent) -> Result<Running, String> {
    let (api, index, dir, kind, size) = (a.api, a.index, a.direction, a.host_kind, a.bytes);
    Running::spawn(&a.id.name, move || {
        let backend = match transfer::open(api, index) {
            Opened::Ready(b) => b,
            Opened::Unavailable(u) => return Err(u.0),
            Opened::BadIndex(_) => return Err(format!("{} device {index} is gone", api.name())),
        };
        let mut backend = backend;
        let needs = Needs {
            second_host: dir.copy_of() == Route::Bidir,
            second_device: matches!(dir.copy_of(), Route::Bidir | Route::D2d),
        };
        let per = counted(dir, size);
        // The buffers are prepared in each phase, before the gate: a
        // session borrows its backend.
        let body: Body = Box::new(move |gate: &Arc<Gate>| {
            let mut session = match backend.prepare(kind, size as usize, needs) {
                Ok(s) => s,
                Err(e) => {
                    gate.arrive();
                    return Counted::one(Vec::new(), Some(e.to_string()));
                }
            };
            gate.arrive();
            let mut c = Counter::start();
            let mut ended = None;
            while !gate.stopped() {
                match transfer::catch("copy", || session.run(dir, 1)) {
                    Ok(_) => c.add(per),
                    Err(e) => {
                        ended = Some(e.to_string());
                        break;
                    }
                }
            }
            Counted::one(c.finish(), ended)
        });
        Ok(body)
    })
}
