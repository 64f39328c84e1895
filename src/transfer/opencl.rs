//! OpenCL backend (opencl3, `libOpenCL.so.1` loaded at run time).
//!
//! Kinds: `host-ptr` (our page-aligned, random-filled mmap passed to
//! blocking `clEnqueueWriteBuffer`/`ReadBuffer`: the pageable path),
//! `alloc-host-ptr` and `alloc-host-ptr-ro` (a `CL_MEM_ALLOC_HOST_PTR`
//! buffer kept mapped and used as the host side of non-blocking
//! write/read: the "pinned staging" idiom; `-ro` adds `CL_MEM_READ_ONLY`,
//! which AMD APUs expose to the CPU as write-combined memory). Device
//! buffers are plain `CL_MEM_READ_WRITE`.
//!
//! Timing: every command carries a profiling event; the device time of a
//! batch is the span from the first command's START to the last one's END.

use std::ptr;

use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::{Device, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_GPU};
use opencl3::error_codes::ClError;
use opencl3::event::Event;
use opencl3::memory::{
    Buffer, ClMem, CL_MAP_READ, CL_MAP_WRITE, CL_MEM_ALLOC_HOST_PTR, CL_MEM_READ_ONLY,
    CL_MEM_READ_WRITE,
};
use opencl3::types::{cl_bool, cl_device_id, CL_BLOCKING, CL_NON_BLOCKING};

use super::{
    Backend, DeviceInfo, DriverError, HostKind, Needs, NoSuchDevice, Opened, Route, Session, Timed,
    Timer, Unavailable, OPENCL_KINDS,
};
use crate::memory::{Buffer as HostBuffer, PageKind};

fn cl(call: &str) -> impl Fn(ClError) -> DriverError + '_ {
    move |e| DriverError::new(call, e.to_string())
}

/// Every device of every platform, what `--device` indexes: GPUs and
/// accelerators first, then CPU devices, each group in platform order. A
/// machine with a GPU often has a CPU runtime (PoCL) installed too, and
/// the platform order is the ICD loader's; `--device 0` should be the GPU.
/// Errors mean "no OpenCL here".
fn devices() -> Result<Vec<(String, cl_device_id)>, Unavailable> {
    if !cl3::is_opencl_runtime_available() {
        return Err(Unavailable(
            "OpenCL runtime not found (libOpenCL.so.1 could not be loaded): install an ICD loader and a driver, e.g. ocl-icd-libopencl1 and pocl-opencl-icd".into(),
        ));
    }
    let platforms = opencl3::platform::get_platforms().map_err(|e| {
        Unavailable(format!(
            "no OpenCL platform: clGetPlatformIDs failed: {}",
            e
        ))
    })?;
    let mut out = Vec::new();
    for p in platforms {
        let pname = p.name().unwrap_or_else(|_| "?".into());
        if let Ok(ids) = p.get_devices(CL_DEVICE_TYPE_ALL) {
            out.extend(ids.into_iter().map(|id| (pname.clone(), id)));
        }
    }
    if out.is_empty() {
        return Err(Unavailable(
            "OpenCL platforms found but they report no devices".into(),
        ));
    }
    // Stable: platform order is kept within each group.
    out.sort_by_key(|(_, id)| {
        let ty = Device::new(*id).dev_type().unwrap_or(CL_DEVICE_TYPE_CPU);
        ty & CL_DEVICE_TYPE_CPU != 0 && ty & CL_DEVICE_TYPE_GPU == 0
    });
    Ok(out)
}

pub fn open(index: usize) -> Opened {
    let list = match devices() {
        Ok(l) => l,
        Err(u) => return Opened::Unavailable(u),
    };
    if index >= list.len() {
        return Opened::BadIndex(NoSuchDevice {
            index,
            count: list.len(),
            names: list
                .iter()
                .map(|(_, id)| Device::new(*id).name().unwrap_or_else(|_| "?".into()))
                .collect(),
        });
    }
    let (platform, id) = list[index].clone();
    match ClBackend::new(index, platform, id) {
        Ok(b) => Opened::Ready(Box::new(b)),
        Err(e) => Opened::Unavailable(Unavailable(format!(
            "cannot open OpenCL device {}: {}",
            index, e
        ))),
    }
}

pub struct ClBackend {
    info: DeviceInfo,
    context: Context,
    /// Queue 0 carries everything but the D2H half of bidir (queue 1).
    queues: [CommandQueue; 2],
}

fn pci_bus_id(d: &Device) -> Option<String> {
    let ext = d.extensions().unwrap_or_default();
    if ext.contains("cl_khr_pci_bus_info") {
        if let Ok(p) = d.pcibusinfokhr_intel() {
            return Some(format!(
                "{:04x}:{:02x}:{:02x}.{:x}",
                p.pci_domain, p.pci_bus, p.pci_device, p.pci_function
            ));
        }
    }
    if ext.contains("cl_amd_device_attribute_query") {
        if let Ok(t) = d.topology_amd() {
            return Some(format!(
                "0000:{:02x}:{:02x}.{:x}",
                t.bus, t.device, t.function
            ));
        }
    }
    if ext.contains("cl_nv_device_attribute_query") {
        if let (Ok(bus), Ok(slot)) = (d.pci_bus_id_nv(), d.pci_slot_id_nv()) {
            return Some(format!("0000:{:02x}:{:02x}.{:x}", bus, slot >> 3, slot & 7));
        }
    }
    None
}

impl ClBackend {
    fn new(index: usize, platform: String, id: cl_device_id) -> Result<ClBackend, DriverError> {
        let d = Device::new(id);
        let ty = d.dev_type().unwrap_or(0);
        let mut notes = vec![format!("platform {}", platform)];
        notes.push(format!(
            "type {}",
            if ty & CL_DEVICE_TYPE_GPU != 0 {
                "GPU"
            } else if ty & CL_DEVICE_TYPE_CPU != 0 {
                "CPU (every transfer is a memcpy in host DRAM)"
            } else {
                "other"
            }
        ));
        if let Ok(v) = d.version() {
            notes.push(v);
        }
        let info = DeviceInfo {
            backend: "opencl".into(),
            index,
            name: d.name().map_err(cl("clGetDeviceInfo"))?.trim().to_string(),
            vendor: d.vendor().ok(),
            driver_version: d.driver_version().ok(),
            pci_bus_id: pci_bus_id(&d),
            host_unified: d.host_unified_memory().ok(),
            total_mem_bytes: d.global_mem_size().ok(),
            free_mem_bytes: None,
            max_alloc_bytes: d.max_mem_alloc_size().ok(),
            copy_engines: None,
            notes,
        };
        let context = Context::from_device(&d).map_err(cl("clCreateContext"))?;
        #[allow(deprecated)] // create_with_properties needs OpenCL 2.0; this works on 1.2 too.
        let q = || {
            CommandQueue::create_default(&context, CL_QUEUE_PROFILING_ENABLE)
                .map_err(cl("clCreateCommandQueue"))
        };
        let queues = [q()?, q()?];
        Ok(ClBackend {
            info,
            context,
            queues,
        })
    }
}

impl Backend for ClBackend {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn kinds(&self) -> &'static [HostKind] {
        OPENCL_KINDS
    }

    fn headline_timer(&self, kind: HostKind, dir: Route) -> Timer {
        match dir {
            // Blocking copies from pageable memory, and map/unmap (events
            // read ~0 on unified memory: clpeak's artefact).
            Route::H2d | Route::D2h if kind == HostKind::HostPtr => Timer::HostClock,
            Route::Map => Timer::HostClock,
            _ => Timer::DeviceEvents,
        }
    }

    fn prepare(
        &mut self,
        kind: HostKind,
        bytes: usize,
        needs: Needs,
    ) -> Result<Box<dyn Session + '_>, DriverError> {
        let n_host = if needs.second_host { 2 } else { 1 };
        let mut host = Vec::new();
        for i in 0..n_host {
            host.push(HostSide::new(self, kind, bytes, 0x7a11 + i as u64)?);
        }
        let n_dev = if needs.second_device { 2 } else { 1 };
        let mut dev = Vec::new();
        for _ in 0..n_dev {
            // SAFETY: no host pointer is passed; the runtime allocates.
            let b = unsafe {
                Buffer::<u8>::create(&self.context, CL_MEM_READ_WRITE, bytes, ptr::null_mut())
            }
            .map_err(cl("clCreateBuffer"))?;
            dev.push(b);
        }
        let mut s = ClSession {
            b: self,
            kind,
            bytes,
            host,
            dev,
        };
        // Touch the device buffers once so the first timed copy does not
        // pay for lazy allocation (PoCL and GPU drivers allocate on use).
        let src: *const u8 = s.host[0].slice(bytes).as_ptr();
        // SAFETY: host buffer 0 lives as long as the session and is not
        // written while this borrow exists (no copy of 1 GiB on the side).
        let src = unsafe { std::slice::from_raw_parts(src, bytes) };
        for i in 0..s.dev.len() {
            s.write_device(i, src)?;
        }
        Ok(Box::new(s))
    }
}

/// The host side of a case.
enum HostSide {
    Plain(HostBuffer),
    /// A runtime-allocated buffer and its current mapping.
    Mapped {
        buf: Buffer<u8>,
        ptr: *mut u8,
    },
}

const MAP_FLAGS: u64 = CL_MAP_READ | CL_MAP_WRITE;

impl HostSide {
    fn new(
        b: &ClBackend,
        kind: HostKind,
        bytes: usize,
        seed: u64,
    ) -> Result<HostSide, DriverError> {
        let flags = match kind {
            HostKind::HostPtr => {
                return HostBuffer::new(bytes, PageKind::Regular, seed)
                    .map(HostSide::Plain)
                    .map_err(|e| DriverError::new("mmap", e.to_string()))
            }
            HostKind::AllocHostPtr => CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE,
            HostKind::AllocHostPtrRo => CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_ONLY,
            other => {
                return Err(DriverError::new(
                    "prepare",
                    format!("{} is not an OpenCL kind", other.name()),
                ))
            }
        };
        // SAFETY: runtime-allocated, no host pointer.
        let buf = unsafe { Buffer::<u8>::create(&b.context, flags, bytes, ptr::null_mut()) }
            .map_err(cl("clCreateBuffer"))?;
        let ptr = map(&b.queues[0], &buf, bytes)?;
        let mut h = HostSide::Mapped { buf, ptr };
        let mut rng = crate::util::rng::XorShift64::new(seed);
        for c in h.slice(bytes).chunks_mut(8) {
            let v = rng.next_u64().to_le_bytes();
            c.copy_from_slice(&v[..c.len()]);
        }
        Ok(h)
    }

    fn slice(&mut self, bytes: usize) -> &mut [u8] {
        match self {
            HostSide::Plain(b) => &mut b.as_mut_slice()[..bytes],
            // SAFETY: the mapping covers `bytes` bytes and stays valid until
            // unmapped; `&mut self` gives exclusive access.
            HostSide::Mapped { ptr, .. } => unsafe { std::slice::from_raw_parts_mut(*ptr, bytes) },
        }
    }
}

fn map(q: &CommandQueue, buf: &Buffer<u8>, bytes: usize) -> Result<*mut u8, DriverError> {
    let mut p: *mut std::ffi::c_void = ptr::null_mut();
    // SAFETY: blocking map of the whole buffer; p receives the mapping.
    unsafe { q.enqueue_map_buffer(buf, CL_BLOCKING, MAP_FLAGS, 0, bytes, &mut p, &[]) }
        .map_err(cl("clEnqueueMapBuffer"))?;
    if p.is_null() {
        return Err(DriverError::new(
            "clEnqueueMapBuffer",
            "returned a null mapping",
        ));
    }
    Ok(p as *mut u8)
}

struct ClSession<'a> {
    b: &'a ClBackend,
    kind: HostKind,
    bytes: usize,
    host: Vec<HostSide>,
    dev: Vec<Buffer<u8>>,
}

/// First START and last END of a batch, in ns.
#[derive(Default)]
struct Span {
    first: Option<Event>,
    last: Option<Event>,
}

impl Span {
    fn push(&mut self, e: Event) {
        if self.first.is_none() {
            self.first = Some(e);
        } else {
            self.last = Some(e);
        }
    }
    /// (start ns, end ns) after the queue finished.
    fn bounds(&self) -> Option<(u64, u64)> {
        let first = self.first.as_ref()?;
        let last = self.last.as_ref().unwrap_or(first);
        let s = first.profiling_command_start().ok()?;
        let e = last.profiling_command_end().ok()?;
        (e >= s).then_some((s, e))
    }
}

fn secs(ns: u64) -> f64 {
    ns as f64 * 1e-9
}

impl ClSession<'_> {
    /// Both directions at once on two queues: each direction's device span
    /// is timed by its own events, the whole by the earliest start to the
    /// latest end.
    fn bidir(&mut self, reps: u64) -> Result<Timed, DriverError> {
        let n = self.bytes;
        let q = &self.b.queues;
        let t0 = std::time::Instant::now();
        let src: *const u8 = self.host[0].slice(n).as_ptr();
        let dst: *mut u8 = self.host[1].slice(n).as_mut_ptr();
        // SAFETY: two distinct host buffers owned by the session.
        let (src, dst) = unsafe {
            (
                std::slice::from_raw_parts(src, n),
                std::slice::from_raw_parts_mut(dst, n),
            )
        };
        let (a, b) = self.dev.split_at_mut(1);
        let mut span_up = Span::default();
        let mut span_down = Span::default();
        for _ in 0..reps {
            // SAFETY: the device buffers were created with `self.bytes` (= n) bytes and the host slice is n bytes; it outlives the batch, which `finish` waits for before the session is touched again.
            let e = unsafe { q[0].enqueue_write_buffer(&mut a[0], CL_NON_BLOCKING, 0, src, &[]) }
                .map_err(cl("clEnqueueWriteBuffer"))?;
            span_up.push(e);
            let e =
                // SAFETY: as above: `dst` is n bytes of the second host buffer, alive until `finish`.
                unsafe { q[1].enqueue_read_buffer(&b[0], CL_NON_BLOCKING, 0, dst, &[]) }
                    .map_err(cl("clEnqueueReadBuffer"))?;
            span_down.push(e);
        }
        q[0].flush().map_err(cl("clFlush"))?;
        q[1].flush().map_err(cl("clFlush"))?;
        q[0].finish().map_err(cl("clFinish"))?;
        q[1].finish().map_err(cl("clFinish"))?;
        let host_s = t0.elapsed().as_secs_f64();
        let (u, d) = (span_up.bounds(), span_down.bounds());
        let (device_s, per_dir_s) = match (u, d) {
            (Some(u), Some(d)) => (
                Some(secs(u.1.max(d.1) - u.0.min(d.0))),
                Some([secs(u.1 - u.0), secs(d.1 - d.0)]),
            ),
            _ => (None, None),
        };
        Ok(Timed {
            host_s,
            device_s,
            per_dir_s,
            blocked: false,
        })
    }

    fn blocking(&self) -> cl_bool {
        if self.kind == HostKind::HostPtr {
            CL_BLOCKING
        } else {
            CL_NON_BLOCKING
        }
    }
}

impl Session for ClSession<'_> {
    fn host(&mut self, i: usize) -> &mut [u8] {
        let n = self.bytes;
        self.host[i].slice(n)
    }

    fn run(&mut self, dir: Route, reps: u64) -> Result<Timed, DriverError> {
        let n = self.bytes;
        let blocking = self.blocking();
        let q = &self.b.queues;
        let t0 = std::time::Instant::now();
        let mut span = Span::default();

        match dir {
            Route::H2d => {
                let src: *const u8 = self.host[0].slice(n).as_ptr();
                // SAFETY: src is valid for n bytes for the whole batch (the
                // session owns it and is borrowed mutably by this call).
                let src = unsafe { std::slice::from_raw_parts(src, n) };
                for _ in 0..reps {
                    // SAFETY: the device buffers were created with `self.bytes` (= n) bytes and the host slice is n bytes; it outlives the batch, which `finish` waits for before the session is touched again.
                    let e = unsafe {
                        q[0].enqueue_write_buffer(&mut self.dev[0], blocking, 0, src, &[])
                    }
                    .map_err(cl("clEnqueueWriteBuffer"))?;
                    span.push(e);
                }
                q[0].finish().map_err(cl("clFinish"))?;
            }
            Route::D2h => {
                let dst: *mut u8 = self.host[0].slice(n).as_mut_ptr();
                // SAFETY: as above; no one else touches the buffer meanwhile.
                let dst = unsafe { std::slice::from_raw_parts_mut(dst, n) };
                for _ in 0..reps {
                    let e =
                        // SAFETY: as above: a device buffer and a host slice of n bytes, alive until `finish`.
                        unsafe { q[0].enqueue_read_buffer(&self.dev[0], blocking, 0, dst, &[]) }
                            .map_err(cl("clEnqueueReadBuffer"))?;
                    span.push(e);
                }
                q[0].finish().map_err(cl("clFinish"))?;
            }
            Route::D2d => {
                let (a, b) = self.dev.split_at_mut(1);
                for _ in 0..reps {
                    // SAFETY: two distinct device buffers of `self.bytes` (= n) bytes each.
                    let e = unsafe { q[0].enqueue_copy_buffer(&a[0], &mut b[0], 0, 0, n, &[]) }
                        .map_err(cl("clEnqueueCopyBuffer"))?;
                    span.push(e);
                }
                q[0].finish().map_err(cl("clFinish"))?;
            }
            Route::Bidir => return self.bidir(reps),
            Route::H2dSm | Route::D2hSm | Route::D2dSm => {
                return Err(DriverError::new(
                    dir.name(),
                    "the OpenCL backend has no copy kernels (directions h2d, d2h, d2d, bidir, map)",
                ))
            }
            Route::Map => {
                let HostSide::Mapped { buf, ptr } = &mut self.host[0] else {
                    return Err(DriverError::new(
                        "map",
                        format!("{} has no mapping", self.kind.name()),
                    ));
                };
                for _ in 0..reps {
                    let e =
                        // SAFETY: `ptr` is the live mapping of `buf` that `map` returned; it is mapped again before anything reads it.
                        unsafe { q[0].enqueue_unmap_mem_object(buf.get(), *ptr as *mut _, &[]) }
                            .map_err(cl("clEnqueueUnmapMemObject"))?;
                    span.push(e);
                    *ptr = map(&q[0], buf, n)?;
                }
                q[0].finish().map_err(cl("clFinish"))?;
            }
        }
        let host_s = t0.elapsed().as_secs_f64();
        Ok(Timed {
            host_s,
            device_s: span.bounds().map(|(s, e)| secs(e - s)),
            per_dir_s: None,
            blocked: false,
        })
    }

    fn write_device(&mut self, i: usize, src: &[u8]) -> Result<(), DriverError> {
        // SAFETY: a blocking write: `src` is borrowed for the whole call and
        // is at most the buffer's size (the trait's contract).
        unsafe {
            self.b.queues[0].enqueue_write_buffer(&mut self.dev[i], CL_BLOCKING, 0, src, &[])
        }
        .map_err(cl("clEnqueueWriteBuffer"))?;
        Ok(())
    }

    fn read_device(&mut self, i: usize, dst: &mut [u8]) -> Result<(), DriverError> {
        // SAFETY: a blocking read: `dst` is borrowed for the whole call and is at most the buffer's size (the trait's contract: `dst` is the session's byte count).
        unsafe { self.b.queues[0].enqueue_read_buffer(&self.dev[i], CL_BLOCKING, 0, dst, &[]) }
            .map_err(cl("clEnqueueReadBuffer"))?;
        Ok(())
    }

    fn map_roundtrip(&mut self, out: &mut [u8]) -> Result<Option<()>, DriverError> {
        let n = self.bytes;
        let q = &self.b.queues[0];
        let HostSide::Mapped { buf, ptr } = &mut self.host[0] else {
            return Ok(None);
        };
        // SAFETY: `ptr` is the live mapping of `buf` that `map` returned; `finish` completes the unmap before the read.
        unsafe { q.enqueue_unmap_mem_object(buf.get(), *ptr as *mut _, &[]) }
            .map_err(cl("clEnqueueUnmapMemObject"))?;
        q.finish().map_err(cl("clFinish"))?;
        // SAFETY: a blocking read of n bytes from a buffer of n bytes into `out[..n]` (the caller gives at least n).
        unsafe { q.enqueue_read_buffer(buf, CL_BLOCKING, 0, &mut out[..n], &[]) }
            .map_err(cl("clEnqueueReadBuffer"))?;
        *ptr = map(q, buf, n)?;
        Ok(Some(()))
    }
}

impl Drop for ClSession<'_> {
    fn drop(&mut self) {
        let q = &self.b.queues[0];
        for h in &mut self.host {
            if let HostSide::Mapped { buf, ptr } = h {
                // SAFETY: ptr is the live mapping of buf.
                let _ = unsafe { q.enqueue_unmap_mem_object(buf.get(), *ptr as *mut _, &[]) };
            }
        }
        let _ = q.finish();
        let _ = self.b.queues[1].finish();
    }
}
