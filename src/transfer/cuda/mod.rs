//! CUDA backend: the driver API through `cudarc::driver::sys`, with
//! `libcuda.so` loaded at run time.
//!
//! cudarc's loader panics when the library or a symbol is missing, so the
//! library is probed first (`is_culib_present`) and every driver call runs
//! inside [`super::catch`] (the release profile keeps `panic = "unwind"`).
//! The raw `sys` layer is used rather than cudarc's safe types so that the
//! host allocation flags are exactly the ones named (cudarc's
//! `alloc_pinned()` is write-combined, cudarc#579) and no per-copy event
//! bookkeeping sits inside the timed loops.
//!
//! Kinds: `pageable` (page-aligned mmap, synchronous `cuMemcpyHtoD`/`DtoH`,
//! host clock), `pinned` (`cuMemHostAlloc(PORTABLE)`), `pinned-wc`
//! (`PORTABLE|WRITECOMBINED`), `registered` (`cuMemHostRegister(PORTABLE)`
//! of pageable memory) and `mapped` (`PORTABLE|DEVICEMAP`); the last four
//! copy asynchronously on a stream, timed by events.

mod session;
mod sm;

use std::ffi::{c_char, c_void, CStr};

use cudarc::driver::sys::{
    self, CUcontext, CUdevice, CUdevice_attribute, CUdeviceptr, CUevent, CUresult, CUstream,
};

use super::{
    catch, Backend, DeviceInfo, DriverError, HostKind, Needs, NoSuchDevice, Opened, Route, Session,
    Timer, Unavailable, CUDA_KINDS, ROUTES,
};
use crate::memory::{Buffer as HostBuffer, PageKind};
use session::CuSession;

/// `CU_STREAM_NON_BLOCKING`: no implicit sync with the legacy stream.
const STREAM_NON_BLOCKING: u32 = 1;
/// `CU_EVENT_DEFAULT`: timing enabled (cudarc's `new_event(None)` disables it).
const EVENT_DEFAULT: u32 = 0;

/// The host allocation flags of a kind (`cuMemHostAlloc` / `cuMemHostRegister`).
fn host_flags(kind: HostKind) -> Option<u32> {
    match kind {
        HostKind::Pinned => Some(sys::CU_MEMHOSTALLOC_PORTABLE),
        HostKind::PinnedWc => {
            Some(sys::CU_MEMHOSTALLOC_PORTABLE | sys::CU_MEMHOSTALLOC_WRITECOMBINED)
        }
        HostKind::Mapped => Some(sys::CU_MEMHOSTALLOC_PORTABLE | sys::CU_MEMHOSTALLOC_DEVICEMAP),
        HostKind::Registered => Some(sys::CU_MEMHOSTREGISTER_PORTABLE),
        _ => None,
    }
}

/// The driver's name for `r` (`CUDA_ERROR_OUT_OF_MEMORY`), from
/// `cuGetErrorName`, falling back to the binding's variant name.
fn error_name(r: CUresult) -> String {
    let mut p: *const c_char = std::ptr::null();
    // SAFETY: cuGetErrorName writes a pointer to a static string.
    let ok = unsafe { sys::cuGetErrorName(r, &mut p) } == CUresult::CUDA_SUCCESS;
    if ok && !p.is_null() {
        // SAFETY: non-null, NUL-terminated static string from the driver.
        return unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
    }
    format!("{:?}", r)
}

fn ck(call: &str, r: CUresult) -> Result<(), DriverError> {
    if r == CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(DriverError::new(call, error_name(r)))
    }
}

fn c_string(buf: &[c_char]) -> String {
    let bytes: Vec<u8> = buf
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c.to_ne_bytes()[0]) // c_char is i8 on x86-64, u8 on AArch64
        .collect();
    String::from_utf8_lossy(&bytes).trim().to_string()
}

pub fn open(index: usize) -> Opened {
    // SAFETY: tries dlopen on the candidate names; no driver call.
    let present = catch("dlopen", || Ok(unsafe { sys::is_culib_present() })).unwrap_or(false);
    if !present {
        return Opened::Unavailable(Unavailable(
            "CUDA driver library (libcuda.so) not found: no NVIDIA driver on this machine".into(),
        ));
    }
    let probe = catch("cuInit", || {
        // SAFETY: plain driver calls with valid out-pointers.
        unsafe {
            ck("cuInit", sys::cuInit(0))?;
            let mut n = 0;
            ck("cuDeviceGetCount", sys::cuDeviceGetCount(&mut n))?;
            Ok(n.max(0) as usize)
        }
    });
    let count = match probe {
        Ok(0) => {
            return Opened::Unavailable(Unavailable(
                "CUDA driver loaded but it reports no devices".into(),
            ))
        }
        Ok(n) => n,
        Err(e) => return Opened::Unavailable(Unavailable(format!("CUDA driver unusable: {}", e))),
    };
    if index >= count {
        let names = (0..count)
            .map(|i| {
                // SAFETY: the driver is loaded and initialised (`cuInit` succeeded above) and `i` is below its device count.
                catch("cuDeviceGetName", || unsafe { device_name(i) })
                    .unwrap_or_else(|_| "?".into())
            })
            .collect();
        return Opened::BadIndex(NoSuchDevice {
            index,
            count,
            names,
        });
    }
    // SAFETY: as above, and `index` is below the device count.
    match catch("open", || unsafe { CudaBackend::new(index) }) {
        Ok(b) => Opened::Ready(Box::new(b)),
        Err(e) => Opened::Unavailable(Unavailable(format!(
            "cannot open CUDA device {}: {}",
            index, e
        ))),
    }
}

unsafe fn device_name(index: usize) -> Result<String, DriverError> {
    let mut dev: CUdevice = 0;
    ck("cuDeviceGet", sys::cuDeviceGet(&mut dev, index as i32))?;
    let mut buf = [0 as c_char; 256];
    ck(
        "cuDeviceGetName",
        sys::cuDeviceGetName(buf.as_mut_ptr(), buf.len() as i32, dev),
    )?;
    Ok(c_string(&buf))
}

pub struct CudaBackend {
    info: DeviceInfo,
    dev: CUdevice,
    ctx: CUcontext,
    /// Stream 0 carries everything asynchronous but the D2H half of bidir.
    streams: [CUstream; 2],
    /// The copy kernels and the start blocker, or why the driver could not
    /// load them (then the `-sm` directions are skipped and copy-engine
    /// copies run unblocked).
    kernels: Result<sm::Kernels, DriverError>,
}

impl CudaBackend {
    /// # Safety
    /// Driver calls; the library is loaded and initialised.
    unsafe fn new(index: usize) -> Result<CudaBackend, DriverError> {
        let mut dev: CUdevice = 0;
        ck("cuDeviceGet", sys::cuDeviceGet(&mut dev, index as i32))?;
        let name = device_name(index)?;
        let mut bus = [0 as c_char; 64];
        let pci = (sys::cuDeviceGetPCIBusId(bus.as_mut_ptr(), bus.len() as i32, dev)
            == CUresult::CUDA_SUCCESS)
            .then(|| super::pci::normalize_bus_id(&c_string(&bus)));
        let attr = |a: CUdevice_attribute| {
            let mut v = 0;
            (sys::cuDeviceGetAttribute(&mut v, a, dev) == CUresult::CUDA_SUCCESS).then_some(v)
        };
        let engines = attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT);
        let integrated = attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_INTEGRATED);
        let can_map = attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY);
        let mut total = 0usize;
        let total = (sys::cuDeviceTotalMem_v2(&mut total, dev) == CUresult::CUDA_SUCCESS)
            .then_some(total as u64);
        let mut ver = 0;
        let driver_version = (sys::cuDriverGetVersion(&mut ver) == CUresult::CUDA_SUCCESS)
            .then(|| format!("{}.{}", ver / 1000, (ver % 1000) / 10));
        let mut ctx: CUcontext = std::ptr::null_mut();
        ck(
            "cuDevicePrimaryCtxRetain",
            sys::cuDevicePrimaryCtxRetain(&mut ctx, dev),
        )?;
        ck("cuCtxSetCurrent", sys::cuCtxSetCurrent(ctx))?;
        let (mut free, mut tot) = (0usize, 0usize);
        ck("cuMemGetInfo_v2", sys::cuMemGetInfo_v2(&mut free, &mut tot))?;
        let mut streams: [CUstream; 2] = [std::ptr::null_mut(); 2];
        for s in &mut streams {
            ck(
                "cuStreamCreate",
                sys::cuStreamCreate(s, STREAM_NON_BLOCKING),
            )?;
        }
        let kernels = catch("cuModuleLoadData", || sm::Kernels::load(dev));
        let mut notes = Vec::new();
        if let Err(e) = &kernels {
            notes.push(format!("no SM copy kernels or start blocker: {}", e));
        }
        if can_map == Some(0) {
            notes.push("device cannot map host memory (CAN_MAP_HOST_MEMORY = 0)".into());
        }
        Ok(CudaBackend {
            info: DeviceInfo {
                backend: "cuda".into(),
                index,
                name,
                vendor: Some("NVIDIA".into()),
                driver_version,
                pci_bus_id: pci,
                host_unified: integrated.map(|v| v != 0),
                total_mem_bytes: total.or(Some(tot as u64)),
                free_mem_bytes: Some(free as u64),
                max_alloc_bytes: None,
                copy_engines: engines.map(|v| v.max(0) as u32),
                notes,
            },
            dev,
            ctx,
            streams,
            kernels,
        })
    }
}

impl Drop for CudaBackend {
    fn drop(&mut self) {
        let kernels =
            std::mem::replace(&mut self.kernels, Err(DriverError::new("drop", "released")));
        // SAFETY: the context, streams and kernels were created by this backend and are released once, here, with the context current.
        let _ = catch("cleanup", || unsafe {
            drop(kernels);
            for s in self.streams {
                sys::cuStreamDestroy_v2(s);
            }
            let _ = self.ctx;
            sys::cuDevicePrimaryCtxRelease_v2(self.dev);
            Ok(())
        });
    }
}

impl Backend for CudaBackend {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn kinds(&self) -> &'static [HostKind] {
        CUDA_KINDS
    }

    fn directions(&self) -> &'static [Route] {
        ROUTES
    }

    fn unsupported(&self, kind: HostKind, dir: Route) -> Option<String> {
        if !dir.is_sm() {
            return None;
        }
        if let Err(e) = &self.kernels {
            return Some(format!(
                "the SM copy kernels could not be loaded on this device: {}",
                e
            ));
        }
        (kind == HostKind::Pageable && !dir.device_only()).then(|| {
            "pageable memory is not in the device's address space: h2d-sm and d2h-sm run on pinned, pinned-wc, registered and mapped memory".into()
        })
    }

    fn headline_timer(&self, kind: HostKind, dir: Route) -> Timer {
        match dir {
            Route::H2d | Route::D2h if kind == HostKind::Pageable => Timer::HostClock,
            _ => Timer::DeviceEvents,
        }
    }

    fn prepare(
        &mut self,
        kind: HostKind,
        bytes: usize,
        needs: Needs,
    ) -> Result<Box<dyn Session + '_>, DriverError> {
        let mut s = CuSession {
            b: self,
            kind,
            bytes,
            host: Vec::new(),
            dev: Vec::new(),
            events: Vec::new(),
        };
        // Allocate into `s` step by step so that Drop frees whatever was
        // obtained when a later call fails.
        // SAFETY: driver calls on this backend's context (current on this
        // thread); every pointer given is to a local or a field of `s`.
        unsafe {
            for i in 0..if needs.second_host { 2 } else { 1 } {
                let h = CuHost::new(kind, bytes, 0xc0da + i)?;
                s.host.push(h);
            }
            for _ in 0..if needs.second_device { 2 } else { 1 } {
                let mut d: CUdeviceptr = 0;
                ck("cuMemAlloc_v2", sys::cuMemAlloc_v2(&mut d, bytes))?;
                s.dev.push(d);
            }
            for _ in 0..3 {
                let mut e: CUevent = std::ptr::null_mut();
                ck("cuEventCreate", sys::cuEventCreate(&mut e, EVENT_DEFAULT))?;
                s.events.push(e);
            }
        }
        Ok(Box::new(s))
    }
}

pub(super) enum CuHost {
    Pageable(HostBuffer),
    /// From `cuMemHostAlloc`, freed with `cuMemFreeHost`.
    Alloc(*mut u8),
    /// Pageable memory registered with `cuMemHostRegister`.
    Registered(HostBuffer),
}

impl CuHost {
    unsafe fn new(kind: HostKind, bytes: usize, seed: u64) -> Result<CuHost, DriverError> {
        let page = |seed| {
            HostBuffer::new(bytes, PageKind::Regular, seed)
                .map_err(|e| DriverError::new("mmap", e.to_string()))
        };
        match kind {
            HostKind::Pageable => Ok(CuHost::Pageable(page(seed)?)),
            HostKind::Registered => {
                let mut b = page(seed)?;
                let flags = host_flags(kind).unwrap_or(0);
                ck(
                    "cuMemHostRegister_v2",
                    sys::cuMemHostRegister_v2(b.as_mut_ptr() as *mut c_void, bytes, flags),
                )?;
                Ok(CuHost::Registered(b))
            }
            HostKind::Pinned | HostKind::PinnedWc | HostKind::Mapped => {
                let mut p: *mut c_void = std::ptr::null_mut();
                ck(
                    "cuMemHostAlloc",
                    sys::cuMemHostAlloc(&mut p, bytes, host_flags(kind).unwrap_or(0)),
                )?;
                let h = CuHost::Alloc(p as *mut u8);
                if kind == HostKind::Mapped {
                    let mut d: CUdeviceptr = 0;
                    if let Err(e) = ck(
                        "cuMemHostGetDevicePointer_v2",
                        sys::cuMemHostGetDevicePointer_v2(&mut d, p, 0),
                    ) {
                        sys::cuMemFreeHost(p);
                        return Err(e);
                    }
                }
                // Real data: random words, never the zero page.
                let mut rng = crate::util::rng::XorShift64::new(seed);
                let s = std::slice::from_raw_parts_mut(p as *mut u8, bytes);
                for c in s.chunks_mut(8) {
                    let v = rng.next_u64().to_le_bytes();
                    c.copy_from_slice(&v[..c.len()]);
                }
                Ok(h)
            }
            other => Err(DriverError::new(
                "prepare",
                format!("{} is not a CUDA kind", other.name()),
            )),
        }
    }

    fn ptr(&mut self) -> *mut u8 {
        match self {
            CuHost::Pageable(b) | CuHost::Registered(b) => b.as_mut_ptr(),
            CuHost::Alloc(p) => *p,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_map_to_the_documented_flags() {
        assert_eq!(host_flags(HostKind::Pinned), Some(1));
        assert_eq!(host_flags(HostKind::PinnedWc), Some(1 | 4));
        assert_eq!(host_flags(HostKind::Mapped), Some(1 | 2));
        assert_eq!(host_flags(HostKind::Registered), Some(1));
        assert_eq!(host_flags(HostKind::Pageable), None);
    }
}
