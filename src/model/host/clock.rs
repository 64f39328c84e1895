//! The core clock as two dependent chains measure it, and whether they
//! agree.

use serde::{Deserialize, Serialize};

use crate::model::{limits, Warning};

/// The core clock from two timed dependent chains of register-register
/// instructions (no immediates, which Golden Cove and later fold at
/// rename): `add r64, r64` at one per cycle and `imul r64, r64` at one
/// per three cycles (Intel Sandy Bridge and later, AMD Zen).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct ClockProbe {
    /// Adds per second of the add chain (best sample).
    pub add_hz: f64,
    /// Three times the imuls per second of the imul chain (best sample).
    pub imul_hz: f64,
    /// The clock used: the add chain's, or the lower of the two when they
    /// disagree by more than 3 %; null when outside 0.2–6.5 GHz.
    pub hz: Option<f64>,
    /// Samples per chain.
    pub samples: usize,
    /// The cross-check chain when it is not `imul r64, r64`: on AArch64
    /// `eor` (`eor x, x, x`, 1 cycle), whose rate `imul_hz` then holds.
    /// Absent on x86-64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub second_chain: Option<CrossCheck>,
    /// Samples taken again because the probing thread was descheduled in
    /// them (absent in runs from before it was counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retaken: Option<usize>,
}

/// The clock probe's cross-check chain.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CrossCheck {
    /// `imul r64, r64`, 3 cycles (x86-64).
    Imul,
    /// `eor x, x, x`, 1 cycle (AArch64).
    Eor,
}

impl ClockProbe {
    /// Combine the two chains' readings by the rules above.
    pub fn from_chains(add_hz: f64, imul_hz: f64, samples: usize) -> ClockProbe {
        let mut p = ClockProbe {
            add_hz,
            imul_hz,
            hz: None,
            samples,
            second_chain: None,
            retaken: None,
        };
        let hz = if p.disagreement() > limits::CLOCK_DISAGREE {
            add_hz.min(imul_hz)
        } else {
            add_hz
        };
        p.hz = (limits::CLOCK_MIN_HZ..=limits::CLOCK_MAX_HZ)
            .contains(&hz)
            .then_some(hz);
        p
    }

    /// How far apart the two chains are, relative to the lower.
    pub fn disagreement(&self) -> f64 {
        let (lo, hi) = (self.add_hz.min(self.imul_hz), self.add_hz.max(self.imul_hz));
        if lo > 0.0 {
            hi / lo - 1.0
        } else {
            f64::INFINITY
        }
    }

    /// The warnings this reading deserves: the chains disagree, or the
    /// clock is outside what any x86 core runs at.
    pub fn warnings(&self) -> Vec<Warning> {
        let mut w = Vec::new();
        if self.disagreement() > limits::CLOCK_DISAGREE {
            w.push(Warning::ClockDisagree {
                add_hz: self.add_hz,
                imul_hz: self.imul_hz,
            });
        }
        if self.hz.is_none() {
            w.push(Warning::ClockImplausible {
                hz: self.add_hz.min(self.imul_hz),
            });
        }
        w
    }
}
