//! A progress bar on stderr when it is a terminal, silent otherwise. It is
//! only touched between cases, never inside a timed region, and has no
//! ticker thread (which would steal a core on a 2-cpu machine).
//!
//! A bar is drawn only while it has steps to count: a run that plans none
//! (a transfer with no device: an OpenCL loader without a platform) would
//! otherwise show a full bar reading `0/0` before saying it skipped.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// The run's progress: a bar on a terminal once there are steps to count.
pub struct Progress {
    bar: ProgressBar,
    /// stderr is a terminal and nobody asked for quiet.
    shown: bool,
    /// The bar is drawn now (shown, with steps to count).
    drawing: std::cell::Cell<bool>,
}

impl Progress {
    /// Hidden until [`Progress::plan`] gives it a positive total.
    pub fn new(quiet: bool) -> Progress {
        Progress::on(!quiet && std::io::stderr().is_terminal())
    }

    /// A bar that may be drawn on stderr (`shown`) or never.
    fn on(shown: bool) -> Progress {
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden());
        bar.set_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len} {elapsed_precise} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        Progress {
            bar,
            shown,
            drawing: std::cell::Cell::new(false),
        }
    }

    /// `total` steps from now on; a plan of none hides the bar.
    pub fn plan(&self, total: u64) {
        self.bar.set_length(total);
        self.bar.set_position(0);
        self.drawing.set(self.shown && total > 0);
        self.bar.set_draw_target(if self.drawing.get() {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        });
    }

    /// Whether a bar is drawn now.
    pub fn drawn(&self) -> bool {
        self.drawing.get()
    }

    pub fn bar(&self) -> &ProgressBar {
        &self.bar
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bar_with_no_steps_is_never_drawn() {
        // On a terminal: hidden before a plan and under a plan of none,
        // drawn once there are steps, hidden again by an empty plan.
        let p = Progress::on(true);
        assert!(!p.drawn());
        p.plan(0);
        p.bar().set_message("skipped");
        assert!(!p.drawn());
        p.plan(3);
        assert!(p.drawn());
        assert_eq!(p.bar().length(), Some(3));
        p.plan(0);
        assert!(!p.drawn());
        // Quiet or not a terminal: hidden whatever the plan.
        let q = Progress::on(false);
        q.plan(5);
        assert!(!q.drawn());
        assert_eq!(q.bar().length(), Some(5));
    }
}
