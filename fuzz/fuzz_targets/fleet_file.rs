//! A fleet file (`fleet.json`) as `report`, `plot` and `compare` read it:
//! parsed (its node runs held to a run file's plausibility check), then
//! written in every report format's fleet form, compared with itself, and
//! each node's run taken out, written in every format and charted.
#![no_main]

use bwscope::report::fleet::{self, Doc};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(Doc::Fleet(f)) = fleet::parse("fuzz-fleet.json", data) else {
        return;
    };
    for fmt in bwscope::report::FORMATS {
        let out = fmt.fleet(&f, None);
        // No terminal escape of the file's making survives reading.
        assert!(!out.contains(&0x1b), "an escape in the {} form", fmt.name());
        let _ = fmt.fleet(&f, Some(12.5));
    }
    let c = fleet::compare::compare(("a", &f), ("b", &f), Some(5.0));
    let _ = (c.render_table(), c.render_markdown(), c.render_json());
    for n in f.nodes.iter().take(4) {
        let Ok(run) = fleet::node_run(&f, &n.label, "fuzz-fleet.json") else {
            continue;
        };
        for fmt in bwscope::report::FORMATS {
            let _ = fmt.serialize(&run);
        }
        for chart in bwscope::report::plot::charts(&run, bwscope::report::metric::StatKind::Best)
            .iter()
            .take(2)
        {
            let _ = bwscope::report::plot::svg(chart, 640, 400);
        }
    }
});
