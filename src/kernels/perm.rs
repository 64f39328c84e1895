//! Access orders built before timing: line permutations for the random
//! kernels and single-cycle visiting orders for the pointer chase.
//!
//! Why a permutation and not an RNG in the loop: a per-access RNG costs
//! more than an L1 load and may hit the same line twice or never; a
//! permutation visits every line exactly once per pass, so random and
//! sequential kernels move the same bytes and their numbers compare.

use std::sync::Arc;

use super::{Kernel, Pattern};
use crate::util::rng::XorShift64;

/// The line size the random kernels and the chase are built on.
pub const LINE: usize = 64;

/// Index entries a random kernel may read past the last line it visits:
/// it loads the next pair of indices one iteration early, so that the data
/// loads do not wait for their address. The values are never used as
/// addresses; they only have to be readable, so every order is padded.
pub const READ_AHEAD: usize = 2;

/// A uniformly random permutation of `0..n` (Fisher–Yates).
pub fn shuffled(n: usize, seed: u64) -> Vec<u32> {
    assert!(n <= u32::MAX as usize + 1, "too many lines for a u32 index");
    let mut v: Vec<u32> = (0..n as u64).map(|i| i as u32).collect();
    let mut rng = XorShift64::new(seed);
    for i in (1..n).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        v.swap(i, j);
    }
    v
}

/// The access order of a random kernel on each of `workers` buffers: one
/// fresh permutation of the stream's lines per worker followed by
/// [`READ_AHEAD`] padding entries, laid end to end (see
/// `measure::team::Job::index`). `None` for other patterns.
pub fn index_for(k: &Kernel, stream_len: usize, workers: usize) -> Option<Arc<Vec<u32>>> {
    if k.pattern != Pattern::Random {
        return None;
    }
    let lines = stream_len / LINE;
    let mut all = Vec::with_capacity((lines + READ_AHEAD) * workers);
    for w in 0..workers {
        // Seeded by size and worker: reproducible, different per buffer.
        let seed = 0x5eed_0000 ^ (stream_len as u64) << 8 ^ w as u64;
        all.extend(padded(shuffled(lines, seed)));
    }
    Some(Arc::new(all))
}

/// `order` followed by [`READ_AHEAD`] entries (copies of its first ones, or
/// zeros), as a random kernel's `KernelArgs::index` must be.
pub fn padded(mut order: Vec<u32>) -> Vec<u32> {
    for k in 0..READ_AHEAD {
        order.push(order.get(k).copied().unwrap_or(0));
    }
    order
}

/// A chase order over `n` nodes: a random single cycle starting at node 0
/// (node 0 first, the rest shuffled). Linking consecutive entries (and the
/// last back to the first) gives one cycle through every node.
pub fn random_cycle(n: usize, seed: u64) -> Vec<u32> {
    let mut v = shuffled(n, seed);
    if let Some(p) = v.iter().position(|&x| x == 0) {
        v.swap(0, p);
    }
    v
}

/// A chase order randomised within windows of `per_window` nodes: the
/// windows in random order, and inside each window its nodes in random
/// order, so consecutive hops stay in one window (one page when the window
/// is a page) until it is exhausted. A trailing partial window is kept.
pub fn windowed_cycle(n: usize, per_window: usize, seed: u64) -> Vec<u32> {
    let per = per_window.max(1);
    let windows = n.div_ceil(per);
    let mut rng = XorShift64::new(seed);
    let order = shuffled(windows, rng.next_u64());
    let mut out = Vec::with_capacity(n);
    for w in order {
        let lo = w as usize * per;
        let hi = (lo + per).min(n);
        let inner = shuffled(hi - lo, rng.next_u64());
        out.extend(inner.into_iter().map(|i| (lo + i as usize) as u32));
    }
    if let Some(p) = out.iter().position(|&x| x == 0) {
        out.rotate_left(p);
    }
    out
}

/// A strided walk: nodes in address order.
pub fn strided_cycle(n: usize) -> Vec<u32> {
    (0..n as u64).map(|i| i as u32).collect()
}

/// `next[i]`: the node visited after node `i` when walking `order` as a
/// cycle.
pub fn successors(order: &[u32]) -> Vec<u32> {
    let mut next = vec![u32::MAX; order.len()];
    for (k, &node) in order.iter().enumerate() {
        next[node as usize] = order[(k + 1) % order.len()];
    }
    next
}

/// Length of the cycle through node 0 if `next` is a permutation whose
/// cycle through 0 covers every node exactly once; `None` otherwise.
pub fn single_cycle_len(next: &[u32]) -> Option<usize> {
    let n = next.len();
    if n == 0 {
        return None;
    }
    let mut seen = vec![false; n];
    let mut cur = 0usize;
    for step in 1..=n {
        if seen[cur] {
            return None;
        }
        seen[cur] = true;
        let nx = *next.get(cur)? as usize;
        if nx >= n {
            return None;
        }
        cur = nx;
        if cur == 0 {
            return (step == n).then_some(n);
        }
    }
    None
}

/// Hops per repetition of the chase kernel: its declaration unrolls 16
/// dependent loads (`chase!(16)` in `kernels/x86_chase.rs`); the test in
/// `measure::chase` that a cycle of n nodes closes after exactly n / 16
/// repetitions keeps the two in step.
pub const HOPS_PER_REP: u64 = 16;

/// The chase kernel from the registry, if this architecture has one.
pub fn chase_kernel() -> Option<&'static super::Kernel> {
    super::registry()
        .iter()
        .find(|k| k.pattern == super::Pattern::Chase)
}

/// Write the chain for `order` into `base`: node `order[k]` (at
/// `order[k] × node_bytes`) holds the address of node `order[k + 1]`, the
/// last one the first's. Returns the address of the first node.
///
/// # Safety
/// `base` must be valid for writes of `order.len() × node_bytes` bytes,
/// 8-byte aligned, and `node_bytes` a multiple of 8.
pub unsafe fn write_chain(base: *mut u8, node_bytes: usize, order: &[u32]) -> *const u8 {
    let n = order.len();
    for k in 0..n {
        let from = base.add(order[k] as usize * node_bytes) as *mut u64;
        let to = base.add(order[(k + 1) % n] as usize * node_bytes);
        from.write(to as u64);
    }
    base.add(order[0] as usize * node_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_permutation(v: &[u32]) -> bool {
        let mut seen = vec![false; v.len()];
        for &x in v {
            if x as usize >= v.len() || seen[x as usize] {
                return false;
            }
            seen[x as usize] = true;
        }
        true
    }

    /// Property: for many sizes and seeds, every chase order is a single
    /// cycle through all nodes, each visited exactly once.
    #[test]
    fn chase_orders_are_single_cycles_over_many_sizes_and_seeds() {
        let mut sizes: Vec<usize> = (1..=70).collect();
        sizes.extend([127, 128, 129, 511, 512, 4095, 4096, 4097, 65_536, 100_003]);
        for &n in &sizes {
            for seed in 0..12u64 {
                let r = random_cycle(n, seed);
                assert!(
                    is_permutation(&r),
                    "random_cycle n={n} seed={seed} is not a permutation"
                );
                assert_eq!(r[0], 0);
                assert_eq!(
                    single_cycle_len(&successors(&r)),
                    Some(n),
                    "random n={n} seed={seed}"
                );
                for per in [1, 3, 64, 512] {
                    let w = windowed_cycle(n, per, seed);
                    assert!(is_permutation(&w), "windowed n={n} per={per} seed={seed}");
                    assert_eq!(
                        single_cycle_len(&successors(&w)),
                        Some(n),
                        "windowed n={n} per={per}"
                    );
                }
            }
            assert_eq!(single_cycle_len(&successors(&strided_cycle(n))), Some(n));
        }
    }

    #[test]
    fn windowed_order_stays_inside_each_window() {
        let (n, per) = (64 * 40, 64);
        let w = windowed_cycle(n, per, 9);
        // Exactly one window change per window (plus the wrap-around start
        // rotation, which may split one window in two).
        let changes = w
            .windows(2)
            .filter(|p| p[0] as usize / per != p[1] as usize / per)
            .count();
        assert!(
            changes <= n / per,
            "{changes} window changes for {} windows",
            n / per
        );
    }

    #[test]
    fn cycle_check_rejects_two_cycles_and_bad_entries() {
        // 0→1→0 and 2→3→2: two cycles.
        assert_eq!(single_cycle_len(&[1, 0, 3, 2]), None);
        assert_eq!(single_cycle_len(&[1, 5]), None);
        assert_eq!(single_cycle_len(&[0]), Some(1));
        assert_eq!(single_cycle_len(&[]), None);
    }

    #[test]
    fn shuffles_differ_by_seed_and_are_permutations() {
        let a = shuffled(1000, 1);
        let b = shuffled(1000, 2);
        assert!(is_permutation(&a) && is_permutation(&b));
        assert_ne!(a, b);
        assert_ne!(a, (0..1000).collect::<Vec<u32>>());
    }
}
