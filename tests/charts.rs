//! `bwscope plot`: SVG is well-formed and names every series and cache
//! boundary; PNG decodes, has the asked size, is not blank and has text,
//! with fontconfig pointed at an empty configuration (no system fonts).

mod common;

use common::{bwscope, empty_fontconfig, fixture_path, synthetic_run, write};

fn texts(svg: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(svg).expect("SVG must be well-formed XML");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc.descendants()
        .filter(|n| n.tag_name().name() == "text")
        .map(|n| n.text().unwrap_or("").trim().to_string())
        .collect()
}

#[test]
fn svg_bandwidth_vs_size() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c.svg");
    bwscope()
        .env("FONTCONFIG_FILE", empty_fontconfig(dir.path()))
        .args([
            "plot",
            fixture_path().to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ])
        .assert()
        .success();
    let svg = std::fs::read_to_string(&out).unwrap();
    let t = texts(&svg);
    for want in [
        "seq_read_512_avx512f",
        "seq_write_512_avx512f",
        "seq_write_512_nt_avx512f",
        "seq_copy_512_avx512f",
        "rep_movsb",
        "libc_memcpy",
        "L1 32 KiB",
        "L2 1 MiB",
        "L3 32 MiB",
        "16 KiB",
        "1 MiB",
        "64 MiB",
        "working set per thread",
        "bandwidth, GB/s",
    ] {
        assert!(t.iter().any(|x| x == want), "no text {want:?} in {t:?}");
    }
    assert!(svg.contains("width=\"1280\"") && svg.contains("height=\"720\""));
    // One polyline per kernel.
    let lines = roxmltree::Document::parse(&svg)
        .unwrap()
        .descendants()
        .filter(|n| n.tag_name().name() == "polyline")
        .count();
    assert!(lines >= 6, "{lines} polylines");
}

#[test]
fn png_decodes_with_no_system_fonts() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c.png");
    bwscope()
        .env("FONTCONFIG_FILE", empty_fontconfig(dir.path()))
        .env("FONTCONFIG_PATH", dir.path())
        .args([
            "plot",
            fixture_path().to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ])
        .args(["--width", "800", "--height", "500"])
        .assert()
        .success();
    let decoder = png::Decoder::new(std::fs::File::open(&out).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (800, 500));
    assert_eq!(info.color_type, png::ColorType::Rgb);
    let px = |x: u32, y: u32| {
        let i = ((y * info.width + x) * 3) as usize;
        (buf[i], buf[i + 1], buf[i + 2])
    };
    let mut colors = std::collections::HashSet::new();
    let mut non_white = 0usize;
    for y in 0..info.height {
        for x in 0..info.width {
            let p = px(x, y);
            colors.insert(p);
            if p != (255, 255, 255) {
                non_white += 1;
            }
        }
    }
    let total = (info.width * info.height) as usize;
    assert!(
        non_white > total / 50,
        "picture is nearly blank: {non_white} of {total}"
    );
    assert!(colors.len() > 20, "only {} colours", colors.len());
    // The title is text: dark anti-aliased pixels in the top band.
    let dark_top = (0..40)
        .flat_map(|y| (0..info.width).map(move |x| (x, y)))
        .filter(|&(x, y)| {
            let (r, g, b) = px(x, y);
            (r as u32 + g as u32 + b as u32) < 200
        })
        .count();
    assert!(
        dark_top > 100,
        "no title text rendered ({dark_top} dark pixels)"
    );
}

#[test]
fn every_suite_gets_its_chart() {
    let dir = tempfile::tempdir().unwrap();
    let run = write(dir.path(), "all.json", &synthetic_run());
    let out = bwscope().args(["plot", &run, "--list"]).output().unwrap();
    assert!(out.status.success());
    let list = String::from_utf8(out.stdout).unwrap();
    let ids: Vec<&str> = list
        .lines()
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(
        ids,
        vec![
            "cache-size",
            "latency-size",
            "threads-threads",
            "numa-matrix-seq_read_512_avx512f",
            "net-size"
        ],
        "{list}"
    );
    let base = dir.path().join("all.svg");
    bwscope()
        .env("FONTCONFIG_FILE", empty_fontconfig(dir.path()))
        .args(["plot", &run, "-o", base.to_str().unwrap()])
        .assert()
        .success();
    let read = |id: &str| {
        let p = if id == "cache-size" {
            base.clone()
        } else {
            dir.path().join(format!("all-{id}.svg"))
        };
        texts(
            &std::fs::read_to_string(&p).unwrap_or_else(|_| panic!("{} not written", p.display())),
        )
    };
    let lat = read("latency-size");
    assert!(lat.iter().any(|t| t == "latency, ns"), "{lat:?}");
    assert!(lat.iter().any(|t| t == "chase_random"));
    assert!(
        lat.iter().any(|t| t == "L2 1 MiB"),
        "latency charts show cache boundaries"
    );
    let thr = read("threads-threads");
    assert!(thr.iter().any(|t| t == "threads"));
    assert!(thr.iter().any(|t| t.starts_with("seq_write_512_avx512f")));
    let numa = read("numa-matrix-seq_read_512_avx512f");
    assert!(numa.iter().any(|t| t == "30.0 GB/s"), "{numa:?}");
    assert!(numa.iter().any(|t| t == "18.0 GB/s"));
    assert!(numa.iter().any(|t| t == "node 1"));
    let net = read("net-size");
    assert!(net.iter().any(|t| t == "tcp_stream_bidir_send"), "{net:?}");
    assert!(net.iter().any(|t| t == "transfer size"));
    assert!(
        !net.iter().any(|t| t.starts_with("L1 ")),
        "no cache boundaries on network charts"
    );
}

#[test]
fn bad_plot_arguments() {
    let f = fixture_path();
    let f = f.to_str().unwrap();
    for (args, needle) in [
        (vec!["plot", f, "-o", "x.jpg"], "--output"),
        (vec!["plot", f, "-o", "x.svg", "--width", "10"], "--width"),
        (
            vec!["plot", f, "-o", "x.svg", "--chart", "nope"],
            "available: cache-size",
        ),
        (
            vec!["plot", f, "-o", "/nonexistent-dir/x.svg"],
            "cannot write /nonexistent-dir/x.svg",
        ),
    ] {
        let out = bwscope().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{err}");
    }
}

/// The polylines of an SVG: each one's points.
fn polylines(svg: &str) -> Vec<Vec<(f64, f64)>> {
    roxmltree::Document::parse(svg)
        .unwrap()
        .descendants()
        .filter(|n| n.tag_name().name() == "polyline")
        .map(|n| {
            n.attribute("points")
                .unwrap_or("")
                .split_whitespace()
                .filter_map(|p| {
                    let (x, y) = p.split_once(',')?;
                    Some((x.parse().ok()?, y.parse().ok()?))
                })
                .collect()
        })
        .collect()
}

/// Issue 29, item 4, on a survey's shape (Zen 4: 32 KiB L1, 1 MiB L2,
/// 32 MiB L3): records at a level's lower edge carry the level below's
/// higher limit (a 47 KiB copy: L1 store ports, 236 GB/s), and the L2
/// and L3 lines were drawn there, labelled "L1 store ports 236 GB/s",
/// while the summary said L2 is bound by the L2→L1 fill at 118. The
/// threads chart drew one single-point series per per-thread size.
#[test]
fn limit_lines_name_each_regimes_own_ceiling_and_thread_scaling_is_one_line() {
    let mut run = synthetic_run();
    let t = run["records"][0].clone();
    let rec = |kernel: &str, size: u64, regime: &str, limit: f64, bound: &str| {
        let mut r = t.clone();
        r["suite"] = "cache".into();
        r["kernel"] = kernel.into();
        r["op"] = kernel.split('_').nth(1).unwrap().into();
        r["size_bytes"] = size.into();
        r["regime"] = regime.into();
        r["limit_gbps"] = limit.into();
        r["bound_by"] = bound.into();
        r
    };
    const K: u64 = 1 << 10;
    const M: u64 = 1 << 20;
    let read = "seq_read_512_avx512f";
    let copy = "seq_copy_512_avx512f";
    let (l1_load, l1_store, fill) = ("l1_load_ports", "l1_store_ports", "l2_fill");
    let cache = vec![
        rec(read, 16 * K, "L1", 236.4, l1_load),
        rec(copy, 16 * K, "L1", 236.4, l1_store),
        rec(read, 47 * K, "L2", 236.4, l1_load),
        rec(copy, 47 * K, "L2", 236.4, l1_store),
        rec(read, 512 * K, "L2", 118.2, fill),
        rec(copy, 512 * K, "L2", 118.2, fill),
        rec(copy, 1536 * K, "L3", 236.4, l1_store),
        rec(read, 1536 * K, "L3", 118.2, fill),
        rec(read, 8 * M, "L3", 118.2, fill),
        rec("seq_write_512_avx512f", 8 * M, "L3", 118.2, l1_store),
    ];
    let mut threads = Vec::new();
    for (n, size) in [(1u32, 256 * M), (2, 128 * M)] {
        let mut r = t.clone();
        r["suite"] = "threads".into();
        r["kernel"] = read.into();
        r["op"] = "read".into();
        r["size_bytes"] = size.into();
        r["regime"] = "DRAM".into();
        r["threads"] = n.into();
        r["gbps"]["best"] = (20.0 * n as f64).into();
        r["gbps"]["median"] = (19.0 * n as f64).into();
        threads.push(r);
    }
    let recs = run["records"].as_array_mut().unwrap();
    recs.retain(|r| r["suite"] != "cache" && r["suite"] != "threads");
    // The cache chart first: it is the one drawn at `-o`.
    recs.splice(0..0, cache);
    recs.extend(threads);
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "survey.json", &run);
    let base = dir.path().join("s.svg");
    bwscope()
        .env("FONTCONFIG_FILE", empty_fontconfig(dir.path()))
        .args(["plot", &path, "-o", base.to_str().unwrap()])
        .assert()
        .success();
    let cache = texts(&std::fs::read_to_string(&base).unwrap());
    let limits: Vec<&String> = cache.iter().filter(|t| t.contains(" limit: ")).collect();
    assert_eq!(
        limits,
        [
            "L1 limit: L1 load ports 236 GB/s",
            "L2 limit: L2→L1 fill 118 GB/s",
            "L3 limit: L2→L1 fill 118 GB/s"
        ],
        "{cache:?}"
    );
    let svg = std::fs::read_to_string(dir.path().join("s-threads-threads.svg")).unwrap();
    let thr = texts(&svg);
    let named: Vec<&String> = thr.iter().filter(|t| t.starts_with("seq_")).collect();
    assert_eq!(named, [read], "one series over thread counts: {thr:?}");
    assert!(
        polylines(&svg).iter().any(|p| p.len() == 2),
        "a line through 1 and 2 threads: {:?}",
        polylines(&svg)
    );
}
