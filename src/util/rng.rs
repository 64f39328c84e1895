//! A tiny deterministic RNG for buffer contents and permutations.
//!
//! xorshift64* (Vigna, "An experimental exploration of Marsaglia's xorshift
//! generators, scrambled", 2016): fast, good enough to defeat memory
//! compression and to shuffle, and reproducible from a seed.

/// Fill `words` with the pseudo-random data bwscope's buffers hold: four
/// xorshift64* generators (seeded `seed ^ (i << 56)`), one per word of
/// each 32-byte group. Why four: one generator is a serial chain of ~7
/// cycles per word, and `cache` refills every size of its sweep, which
/// cost 1.8 s of a 104 s run (Zen 4); four chains overlap. Whoever checks
/// a buffer's contents from outside (a test reading a guest's shared
/// memory) regenerates them with this function.
pub fn fill_words(words: &mut [u64], seed: u64) {
    let mut g = [0u64, 1, 2, 3].map(|i| XorShift64::new(seed ^ (i << 56)));
    let mut groups = words.chunks_exact_mut(4);
    for c in &mut groups {
        for (x, r) in c.iter_mut().zip(g.iter_mut()) {
            *x = r.next_u64();
        }
    }
    for (x, r) in groups.into_remainder().iter_mut().zip(g.iter_mut()) {
        *x = r.next_u64();
    }
}

#[derive(Debug, Clone)]
pub struct XorShift64 {
    state: u64,
}

impl XorShift64 {
    pub fn new(seed: u64) -> Self {
        // A zero state would stay zero forever; mix the seed (splitmix64).
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        XorShift64 {
            state: if z == 0 { 1 } else { z },
        }
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.state;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.state = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in 0..n (n > 0), by Lemire's multiply-shift (bias < 2^-32
    /// for the n used here, irrelevant for shuffling buffers).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() >> 32) * n) >> 32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_nonzero() {
        let mut a = XorShift64::new(0);
        let mut b = XorShift64::new(0);
        for _ in 0..100 {
            let x = a.next_u64();
            assert_eq!(x, b.next_u64());
            assert_ne!(x, 0);
        }
    }

    #[test]
    fn below_in_range() {
        let mut r = XorShift64::new(3);
        let mut seen = [false; 7];
        for _ in 0..1000 {
            let v = r.below(7);
            assert!(v < 7);
            seen[v as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }
}
