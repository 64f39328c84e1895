//! The files others hand bwscope: a run (`report`, `compare`, `plot`),
//! a fleet's reference file, a token file.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(run) = bwscope::report::json::parse("fuzz.json", data) {
        // Whatever was read shows on a terminal without an escape.
        let text = serde_json::to_string(&run).unwrap_or_default();
        assert!(!text.contains('\u{1b}'), "an escape survived reading");
        let _ = bwscope::report::plausible::check(&run);
    }
    let _ = bwscope::report::fleet::reference::parse("fuzz-ref.json", data);
    let _ = bwscope::net::token::parse(data);
});
