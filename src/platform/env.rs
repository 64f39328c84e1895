//! The environment a run happened in: kernel, memory, THP, clocksource,
//! NUMA balancing (as the system states them, `os::system`), and the CPU
//! features this binary was built for.

use crate::model::Environment;

/// Read the environment.
pub fn detect() -> Environment {
    let mut tf = Vec::new();
    if cfg!(target_feature = "avx2") {
        tf.push("avx2".to_string());
    }
    if cfg!(target_feature = "sse2") {
        tf.push("sse2".to_string());
    }
    Environment {
        build_target_features: tf,
        ..crate::os::system::environment()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn address_space_is_unlimited_or_sensible() {
        if let Some((left, limit)) = crate::os::process::address_space_left() {
            assert!(left <= limit, "{left} {limit}");
        }
    }

    #[test]
    fn memory_is_read() {
        let e = super::detect();
        assert!(e.mem_total_bytes.unwrap() > 1 << 20);
        assert!(e.mem_available_bytes.is_some());
    }
}
