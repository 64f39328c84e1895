//! One runner for every measuring command: detect the host → plan → open
//! the outputs → install the signal handlers → run → finish the files →
//! print the view → exit code. Suites only plan and measure; everything a
//! person or a file sees happens here.

use std::sync::Arc;

use crate::cli::{OutputArgs, UnitsArg};
use crate::error::{UserError, EXIT_INTERRUPTED, EXIT_OK};
use crate::measure::probe::SpellProbes;
use crate::model::{Host, Record, Run, SuiteId, Units, Warning};
use crate::report::progress::Progress;
use crate::report::sink::{End, Sink};
use crate::suites::{self, Ctx, Flow, Out, Suite};

pub fn units(u: UnitsArg) -> Units {
    match u {
        UnitsArg::Gb => Units::GB,
        UnitsArg::Gib => Units::GiB,
    }
}

/// Where a running suite's records go: the run's sink (files as records
/// complete) and the progress bar on stderr; and the run's spell probes,
/// which every suite of the run samples with.
pub struct Recorder {
    pub sink: Sink,
    /// The run's spell probes and their baseline: the run's own, so its
    /// records are judged by its readings alone.
    probes: Arc<SpellProbes>,
    progress: Progress,
    /// A step is under way (the next one completes it).
    in_step: bool,
    /// Print notes to stderr (off when nobody watches: a quiet test run).
    pub notes: bool,
}

impl Recorder {
    /// Start a run of `command` with `options` on `host`, with files from
    /// `out`; an unwritable output fails here, before anything is measured.
    pub fn start(
        command: &str,
        options: serde_json::Value,
        out: &OutputArgs,
        host: Host,
    ) -> Result<Recorder, UserError> {
        let probes = SpellProbes::for_host(&host);
        let mut run = Run::new(command, options, host, units(out.units));
        run.warnings = suites::host_warnings(&run.host);
        let sink = Sink::new(run, &out.files)?;
        let progress = Progress::new(sink.stdout_taken());
        Ok(Recorder {
            sink,
            probes,
            progress,
            in_step: false,
            notes: true,
        })
    }

    /// A recorder into `sink` that shows nothing: no progress, no notes
    /// (a fleet node's run, collected by rank 0; a watch sample), taking
    /// the spell probes `probes` (the run's: a watch's samples share one
    /// series of readings).
    pub fn quiet(mut sink: Sink, probes: Arc<SpellProbes>) -> Recorder {
        sink.echo_warnings = false;
        Recorder {
            sink,
            probes,
            progress: Progress::new(true),
            in_step: false,
            notes: false,
        }
    }

    /// Measure `suite` into this run.
    pub fn measure(&mut self, host: &Host, suite: &dyn Suite) -> anyhow::Result<Flow> {
        self.measure_with(host, suite, crate::os::signal::install())
    }

    /// [`Recorder::measure`] honouring `stop` (a caller with its own stop
    /// request, such as a fleet rank asked by rank 0).
    pub fn measure_with(
        &mut self,
        host: &Host,
        suite: &dyn Suite,
        stop: &'static std::sync::atomic::AtomicBool,
    ) -> anyhow::Result<Flow> {
        let probes = self.probes.clone();
        let mut cx = Ctx::new(host, stop, &probes, self);
        let flow = suite.run(&mut cx);
        self.progress.bar().finish_and_clear();
        // A stop request that arrived after the last sample still marks
        // the run as interrupted: its records are whole, the run is not.
        match flow {
            Ok(Flow::Done) if stop.load(std::sync::atomic::Ordering::Relaxed) => Ok(Flow::Stopped),
            other => other,
        }
    }

    /// The run's spell probes.
    pub fn probes(&self) -> &Arc<SpellProbes> {
        &self.probes
    }

    /// Close the files, saying how the run ended: every record's spells
    /// judged again against the whole run's baseline first (a run that
    /// began in a contended spell took it for the baseline until then),
    /// and last-cache sizes that read like DRAM said so.
    pub fn finish(mut self, end: End) -> Result<Run, UserError> {
        let base = self.probes.baseline();
        let run = self.sink.run_mut();
        for r in &mut run.records {
            suites::spells::rejudge(r, &base);
        }
        // Only the whole run has the DRAM figures a last-cache size is
        // told apart from.
        for (i, w) in crate::stats::levels::reads_as_dram(&run.records, &run.host) {
            run.records[i].warnings.push(w);
        }
        self.sink.finish(end)
    }

    /// Close the files after `flow` ended measuring: the run as written
    /// (None when the final write failed) and how to end. An error that
    /// ended the run marks it incomplete with the reason and is handed back
    /// after the records are written; when the final write fails too (the
    /// same full disk), both are said, the first cause last.
    pub fn finish_after(self, flow: anyhow::Result<Flow>) -> (Option<Run>, anyhow::Result<Flow>) {
        let end = match &flow {
            Ok(Flow::Done) => End::Complete,
            Ok(Flow::Stopped) => End::Stopped,
            Err(e) => End::Failed(format!("{e:#}")),
        };
        match (self.finish(end), flow) {
            (Ok(run), flow) => (Some(run), flow),
            (Err(w), Ok(_)) => (None, Err(w.into())),
            (Err(w), Err(e)) => {
                // The same failure twice (the JSON that failed mid-run
                // fails again at the end) is said once.
                if w.to_string() != format!("{e:#}") {
                    eprintln!("error: {w}");
                }
                (None, Err(e))
            }
        }
    }
}

impl Out for Recorder {
    fn record(&mut self, r: Record) -> Result<(), UserError> {
        self.sink.push(r)
    }

    fn run_warning(&mut self, w: Warning) {
        self.sink.run_mut().warnings.push(w);
    }

    fn plan_steps(&mut self, total: u64) {
        self.progress.plan(total);
        self.in_step = false;
    }

    fn step(&mut self, label: &str) {
        if self.in_step {
            self.progress.bar().inc(1);
        }
        self.in_step = true;
        self.progress.bar().set_message(label.to_string());
    }

    fn note(&mut self, text: &str) {
        if self.notes {
            self.progress.bar().suspend(|| eprintln!("{text}"));
        }
    }
}

/// Run one suite as a command: the whole life of `bwscope <suite> …`
/// (its descriptor says whether the host facts need the core clock).
pub fn command(
    cx: &super::Context,
    id: SuiteId,
    out: &OutputArgs,
    plan: impl FnOnce(&Host) -> Result<Box<dyn Suite>, UserError>,
) -> anyhow::Result<u8> {
    let name = id.name();
    let host = crate::platform::detect_host(suites::descriptor(id).reads_clock);
    let suite = plan(&host)?;
    if let Some(line) = suite.estimate().notice() {
        eprintln!("{line}");
    }
    let mut rec = Recorder::start(name, suite.options(), out, host.clone())?;
    let taken = rec.sink.stdout_taken();
    let flow = rec.measure(&host, suite.as_ref());
    // Every finished record is written whatever happened; an error that
    // ended the run is reported after its records.
    let nothing = rec.sink.run().records.is_empty();
    if flow.is_err() && nothing {
        // Nothing measured: the error is the only line worth printing.
        rec.sink.echo_warnings = false;
    }
    let failed = flow.is_err();
    let mut history = super::history::Session::open(&cx.history);
    history.judge(rec.sink.run_mut());
    let (run, flow) = rec.finish_after(flow);
    if let Some(run) = run.as_ref().filter(|r| !r.records.is_empty()) {
        history.record(run);
    }
    if let Some(run) = &run {
        if !(taken || (failed && nothing)) {
            crate::util::out::print(&crate::report::views::render(run));
        }
    }
    if flow? == Flow::Stopped {
        let kept = run.map_or(0, |r| r.records.len());
        eprintln!("interrupted: {kept} records kept");
        return Ok(EXIT_INTERRUPTED);
    }
    Ok(EXIT_OK)
}
