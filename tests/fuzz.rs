//! Fuzz targets run by `cargo test` (proptest, so CI runs them without a
//! nightly toolchain): the size-list parser, the run-file reader, the
//! fleet's reference-file reader, the token-file reader and the SMBIOS
//! reader get large generated inputs and must answer with a value or an
//! error, never a panic, and within bounded memory (the parser never yields more than
//! `MAX_POINTS` sizes; the readers are capped before they parse).

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

/// Pieces of a reference file (`--reference`), so generated inputs reach
/// the checks past the JSON parser: known and misspelt metrics, odd
/// numbers, unknown fields, a byte-order mark.
fn reference_piece() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(r#"{"bwscope_reference":1,"classes":["#.to_string()),
        Just(r#"{"cpu":"*","bounds":{"#.into()),
        Just(r#"{"name":"n","cpu":"AMD*","cores":8,"memory_gib":16,"bounds":{"#.into()),
        Just(r#""dram_read_gbps":"#.into()),
        Just(r#""clock_gz":"#.into()),
        Just(r#""tcp_in_gbps":"#.into()),
        Just(r#""extra":"#.into()),
        Just("1e308".into()),
        Just("-1".into()),
        Just("0".into()),
        Just("null".into()),
        Just("\"x\"".into()),
        Just("}".into()),
        Just("]".into()),
        Just(",".into()),
        Just("\u{feff}".into()),
        "[0-9]{1,6}(\\.[0-9]{1,4})?",
        "[ -~]{0,4}",
    ]
}

/// A whole reference document from parts that are mostly right: the
/// shapes a user edits by hand (known and misspelt metrics, odd bounds,
/// optional fields present or not, a stray field), so the checks after
/// parsing are reached as often as the parser's.
fn reference_doc() -> impl Strategy<Value = Vec<u8>> {
    let metric = prop_oneof![
        Just("dram_read_gbps"),
        Just("clock_ghz"),
        Just("tcp_out_gbps"),
        Just("dram_latency_ns"),
        Just("clock_gz"),
        Just("DRAM_READ_GBPS"),
        Just(""),
    ];
    let bound = prop_oneof![
        Just(serde_json::json!(5)),
        Just(serde_json::json!(0)),
        Just(serde_json::json!(-1)),
        Just(serde_json::json!(1e308)),
        Just(serde_json::json!(null)),
        Just(serde_json::json!("5")),
        (0.0f64..1e4).prop_map(|x| serde_json::json!(x)),
    ];
    let class = (
        prop::collection::vec((metric, bound), 0..4),
        any::<bool>(),
        any::<bool>(),
        prop_oneof![
            Just(serde_json::json!(16)),
            Just(serde_json::json!(-2)),
            Just(serde_json::json!(0))
        ],
    )
        .prop_map(|(bounds, cores, stray, mem)| {
            let b: serde_json::Map<String, serde_json::Value> = bounds
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect();
            let mut c = serde_json::json!({"cpu": "*", "bounds": b, "memory_gib": mem});
            if cores {
                c["cores"] = serde_json::json!(8);
            }
            if stray {
                c["core"] = serde_json::json!(8);
            }
            c
        });
    (prop::collection::vec(class, 0..3), 0u32..3, any::<bool>()).prop_map(|(classes, v, bom)| {
        let doc = serde_json::json!({"bwscope_reference": v, "classes": classes});
        let mut out = if bom {
            "\u{feff}".as_bytes().to_vec()
        } else {
            Vec::new()
        };
        out.extend(serde_json::to_vec(&doc).unwrap());
        out
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    /// The reference-file reader: an answer or an error naming
    /// `--reference`, never a panic; what it accepts has only known
    /// metrics with finite bounds of 0 or more.
    #[test]
    fn reference_reader_never_panics_and_accepts_only_sound_files(parts in prop::collection::vec(reference_piece(), 0..24), bytes in prop::collection::vec(any::<u8>(), 0..512), doc in reference_doc()) {
        use bwscope::report::fleet::reference;
        use bwscope::report::fleet::metrics::is_metric;
        for input in [parts.concat().into_bytes(), bytes, doc] {
            match reference::parse("fuzz", &input) {
                Ok(r) => {
                    prop_assert!(!r.classes.is_empty());
                    for c in &r.classes {
                        prop_assert!(!c.bounds.is_empty());
                        for (m, b) in &c.bounds {
                            prop_assert!(is_metric(m), "{m}");
                            prop_assert!(b.is_finite() && *b >= 0.0);
                        }
                    }
                }
                Err(e) => prop_assert!(e.to_string().starts_with("--reference: fuzz: "), "{e}"),
            }
        }
    }

    /// The token-file reader: a secret that is never empty, never all
    /// zero, never longer than the cap and without surrounding
    /// whitespace, or an error; never a panic.
    #[test]
    fn token_reader_never_panics_and_keeps_only_real_secrets(bytes in prop::collection::vec(prop_oneof![Just(0u8), Just(b' '), Just(b'\n'), any::<u8>()], 0..5000)) {
        use bwscope::net::token::{parse, MAX_TOKEN_FILE};
        match parse(&bytes) {
            Ok(t) => {
                prop_assert!(!t.is_empty());
                prop_assert!(t.iter().any(|&b| b != 0));
                prop_assert!(t.len() as u64 <= MAX_TOKEN_FILE);
                prop_assert!(!t[0].is_ascii_whitespace() && !t[t.len() - 1].is_ascii_whitespace());
                // The secret is the bytes themselves, not a re-encoding.
                prop_assert!(bytes.windows(t.len()).any(|w| w == t.as_slice()));
            }
            Err(e) => prop_assert!(!e.is_empty()),
        }
    }
}

/// One SMBIOS structure, mostly right: a type the decoder looks at (16
/// and 17, the memory array and device; 127, the end), another or any;
/// a length byte that is its formatted area's, too short (below the
/// 4-byte header included), or any; random fields; strings that end, or
/// do not.
fn smbios_structure() -> impl Strategy<Value = Vec<u8>> {
    (
        prop_oneof![
            Just(16u8),
            Just(17),
            Just(127),
            Just(4),
            Just(7),
            any::<u8>()
        ],
        prop_oneof![
            0u8..6,
            Just(0x17),
            Just(0x28),
            Just(0x54),
            Just(0x5C),
            any::<u8>()
        ],
        prop::collection::vec(any::<u8>(), 0..0x60),
        prop::collection::vec("[ -~]{0,8}", 0..6),
        prop_oneof![Just(2usize), Just(1), Just(0)],
    )
        .prop_map(|(kind, len, fields, strings, nuls)| {
            let mut s = vec![kind, len];
            s.extend(fields.iter().take(usize::from(len).saturating_sub(2)));
            for t in strings.iter().filter(|t| !t.is_empty()) {
                s.extend(t.as_bytes());
                s.push(0);
            }
            s.extend(std::iter::repeat_n(0u8, nuls));
            s
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    /// The SMBIOS reader over hostile tables (structures with short or
    /// overstated lengths, strings without an end, an entry point whose
    /// length is not the table's, random bytes for either file): a device
    /// list or a reason, never a panic.
    #[test]
    fn smbios_reader_never_panics(parts in prop::collection::vec(smbios_structure(), 0..12), slack in -8i64..8, major in 2u8..4, minor in any::<u8>(), bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        use bwscope::platform::smbios::decode;
        let table: Vec<u8> = parts.concat();
        let len = (table.len() as i64 + slack).max(0) as u32;
        let entry = common::smbios_entry_point(len, major, minor);
        for (e, t) in [(&entry, &table), (&entry, &bytes), (&bytes, &table)] {
            match decode(e, t) {
                Ok((_, devices)) => prop_assert!(devices.len() <= t.len() / 4),
                Err(why) => prop_assert!(why.contains("SMBIOS"), "{why}"),
            }
        }
    }
}
