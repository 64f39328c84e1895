//! `bwscope history show` finds a headline figure by the name the summary
//! prints ("DRAM read"), and `--history PATH` stands before or after
//! `history`'s subcommand. One imported survey; well under a second.

mod common;

use common::bwscope;

#[test]
fn show_takes_the_summary_s_name_and_the_store_on_either_side() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("h.sqlite3");
    let store = store.to_str().unwrap();
    let survey = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/runs/2026-11-24-54fbad1/survey.json"
    );
    bwscope()
        .args(["history", "import", survey, "--history", store])
        .assert()
        .success();
    for args in [
        &["history", "show", "DRAM read", "--history", store][..],
        &["history", "--history", store, "show", "dram read"],
        &["--history", store, "history", "show", "headline/DRAM read"],
    ] {
        let out = bwscope().args(args).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            text.starts_with("headline/DRAM read (GB/s, 1 run"),
            "{args:?}: {text}"
        );
    }
    // A name that is no figure still says where to look.
    let out = bwscope()
        .args(["history", "show", "DRAM reed", "--history", store])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`bwscope history show` lists the cases"));
}
