//! Register and stack transfer loops as a workload: no working set; each
//! repetition moves the kernel's block (`granule` bytes) through registers
//! or the stack on the calling thread.

use super::sampler::{timed, Call, Workload};
use crate::kernels::{Kernel, KernelArgs};

pub struct Regs {
    kernel: &'static Kernel,
}

impl Regs {
    /// # Safety
    /// The CPU must support `kernel`'s ISA; it must be a register kernel
    /// (it touches no buffer).
    pub unsafe fn new(kernel: &'static Kernel) -> Regs {
        Regs { kernel }
    }
}

impl Workload for Regs {
    /// Bytes arriving in the destination registers or stack slots.
    fn units_per_rep(&self) -> u64 {
        self.kernel.granule as u64
    }

    fn run(&mut self, reps: u64) -> Result<Call, String> {
        let a = KernelArgs::new(std::ptr::null(), std::ptr::null_mut(), 0, reps);
        Ok(Call {
            // SAFETY: register kernels touch no buffer (stack kernels
            // restore rsp), and `new`'s caller checked the ISA.
            stamps: vec![timed(|| unsafe { (self.kernel.func)(&a) })],
            device_seconds: None,
        })
    }
}
