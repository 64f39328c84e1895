//! One (kind, size) case of the CUDA backend: its buffers and the timed
//! loops. Copy-engine copies are queued behind the start blocker where the
//! host memory allows it; SM copies are one kernel launch of `reps` passes.

use std::ffi::c_void;
use std::time::Instant;

use cudarc::driver::sys::{self, CUdeviceptr, CUevent, CUstream};

use super::sm::{self, Kernels};
use super::{ck, CuHost, CudaBackend};
use crate::transfer::{catch, DriverError, HostKind, Route, Session, Timed};

pub(super) struct CuSession<'a> {
    pub(super) b: &'a CudaBackend,
    pub(super) kind: HostKind,
    pub(super) bytes: usize,
    pub(super) host: Vec<CuHost>,
    pub(super) dev: Vec<CUdeviceptr>,
    pub(super) events: Vec<CUevent>,
}

impl CuSession<'_> {
    fn elapsed(&self, a: usize, b: usize) -> Result<f64, DriverError> {
        let mut ms = 0f32;
        // SAFETY: both events exist and were recorded.
        unsafe {
            ck(
                "cuEventSynchronize",
                sys::cuEventSynchronize(self.events[b]),
            )?;
            ck(
                "cuEventElapsedTime",
                sys::cuEventElapsedTime(&mut ms, self.events[a], self.events[b]),
            )?;
        }
        Ok(ms as f64 / 1e3)
    }
    /// Pageable H2D/D2H: synchronous copies on the legacy stream, which
    /// events recorded there bracket; the host clock heads these records.
    fn run_sync(&mut self, dir: Route, reps: u64) -> Result<Timed, DriverError> {
        let (n, ev, h0, d0) = (
            self.bytes,
            self.events.clone(),
            self.host[0].ptr(),
            self.dev[0],
        );
        let s0: CUstream = std::ptr::null_mut();
        let t0 = Instant::now();
        // SAFETY: pointers and sizes come from this session's allocations.
        unsafe {
            ck("cuEventRecord", sys::cuEventRecord(ev[0], s0))?;
            for _ in 0..reps {
                if dir == Route::H2d {
                    ck(
                        "cuMemcpyHtoD_v2",
                        sys::cuMemcpyHtoD_v2(d0, h0 as *const c_void, n),
                    )?;
                } else {
                    ck(
                        "cuMemcpyDtoH_v2",
                        sys::cuMemcpyDtoH_v2(h0 as *mut c_void, d0, n),
                    )?;
                }
            }
            ck("cuEventRecord", sys::cuEventRecord(ev[1], s0))?;
            ck("cuEventSynchronize", sys::cuEventSynchronize(ev[1]))?;
        }
        let host_s = t0.elapsed().as_secs_f64();
        Ok(Timed {
            host_s,
            device_s: Some(self.elapsed(0, 1)?),
            per_dir_s: None,
            blocked: false,
        })
    }

    /// Copy-engine copies on the session's streams. With a blocker, in
    /// batches of at most [`sm::BATCH`] copies, each queued behind the
    /// blocker and bracketed by its own events; the device time is the sum
    /// of the batches (nvbandwidth's method, without its fixed 16 copies).
    fn run_async(
        &mut self,
        dir: Route,
        reps: u64,
        blocker: Option<&Kernels>,
    ) -> Result<Timed, DriverError> {
        let (n, ev) = (self.bytes, self.events.clone());
        let [s0, s1] = self.b.streams;
        let bidir = dir == Route::Bidir;
        // The second buffers, looked up once, outside the enqueue loop.
        let h0 = self.host[0].ptr();
        let h1 = if bidir {
            second(self.host.get_mut(1).map(|h| h.ptr()))?
        } else {
            std::ptr::null_mut()
        };
        let d0 = self.dev[0];
        let d1 = match dir {
            Route::D2d | Route::Bidir => second(self.dev.get(1).copied())?,
            _ => 0,
        };
        let bufs = Buffers { h0, h1, d0, d1 };
        let batch = if blocker.is_some() {
            sm::BATCH
        } else {
            reps.max(1)
        };
        let (mut device, mut per_dir) = (0.0, [0.0f64; 2]);
        let t0 = Instant::now();
        let mut left = reps;
        while left > 0 {
            let this = left.min(batch);
            left -= this;
            // SAFETY: pointers and sizes come from this session's allocations;
            // streams and events from its backend.
            let held = unsafe {
                let held = match blocker {
                    Some(k) => Some(k.block(s0)?),
                    None => None,
                };
                ck("cuEventRecord", sys::cuEventRecord(ev[0], s0))?;
                if bidir {
                    // The second stream waits for the start event, so both
                    // directions start together (and behind the blocker).
                    ck("cuStreamWaitEvent", sys::cuStreamWaitEvent(s1, ev[0], 0))?;
                }
                for _ in 0..this {
                    enqueue(dir, &bufs, n, [s0, s1])?;
                }
                ck("cuEventRecord", sys::cuEventRecord(ev[1], s0))?;
                if bidir {
                    ck("cuEventRecord", sys::cuEventRecord(ev[2], s1))?;
                }
                let held = held.map(|h| h.release());
                ck("cuStreamSynchronize", sys::cuStreamSynchronize(s0))?;
                if bidir {
                    ck("cuStreamSynchronize", sys::cuStreamSynchronize(s1))?;
                }
                held
            };
            blocker_kept(held.as_ref())?;
            let up = self.elapsed(0, 1)?;
            if bidir {
                let down = self.elapsed(0, 2)?;
                per_dir[0] += up;
                per_dir[1] += down;
                device += up.max(down);
            } else {
                device += up;
            }
        }
        Ok(Timed {
            host_s: t0.elapsed().as_secs_f64(),
            device_s: Some(device),
            per_dir_s: bidir.then_some(per_dir),
            blocked: blocker.is_some(),
        })
    }

    /// One launch of a copy kernel doing `reps` passes, behind the blocker.
    fn run_sm(&mut self, dir: Route, reps: u64) -> Result<Timed, DriverError> {
        let k = self.b.kernels.as_ref().map_err(|e| e.clone())?;
        let s0 = self.b.streams[0];
        let ev = self.events.clone();
        let (src, dst, which) = match dir {
            Route::H2dSm => (self.host_device_ptr()?, self.dev[0], sm::Copy::H2d),
            Route::D2hSm => (self.dev[0], self.host_device_ptr()?, sm::Copy::D2h),
            _ => (
                self.dev[0],
                second(self.dev.get(1).copied())?,
                sm::Copy::D2d,
            ),
        };
        let t0 = Instant::now();
        // SAFETY: both pointers are device-addressable for self.bytes bytes.
        let held = unsafe {
            let held = k.block(s0)?;
            ck("cuEventRecord", sys::cuEventRecord(ev[0], s0))?;
            k.copy(which, dst, src, self.bytes as u64, reps, s0)?;
            ck("cuEventRecord", sys::cuEventRecord(ev[1], s0))?;
            let held = held.release();
            ck("cuStreamSynchronize", sys::cuStreamSynchronize(s0))?;
            held
        };
        blocker_kept(Some(&held))?;
        Ok(Timed {
            host_s: t0.elapsed().as_secs_f64(),
            device_s: Some(self.elapsed(0, 1)?),
            per_dir_s: None,
            blocked: true,
        })
    }

    /// The device's address of host buffer 0 (pinned and registered memory
    /// is mapped into the device's address space).
    fn host_device_ptr(&mut self) -> Result<CUdeviceptr, DriverError> {
        let p = self.host[0].ptr();
        let mut d: CUdeviceptr = 0;
        // SAFETY: p is this session's host allocation.
        unsafe {
            ck(
                "cuMemHostGetDevicePointer_v2",
                sys::cuMemHostGetDevicePointer_v2(&mut d, p as *mut c_void, 0),
            )?;
        }
        Ok(d)
    }
}

/// The second buffer of a session prepared with `Needs` that asked for it.
fn second<T>(x: Option<T>) -> Result<T, DriverError> {
    x.ok_or_else(|| DriverError::new("prepare", "the session has no second buffer"))
}

/// A blocker that gave up before the host released it let copies start
/// while others were still being queued: the sample is not clean.
fn blocker_kept(held: Option<&sm::ReleasedAt>) -> Result<(), DriverError> {
    match held {
        Some(h) if h.timed_out() => Err(DriverError::new(
            "start blocker",
            "timed out before every copy was queued (the host was descheduled for 10 s?)",
        )),
        _ => Ok(()),
    }
}

impl Session for CuSession<'_> {
    fn host(&mut self, i: usize) -> &mut [u8] {
        let n = self.bytes;
        // SAFETY: each host buffer covers n bytes; &mut self is exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.host[i].ptr(), n) }
    }

    fn run(&mut self, dir: Route, reps: u64) -> Result<Timed, DriverError> {
        if dir == Route::Map {
            return Err(DriverError::new(
                "map",
                "not available: CUDA mapped memory is used in place by kernels (h2d-sm, d2h-sm), there is no map call to time",
            ));
        }
        if dir.is_sm() {
            return self.run_sm(dir, reps);
        }
        if self.kind == HostKind::Pageable && dir != Route::Bidir && dir != Route::D2d {
            return self.run_sync(dir, reps);
        }
        // Pageable memory is staged by the driver inside the enqueue call
        // (a D2H from it waits for its stream): it cannot queue behind a
        // blocker, so its bidirectional copies run unblocked.
        let blocker = match &self.b.kernels {
            Ok(k) if self.kind != HostKind::Pageable => Some(k),
            _ => None,
        };
        self.run_async(dir, reps, blocker)
    }

    // The verification's own copies go on stream 0 and are waited for: a
    // synchronous cuMemcpyHtoD from pageable memory returns once the bytes
    // are staged, before they land (CUDA's "API synchronization behavior"),
    // and the timed copies run on non-blocking streams that do not wait for
    // the legacy stream. Without this the destination's pre-fill could land
    // after a D2D copy and fail its check (seen on an H100: 1 MiB d2d).
    fn write_device(&mut self, i: usize, src: &[u8]) -> Result<(), DriverError> {
        let s0 = self.b.streams[0];
        // SAFETY: device buffer i holds self.bytes ≥ src.len() bytes; src
        // outlives the copy (the stream is synchronised before returning).
        unsafe {
            ck(
                "cuMemcpyHtoDAsync_v2",
                sys::cuMemcpyHtoDAsync_v2(
                    self.dev[i],
                    src.as_ptr() as *const c_void,
                    src.len(),
                    s0,
                ),
            )?;
            ck("cuStreamSynchronize", sys::cuStreamSynchronize(s0))
        }
    }

    fn read_device(&mut self, i: usize, dst: &mut [u8]) -> Result<(), DriverError> {
        let s0 = self.b.streams[0];
        // SAFETY: as above.
        unsafe {
            ck(
                "cuMemcpyDtoHAsync_v2",
                sys::cuMemcpyDtoHAsync_v2(
                    dst.as_mut_ptr() as *mut c_void,
                    self.dev[i],
                    dst.len(),
                    s0,
                ),
            )?;
            ck("cuStreamSynchronize", sys::cuStreamSynchronize(s0))
        }
    }

    /// For `mapped`: read what the caller wrote through the host pointer
    /// back through its device alias (`cuMemHostGetDevicePointer`).
    fn map_roundtrip(&mut self, out: &mut [u8]) -> Result<Option<()>, DriverError> {
        if self.kind != HostKind::Mapped {
            return Ok(None);
        }
        let n = self.bytes;
        let p = self.host[0].ptr();
        // SAFETY: p is a DEVICEMAP allocation of n bytes.
        unsafe {
            let mut d: CUdeviceptr = 0;
            ck(
                "cuMemHostGetDevicePointer_v2",
                sys::cuMemHostGetDevicePointer_v2(&mut d, p as *mut c_void, 0),
            )?;
            ck(
                "cuMemcpyDtoH_v2",
                sys::cuMemcpyDtoH_v2(out.as_mut_ptr() as *mut c_void, d, n),
            )?;
        }
        Ok(Some(()))
    }
}

impl Drop for CuSession<'_> {
    fn drop(&mut self) {
        let host = std::mem::take(&mut self.host);
        let dev = std::mem::take(&mut self.dev);
        let events = std::mem::take(&mut self.events);
        // SAFETY: the events, device and host buffers were allocated by this session and are freed once, here (taken out of it above).
        let _ = catch("cleanup", move || unsafe {
            for e in events {
                sys::cuEventDestroy_v2(e);
            }
            for d in dev {
                sys::cuMemFree_v2(d);
            }
            for mut h in host {
                match &mut h {
                    CuHost::Alloc(p) => {
                        sys::cuMemFreeHost(*p as *mut c_void);
                    }
                    CuHost::Registered(b) => {
                        sys::cuMemHostUnregister(b.as_mut_ptr() as *mut c_void);
                    }
                    CuHost::Pageable(_) => {}
                }
            }
            Ok(())
        });
    }
}

/// The buffers of one copy-engine batch: the host and device buffers, and
/// the second of each for d2d and bidir (null / 0 where unused).
struct Buffers {
    h0: *mut u8,
    h1: *mut u8,
    d0: sys::CUdeviceptr,
    d1: sys::CUdeviceptr,
}

/// Enqueue one copy of `n` bytes in `dir` (bidir: one each way, the second
/// on the second stream).
///
/// # Safety
/// The buffers must be live allocations of at least `n` bytes of this
/// context, and the streams its own; the caller synchronises the streams
/// before the buffers are touched again.
unsafe fn enqueue(
    dir: Route,
    b: &Buffers,
    n: usize,
    [s0, s1]: [sys::CUstream; 2],
) -> Result<(), DriverError> {
    // SAFETY: the caller's contract (above) covers every call here.
    unsafe {
        match dir {
            Route::H2d => ck(
                "cuMemcpyHtoDAsync_v2",
                sys::cuMemcpyHtoDAsync_v2(b.d0, b.h0 as *const c_void, n, s0),
            ),
            Route::D2h => ck(
                "cuMemcpyDtoHAsync_v2",
                sys::cuMemcpyDtoHAsync_v2(b.h0 as *mut c_void, b.d0, n, s0),
            ),
            Route::D2d => ck(
                "cuMemcpyDtoDAsync_v2",
                sys::cuMemcpyDtoDAsync_v2(b.d1, b.d0, n, s0),
            ),
            Route::Bidir => {
                ck(
                    "cuMemcpyHtoDAsync_v2",
                    sys::cuMemcpyHtoDAsync_v2(b.d0, b.h0 as *const c_void, n, s0),
                )?;
                ck(
                    "cuMemcpyDtoHAsync_v2",
                    sys::cuMemcpyDtoHAsync_v2(b.h1 as *mut c_void, b.d1, n, s1),
                )
            }
            other => Err(DriverError::new(
                other.name(),
                "not a copy-engine direction",
            )),
        }
    }
}
