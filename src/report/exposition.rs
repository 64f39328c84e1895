//! Metric families and the two grammars they are written in.
//!
//! - **The Prometheus text exposition format** (version 0.0.4,
//!   prometheus.io/docs/instrumenting/exposition_formats): what
//!   node_exporter's textfile collector parses (`expfmt.TextParser`; it
//!   reads no OpenMetrics, prometheus/node_exporter#1988) and what
//!   `promtool check metrics` lints. Types `gauge` and `counter` only: an
//!   identity family is a gauge named `…_info`; a counter's `# TYPE` line
//!   names the sample itself, `…_total`. No `# UNIT`, no `# EOF`.
//! - **OpenMetrics 1.0** (openmetrics.io): `info` and `counter` families
//!   named without their `_info` / `_total` suffix, a `# UNIT` line where
//!   the name ends in its unit, `# EOF` last.
//!
//! A family is declared once ([`Family`]) and written in either grammar,
//! so the two files cannot say different things. Every family has HELP and
//! TYPE; a family without a sample is left out (a reader cannot tell an
//! empty family from a missing figure, and `promtool` lints it).

use std::fmt::Write as _;

/// What kind of family: how each grammar types and names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A value that goes up and down (every figure).
    Gauge,
    /// A count that only grows while the writer runs (`…_total`).
    Counter,
    /// Identity, value 1 (`…_info`).
    Info,
}

/// One sample: its labels (in order; an empty value is left out, as
/// Prometheus treats it) and its value, in the family's base unit.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub labels: Vec<(&'static str, String)>,
    pub value: f64,
}

/// A metric family: its name without the `_info` / `_total` suffix its
/// kind adds, HELP text, and samples.
#[derive(Debug, Clone, PartialEq)]
pub struct Family {
    pub name: String,
    pub kind: Kind,
    pub help: String,
    pub samples: Vec<Sample>,
}

/// The base units a name may end in (the Prometheus naming guide's plural
/// suffixes); OpenMetrics states the one a name ends in as `# UNIT`.
const UNITS: &[&str] = &[
    "bytes_per_second",
    "seconds_per_byte",
    "seconds",
    "hertz",
    "ratio",
    "bytes",
];

impl Family {
    pub fn new(name: impl Into<String>, kind: Kind, help: impl Into<String>) -> Family {
        Family {
            name: name.into(),
            kind,
            help: help.into(),
            samples: Vec::new(),
        }
    }

    pub fn gauge(name: impl Into<String>, help: impl Into<String>) -> Family {
        Family::new(name, Kind::Gauge, help)
    }

    /// Add a sample; a value that is not finite is left out (neither
    /// grammar's readers agree on NaN, and no figure is one).
    pub fn push(&mut self, labels: Vec<(&'static str, String)>, value: f64) {
        if value.is_finite() {
            self.samples.push(Sample { labels, value });
        }
    }

    /// The name its samples carry.
    pub fn sample_name(&self) -> String {
        match self.kind {
            Kind::Gauge => self.name.clone(),
            Kind::Counter => format!("{}_total", self.name),
            Kind::Info => format!("{}_info", self.name),
        }
    }

    /// The base unit the name ends in (OpenMetrics' `# UNIT`), if any.
    pub fn unit(&self) -> Option<&'static str> {
        match self.kind {
            Kind::Info => None,
            _ => UNITS
                .iter()
                .copied()
                .find(|u| self.name.ends_with(&format!("_{u}"))),
        }
    }
}

/// A label value escaped as both grammars want (`\`, `"`, newline), with
/// every other control, bidirectional or invisible character shown as
/// `�` (`util::text::printable`): no value, whoever wrote it, can end the
/// line or hide what the sample says.
fn label_value(s: &str) -> String {
    crate::util::text::printable(s)
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn labels(l: &[(&'static str, String)]) -> String {
    let inner: Vec<String> = l
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("{k}=\"{}\"", label_value(v)))
        .collect();
    if inner.is_empty() {
        String::new()
    } else {
        format!("{{{}}}", inner.join(","))
    }
}

/// HELP text: one line; the classic format escapes `\` and newlines,
/// OpenMetrics also `"`.
fn help(s: &str, quote: bool) -> String {
    let s = crate::util::text::printable(s)
        .replace('\\', "\\\\")
        .replace('\n', "\\n");
    if quote {
        s.replace('"', "\\\"")
    } else {
        s
    }
}

fn samples(out: &mut String, f: &Family) {
    let name = f.sample_name();
    for s in &f.samples {
        let _ = writeln!(out, "{name}{} {}", labels(&s.labels), s.value);
    }
}

/// The families in the Prometheus text format (node_exporter's textfile
/// collector, `promtool check metrics`).
pub fn prometheus(families: &[Family]) -> String {
    let mut out = String::new();
    for f in families.iter().filter(|f| !f.samples.is_empty()) {
        let name = f.sample_name();
        let kind = match f.kind {
            Kind::Counter => "counter",
            Kind::Gauge | Kind::Info => "gauge",
        };
        let _ = writeln!(out, "# HELP {name} {}", help(&f.help, false));
        let _ = writeln!(out, "# TYPE {name} {kind}");
        samples(&mut out, f);
    }
    out
}

/// The families in OpenMetrics 1.0 text, ending `# EOF`.
pub fn openmetrics(families: &[Family]) -> String {
    let mut out = String::new();
    for f in families.iter().filter(|f| !f.samples.is_empty()) {
        let kind = match f.kind {
            Kind::Gauge => "gauge",
            Kind::Counter => "counter",
            Kind::Info => "info",
        };
        let _ = writeln!(out, "# TYPE {} {kind}", f.name);
        if let Some(u) = f.unit() {
            let _ = writeln!(out, "# UNIT {} {u}", f.name);
        }
        let _ = writeln!(out, "# HELP {} {}", f.name, help(&f.help, true));
        samples(&mut out, f);
    }
    out.push_str("# EOF\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn families() -> Vec<Family> {
        let mut info = Family::new("bwscope_run", Kind::Info, "What ran.");
        info.push(
            vec![("host", "a\"b\\c\nd".into()), ("cpu", String::new())],
            1.0,
        );
        let mut bw = Family::gauge("bwscope_bandwidth_bytes_per_second", "Bandwidth.");
        bw.push(vec![("level", "L1".into())], 2.5e11);
        bw.push(vec![("level", "L2".into())], f64::NAN);
        let mut n = Family::new("bwscope_watch_samples", Kind::Counter, "Samples \\ taken.");
        n.push(vec![], 3.0);
        let empty = Family::gauge("bwscope_nothing_seconds", "None.");
        vec![info, bw, n, empty]
    }

    #[test]
    fn the_classic_format_types_the_names_samples_carry() {
        let t = prometheus(&families());
        assert_eq!(
            t,
            "# HELP bwscope_run_info What ran.\n# TYPE bwscope_run_info gauge\n\
             bwscope_run_info{host=\"a\\\"b\\\\c\\nd\"} 1\n\
             # HELP bwscope_bandwidth_bytes_per_second Bandwidth.\n\
             # TYPE bwscope_bandwidth_bytes_per_second gauge\n\
             bwscope_bandwidth_bytes_per_second{level=\"L1\"} 250000000000\n\
             # HELP bwscope_watch_samples_total Samples \\\\ taken.\n\
             # TYPE bwscope_watch_samples_total counter\nbwscope_watch_samples_total 3\n"
        );
    }

    #[test]
    fn openmetrics_names_families_and_units_and_ends_with_eof() {
        let t = openmetrics(&families());
        assert!(
            t.starts_with(
                "# TYPE bwscope_run info\n# HELP bwscope_run What ran.\nbwscope_run_info{"
            ),
            "{t}"
        );
        assert!(t.contains("# TYPE bwscope_bandwidth_bytes_per_second gauge\n# UNIT bwscope_bandwidth_bytes_per_second bytes_per_second\n"), "{t}");
        assert!(t.contains("# TYPE bwscope_watch_samples counter\n# HELP bwscope_watch_samples Samples \\\\ taken.\nbwscope_watch_samples_total 3\n"), "{t}");
        assert!(!t.contains("nothing") && t.ends_with("# EOF\n"), "{t}");
    }
}
