//! The knee store (`platform::knee_store`) as a run reads it: the bytes
//! are this host's stored probe (a file of this user's, 0600, in a cache
//! folder of the fuzzer's own), loaded and applied to the host, which
//! analyses it afresh against CPUID's levels.
#![no_main]

use std::sync::OnceLock;

use bwscope::model::Host;
use libfuzzer_sys::fuzz_target;

fn host() -> &'static Host {
    static H: OnceLock<Host> = OnceLock::new();
    H.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("bwscope-fuzz-knees-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        // The store's folder is the fuzzer's, set before any thread reads
        // the environment.
        std::env::set_var("XDG_CACHE_HOME", &d);
        bwscope::platform::detect_host(false)
    })
}

fuzz_target!(|data: &[u8]| {
    use bwscope::platform::knee_store;
    let h = host();
    let Some(p) = knee_store::path(h) else {
        return;
    };
    let _ = std::fs::create_dir_all(p.parent().unwrap());
    let _ = std::fs::remove_file(&p);
    let Ok(mut f) = bwscope::os::fs::create_new(&p, 0o600) else {
        return;
    };
    use std::io::Write as _;
    if f.write_all(data).is_err() {
        return;
    }
    drop(f);
    let _ = knee_store::load(h);
    let mut h = h.clone();
    let _ = knee_store::apply_stored(&mut h);
});
