//! Fuzz targets run by `cargo test` (proptest, so CI runs them without a
//! nightly toolchain): the size-list parser and the run-file reader get
//! large generated inputs and must answer with a value or an error, never
//! a panic, and within bounded memory (the parser never yields more than
//! `MAX_POINTS` sizes; the reader is capped before it parses).

mod common;

use bwscope::report::json;
use bwscope::util::units::{parse_size_list, MAX_POINTS};
use proptest::prelude::*;

/// Pieces a size list is made of, so generated inputs reach deep into the
/// grammar instead of failing at the first character.
fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        "[0-9]{1,12}",
        "[0-9]{1,4}\\.[0-9]{1,8}",
        Just("KiB".into()),
        Just("MiB".into()),
        Just("GiB".into()),
        Just("TiB".into()),
        Just("kB".into()),
        Just("GB".into()),
        Just("K".into()),
        Just("..".into()),
        Just(":x".into()),
        Just(":+".into()),
        Just(",".into()),
        Just("e".into()),
        Just("1e308".into()),
        Just("1.0000000001".into()),
        Just("_".into()),
        "[ -~]{0,3}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn size_list_parser_never_panics_and_stays_bounded(parts in prop::collection::vec(token(), 0..40)) {
        let text: String = parts.concat();
        if let Ok(v) = parse_size_list(&text) {
            prop_assert!(!v.is_empty());
            prop_assert!(v.len() as u64 <= MAX_POINTS);
            prop_assert!(v.windows(2).all(|w| w[0] < w[1]));
        }
    }

    #[test]
    fn size_list_ranges_never_panic(a in 1u64..(1 << 40), b in 1u64..(1 << 40), f in 1.0f64..4.0, step in 1u64..(1 << 30)) {
        for text in [format!("{a}..{b}:x{f}"), format!("{a}..{b}:+{step}")] {
            if let Ok(v) = parse_size_list(&text) {
                prop_assert!(v.len() as u64 <= MAX_POINTS);
            }
        }
    }

    #[test]
    fn run_reader_never_panics_on_bytes(bytes in prop::collection::vec(any::<u8>(), 0..4096)) {
        let _ = json::parse("fuzz", &bytes);
    }
}

/// Mutations of a real run: every field replaced by odd values, the text
/// cut anywhere, and a large generated file (8 MiB) that must load or be
/// refused without a panic.
fn mutate(v: &serde_json::Value, pick: usize, with: &serde_json::Value) -> serde_json::Value {
    fn walk(v: &mut serde_json::Value, n: &mut usize, pick: usize, with: &serde_json::Value) {
        if *n == pick {
            *v = with.clone();
        }
        *n += 1;
        match v {
            serde_json::Value::Array(a) => a.iter_mut().for_each(|x| walk(x, n, pick, with)),
            serde_json::Value::Object(m) => m.values_mut().for_each(|x| walk(x, n, pick, with)),
            _ => {}
        }
    }
    let mut out = v.clone();
    walk(&mut out, &mut 0, pick, with);
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    #[test]
    fn run_reader_never_panics_on_mutated_runs(pick in 0usize..3000, which in 0usize..9, cut in 0usize..100_000) {
        let base = common::fixture();
        let odd = [
            serde_json::json!(-1),
            serde_json::json!(1e308),
            serde_json::json!(-1e308),
            serde_json::json!(null),
            serde_json::json!("NaN"),
            serde_json::json!([]),
            serde_json::json!({}),
            serde_json::json!(u64::MAX),
            serde_json::json!(i64::MIN),
        ];
        let m = mutate(&base, pick, &odd[which]);
        let text = serde_json::to_vec(&m).unwrap();
        if let Ok(run) = json::parse("fuzz", &text) {
            // Whatever loads renders without a panic.
            let _ = bwscope::report::views::render(&run);
        }
        let _ = json::parse("fuzz", &text[..cut.min(text.len())]);
    }
}

#[test]
fn run_reader_handles_a_large_generated_run() {
    let base = common::fixture();
    let rec = base["records"][0].clone();
    let mut big = base.clone();
    let recs: Vec<serde_json::Value> = (0..4000)
        .map(|i| {
            let mut r = rec.clone();
            r["size_bytes"] = serde_json::json!(1024 + i);
            r
        })
        .collect();
    big["records"] = serde_json::Value::Array(recs);
    let text = serde_json::to_vec(&big).unwrap();
    assert!(text.len() > 4 << 20, "{}", text.len());
    let run = json::parse("big", &text).unwrap();
    assert_eq!(run.records.len(), 4000);
    // Deep nesting is refused by the parser's recursion limit, not a stack
    // overflow.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(json::parse("deep", deep.as_bytes()).is_err());
}
