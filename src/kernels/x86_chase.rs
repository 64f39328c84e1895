//! The pointer chase: load-to-use latency.
//!
//! `mov p, [p]`: each load's address is the value of the previous load, so
//! no two loads overlap and the time per hop is the full load-to-use
//! latency of wherever the line lives. The chain is written into the
//! buffer before timing (`suites::latency`), as a random single cycle
//! through every line, which the prefetchers cannot predict; a strided
//! chain is also possible, and there the prefetchers may well help.
//!
//! The kernel follows the chain from `a.src` for `a.reps × 16` hops and
//! returns where it ended (the pointer after the last hop), which proves
//! the hops happened and lets tests check the chain's shape. Its caller
//! must pass `a.src` pointing at a node of a chain of 8-byte pointers in
//! which every pointer leads to another node of the chain.

kernels! {
    chase_latency_64_scalar: Latency 64 Scalar, Chase cached, block 64, align 8,
        "mov r64, [r64] pointer chase, 16 dependent loads per iteration (bwscope latency)",
        chase!(16);
}
