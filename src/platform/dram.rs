//! The DRAM peak from the memory devices: which channel each device sits
//! on (from its locators, since SMBIOS has no channel field), and
//! Σ over populated channels of configured MT/s × data width. Whatever is
//! unknown makes the peak null with the reason, never a guess: a device
//! without a configured speed, a locator that names no channel.

use std::sync::OnceLock;

use crate::model::{Dram, DramDevice};

/// The peak stated with `--dram-peak`, GB/s, set once at start-up.
static STATED: OnceLock<f64> = OnceLock::new();

/// Use `gbps` as the DRAM peak of every host detected from now on.
pub fn state_peak(gbps: f64) {
    let _ = STATED.set(gbps);
}

/// The peak stated with `--dram-peak`, if any.
pub fn stated_peak() -> Option<f64> {
    STATED.get().copied()
}

/// Split a locator into upper-case runs of letters and of digits, with
/// the keywords that run into a channel name split off ("ChannelA" →
/// CHANNEL A, "DIMMA1" → DIMM A 1).
fn tokens(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let flush = |cur: &mut String, out: &mut Vec<String>| {
        if cur.is_empty() {
            return;
        }
        let t = std::mem::take(cur);
        match ["CHANNEL", "DIMM"]
            .iter()
            .find(|k| t.starts_with(*k) && t.len() > k.len())
        {
            Some(k) if t.chars().all(|c| c.is_ascii_alphabetic()) => {
                out.push((*k).into());
                out.push(t[k.len()..].into());
            }
            _ => out.push(t),
        }
    };
    for c in text.chars().map(|c| c.to_ascii_uppercase()) {
        let same = cur
            .chars()
            .last()
            .is_some_and(|l| l.is_ascii_digit() == c.is_ascii_digit());
        if !c.is_ascii_alphanumeric() || (!cur.is_empty() && !same) {
            flush(&mut cur, &mut out);
        }
        if c.is_ascii_alphanumeric() {
            cur.push(c);
        }
    }
    flush(&mut cur, &mut out);
    out
}

/// The channel a device sits on, from its bank and device locators:
/// "socket 0 channel A" from CPU0_DIMM_A1, P1-DIMMA1, "P0 CHANNEL A" +
/// "DIMM 0", P0_Node0_Channel0_Dimm0 or Controller0-ChannelA-DIMM0. None
/// when no channel is named (HPE's "PROC 1 DIMM 1", Dell's "A1", where the
/// letter is the socket): counting channels there would be a guess.
pub fn channel_of(locator: &str, bank: &str) -> Option<String> {
    let t = tokens(&format!("{bank} {locator}"));
    let num = |i: usize| t.get(i).filter(|s| s.chars().all(|c| c.is_ascii_digit()));
    let mut socket = None;
    let mut controller = None;
    let mut channel = None;
    for i in 0..t.len() {
        match t[i].as_str() {
            "CPU" | "PROC" | "SOCKET" | "P" if socket.is_none() => {
                socket = num(i + 1).cloned();
            }
            "NODE" | "CONTROLLER" | "MC" | "IMC" if controller.is_none() => {
                controller = num(i + 1).cloned();
            }
            "CHANNEL" | "CH" if channel.is_none() => channel = t.get(i + 1).cloned(),
            // DIMM_A1, DIMMA1: the letter is the channel, the digit the slot.
            "DIMM" if channel.is_none() => {
                channel = t
                    .get(i + 1)
                    .filter(|s| s.len() == 1 && s.chars().all(|c| c.is_ascii_alphabetic()))
                    .cloned();
            }
            _ => {}
        }
    }
    let channel = channel?;
    let mut key = String::new();
    if let Some(s) = socket {
        key.push_str(&format!("socket {s} "));
    }
    if let Some(c) = controller {
        key.push_str(&format!("controller {c} "));
    }
    key.push_str(&format!("channel {channel}"));
    Some(key)
}

/// Count channels and compute the peak of `devices` (read from `source`).
pub fn peak(source: &str, devices: Vec<DramDevice>) -> Dram {
    let mut dram = Dram {
        source: source.into(),
        devices,
        ..Dram::default()
    };
    let unknown = |dram: &mut Dram, why: String| dram.note = format!("DRAM peak unknown ({why})");
    let populated: Vec<&DramDevice> = dram.devices.iter().filter(|d| d.populated()).collect();
    let slots = dram.devices.len();
    if populated.is_empty() {
        let why = if slots == 0 {
            "no SMBIOS memory devices (type 17)".to_string()
        } else {
            format!("SMBIOS lists {slots} memory devices, none populated")
        };
        unknown(&mut dram, format!("{why}; state it with --dram-peak"));
        return dram;
    }
    let channels = match channels(&populated) {
        Ok(c) => c,
        Err(why) => {
            unknown(&mut dram, format!("{why}; state it with --dram-peak"));
            return dram;
        }
    };
    let gbps: f64 = channels
        .iter()
        .map(|&(_, w, mts)| w as f64 / 8.0 * mts as f64 * 1e6 / 1e9)
        .sum();
    let mut speeds: Vec<u32> = populated.iter().filter_map(|d| d.configured_mts).collect();
    speeds.sort_unstable();
    speeds.dedup();
    if let Some(w) = mixed_speeds(&speeds, &populated) {
        dram.warnings.push(w);
    }
    let mut widths: Vec<u32> = channels.iter().map(|c| c.1).collect();
    widths.dedup();
    let how = match (speeds.as_slice(), widths.as_slice()) {
        ([s], [w]) => format!("{} channels × {s} MT/s × {w} bit", channels.len()),
        _ => format!(
            "{} channels, each at its configured speed and width",
            channels.len()
        ),
    };
    dram.note = format!(
        "{how} = {gbps:.1} GB/s ({} of {slots} slots populated)",
        populated.len()
    );
    dram.channels = Some(channels.len() as u32);
    dram.peak_gbps = Some(gbps);
    dram
}

/// The populated devices' channels as (channel, width in bits, MT/s):
/// devices on one channel share it, its width at the slowest speed. Err
/// names the device whose speed, width or channel is not stated.
fn channels(populated: &[&DramDevice]) -> Result<Vec<(String, u32, u32)>, String> {
    let name = |d: &DramDevice| {
        if d.locator.is_empty() {
            d.bank_locator.clone()
        } else {
            d.locator.clone()
        }
    };
    let mut channels: Vec<(String, u32, u32)> = Vec::new();
    for d in populated {
        let Some(mts) = d.configured_mts.filter(|&m| m > 0) else {
            return Err(format!(
                "{} reports no configured speed (0 or unknown)",
                name(d)
            ));
        };
        let Some(width) = d.data_width_bits.filter(|&w| w > 0) else {
            return Err(format!("{} reports no data width", name(d)));
        };
        let Some(ch) = d.channel.clone() else {
            return Err(format!(
                "the locator '{}' names no channel, so channels cannot be counted",
                name(d)
            ));
        };
        match channels.iter_mut().find(|c| c.0 == ch) {
            Some(c) => {
                c.1 = c.1.max(width);
                c.2 = c.2.min(mts);
            }
            None => channels.push((ch, width, mts)),
        }
    }
    Ok(channels)
}

/// A warning when the DIMMs run at more than one speed (`speeds` sorted,
/// distinct), saying how many run at each.
fn mixed_speeds(speeds: &[u32], populated: &[&DramDevice]) -> Option<String> {
    if speeds.len() < 2 {
        return None;
    }
    let per: Vec<String> = speeds
        .iter()
        .rev()
        .map(|s| {
            let n = populated
                .iter()
                .filter(|d| d.configured_mts == Some(*s))
                .count();
            format!("{s} MT/s on {n}")
        })
        .collect();
    Some(format!(
        "mixed DIMM speeds ({}): the peak uses each channel's configured speed",
        per.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channels_from_the_locators_vendors_write() {
        let ch = |l: &str, b: &str| channel_of(l, b);
        assert_eq!(
            ch("CPU0_DIMM_A1", "").as_deref(),
            Some("socket 0 channel A")
        );
        assert_eq!(
            ch("CPU0_DIMM_A2", "").as_deref(),
            Some("socket 0 channel A")
        );
        assert_eq!(ch("P1-DIMMB1", "").as_deref(), Some("socket 1 channel B"));
        assert_eq!(
            ch("DIMM 0", "P0 CHANNEL C").as_deref(),
            Some("socket 0 channel C")
        );
        assert_eq!(
            ch("DIMM 1", "P0_Node0_Channel3_Dimm1").as_deref(),
            Some("socket 0 controller 0 channel 3")
        );
        assert_eq!(
            ch("Controller1-ChannelB-DIMM0", "BANK 0").as_deref(),
            Some("controller 1 channel B")
        );
        assert_eq!(ch("ChannelA-DIMM0", "BANK 0").as_deref(), Some("channel A"));
        // No channel named: no guess.
        assert_eq!(ch("PROC 1 DIMM 1", ""), None);
        assert_eq!(ch("A1", ""), None);
        assert_eq!(ch("", ""), None);
    }

    fn dimm(loc: &str, gib: u64, mts: Option<u32>, width: u32) -> DramDevice {
        DramDevice {
            locator: loc.into(),
            size_bytes: (gib > 0).then_some(gib << 30),
            memory_type: "DDR5".into(),
            data_width_bits: Some(width),
            configured_mts: mts,
            channel: channel_of(loc, ""),
            ..DramDevice::default()
        }
    }

    #[test]
    fn two_dimms_per_channel_count_once() {
        let d = peak(
            "test",
            vec![
                dimm("CPU0_DIMM_A1", 32, Some(4800), 64),
                dimm("CPU0_DIMM_A2", 32, Some(4800), 64),
                dimm("CPU0_DIMM_B1", 32, Some(4800), 64),
                dimm("CPU0_DIMM_B2", 0, None, 64),
            ],
        );
        assert_eq!(d.channels, Some(2));
        assert!((d.peak_gbps.unwrap() - 76.8).abs() < 1e-9, "{d:?}");
        assert_eq!(
            d.note,
            "2 channels × 4800 MT/s × 64 bit = 76.8 GB/s (3 of 4 slots populated)"
        );
    }

    #[test]
    fn a_stated_peak_replaces_the_unknown_one() {
        let d = peak("none", Vec::new()).with_stated(409.6);
        assert_eq!(d.peak_gbps, Some(409.6));
        assert_eq!(d.note, "stated with --dram-peak");
        assert_eq!(d.source, "--dram-peak");
    }
}
