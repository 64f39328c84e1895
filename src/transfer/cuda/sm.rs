//! The GPU side of the CUDA backend: copy kernels run by the SMs and the
//! start blocker, from PTX embedded in the binary (`sm_kernels.ptx`,
//! generated from `sm_kernels.cu` by `scripts/gpu/build-ptx.py`) and
//! JIT-compiled by the driver when the device is opened. So building
//! bwscope still needs no CUDA toolkit, and a driver that cannot load the
//! module (the test stand-in, a GPU older than Volta) only loses the
//! `-sm` directions and the blocker, each with its reason.

use std::ffi::c_void;
use std::sync::atomic::{fence, Ordering};

use cudarc::driver::sys::{
    self, CUdevice, CUdevice_attribute, CUdeviceptr, CUfunction, CUmodule, CUresult, CUstream,
};

use super::ck;
use crate::transfer::DriverError;

/// The PTX text, NUL-terminated as `cuModuleLoadData` wants it.
const PTX: &str = concat!(include_str!("sm_kernels.ptx"), "\0");
/// Threads per block of the copy kernels.
const THREADS: u32 = 512;
/// The blocker lets go by itself after this long (global timer, ns): a
/// host that died between blocking and releasing must not hang the GPU.
const SPIN_TIMEOUT_NS: u64 = 10_000_000_000;
/// Copies queued behind one blocker. A stream holds a bounded number of
/// pending commands; past it the host would wait inside the enqueue call
/// for a stream that waits for the host. nvbandwidth queues 16.
pub(super) const BATCH: u64 = 256;

/// Which copy kernel: what is on each side decides the cache operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Copy {
    /// Device to device, plain loads and stores.
    D2d = 0,
    /// Mapped host memory to device: `ld.global.cv` from the host.
    H2d = 1,
    /// Device to mapped host memory: `st.global.wt` to the host.
    D2h = 2,
}

pub(super) struct Kernels {
    module: CUmodule,
    copy: [CUfunction; 3],
    spin: CUfunction,
    /// Two ints of pinned, device-mapped host memory: [0] released by the
    /// host, [1] set by the blocker when it timed out.
    latch: *mut i32,
    latch_dev: CUdeviceptr,
    /// Blocks of a full-grid copy: every SM filled to its thread limit.
    blocks: u32,
}

impl Kernels {
    /// Load the module into the current context.
    ///
    /// # Safety
    /// The context of `dev` is current.
    pub(super) unsafe fn load(dev: CUdevice) -> Result<Kernels, DriverError> {
        let mut module: CUmodule = std::ptr::null_mut();
        ck(
            "cuModuleLoadData",
            sys::cuModuleLoadData(&mut module, PTX.as_ptr() as *const c_void),
        )?;
        let get = |name: &std::ffi::CStr| {
            let mut f: CUfunction = std::ptr::null_mut();
            ck(
                "cuModuleGetFunction",
                sys::cuModuleGetFunction(&mut f, module, name.as_ptr()),
            )
            .map(|_| f)
        };
        let funcs = (|| {
            Ok::<_, DriverError>((
                [
                    get(c"bws_copy_d2d")?,
                    get(c"bws_copy_h2d")?,
                    get(c"bws_copy_d2h")?,
                ],
                get(c"bws_spin")?,
            ))
        })();
        let (copy, spin) = match funcs {
            Ok(f) => f,
            Err(e) => {
                sys::cuModuleUnload(module);
                return Err(e);
            }
        };
        let mut p: *mut c_void = std::ptr::null_mut();
        let flags = sys::CU_MEMHOSTALLOC_PORTABLE | sys::CU_MEMHOSTALLOC_DEVICEMAP;
        if let Err(e) = ck("cuMemHostAlloc", sys::cuMemHostAlloc(&mut p, 8, flags)) {
            sys::cuModuleUnload(module);
            return Err(e);
        }
        let mut latch_dev: CUdeviceptr = 0;
        if let Err(e) = ck(
            "cuMemHostGetDevicePointer_v2",
            sys::cuMemHostGetDevicePointer_v2(&mut latch_dev, p, 0),
        ) {
            sys::cuMemFreeHost(p);
            sys::cuModuleUnload(module);
            return Err(e);
        }
        let attr = |a: CUdevice_attribute| {
            let mut v = 0;
            (sys::cuDeviceGetAttribute(&mut v, a, dev) == CUresult::CUDA_SUCCESS && v > 0)
                .then_some(v as u32)
        };
        let sms = attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).unwrap_or(1);
        let per_sm = attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)
            .map_or(1, |t| (t / THREADS).max(1));
        let k = Kernels {
            module,
            copy,
            spin,
            latch: p as *mut i32,
            latch_dev,
            blocks: sms * per_sm,
        };
        k.set(0, 1);
        Ok(k)
    }

    fn set(&self, i: usize, v: i32) {
        // SAFETY: latch holds two ints for the life of self; the GPU reads
        // it with volatile loads, so the store must reach memory now.
        unsafe { std::ptr::write_volatile(self.latch.add(i), v) };
        fence(Ordering::SeqCst);
    }

    /// Hold `stream` until the returned guard is dropped (or released):
    /// whatever is queued behind the blocker starts only then.
    ///
    /// # Safety
    /// `stream` belongs to the current context.
    pub(super) unsafe fn block(&self, stream: CUstream) -> Result<Blocked<'_>, DriverError> {
        self.set(1, 0);
        self.set(0, 0);
        let mut latch = self.latch_dev;
        let mut timeout = SPIN_TIMEOUT_NS;
        let mut params = [
            &mut latch as *mut _ as *mut c_void,
            &mut timeout as *mut _ as *mut c_void,
        ];
        let launched = ck(
            "cuLaunchKernel(bws_spin)",
            sys::cuLaunchKernel(
                self.spin,
                1,
                1,
                1,
                1,
                1,
                1,
                0,
                stream,
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            ),
        );
        if launched.is_err() {
            self.set(0, 1);
        }
        launched.map(|_| Blocked(self))
    }

    /// One launch that copies `bytes` from `src` to `dst` `loops` times.
    ///
    /// # Safety
    /// Both pointers are device-addressable for `bytes` bytes.
    pub(super) unsafe fn copy(
        &self,
        which: Copy,
        dst: CUdeviceptr,
        src: CUdeviceptr,
        bytes: u64,
        loops: u64,
        stream: CUstream,
    ) -> Result<(), DriverError> {
        let grid = grid_blocks(self.blocks, bytes);
        let (mut d, mut s, mut n, mut l) = (dst, src, bytes, loops);
        let mut params = [
            &mut d as *mut _ as *mut c_void,
            &mut s as *mut _ as *mut c_void,
            &mut n as *mut _ as *mut c_void,
            &mut l as *mut _ as *mut c_void,
        ];
        ck(
            "cuLaunchKernel(bws_copy)",
            sys::cuLaunchKernel(
                self.copy[which as usize],
                grid,
                1,
                1,
                THREADS,
                1,
                1,
                0,
                stream,
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            ),
        )
    }
}

/// Blocks for a copy of `bytes`: a full grid, or fewer when the copy has
/// fewer 16-byte units than a full grid has threads.
pub(super) fn grid_blocks(full: u32, bytes: u64) -> u32 {
    let units = bytes.div_ceil(16);
    (units.div_ceil(THREADS as u64) as u32).clamp(1, full.max(1))
}

/// A stream held by the blocker; dropping it lets the stream go.
pub(super) struct Blocked<'a>(&'a Kernels);

impl Blocked<'_> {
    /// Let the stream go; after it drains, say whether the blocker had
    /// already given up (then the copies started before all were queued).
    pub(super) fn release(self) -> ReleasedAt {
        self.0.set(0, 1);
        ReleasedAt(self.0.latch)
    }
}

impl Drop for Blocked<'_> {
    fn drop(&mut self) {
        self.0.set(0, 1);
    }
}

/// Read after the stream was synchronised.
pub(super) struct ReleasedAt(*mut i32);

impl ReleasedAt {
    pub(super) fn timed_out(&self) -> bool {
        // SAFETY: the latch outlives every session of its backend.
        unsafe { std::ptr::read_volatile(self.0.add(1)) != 0 }
    }
}

impl Drop for Kernels {
    fn drop(&mut self) {
        // SAFETY: allocated in load(); no stream uses them any more.
        unsafe {
            sys::cuMemFreeHost(self.latch as *mut c_void);
            sys::cuModuleUnload(self.module);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_ptx_has_every_entry_and_an_old_isa() {
        for entry in ["bws_copy_d2d", "bws_copy_h2d", "bws_copy_d2h", "bws_spin"] {
            assert!(
                PTX.contains(&format!(".entry {}(", entry)),
                "{entry} missing"
            );
        }
        // Volta's ISA level, so older drivers than the generator's JIT it.
        assert!(PTX.contains("\n.version 7.0\n"));
        assert!(PTX.contains("\n.target sm_70\n"));
        // Host-side accesses bypass caches: every pass crosses the link.
        assert!(PTX.contains("ld.global.cv.v4.u32"));
        assert!(PTX.contains("st.global.wt.v4.u32"));
        assert!(PTX.ends_with('\0') && !PTX[..PTX.len() - 1].contains('\0'));
    }

    #[test]
    fn grids_cover_small_copies_without_idle_blocks() {
        assert_eq!(grid_blocks(528, 4096), 1);
        assert_eq!(grid_blocks(528, 16 * 512 + 1), 2);
        assert_eq!(grid_blocks(528, 1 << 30), 528);
        assert_eq!(grid_blocks(0, 1 << 30), 1);
        assert_eq!(grid_blocks(528, 0), 1);
    }
}
