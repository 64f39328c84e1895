//! The command line's grammars: size lists (`--sizes`), sizes (`--size`),
//! cpu lists (`--cpus`, `--cpu-nodes`) and their gaps.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(sizes) = bwscope::util::units::parse_size_list(s) {
        assert!(sizes.len() <= 10_000, "{} points", sizes.len());
    }
    let _ = bwscope::util::units::parse_size(s);
    let _ = bwscope::util::cpulist::parse_ranges(s);
    let present: Vec<u32> = (0..64).collect();
    let _ = bwscope::util::cpulist::missing(s, &present);
    if let Some(l) = bwscope::util::cpulist::parse_cpu_list(s) {
        let _ = bwscope::util::cpulist::format_cpu_list(&l);
    }
});
