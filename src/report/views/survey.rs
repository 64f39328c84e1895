//! The survey's closing block.

use std::path::Path;
use std::time::Duration;

use crate::model::Run;
use crate::report::summary;

/// The closing block: headline, warnings, where the files are, time taken.
/// `probes`: the time the spell probes took in it (`measure::probe`).
pub fn render_summary(run: &Run, saved: Option<&Path>, took: Duration, probes: Duration) -> String {
    let mut s = String::new();
    let head = summary::headline(run);
    if head.is_empty() {
        s.push_str("summary   nothing measured\n");
    }
    // Wrap at ~100 columns between figures, so the line reads at a glance.
    let mut line = String::new();
    let mut first = true;
    for part in head {
        if !line.is_empty() && line.chars().count() + part.chars().count() + 3 > 100 {
            s.push_str(if first { "summary   " } else { "          " });
            s.push_str(&line);
            s.push('\n');
            line.clear();
            first = false;
        }
        if !line.is_empty() {
            line.push_str(" · ");
        }
        line.push_str(&part);
    }
    if !line.is_empty() {
        s.push_str(if first { "summary   " } else { "          " });
        s.push_str(&line);
        s.push('\n');
    }
    for (i, l) in crate::report::standing::lines(run).iter().enumerate() {
        s.push_str(if i == 0 { "history   " } else { "          " });
        s.push_str(l);
        s.push('\n');
    }
    for (i, w) in summary::warning_lines(run).iter().enumerate() {
        s.push_str(if i == 0 { "warnings  " } else { "          " });
        s.push_str(w);
        s.push('\n');
    }
    if let Some(d) = saved {
        s.push_str(&format!(
            "saved     {}/  (run.json, report.html: open the report in a browser)\n",
            d.display()
        ));
    }
    s.push_str(&format!(
        "took      {:.0} s (the spell probes {:.2} s of it)\n",
        took.as_secs_f64(),
        probes.as_secs_f64()
    ));
    s
}
