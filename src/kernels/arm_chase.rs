//! The AArch64 pointer chase: `ldr p, [p]`, each load's address the value
//! of the previous load, so the time per hop is the full load-to-use
//! latency of wherever the line lives (see `x86_chase.rs` for the chain and
//! what the kernel returns).

kernels! {
    chase_latency_64_scalar: Latency 64 Scalar, Chase cached, block 64, align 8,
        "ldr x, [x] pointer chase, 16 dependent loads per iteration (bwscope latency)",
        chase!(16);
}
