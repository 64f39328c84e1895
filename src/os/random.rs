//! Random bytes from the system (nonces, temporary file names).

pub use super::imp::random::fill;

/// 64 random bits from the system; time and pid mixed when that fails.
pub fn u64() -> u64 {
    let mut b = [0u8; 8];
    if fill(&mut b).is_ok() {
        return u64::from_ne_bytes(b);
    }
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    crate::util::rng::XorShift64::new(t ^ u64::from(std::process::id()) << 32).next_u64()
}
