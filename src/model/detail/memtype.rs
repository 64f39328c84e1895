//! The `memtype` suite's records: one per memory kind, a copy from a
//! regular array into a buffer of that kind, first pass against the
//! following ones, and reads of it.

use serde::{Deserialize, Serialize};

use super::{case_parts, metric_part, CasePart, Judged, Nullable, SuiteDetail};
use crate::model::headline::Quantity;
use crate::model::{Record, Stats};

/// When a kind pays back its set-up against regular pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BreakEven {
    /// This is the regular kind every other is compared with.
    Baseline,
    /// After `break_even_passes` passes.
    Passes,
    /// Never: slower to set up and not faster per pass.
    Never,
    /// Regular pages were not measured in this run.
    NoBaseline,
}

impl BreakEven {
    pub fn name(self) -> &'static str {
        match self {
            BreakEven::Baseline => "baseline",
            BreakEven::Passes => "passes",
            BreakEven::Never => "never",
            BreakEven::NoBaseline => "no-baseline",
        }
    }
}

/// A `memtype` record.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MemtypeDetail {
    /// Bytes copied per pass (N).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer_bytes: Option<u64>,
    /// mmap (+ mlock, device open), seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup_seconds: Option<f64>,
    /// The first copy, page faults included, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_pass_seconds: Option<f64>,
    /// Set-up + first pass, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_total_seconds: Option<f64>,
    /// `first_total_seconds` per MiB copied, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_total_ms_per_mib: Option<f64>,
    /// N / `first_pass_seconds`, GB/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_pass_payload_gbps: Option<f64>,
    /// Mean of the steady passes, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_mean_seconds: Option<f64>,
    /// Best of the steady passes, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_best_seconds: Option<f64>,
    /// N / `pass_mean_seconds`, GB/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_mean_payload_gbps: Option<f64>,
    /// The kernel of the read passes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_kernel: Option<String>,
    /// Read bandwidth over the buffer, N / t per pass, GB/s.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub read_gbps: Nullable<Stats>,
    /// What smaps showed for the mapping (`KernelPageSize 2 MiB`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified: Option<String>,
    /// The buffer equals the source after every pass (a mismatch makes the
    /// record an error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_verified: Option<bool>,
    /// When the kind pays back its set-up against regular pages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub break_even: Option<BreakEven>,
    /// Passes until this kind's total time is no longer above regular's;
    /// null unless `break_even` is `passes`.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub break_even_passes: Nullable<u64>,
    /// Passes for which a kind that starts faster stays ahead while being
    /// slower per pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ahead_for_passes: Option<u64>,
    /// The device path as given (device kinds; compare key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_device: Option<String>,
    /// What the device region is (`PCI 0000:00:01.0 BAR 2 (…)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_what: Option<String>,
    /// Physical start address of the region.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phys_start: Option<u64>,
    /// The memory type from the PAT list where one type covers the range;
    /// null where several do or the list could not be read.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub pat_type: Nullable<String>,
    /// Every PAT type overlapping the range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pat_types: Option<Vec<String>>,
    /// Why the PAT list could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pat_note: Option<String>,
    /// The protection a plain RAM kind asked for (`wc`, `uc`: Windows'
    /// `PAGE_READWRITE | PAGE_WRITECOMBINE`, `… | PAGE_NOCACHE`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protection_asked: Option<String>,
    /// What the system reports of the pages (`VirtualQuery`); null when it
    /// reports nothing.
    #[serde(default, skip_serializing_if = "Nullable::is_absent")]
    pub protection_got: Nullable<String>,
}

impl SuiteDetail for MemtypeDetail {
    fn case(&self) -> Vec<CasePart> {
        case_parts([CasePart::of("device", self.case_device.as_ref())])
    }

    /// Per memory kind a node offers (device memory aside: a fleet node
    /// runs the anonymous kinds): the best copy pass
    /// (`memtype_<kind>_copy_gbps`, bytes read + written) and the cost of
    /// first use, set-up and first pass per MiB
    /// (`memtype_<kind>_first_ms_per_mib`), so a fleet names the node whose
    /// huge pages ran out or fault slowly.
    fn judged<'a>(records: &[&'a Record]) -> Vec<Judged<'a>> {
        let mut out: Vec<Judged<'a>> = Vec::new();
        for &record in records {
            let (Some(d), Some(mem)) = (record.detail.get::<MemtypeDetail>(), &record.memory)
            else {
                continue;
            };
            if d.case_device.is_some() {
                continue;
            }
            let kind = metric_part(&mem.kind);
            let figures = [
                record.gbps.map(|g| {
                    (
                        "copy_gbps",
                        "copy",
                        Quantity::Bandwidth,
                        g.best,
                        "best copy pass (bytes read + written)",
                    )
                }),
                d.first_total_ms_per_mib.map(|ms| {
                    (
                        "first_ms_per_mib",
                        "first_use",
                        Quantity::CostPerMib,
                        ms,
                        "first use: set-up and first pass per MiB",
                    )
                }),
            ];
            for (name, family, quantity, value, what) in figures.into_iter().flatten() {
                let metric = format!("memtype_{kind}_{name}");
                if out.iter().any(|j| j.metric == metric) {
                    continue;
                }
                out.push(Judged {
                    metric,
                    quantity,
                    // Bandwidth: more is better; a first-use cost: less.
                    higher_is_better: quantity == Quantity::Bandwidth,
                    family: format!("memtype_{family}"),
                    labels: vec![("kind", mem.kind.clone())],
                    value,
                    what: format!("{} memory: {what}", mem.kind),
                    record,
                });
            }
        }
        out
    }
}
