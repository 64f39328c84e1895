//! The small grammars of the command line that earlier targets missed:
//! contend's CPU agents (`--cpu N@NODE[:MIX]`, `cpus:LIST[:MIX]`,
//! `--phases`), numa's load teams and lists (`--load`, `--cpu-nodes`,
//! `--mix`, `--delays`, `--interleave`), watch's `--every`, `--dram-peak`,
//! and the history's dates, with a round-trip property: a date that
//! parses prints back to the same instant. Planned against this host (no
//! memory is allocated by a plan).
#![no_main]

use std::sync::OnceLock;

use bwscope::model::Host;
use libfuzzer_sys::fuzz_target;

fn host() -> &'static Host {
    static H: OnceLock<Host> = OnceLock::new();
    H.get_or_init(|| bwscope::platform::detect_host(false))
}

fuzz_target!(|data: &[u8]| {
    let Some((&how, rest)) = data.split_first() else {
        return;
    };
    let Ok(s) = std::str::from_utf8(rest) else {
        return;
    };
    if let Ok(t) = bwscope::util::date::parse_instant(s) {
        let back = bwscope::util::date::parse_instant(&bwscope::util::date::stamp(t));
        assert_eq!(back, Ok(t), "{s:?}");
    }
    if let Ok(d) = bwscope::util::units::parse_duration(s) {
        assert!(d.as_secs_f64().is_finite(), "{s:?}");
    }
    if let Ok(r) = bwscope::util::units::parse_rate(s) {
        assert!(r.is_finite() && r > 0.0, "{s:?}: {r}");
    }
    let h = host();
    match how % 8 {
        0 => {
            let o = bwscope::suites::contend::ContendOptions {
                cpu: vec![s.to_string()],
                ..Default::default()
            };
            let _ = bwscope::suites::contend::plan(&o, h);
        }
        1 => {
            let o = bwscope::suites::contend::ContendOptions {
                cpu: vec!["1@0".into(), "cpus:0".into()],
                phases: Some(s.to_string()),
                ..Default::default()
            };
            let _ = bwscope::suites::contend::plan(&o, h);
        }
        2 | 3 => {
            let o = bwscope::suites::numa::NumaOptions {
                load: Some(s.to_string()),
                oversubscribe: how & 1 == 1,
                ..Default::default()
            };
            let _ = bwscope::suites::numa::plan(&o, h);
        }
        4 => {
            let o = bwscope::suites::numa::NumaOptions {
                cpu_nodes: Some(s.to_string()),
                memory_nodes: Some(s.to_string()),
                ..Default::default()
            };
            let _ = bwscope::suites::numa::plan(&o, h);
        }
        5 => {
            let o = bwscope::suites::numa::NumaOptions {
                mix: Some(s.to_string()),
                load_mix: Some(s.to_string()),
                ..Default::default()
            };
            let _ = bwscope::suites::numa::plan(&o, h);
        }
        6 => {
            let o = bwscope::suites::numa::NumaOptions {
                load: Some("1@0".into()),
                delays: Some(s.to_string()),
                ..Default::default()
            };
            let _ = bwscope::suites::numa::plan(&o, h);
        }
        _ => {
            let o = bwscope::suites::numa::NumaOptions {
                interleave: Some(s.to_string()),
                ..Default::default()
            };
            let _ = bwscope::suites::numa::plan(&o, h);
        }
    }
});
