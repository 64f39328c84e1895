//! Host ↔ accelerator transfer backends, both loaded at run time.
//!
//! A backend opens one device and hands out a [`Session`] per
//! (host memory kind, size): the host buffer(s) of that kind plus one or two
//! device buffers. The session runs `reps` copies in one direction and
//! returns the host-clock and device-event times. Everything independent of
//! the API (calibration, statistics, verification, zero-copy and WC
//! heuristics, placement, records) lives in `suites::transfer`.
//!
//! Neither backend links against its library: `opencl3` dlopens
//! `libOpenCL.so.1` and `cudarc` (`dynamic-loading`) dlopens `libcuda.so`,
//! so the binary builds and runs on machines with neither.

pub mod cuda;
pub mod opencl;
pub mod pci;

use serde::Serialize;

use crate::model::Op;

/// Which API moves the bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Api {
    Cuda,
    Opencl,
}

impl Api {
    pub fn name(self) -> &'static str {
        match self {
            Api::Cuda => "cuda",
            Api::Opencl => "opencl",
        }
    }
}

/// Host memory kinds. Each belongs to one API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum HostKind {
    /// Page-aligned anonymous memory, initialised; the driver stages it.
    Pageable,
    /// `cuMemHostAlloc(PORTABLE)`: page-locked, cached.
    Pinned,
    /// `cuMemHostAlloc(PORTABLE | WRITECOMBINED)`.
    PinnedWc,
    /// Pageable memory pinned afterwards with `cuMemHostRegister(PORTABLE)`.
    Registered,
    /// `cuMemHostAlloc(PORTABLE | DEVICEMAP)`: the device can address it.
    Mapped,
    /// OpenCL: a page-aligned host allocation passed to `clEnqueue{Write,Read}Buffer`.
    HostPtr,
    /// OpenCL: a mapped `CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE` buffer
    /// used as the host side of write/read (the "pinned staging" idiom).
    AllocHostPtr,
    /// OpenCL: `CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_ONLY` (the APU
    /// write-combined case), mapped for the CPU.
    AllocHostPtrRo,
}

pub const CUDA_KINDS: &[HostKind] = &[
    HostKind::Pageable,
    HostKind::Pinned,
    HostKind::PinnedWc,
    HostKind::Registered,
    HostKind::Mapped,
];
pub const OPENCL_KINDS: &[HostKind] = &[
    HostKind::HostPtr,
    HostKind::AllocHostPtr,
    HostKind::AllocHostPtrRo,
];

impl HostKind {
    pub fn name(self) -> &'static str {
        match self {
            HostKind::Pageable => "pageable",
            HostKind::Pinned => "pinned",
            HostKind::PinnedWc => "pinned-wc",
            HostKind::Registered => "registered",
            HostKind::Mapped => "mapped",
            HostKind::HostPtr => "host-ptr",
            HostKind::AllocHostPtr => "alloc-host-ptr",
            HostKind::AllocHostPtrRo => "alloc-host-ptr-ro",
        }
    }

    pub fn api(self) -> Api {
        if CUDA_KINDS.contains(&self) {
            Api::Cuda
        } else {
            Api::Opencl
        }
    }

    pub fn all() -> impl Iterator<Item = HostKind> {
        CUDA_KINDS.iter().chain(OPENCL_KINDS).copied()
    }

    pub fn parse(s: &str) -> Option<HostKind> {
        HostKind::all().find(|k| k.name() == s)
    }

    /// Kinds whose host buffer is a mapping of a device-visible object: the
    /// `map` direction (map/unmap cost, zero-copy detection) applies.
    pub fn is_mapped(self) -> bool {
        matches!(
            self,
            HostKind::Mapped | HostKind::AllocHostPtr | HostKind::AllocHostPtrRo
        )
    }
}

/// What is copied where: a transfer case's route, which is its records'
/// op. Not `Direction`: the network's `net::protocol::Way` (which way a
/// test's bytes flow between two hosts) is another question with a
/// `bidir` of its own, and the two shared a name. The words are the
/// model's ([`Op`]): a route is the closed set of ops a copy backend
/// dispatches on, exhaustively, and spells itself through `Op` (in the
/// JSON too).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    H2d,
    D2h,
    /// Device buffer to device buffer on the same device.
    D2d,
    /// H2D and D2H at once on two queues/streams.
    Bidir,
    /// Unmap + map of a mapped kind: moves data only when the mapping is
    /// not zero-copy.
    Map,
    /// A copy kernel run by the GPU's SMs reads mapped host memory in
    /// place (zero-copy over the link): nvbandwidth's `_sm` tests.
    H2dSm,
    /// A copy kernel writes mapped host memory in place.
    D2hSm,
    /// A copy kernel between two device buffers.
    D2dSm,
}

pub const ROUTES: &[Route] = &[
    Route::H2d,
    Route::D2h,
    Route::D2d,
    Route::Bidir,
    Route::Map,
    Route::H2dSm,
    Route::D2hSm,
    Route::D2dSm,
];

/// What a backend without copy kernels offers.
pub const ENGINE_ROUTES: &[Route] = &[Route::H2d, Route::D2h, Route::D2d, Route::Bidir, Route::Map];

impl From<Route> for Op {
    fn from(r: Route) -> Op {
        match r {
            Route::H2d => Op::H2d,
            Route::D2h => Op::D2h,
            Route::D2d => Op::D2d,
            Route::Bidir => Op::Bidir,
            Route::Map => Op::Map,
            Route::H2dSm => Op::H2dSm,
            Route::D2hSm => Op::D2hSm,
            Route::D2dSm => Op::D2dSm,
        }
    }
}

impl Serialize for Route {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl Route {
    /// Its word: its records' op (every route is a word the model knows;
    /// a test checks each).
    pub fn name(self) -> &'static str {
        Op::from(self).word().unwrap_or_default()
    }

    /// The copy an SM direction performs (itself for the others): what is
    /// read and written, so verification and byte counting follow it.
    pub fn copy_of(self) -> Route {
        match self {
            Route::H2dSm => Route::H2d,
            Route::D2hSm => Route::D2h,
            Route::D2dSm => Route::D2d,
            d => d,
        }
    }

    /// Moved by a kernel on the SMs rather than by a copy engine.
    pub fn is_sm(self) -> bool {
        self != self.copy_of()
    }

    /// Involves no host memory.
    pub fn device_only(self) -> bool {
        self.copy_of() == Route::D2d
    }

    pub fn parse(s: &str) -> Option<Route> {
        ROUTES.iter().copied().find(|d| d.name() == s)
    }
}

/// The clock a number comes from (the record states it).
pub use crate::model::detail::Timer;

/// Times of one batch of `reps` copies.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Timed {
    /// Host clock, from the first enqueue to the end of synchronisation.
    pub host_s: f64,
    /// Device events around the batch, where the API has them.
    pub device_s: Option<f64>,
    /// Bidirectional only: device time of the H2D and the D2H stream.
    pub per_dir_s: Option<[f64; 2]>,
    /// The copies were queued behind a start blocker (a kernel holding the
    /// stream until all were queued), so enqueue cost is outside `device_s`.
    pub blocked: bool,
}

/// A failed driver call, with the driver's own error name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverError {
    /// The API function, e.g. `cuMemAlloc_v2` or `clCreateBuffer`.
    pub call: String,
    /// The driver's name for the code, e.g. `CUDA_ERROR_OUT_OF_MEMORY`.
    pub name: String,
}

impl DriverError {
    pub fn new(call: impl Into<String>, name: impl Into<String>) -> DriverError {
        DriverError {
            call: call.into(),
            name: name.into(),
        }
    }
}

impl std::fmt::Display for DriverError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} failed: {}", self.call, self.name)
    }
}

/// Identity and limits of the opened device.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DeviceInfo {
    pub backend: String,
    /// Index in the backend's device list (`--device`).
    pub index: usize,
    pub name: String,
    pub vendor: Option<String>,
    /// Driver / runtime version as the API reports it.
    pub driver_version: Option<String>,
    /// `dddd:bb:dd.f`, lower case, as sysfs names it.
    pub pci_bus_id: Option<String>,
    /// Host and device share memory (OpenCL `CL_DEVICE_HOST_UNIFIED_MEMORY`,
    /// CUDA `INTEGRATED`).
    pub host_unified: Option<bool>,
    pub total_mem_bytes: Option<u64>,
    /// Free device memory (CUDA `cuMemGetInfo`); OpenCL has no portable query.
    pub free_mem_bytes: Option<u64>,
    /// Largest single allocation (OpenCL `CL_DEVICE_MAX_MEM_ALLOC_SIZE`).
    pub max_alloc_bytes: Option<u64>,
    /// Copy engines (CUDA `ASYNC_ENGINE_COUNT`): bidir overlaps only with 2.
    pub copy_engines: Option<u32>,
    /// Backend-specific notes (platform name, device type, ...).
    pub notes: Vec<String>,
}

/// Which buffers a session needs beyond one host and one device buffer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Needs {
    /// A second host buffer (bidir: the D2H destination).
    pub second_host: bool,
    /// A second device buffer (d2d destination, bidir D2H source).
    pub second_device: bool,
}

/// An opened device.
pub trait Backend {
    fn info(&self) -> &DeviceInfo;
    /// Host kinds this backend provides.
    fn kinds(&self) -> &'static [HostKind];
    /// Directions this backend can measure.
    fn directions(&self) -> &'static [Route] {
        ENGINE_ROUTES
    }
    /// Why (kind, dir) cannot be measured on this device, if it cannot: the
    /// case becomes a `skipped` record with this reason.
    fn unsupported(&self, _kind: HostKind, _dir: Route) -> Option<String> {
        None
    }
    /// The clock that heads a record of `kind` in `dir`: device events for
    /// asynchronous copies, the host clock for pageable/blocking ones.
    fn headline_timer(&self, kind: HostKind, dir: Route) -> Timer;
    /// Allocate the buffers of one case. Host buffers hold random data.
    fn prepare(
        &mut self,
        kind: HostKind,
        bytes: usize,
        needs: Needs,
    ) -> Result<Box<dyn Session + '_>, DriverError>;
}

/// The buffers of one (kind, size) case.
pub trait Session {
    /// Host buffer `i` (0: H2D source / D2H destination; 1: bidir D2H
    /// destination). For mapped kinds this is the mapped pointer.
    fn host(&mut self, i: usize) -> &mut [u8];
    /// Run `reps` copies in `dir`, synchronise, and report the times.
    fn run(&mut self, dir: Route, reps: u64) -> Result<Timed, DriverError>;
    /// Blocking copy from a plain slice into device buffer `i` (verification).
    fn write_device(&mut self, i: usize, src: &[u8]) -> Result<(), DriverError>;
    /// Blocking copy from device buffer `i` into a plain slice (verification).
    fn read_device(&mut self, i: usize, dst: &mut [u8]) -> Result<(), DriverError>;
    /// Map round trip for verification: what the caller wrote through the
    /// mapping (`host(0)`) is read back through the API into `out` (OpenCL:
    /// unmap, read the object, map again; CUDA `mapped`: read through the
    /// device alias). `None` where the kind has no mapping to check.
    fn map_roundtrip(&mut self, out: &mut [u8]) -> Result<Option<()>, DriverError>;
}

/// Why no device could be opened: a capability missing here, reported as a
/// `skipped` record with exit 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable(pub String);

/// How `--device` went wrong: a user error (exit 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoSuchDevice {
    pub index: usize,
    pub count: usize,
    pub names: Vec<String>,
}

/// The outcome of opening a backend.
pub enum Opened {
    Ready(Box<dyn Backend>),
    Unavailable(Unavailable),
    BadIndex(NoSuchDevice),
}

/// Open device `index` of `api`.
pub fn open(api: Api, index: usize) -> Opened {
    match api {
        Api::Cuda => cuda::open(index),
        Api::Opencl => opencl::open(index),
    }
}

/// Run `f` with panics caught and silenced: cudarc's dynamic loader panics
/// on a missing library or symbol, and a driver-side fault must not take
/// down a run whose earlier records are already measured.
pub fn catch<T>(what: &str, f: impl FnOnce() -> Result<T, DriverError>) -> Result<T, DriverError> {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    std::panic::set_hook(hook);
    match r {
        Ok(r) => r,
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            Err(DriverError::new(
                what,
                format!("loader panic: {}", msg.lines().next().unwrap_or("")),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_directions_round_trip_names() {
        for k in HostKind::all() {
            assert_eq!(HostKind::parse(k.name()), Some(k));
        }
        for d in ROUTES {
            assert!(!d.name().is_empty(), "{d:?} has no word");
            assert_eq!(Route::parse(d.name()), Some(*d));
            assert_eq!(
                serde_json::to_value(d).unwrap(),
                serde_json::json!(d.name())
            );
        }
        assert_eq!(Route::H2dSm.copy_of(), Route::H2d);
        assert!(Route::D2dSm.is_sm() && Route::D2dSm.device_only());
        assert!(!Route::Bidir.is_sm() && !Route::Bidir.device_only());
        assert_eq!(HostKind::parse("pinned-uc"), None);
        assert_eq!(HostKind::Pinned.api(), Api::Cuda);
        assert_eq!(HostKind::AllocHostPtrRo.api(), Api::Opencl);
    }

    #[test]
    fn catch_turns_a_panic_into_an_error() {
        let e = catch::<()>("cuFoo", || panic!("Missing symbol cuFoo")).unwrap_err();
        assert_eq!(e.call, "cuFoo");
        assert!(e.name.contains("Missing symbol cuFoo"), "{}", e.name);
        assert_eq!(catch("x", || Ok(3)).unwrap(), 3);
    }
}
